package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// numpyCase is one case of the NumPy reference set
// (testdata/selections/numpy_subscripts.json, make_numpy_subscripts.py).
type numpyCase struct {
	Shape       []int `json:"shape"`
	ResultShape []int `json:"result_shape"`
	Text        string
	Values      []int64
	Error       string
}

// numpyCases reads the NumPy reference set.
func numpyCases(t *testing.T) []numpyCase {
	t.Helper()
	b, err := os.ReadFile("../testdata/selections/numpy_subscripts.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []numpyCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// arangeArray creates name in st holding np.arange(n).reshape(shape) as
// int64, in chunks of half the shape, and returns it with its values.
func arangeArray(t *testing.T, st *mem.Store, name string, shape []int) (*zarr.Array, []int64) {
	t.Helper()
	ctx := context.Background()
	chunks := slices.Clone(shape)
	for i := range chunks {
		chunks[i] = max(1, chunks[i]/2)
	}
	m, err := zarr.NewArrayMetadata(shape, dtype.TypeInt64, chunks)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, name, m)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]int64, nd.NumElements(shape))
	for i := range vals {
		vals[i] = int64(i)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	return a, vals
}

// TestReadNumpySubscripts reads every selection text of the NumPy
// reference set (testdata/selections/numpy_subscripts.json) from an array
// holding np.arange(n).reshape(shape): Read and ReadBytes give NumPy's
// shape and values, pointwise included, or fail where NumPy raises.
func TestReadNumpySubscripts(t *testing.T) {
	ctx := context.Background()
	arrays := map[string]*zarr.Array{}
	st := mem.New()
	for _, c := range numpyCases(t) {
		key := fmt.Sprint(c.Shape)
		a := arrays[key]
		if a == nil {
			a, _ = arangeArray(t, st, fmt.Sprintf("a%d", len(arrays)), c.Shape)
			arrays[key] = a
		}
		items, err := nd.ParseSelection(c.Text)
		if err != nil {
			if c.Error == "" || !errors.Is(err, nd.ErrInvalidSelection) && !errors.Is(err, nd.ErrOutOfBounds) {
				t.Errorf("[%s]: %v", c.Text, err)
			}
			continue // a ragged or float list, refused as it is parsed
		}
		got, shape, err := zarr.Read[int64](ctx, a, items...)
		if c.Error != "" {
			if err == nil || !errors.Is(err, nd.ErrInvalidSelection) && !errors.Is(err, nd.ErrOutOfBounds) {
				t.Errorf("%v [%s]: %v %v, NumPy raises %s", c.Shape, c.Text, shape, err, c.Error)
			}
			continue
		}
		if err != nil || !slices.Equal(shape, c.ResultShape) || !slices.Equal(got, c.Values) && len(c.Values) > 0 {
			t.Errorf("%v [%s]: %v %v %v, NumPy %v %v", c.Shape, c.Text, shape, got, err, c.ResultShape, c.Values)
		}
		raw, shape2, err := a.ReadBytes(ctx, items...)
		if err != nil || !slices.Equal(shape2, c.ResultShape) || len(raw) != 8*len(c.Values) {
			t.Errorf("ReadBytes %v [%s]: %v %d bytes %v", c.Shape, c.Text, shape2, len(raw), err)
		}
	}
}

// TestPointwiseBounded: under WithMaxReadBytes, a short selection text
// that broadcasts to billions of points (three index arrays of shapes
// (k,1,1), (1,k,1) and (1,1,k)) is refused with ErrTooLarge before its
// points are listed, and the limit counts the points' coordinates with
// their values.
func TestPointwiseBounded(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	m, err := zarr.NewArrayMetadata([]int{4000, 4000, 4000}, dtype.TypeUint8, []int{100, 100, 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.CreateArray(ctx, st, "big", m); err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "big", zarr.WithMaxReadBytes(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	const k = 3000 // 2.7e10 points from a text of about 60 KB
	var b1, b2, b3 strings.Builder
	for i := range k {
		if i > 0 {
			b1.WriteString(", ")
			b2.WriteString(", ")
			b3.WriteString(", ")
		}
		fmt.Fprintf(&b1, "[[%d]]", i)
		fmt.Fprintf(&b2, "[%d]", i)
		fmt.Fprintf(&b3, "%d", i)
	}
	text := "[" + b1.String() + "], [[" + b2.String() + "]], [[[" + b3.String() + "]]]"
	items, err := nd.ParseSelection(text)
	if err != nil {
		t.Fatal(err)
	}
	if p, pw, err := nd.NewPointwise(items, a.Shape()); err != nil || !pw || !slices.Equal(p.Shape(), []int{k, k, k}) {
		t.Fatalf("NewPointwise %v %v %v", p.Shape(), pw, err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = a.ReadBytes(ctx, items...)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, zarr.ErrTooLarge) {
		t.Fatalf("ReadBytes of %d^3 points: %v", k, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing took %d bytes", grew)
	}
	// 4 points of 1 + 3*8 bytes: 100 bytes; a limit of 99 refuses them.
	small, err := nd.ParseSelection("[[0, 1], [2, 3]], 0, 0")
	if err != nil {
		t.Fatal(err)
	}
	for limit, ok := range map[int64]bool{99: false, 100: true} {
		la, err := zarr.OpenArray(ctx, st, "big", zarr.WithMaxReadBytes(limit))
		if err != nil {
			t.Fatal(err)
		}
		_, shape, err := la.ReadBytes(ctx, small...)
		if ok != (err == nil) || !ok && !errors.Is(err, zarr.ErrTooLarge) || ok && !slices.Equal(shape, []int{2, 2}) {
			t.Errorf("limit %d: shape %v, %v", limit, shape, err)
		}
	}
}

// TestWriteNumpySubscripts writes through every selection text of the
// NumPy reference set: the values -1, -2, ... in the result's shape go to
// the positions NumPy's result names (its values are the positions, the
// array being np.arange), the last write winning where a position
// repeats, as NumPy's a[text] = v; the rest of the array is untouched.
// Where NumPy raises, the write fails.
func TestWriteNumpySubscripts(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	pointwise := 0
	for i, c := range numpyCases(t) {
		items, err := nd.ParseSelection(c.Text)
		if err != nil {
			continue // refused as it is parsed: TestReadNumpySubscripts
		}
		a, want := arangeArray(t, st, fmt.Sprintf("w%d", i), c.Shape)
		data := make([]int64, len(c.Values))
		for k, pos := range c.Values {
			data[k] = -int64(k + 1)
			want[pos] = data[k]
		}
		err = zarr.Write(ctx, a, data, items...)
		if c.Error != "" {
			if err == nil {
				t.Errorf("%v [%s] = ...: no error, NumPy raises %s", c.Shape, c.Text, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v [%s] = %v: %v", c.Shape, c.Text, data, err)
			continue
		}
		if pw, _ := nd.NumpyPointwise(items, c.Shape); pw {
			pointwise++
		}
		got, _, err := zarr.Read[int64](ctx, a)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%v [%s] = %v: array %v, want %v (%v)", c.Shape, c.Text, data, got, want, err)
		}
	}
	if pointwise < 60 {
		t.Errorf("only %d pointwise writes checked", pointwise)
	}
}
