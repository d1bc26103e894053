package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// narrowArray writes zarr.json for a 1-D array of the narrow type name with
// the given array->bytes codec, as zarrs writes them.
func narrowArray(t *testing.T, st store.Store, name, codec string, n, chunk int, fill string) *zarr.Array {
	t.Helper()
	meta := `{"zarr_format": 3, "node_type": "array", "shape": [` + itoa(n) + `], "data_type": "` + name + `",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [` + itoa(chunk) + `]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": ` + fill + `,
	  "codecs": [` + codec + `, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]}`
	ctx := context.Background()
	if err := st.Set(ctx, "a/zarr.json", []byte(meta)); err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return a
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestNarrowTypesRoundTrip writes every narrow type through Write (with
// the bytes codec and with packbits) and reads it back through Read, as
// floats or integers, checking values against dtype's conversions (which
// TestNarrowMatchesMLDtypes checks against ml_dtypes) and the fill value
// of chunks never written.
func TestNarrowTypesRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, d := range dtype.NarrowTypes() {
		for _, codec := range []string{`{"name": "bytes"}`, `{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}`} {
			st := mem.New()
			a := narrowArray(t, st, d.Name(), codec, 37, 8, "1")
			if d.Kind() == dtype.NarrowFloat {
				in := make([]float64, 20)
				for i := range in {
					in[i] = float64(i)*0.37 - 3
				}
				if err := zarr.Write(ctx, a, in, nd.Range(0, 20)); err != nil {
					t.Fatalf("%s %s: write: %v", d, codec, err)
				}
				got, _, err := zarr.Read[float32](ctx, a)
				if err != nil {
					t.Fatalf("%s %s: read: %v", d, codec, err)
				}
				for i, g := range got {
					want := 1.0 // fill
					if i < 20 {
						want = dtype.NarrowToFloat64(d, dtype.NarrowFromFloat64(d, in[i]))
					}
					if float64(g) != want && !(math.IsNaN(want) && math.IsNaN(float64(g))) {
						t.Fatalf("%s %s: [%d] = %v, want %v", d, codec, i, g, want)
					}
				}
				continue
			}
			lo, hi := dtype.NarrowRange(d)
			in := make([]int16, 0, 20)
			for v := lo; len(in) < 20; v++ {
				if v > hi {
					v = lo
				}
				in = append(in, int16(v))
			}
			if err := zarr.Write(ctx, a, in, nd.Range(3, 23)); err != nil {
				t.Fatalf("%s %s: write: %v", d, codec, err)
			}
			got, _, err := zarr.Read[int64](ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range got {
				want := int64(1)
				if i >= 3 && i < 23 {
					want = int64(in[i-3])
				}
				if g != want {
					t.Fatalf("%s %s: [%d] = %d, want %d", d, codec, i, g, want)
				}
			}
			if err := zarr.Write(ctx, a, []int64{hi + 1}, nd.Range(0, 1)); !errors.Is(err, zarr.ErrInvalidValue) {
				t.Errorf("%s: writing %d: %v, want ErrInvalidValue", d, hi+1, err)
			}
			if _, _, err := zarr.Read[float32](ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) {
				t.Errorf("%s: read as float32: %v, want ErrTypeMismatch", d, err)
			}
		}
	}
}

// TestInt4PackedChunk reads a chunk packed by hand as the packbits spec
// lays it out (and zarrs writes it: elements lowest bits first).
func TestInt4PackedChunk(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	meta := `{"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "int4",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
	  "codecs": [{"name": "packbits", "configuration": {"padding_encoding": "first_byte", "first_bit": null, "last_bit": null}}]}`
	if err := st.Set(ctx, "zarr.json", []byte(meta)); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, "c/0", []byte{4, 0xe1, 0x87, 0x00}); err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := zarr.Read[int8](ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []int8{1, -2, 7, -8, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if err := st.Set(ctx, "c/0", []byte{3, 0xe1, 0x87, 0x00}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := zarr.Read[int8](ctx, a); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("wrong padding byte: %v, want ErrCorrupt", err)
	}
}
