package zarr_test

import (
	"context"
	"math"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/store"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestBitroundSampleData reads zarr-extensions' bitround sample arrays
// (v3 name "bitround", as zarrs writes it) and checks gozarr's encoder
// rounds the original values to what they hold (the table of their
// README, integers included).
func TestBitroundSampleData(t *testing.T) {
	ctx := context.Background()
	st, err := fsstore.New("../testdata/extensions")
	if err != nil {
		t.Fatal(err)
	}
	f32orig := []float32{0, 0.1, 1.2, 12.3, 123.4, 1234.5, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	f32want := []float32{0, 0.1015625, 1.25, 12, 120, 1280, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	u8orig := []uint8{0, 1, 10, 11, 100, 123, 200, 208, 209, 255}
	u8want := []uint8{0, 1, 10, 12, 96, 128, 192, 192, 224, 224}

	a, err := zarr.OpenArray(ctx, st, "bitround_float32.zarr")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := zarr.Read[float32](ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sameF32 := func(what string, got []float32) {
		for i := range f32want {
			if got[i] != f32want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(f32want[i]))) {
				t.Errorf("%s float32[%d] = %v, want %v", what, i, got[i], f32want[i])
			}
		}
	}
	sameF32("stored", got)
	b, err := zarr.OpenArray(ctx, st, "bitround_uint8.zarr")
	if err != nil {
		t.Fatal(err)
	}
	gotU, _, err := zarr.Read[uint8](ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range u8want {
		if gotU[i] != u8want[i] {
			t.Errorf("stored uint8[%d] = %d, want %d", i, gotU[i], u8want[i])
		}
	}

	// Encoding: the same metadata over an empty store, the originals
	// written, read back rounded.
	for _, name := range []string{"bitround_float32.zarr", "bitround_uint8.zarr"} {
		meta, err := st.Get(ctx, name+"/zarr.json", store.Full())
		if err != nil {
			t.Fatal(err)
		}
		m := mem.New()
		if err := m.Set(ctx, "zarr.json", meta); err != nil {
			t.Fatal(err)
		}
		w, err := zarr.OpenArray(ctx, m, "")
		if err != nil {
			t.Fatal(err)
		}
		if name == "bitround_float32.zarr" {
			if err := zarr.Write(ctx, w, f32orig); err != nil {
				t.Fatal(err)
			}
			got, _, _ := zarr.Read[float32](ctx, w)
			sameF32("encoded", got)
			continue
		}
		if err := zarr.Write(ctx, w, u8orig); err != nil {
			t.Fatal(err)
		}
		got, _, _ := zarr.Read[uint8](ctx, w)
		for i := range u8want {
			if got[i] != u8want[i] {
				t.Errorf("encoded uint8 %d -> %d, want %d", u8orig[i], got[i], u8want[i])
			}
		}
	}
	if _, err := codecs.New(codecs.Spec{Name: "bitround"}); err == nil {
		t.Error("bitround without keepbits accepted")
	}
}
