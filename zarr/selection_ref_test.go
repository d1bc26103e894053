package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// selDir holds the reference selections made with zarr-python 3.4 by
// testdata/selections/make_selections.py (see its README.md).
var selDir = filepath.Join(filepath.Dir(refdata.Dir()), "selections")

// selSentinels are the nd errors the go_error names of cases.json stand for.
var selSentinels = map[string]error{"out_of_bounds": nd.ErrOutOfBounds, "invalid_selection": nd.ErrInvalidSelection}

// selItem is one selection item of cases.json: exactly one field is set.
type selItem struct {
	Int      *int    `json:"int"`
	Slice    []*int  `json:"slice"`
	Ints     *[]int  `json:"ints"`
	Mask     *string `json:"mask"`
	Ellipsis bool    `json:"ellipsis"`
}

// selWrite is one write of a write case.
type selWrite struct {
	Mode      string    `json:"mode"`
	Selection []selItem `json:"selection"`
	Coords    [][]int   `json:"coords"`
	Mask      string    `json:"mask"`
	Values    string    `json:"values"`
}

// selCase is one case of cases.json.
type selCase struct {
	ID, Array, Path, Mode, Desc string
	Selection                   []selItem `json:"selection"`
	Coords                      [][]int   `json:"coords"`
	Mask                        string    `json:"mask"`
	MaskShape                   []int     `json:"mask_shape"`
	BlockGrid                   []int     `json:"block_grid"`
	Shape                       []int     `json:"shape"`
	Expected                    string    `json:"expected"`
	Error                       string    `json:"error"`
	GoError                     string    `json:"go_error"`
	Reference                   string    `json:"reference"`
	ZarrPythonError             string    `json:"zarr_python_error"`
	Writes                      []selWrite
	ZarrPythonAgrees            *bool `json:"zarr_python_agrees"`
	Unchanged                   bool  `json:"unchanged"` // a refused write: the array stays as it was
}

func loadSelCases(t *testing.T) []selCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(selDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []selCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("cases.json: no cases")
	}
	return doc.Cases
}

// selItems turns cases.json selection items into nd items.
func selItems(t *testing.T, in []selItem) []nd.Item {
	t.Helper()
	out := make([]nd.Item, 0, len(in))
	for _, it := range in {
		switch {
		case it.Int != nil:
			out = append(out, nd.Index(*it.Int))
		case it.Ints != nil:
			out = append(out, nd.IndexArray(*it.Ints...))
		case it.Mask != nil:
			out = append(out, nd.Mask(selBits(*it.Mask)))
		case it.Ellipsis:
			out = append(out, nd.Ellipsis)
		case len(it.Slice) == 3:
			start, stop, step := it.Slice[0], it.Slice[1], it.Slice[2]
			var s nd.Item
			switch {
			case start != nil && stop != nil:
				s = nd.Range(*start, *stop)
			case start != nil:
				s = nd.SliceFrom(*start)
			case stop != nil:
				s = nd.SliceTo(*stop)
			default:
				s = nd.All()
			}
			if step != nil {
				s = s.WithStep(*step)
			}
			out = append(out, s)
		default:
			t.Fatalf("bad selection item %+v", it)
		}
	}
	return out
}

func selBits(s string) []bool {
	m := make([]bool, len(s))
	for i := range s {
		m[i] = s[i] == '1'
	}
	return m
}

func selNpy(t *testing.T, name string) *npy.Array {
	t.Helper()
	arr, err := npy.ReadFile(filepath.Join(selDir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return arr
}

// selRead runs a read case against a; items are its selection (oindex,
// blocks).
func selRead(ctx context.Context, t *testing.T, a *zarr.Array, c selCase, items []nd.Item) ([]byte, []int, error) {
	switch c.Mode {
	case "oindex":
		return a.ReadBytes(ctx, items...)
	case "blocks":
		items, err := a.BlockItems(items...)
		if err != nil {
			return nil, nil, err
		}
		return a.ReadBytes(ctx, items...)
	case "vindex":
		return a.ReadPointsBytes(ctx, c.Coords)
	case "vmask":
		return a.ReadMaskBytes(ctx, selBits(c.Mask))
	}
	t.Fatalf("unknown mode %q", c.Mode)
	return nil, nil, nil
}

// selApply applies one write of a write case to a.
func selApply(ctx context.Context, t *testing.T, a *zarr.Array, w selWrite) error {
	data := selNpy(t, w.Values).Data
	switch w.Mode {
	case "oindex":
		return a.WriteBytes(ctx, data, selItems(t, w.Selection)...)
	case "blocks":
		items, err := a.BlockItems(selItems(t, w.Selection)...)
		if err != nil {
			return err
		}
		return a.WriteBytes(ctx, data, items...)
	case "vindex":
		return a.WritePointsBytes(ctx, data, w.Coords)
	case "vmask":
		return a.WriteMaskBytes(ctx, data, selBits(w.Mask))
	}
	t.Fatalf("unknown write mode %q", w.Mode)
	return nil
}

// TestSelectionReference checks every reference selection of
// testdata/selections (orthogonal, coordinate, mask and block reads, their
// errors, and writes with repeated indices on a copy of the array) against
// what zarr-python 3.4 (or NumPy, where zarr-python raises though NumPy's
// meaning is defined) gave.
func TestSelectionReference(t *testing.T) {
	ctx := context.Background()
	cases := loadSelCases(t)
	ref, err := fs.New(refDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		opened = map[string]*zarr.Array{}
		passed = map[string]int{}
		total  = map[string]int{}
	)
	open := func(t *testing.T, path string) *zarr.Array {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := opened[path]; ok {
			return a
		}
		a, err := zarr.OpenArray(ctx, ref, path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		opened[path] = a
		return a
	}
	for _, c := range cases {
		kind := c.Mode
		if c.Error != "" {
			kind += " error"
		}
		total[kind]++
		t.Run(c.ID, func(t *testing.T) {
			if c.Mode == "write" { // on a copy
				selCheckWrite(ctx, t, c)
				passed[kind]++
				return
			}
			a := open(t, c.Path)
			var items []nd.Item
			if c.Mode == "oindex" || c.Mode == "blocks" {
				items = selItems(t, c.Selection)
			}
			got, shape, err := selRead(ctx, t, a, c, items)
			selCheckRead(t, a, c, "", got, shape, err)
			if items != nil {
				// the same selection in NumPy spelling, through ParseSelection
				text := selText(c.Selection)
				parsed, perr := nd.ParseSelection(text)
				if perr != nil {
					t.Fatalf("%s: ParseSelection(%q): %v", c.Desc, text, perr)
				}
				if c.Mode == "oindex" {
					parsed = nd.Orthogonal(parsed) // NumPy would broadcast the index arrays
				}
				got, shape, err := selRead(ctx, t, a, c, parsed)
				selCheckRead(t, a, c, fmt.Sprintf(" (parsed %q)", text), got, shape, err)
			}
			passed[kind]++
		})
	}
	var b strings.Builder
	sum, n := 0, 0
	for _, k := range slices.Sorted(maps.Keys(total)) {
		fmt.Fprintf(&b, " %s %d/%d;", k, passed[k], total[k])
		sum += passed[k]
		n += total[k]
	}
	t.Logf("reference selections: %d of %d cases pass:%s", sum, n, b.String())
}

// selCheckRead compares the outcome of a read case with what is expected:
// its values, or an error of the sentinel its zarr-python exception maps
// to. how says how the selection was given, for the message.
func selCheckRead(t *testing.T, a *zarr.Array, c selCase, how string, got []byte, shape []int, err error) {
	t.Helper()
	if c.Error != "" {
		want := selSentinels[c.GoError]
		if want == nil {
			t.Fatalf("%s: unknown go_error %q", c.Desc, c.GoError)
		}
		if err == nil {
			t.Fatalf("%s%s: zarr-python raises %s, got shape %v and no error", c.Desc, how, c.Error, shape)
		}
		if !errors.Is(err, want) {
			t.Fatalf("%s%s: zarr-python raises %s, want errors.Is(err, %v); got %v", c.Desc, how, c.Error, want, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s%s (%s): %v", c.Desc, how, c.Reference, err)
	}
	want := selNpy(t, c.Expected)
	if !slices.Equal(shape, c.Shape) || !slices.Equal(want.Shape, c.Shape) {
		t.Fatalf("%s%s: shape %v, want %v (npy %v)", c.Desc, how, shape, c.Shape, want.Shape)
	}
	if i, ok := sameValues(a.Metadata().DataType, got, want.Data); !ok {
		t.Fatalf("%s%s (%s): differs at element %d", c.Desc, how, c.Reference, i)
	}
}

// selText spells selection items in NumPy syntax, bracketed as a whole
// ("[[3, 1], ::-1, 2]"), the way zarrcat takes them.
func selText(in []selItem) string {
	parts := make([]string, len(in))
	num := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	for k, it := range in {
		switch {
		case it.Int != nil:
			parts[k] = strconv.Itoa(*it.Int)
		case it.Ints != nil:
			s := make([]string, len(*it.Ints))
			for i, v := range *it.Ints {
				s[i] = strconv.Itoa(v)
			}
			parts[k] = "[" + strings.Join(s, ", ") + "]"
		case it.Mask != nil:
			s := make([]string, len(*it.Mask))
			for i := range *it.Mask {
				s[i] = "False"
				if (*it.Mask)[i] == '1' {
					s[i] = "True"
				}
			}
			parts[k] = "[" + strings.Join(s, ", ") + "]"
		case it.Ellipsis:
			parts[k] = "..."
		default:
			parts[k] = num(it.Slice[0]) + ":" + num(it.Slice[1])
			if it.Slice[2] != nil {
				parts[k] += ":" + num(it.Slice[2])
			}
		}
	}
	return "(" + strings.Join(parts, ", ") + ")" // a tuple: "[a, b]" alone would be one index array
}

// selCheckWrite copies the case's array into a temporary directory,
// applies its writes in order and compares the whole array with the
// expected result (NumPy's: the last of repeated writes wins).
func selCheckWrite(ctx context.Context, t *testing.T, c selCase) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "a.zarr"), os.DirFS(filepath.Join(refDir, filepath.FromSlash(c.Path)))); err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a.zarr")
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range c.Writes {
		err := selApply(ctx, t, a, w)
		if c.Error != "" && i == len(c.Writes)-1 {
			want := selSentinels[c.GoError]
			if err == nil {
				t.Fatalf("%s: zarr-python raises %s, got no error", c.Desc, c.Error)
			}
			if want == nil || !errors.Is(err, want) {
				t.Fatalf("%s: zarr-python raises %s, want errors.Is(err, %v); got %v", c.Desc, c.Error, want, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: write %d (%s): %v", c.Desc, i, w.Mode, err)
		}
	}
	// read back through a fresh handle: what is stored, not what is cached
	b, err := zarr.OpenArray(ctx, st, "a.zarr")
	if err != nil {
		t.Fatal(err)
	}
	got, shape, err := b.ReadBytes(ctx)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	var want *npy.Array
	if c.Unchanged { // a refused write leaves the array as it was
		want = refdata.Lookup(t, c.Array).ExpectedArray(t)
	} else {
		want = selNpy(t, c.Expected)
	}
	if !slices.Equal(shape, want.Shape) {
		t.Fatalf("shape %v, want %v", shape, want.Shape)
	}
	if i, ok := sameValues(b.Metadata().DataType, got, want.Data); !ok {
		agrees := ""
		if c.ZarrPythonAgrees != nil && !*c.ZarrPythonAgrees {
			agrees = " (zarr-python 3.4 differs from NumPy here too)"
		}
		t.Fatalf("%s: differs at element %d%s", c.Desc, i, agrees)
	}
}
