package zip_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
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
