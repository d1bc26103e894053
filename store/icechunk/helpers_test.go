package icechunk_test

import (
	"context"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/zarr"
)

// newArraySession creates a repository on st (with opts) and a session on
// main holding a new int32 (or dt) array at path of shape and chunks.
func newArraySession(t *testing.T, st store.Store, path string, dt dtype.DataType, shape, chunks []int, opts ...icechunk.Option) (*icechunk.Session, *zarr.Array) {
	t.Helper()
	ctx := context.Background()
	r, err := icechunk.Create(ctx, st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Session(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata(shape, dt, chunks)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, path, meta)
	if err != nil {
		t.Fatal(err)
	}
	return s, a
}

// openMainArray opens the repository on st afresh (with opts) and the
// array at path of main's snapshot.
func openMainArray(t *testing.T, st store.Reader, path string, opts ...icechunk.Option) *zarr.Array {
	t.Helper()
	ctx := context.Background()
	r, err := icechunk.Open(ctx, st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.CheckoutRef(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, snap, path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
