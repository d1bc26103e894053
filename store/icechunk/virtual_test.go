package icechunk_test

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// TestVirtualRefs reads the virtual refs the core's native build wrote
// (make_virtual.mjs) through store/virtual, s3://gozarr-virtual mapped onto
// testdata/icechunk/virtual-data.
func TestVirtualRefs(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(fixtures, "virtual-data")
	opener := func(ctx context.Context, location string) (store.Reader, error) {
		if location != "s3://gozarr-virtual" {
			t.Errorf("opened %q", location)
		}
		return fs.New(data, fs.ReadOnly())
	}
	read := func(opts ...virtual.Option) ([]byte, error) {
		var o []icechunk.Option
		if opts != nil {
			res, err := virtual.New(append(opts, virtual.WithOpener(opener))...)
			if err != nil {
				t.Fatal(err)
			}
			o = append(o, icechunk.WithVirtual(res))
		}
		r := openRepo(t, filepath.Join(fixtures, "virtual"), o...)
		snap, err := r.CheckoutRef(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, snap, "virt")
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := a.ReadBytes(ctx)
		return b, err
	}
	got, err := read(virtual.Allow("s3://gozarr-virtual"))
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103}
	for i, w := range want {
		if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != w {
			t.Errorf("virt[%d] = %d, want %d", i, v, w)
		}
	}
	if _, err := read(); !errors.Is(err, icechunk.ErrVirtual) {
		t.Errorf("without a resolver: %v, want ErrVirtual", err)
	}
	if _, err := read(virtual.Allow("s3://other-bucket")); !errors.Is(err, virtual.ErrNotAllowed) {
		t.Errorf("outside the allowed prefixes: %v, want ErrNotAllowed", err)
	}
	// the refs record an ETag and a time that a filesystem cannot check
	if _, err := read(virtual.Allow("s3://gozarr-virtual"), virtual.StrictChecksums()); !errors.Is(err, virtual.ErrUnverifiable) {
		t.Errorf("strict checksums on a store that cannot check them: %v, want ErrUnverifiable", err)
	}
}
