package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// TestGetZfpy: zarrcat get reads the arrays zarr-python wrote with
// numcodecs' ZFPY (v3 numcodecs.zfpy in every mode, sharded, v2 zfpy)
// exactly as zarr-python reads them (the .npy beside each).
func TestGetZfpy(t *testing.T) {
	dir := t.TempDir()
	arrays, _ := filepath.Glob(filepath.Join("..", "..", "codecs", "testdata", "zfp", "arrays", "*.zarr"))
	if len(arrays) < 9 {
		t.Fatalf("%d zfpy arrays", len(arrays))
	}
	for _, src := range arrays {
		out := filepath.Join(dir, "a.npy")
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"get", "--format", "npy", "-o", out, src}, &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := npy.ReadFile(strings.TrimSuffix(src, ".zarr") + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		if got.Descr != want.Descr || !equalInts(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s: got %s %v, zarr-python %s %v (or other values)", src, got.Descr, got.Shape, want.Descr, want.Shape)
		}
	}
}
