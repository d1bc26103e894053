package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestReadNumpySubscripts reads every selection text of the NumPy
// reference set (testdata/selections/numpy_subscripts.json) from an array
// holding np.arange(n).reshape(shape): Read and ReadBytes give NumPy's
// shape and values, pointwise included, or fail where NumPy raises.
func TestReadNumpySubscripts(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("../testdata/selections/numpy_subscripts.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Shape       []int `json:"shape"`
			ResultShape []int `json:"result_shape"`
			Text        string
			Values      []int64
			Error       string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	arrays := map[string]*zarr.Array{}
	st := mem.New()
	for _, c := range f.Cases {
		key := fmt.Sprint(c.Shape)
		a := arrays[key]
		if a == nil {
			chunks := slices.Clone(c.Shape)
			for i := range chunks {
				chunks[i] = max(1, chunks[i]/2)
			}
			m, err := zarr.NewArrayMetadata(c.Shape, dtype.TypeInt64, chunks)
			if err != nil {
				t.Fatal(err)
			}
			if a, err = zarr.CreateArray(ctx, st, fmt.Sprintf("a%d", len(arrays)), m); err != nil {
				t.Fatal(err)
			}
			vals := make([]int64, nd.NumElements(c.Shape))
			for i := range vals {
				vals[i] = int64(i)
			}
			if err := zarr.Write(ctx, a, vals); err != nil {
				t.Fatal(err)
			}
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
