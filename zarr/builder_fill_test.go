package zarr

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// refMetadata parses the zarr.json of a reference array of testdata/refdata
// (made by zarr-python).
func refMetadata(t *testing.T, name string) *ArrayMetadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "refdata", name, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseArrayMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFillValueAndDimensionNames (trial F23): FillValue takes Go values
// (NaN, infinities, -0, 64-bit extremes, complex, bool) and
// DimensionNames the names xarray reads; both give the metadata
// zarr-python wrote for the same arrays.
func TestFillValueAndDimensionNames(t *testing.T) {
	for _, c := range []struct {
		ref  string
		fill any
	}{
		{"v3_fill_nan_f32.zarr", math.NaN()},
		{"v3_fill_neginf_f32.zarr", float32(math.Inf(-1))},
		{"v3_fill_posinf_f64.zarr", math.Inf(1)},
		{"v3_fill_negzero_f64.zarr", math.Copysign(0, -1)},
		{"v3_fill_f16_2p5.zarr", 2.5},
		{"v3_fill_uint64_max.zarr", uint64(math.MaxUint64)},
		{"v3_fill_int64_min.zarr", int64(math.MinInt64)},
		{"v3_fill_int16_m12345.zarr", -12345},
		{"v3_fill_c128_nan_inf.zarr", complex(math.NaN(), math.Inf(1))},
		{"v3_fill_bool_true.zarr", true},
	} {
		ref := refMetadata(t, c.ref)
		m, err := NewArrayMetadata(ref.Shape, ref.DataType, ref.ChunkShape, FillValue(c.fill))
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if !bytes.Equal(m.FillValue, ref.FillValue) {
			t.Errorf("%s: FillValue(%v) is % x, zarr-python's % x", c.ref, c.fill, m.FillValue, ref.FillValue)
		}
	}
	if _, err := NewArrayMetadata([]int{3}, refMetadata(t, "v3_fill_int8_m1.zarr").DataType, []int{3}, FillValue(300)); err == nil {
		t.Errorf("FillValue(300) for int8 accepted")
	}
	if _, err := NewArrayMetadata([]int{3}, refMetadata(t, "v3_fill_int8_m1.zarr").DataType, []int{3}, FillValue(struct{}{})); err == nil {
		t.Errorf("FillValue(struct{}{}) accepted")
	}
	for _, c := range []struct {
		ref   string
		names []string
	}{
		{"v3_dimnames_3d.zarr", []string{"time", "lat", "lon"}},
		{"v3_dimnames_partial_null.zarr", []string{"x", ""}},
	} {
		ref := refMetadata(t, c.ref)
		m, err := NewArrayMetadata(ref.Shape, ref.DataType, ref.ChunkShape, DimensionNames(c.names...))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.DimensionNames, ref.DimensionNames) {
			t.Errorf("%s: DimensionNames(%q) gives %v, zarr-python wrote %v", c.ref, c.names, m.DimensionNames, ref.DimensionNames)
		}
	}
}
