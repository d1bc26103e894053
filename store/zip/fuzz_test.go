package zip_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/zip"
)

// FuzzOpen opens arbitrary bytes as an archive and reads every entry it
// lists, whole and in part: no panic, no hang, errors wrapping the
// package's sentinels, and a whole read as long as Size says.
func FuzzOpen(f *testing.F) {
	f.Add(gozarrZip(f, map[string][]byte{"zarr.json": []byte("{}"), "c/0": []byte("chunk")}))
	f.Add(stdlibZip(f, map[string][]byte{"a": []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "b/c": {}}, 8))
	f.Fuzz(func(t *testing.T, arch []byte) {
		ctx := context.Background()
		src := mem.New()
		if err := src.Set(ctx, "f.zip", arch); err != nil {
			t.Fatal(err)
		}
		r, err := zip.Open(ctx, src, "f.zip", zip.WithMaxDirectory(1<<20))
		if err != nil {
			if !errors.Is(err, zip.ErrFormat) && !errors.Is(err, zip.ErrUnsupported) {
				t.Fatalf("Open: unexpected error %v", err)
			}
			return
		}
		for k, err := range r.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			n, err := r.Size(ctx, k)
			if err != nil {
				t.Fatalf("Size(%q): %v", k, err)
			}
			b, err := r.Get(ctx, k, store.Full())
			if err != nil {
				if !errors.Is(err, zip.ErrFormat) && !errors.Is(err, zip.ErrUnsupported) {
					t.Fatalf("Get(%q): unexpected error %v", k, err)
				}
				continue
			}
			if int64(len(b)) != n {
				t.Fatalf("Get(%q) = %d bytes, Size %d", k, len(b), n)
			}
			part, err := r.Get(ctx, k, store.OffsetLen(1, 3))
			if err == nil && (len(part) > 3 || string(part) != string(b[min(1, len(b)):min(4, len(b))])) {
				t.Fatalf("Get(%q, 1..4) = %q, whole %q", k, part, b)
			}
		}
	})
}
