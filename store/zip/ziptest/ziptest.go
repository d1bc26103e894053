// Package ziptest runs the store conformance suite over zip archives held
// in any store, so each backend's tests can show that store/zip reads
// archives from it:
//
//	func TestZipOver(t *testing.T) {
//		ziptest.TestOver(t, func(t *testing.T) store.Store { return newStore(t) })
//	}
package ziptest

import (
	"bytes"
	"context"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/store/zip"
)

// Key is where TestOver keeps the archive in each store.
const Key = "data.ozx"

// Archive returns contents archived by zip.Write, failing t on error.
func Archive(t testing.TB, contents map[string][]byte) []byte {
	t.Helper()
	ctx := context.Background()
	src := mem.New()
	for k, v := range contents {
		if err := src.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := zip.Write(ctx, &buf, src); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOver runs storetest.TestReader over a zip.Reader of an archive (made
// by Archive, once) stored under Key in a fresh store from newStore, one
// per subtest.
func TestOver(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	var arch []byte
	storetest.TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
		if arch == nil {
			arch = Archive(t, contents)
		}
		st := newStore(t)
		ctx := context.Background()
		if err := st.Set(ctx, Key, arch); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.Open(ctx, st, Key)
		if err != nil {
			t.Fatal(err)
		}
		return zr
	})
}
