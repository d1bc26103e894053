package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// spellingCase is one case of testdata/selections/numpy_spellings.json:
// a selection text as typed, NumPy's result on np.arange(n).reshape(shape)
// or its exception, and the orthogonal meaning (zarr-python's oindex).
type spellingCase struct {
	Shape       []int   `json:"shape"`
	Kind        string  `json:"kind"`
	Text        string  `json:"text"`
	ResultShape []int   `json:"result_shape"`
	Values      []int64 `json:"values"`
	Error       string  `json:"error"`
	Message     string  `json:"message"`
	Sentinel    string  `json:"sentinel"`
	OShape      []int   `json:"oindex_shape"`
	OValues     []int64 `json:"oindex_values"`
	OError      string  `json:"oindex_error"`
	OSentinel   string  `json:"oindex_sentinel"`
}

// sentinels maps the reference's sentinel names to nd's errors.
var sentinels = map[string]error{"ErrOutOfBounds": nd.ErrOutOfBounds, "ErrInvalidSelection": nd.ErrInvalidSelection}

// errorKind checks err against a NumPy exception's sentinel: the same
// kind, out of bounds exactly where NumPy says so.
func errorKind(err error, sentinel string) error {
	want := sentinels[sentinel]
	switch {
	case want == nil:
		return fmt.Errorf("unknown sentinel %q", sentinel)
	case err == nil:
		return fmt.Errorf("no error, want %s", sentinel)
	case !errors.Is(err, want):
		return fmt.Errorf("%v, want %s", err, sentinel)
	case want == nd.ErrInvalidSelection && errors.Is(err, nd.ErrOutOfBounds):
		return fmt.Errorf("%v: out of bounds, NumPy raises no bounds error", err)
	}
	return nil
}

// numpyWords reports a case whose error text gozarr repeats: what NumPy
// raises (IndexError, ValueError) and the TypeError of a slice bound, not
// what Python's parser or operators say (SyntaxError, the TypeError of
// "-[1]").
func numpyWords(c spellingCase) bool {
	return c.Error == "IndexError" || c.Error == "ValueError" || c.Error == "TypeError" && strings.HasPrefix(c.Message, "slice indices")
}

// TestNumpySpellings runs every case of the generated NumPy reference set
// (make_selections.py's spelling_cases: ranks 1-4, integers, negative
// indices, slices with steps, Ellipsis, None, index arrays that
// broadcast, tuples, masks, empty and repeated indices, arrays separated
// by slices, out-of-bounds indices, whole texts that are one list)
// through nd.ParseSelection and zarr.Read on an array holding
// np.arange(n).reshape(shape): NumPy's shape and values, or an error of
// the kind NumPy raises, in NumPy's words; and, with nd.Orthogonal, the orthogonal result
// (zarr-python's oindex) or its error.
func TestNumpySpellings(t *testing.T) {
	f := loadSpellingCases(t)
	ctx := context.Background()
	st := mem.New()
	arrays := map[string]*zarr.Array{}
	kinds := map[string]int{}
	errs, oindex := 0, 0
	for _, c := range f.Cases {
		key := fmt.Sprint(c.Shape)
		a := arrays[key]
		if a == nil {
			a, _ = arangeArray(t, st, fmt.Sprintf("s%d", len(arrays)), c.Shape)
			arrays[key] = a
		}
		kinds[c.Kind]++
		name := fmt.Sprintf("%v a[%s] (%s)", c.Shape, c.Text, c.Kind)
		items, perr := nd.ParseSelection(c.Text)
		var got []int64
		var shape []int
		err := perr
		if err == nil {
			got, shape, err = zarr.Read[int64](ctx, a, items...)
		}
		switch {
		case c.Error != "":
			errs++
			if e := errorKind(err, c.Sentinel); e != nil {
				t.Errorf("%s: %v; NumPy: %s: %s", name, e, c.Error, c.Message)
			} else if numpyWords(c) && !strings.Contains(err.Error(), strings.TrimSpace(c.Message)) {
				t.Errorf("%s: %v; NumPy's words: %s: %s", name, err, c.Error, c.Message)
			}
		case err != nil:
			t.Errorf("%s: %v; NumPy: shape %v", name, err, c.ResultShape)
		case !slices.Equal(shape, c.ResultShape) || !slices.Equal(got, c.Values) && len(c.Values) > 0:
			t.Errorf("%s: shape %v %v; NumPy: %v %v", name, shape, got, c.ResultShape, c.Values)
		}
		if c.OShape == nil && c.OError == "" {
			continue
		}
		oindex++
		if perr != nil {
			if c.OError == "" {
				t.Errorf("oindex %s: %v; NumPy: shape %v", name, perr, c.OShape)
			}
			continue
		}
		got, shape, err = zarr.Read[int64](ctx, a, nd.Orthogonal(items)...)
		switch {
		case c.OError != "":
			if e := errorKind(err, c.OSentinel); e != nil {
				t.Errorf("oindex %s: %v; NumPy: %s", name, e, c.OError)
			}
		case err != nil:
			t.Errorf("oindex %s: %v; NumPy: shape %v", name, err, c.OShape)
		case !slices.Equal(shape, c.OShape) || !slices.Equal(got, c.OValues) && len(c.OValues) > 0:
			t.Errorf("oindex %s: shape %v %v; NumPy: %v %v", name, shape, got, c.OShape, c.OValues)
		}
	}
	if len(f.Cases) < 400 || errs < 80 || oindex < 200 || len(kinds) < 16 {
		t.Errorf("only %d cases (%d errors, %d with an oindex meaning, %d kinds)", len(f.Cases), errs, oindex, len(kinds))
	}
}

// TestWriteNumpySpellings writes through every selection text of the
// generated NumPy reference set, as NumPy's a[text] = v: the values -1,
// -2, ... in the result's shape land where NumPy's result says (its
// values are positions, the array being np.arange), the last write
// winning where a position repeats, the rest untouched; where NumPy
// raises, the write fails with the kind of error NumPy raises and the
// array is unchanged.
func TestWriteNumpySpellings(t *testing.T) {
	f := loadSpellingCases(t)
	ctx := context.Background()
	st := mem.New()
	written := 0
	for i, c := range f.Cases {
		name := fmt.Sprintf("%v a[%s] = ... (%s)", c.Shape, c.Text, c.Kind)
		items, err := nd.ParseSelection(c.Text)
		if err != nil {
			continue // refused as parsed: TestNumpySpellings
		}
		a, want := arangeArray(t, st, fmt.Sprintf("w%d", i), c.Shape)
		data := make([]int64, len(c.Values))
		for k, pos := range c.Values {
			data[k] = -int64(k + 1)
			want[pos] = data[k]
		}
		err = zarr.Write(ctx, a, data, items...)
		if c.Error != "" {
			if e := errorKind(err, c.Sentinel); e != nil {
				t.Errorf("%s: %v; NumPy: %s: %s", name, e, c.Error, c.Message)
			}
			want = want[:0]
			for k := range nd.NumElements(c.Shape) {
				want = append(want, int64(k))
			}
		} else if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		} else {
			written++
		}
		got, _, err := zarr.Read[int64](ctx, a)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: array %v, want %v (%v)", name, got, want, err)
		}
	}
	if written < 400 {
		t.Errorf("only %d writes checked", written)
	}
}

// loadSpellingCases reads the generated NumPy reference set.
func loadSpellingCases(t *testing.T) (f struct{ Cases []spellingCase }) {
	t.Helper()
	b, err := os.ReadFile("../testdata/selections/numpy_spellings.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}
