package zip_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/store/zip"
)

// toBuffer is a Builder's finish that writes the archive into buf.
func toBuffer(buf *bytes.Buffer) func(context.Context, func(io.Writer) error) error {
	return func(_ context.Context, write func(io.Writer) error) error { return write(buf) }
}

func TestBuilderConformance(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store {
		return zip.NewBuilder(mem.New(), toBuffer(new(bytes.Buffer)))
	})
}

// TestBuilder rewrites and deletes values before Close: the archive holds
// each name once, with its last value, metadata first.
func TestBuilder(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	b := zip.NewBuilder(mem.New(), toBuffer(&buf), zip.WithComment(zip.OMEComment("0.5")))
	for _, kv := range [][2]string{{"c/0", "first"}, {"zarr.json", "{}"}, {"c/0", "second"}, {"c/1", "gone"}, {"a/zarr.json", "{}"}} {
		if err := b.Set(ctx, kv[0], []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, "c/1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.Set(ctx, "x", nil); !errors.Is(err, zip.ErrClosed) {
		t.Errorf("Set after Close: err = %v, want ErrClosed", err)
	}
	if _, err := b.Get(ctx, "c/0", store.Full()); !errors.Is(err, zip.ErrClosed) {
		t.Errorf("Get after Close: err = %v, want ErrClosed", err)
	}
	r := open(t, put(t, "mem", buf.Bytes()))
	names := storetest.ListKeys(t, r, "")
	if want := []string{"a/zarr.json", "c/0", "zarr.json"}; !slices.Equal(names, want) {
		t.Errorf("archive holds %q, want %q", names, want)
	}
	if got, err := r.Get(ctx, "c/0", store.Full()); err != nil || string(got) != "second" {
		t.Errorf("Get(c/0) = %q, %v; want the last value", got, err)
	}
	if string(r.Comment()) != `{"ome":{"version":"0.5"}}` {
		t.Errorf("comment %q", r.Comment())
	}
	// Entries are in Write's order: the root zarr.json first.
	if i := bytes.Index(buf.Bytes(), []byte("zarr.json")); i < 0 || i > 40 {
		t.Errorf("root zarr.json is not the first entry (name at %d)", i)
	}
	// A failed finish leaves the Builder open, to try again.
	fail := zip.NewBuilder(mem.New(), func(context.Context, func(io.Writer) error) error { return errors.New("disk full") })
	if err := fail.Close(ctx); err == nil {
		t.Error("Close with a failing finish: no error")
	}
	if err := fail.Set(ctx, "k", nil); err != nil {
		t.Errorf("Set after a failed Close: %v", err)
	}
}

// TestBuilderDiscard (issue 27 audit): Discard writes no archive, deletes
// what was staged, and removes a staging directory of the Builder's own
// (named .gozarr-tmp-zip-*, as store/storeurl makes beside a new archive;
// a failed zarrcat cp to a new .ozx left it behind); another staging
// store keeps its directory. The Builder is closed afterwards.
func TestBuilderDiscard(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{".gozarr-tmp-zip-123", "mine"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		staging, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		wrote := false
		b := zip.NewBuilder(staging, func(context.Context, func(io.Writer) error) error { wrote = true; return nil })
		for _, k := range []string{"zarr.json", "c/0/0", "a/c/1"} {
			if err := b.Set(ctx, k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(dir)
		if own := name != "mine"; own != errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: after Discard the staging directory: %v", name, err)
		}
		if keys := slices.Collect(func(yield func(string) bool) {
			for k := range staging.List(ctx, "") {
				if !yield(k) {
					return
				}
			}
		}); len(keys) != 0 {
			t.Errorf("%s: staged values left: %v", name, keys)
		}
		if err := b.Set(ctx, "x", nil); !errors.Is(err, zip.ErrClosed) || wrote {
			t.Errorf("%s: after Discard: Set %v, archive written %v", name, err, wrote)
		}
		if err := b.Close(ctx); err != nil || wrote {
			t.Errorf("%s: Close after Discard: %v, archive written %v", name, err, wrote)
		}
	}
}
