package zarr_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// TestWriteForPeers writes every v3 reference case with gozarr, with the
// same metadata and values, into the directory GOZARR_WRITE_DIR, for another
// implementation to read back and compare with the .npy files there
// (testdata/interop/check_zarr_python.py does so with zarr-python 3). It
// skips when the variable is unset.
func TestWriteForPeers(t *testing.T) {
	dir := os.Getenv("GOZARR_WRITE_DIR")
	if dir == "" {
		t.Skip("set GOZARR_WRITE_DIR to write the corpus with gozarr for a peer to read")
	}
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat != 3 || strings.Contains(c.Name, "/") {
			continue
		}
		want := c.ExpectedArray(t)
		src := openRef(t, c)
		pipe := pipeline.Options{WriteEmptyChunks: strings.Contains(c.Notes, "write_empty_chunks=True")}
		a, err := zarr.CreateArray(ctx, st, c.Name+".zarr", src.Metadata(), zarr.WithPipeline(pipe))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := a.WriteBytes(ctx, want.Data); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := npy.WriteFile(filepath.Join(dir, c.Name+".npy"), want.Descr, want.Shape, want.Data); err != nil {
			t.Fatal(err)
		}
	}
}
