package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// TestGetPcodec: zarrcat get reads zarrs' pcodec arrays (v2 compressor and
// v3 numcodecs.pcodec, written by zarr-python with pcodec): float32 0..99.
func TestGetPcodec(t *testing.T) {
	want := make([]byte, 400)
	for i := range 100 {
		binary.LittleEndian.PutUint32(want[4*i:], math.Float32bits(float32(i)))
	}
	dir := t.TempDir()
	for _, p := range []string{"v2/array_pcodec_C.zarr", "v3/array_pcodec.zarr", "v3_zarr_python/array_pcodec.zarr"} {
		out := filepath.Join(dir, "a.npy")
		var stdout bytes.Buffer
		src := filepath.Join("..", "..", "codecs", "pcodec", "testdata", "zarrs", filepath.FromSlash(p))
		if err := run(context.Background(), []string{"get", "--format", "npy", "-o", out, src}, &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got.Descr != "<f4" || !equalInts(got.Shape, []int{10, 10}) || !bytes.Equal(got.Data, want) {
			t.Fatalf("%s: got %s %v", p, got.Descr, got.Shape)
		}
	}
}
