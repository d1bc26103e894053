package zarr_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestCachedReadErrorNamesChunk: a corrupt chunk read through a chunk
// cache is reported with its key, as it is without one (review 3 §1 item
// 8: the cached path once returned the codec's error alone), for a whole
// read and for the one-element small-read path.
func TestCachedReadErrorNamesChunk(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{8}, dtype.TypeInt32, []int{4}, zarr.Compress(zs))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "u", meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.Write(ctx, a, []int32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, "u/c/1", []byte("not a zstd frame")); err != nil {
		t.Fatal(err)
	}
	for _, withCache := range []bool{false, true} {
		var opts []zarr.Option
		if withCache {
			opts = append(opts, zarr.WithCache(cache.NewLRU(1<<20)))
		}
		c, err := zarr.OpenArray(ctx, st, "u", opts...)
		if err != nil {
			t.Fatal(err)
		}
		for name, sel := range map[string][]nd.Item{"all": {nd.Range(0, 8)}, "one": {nd.Range(5, 6)}} {
			_, _, err := zarr.Read[int32](ctx, c, sel...)
			if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), `chunk "u/c/1"`) {
				t.Errorf("cache %v, read %s: %v, want ErrCorrupt naming chunk \"u/c/1\"", withCache, name, err)
			}
		}
	}
}
