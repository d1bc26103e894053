package pipeline_test

import (
	"context"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// TestCachedPointAllocs: a one-element read whose inner chunk the chunk
// cache holds allocates at most twice (its cache key), and a point read of
// a few cached points once per point; no engine, selection or goroutine.
// (Values are checked by zarr's TestSmallReads.)
func TestCachedPointAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled objects at random")
	}
	ctx := context.Background()
	for _, name := range []string{"v3_shard_end_edges", "v3_dtype_int16"} {
		c := refdata.Lookup(t, name)
		st, err := fs.New(refdata.Dir(), fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, st, c.Path, zarr.WithCache(cache.NewLRU(1<<20)))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.ReadBytes(ctx); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, a.Metadata().DataType.Size())
		shape := a.Shape()
		k := 0
		allocs := testing.AllocsPerRun(200, func() {
			k++
			items := make([]nd.Item, len(shape))
			for d := range items {
				items[d] = nd.Index(k * 7 % shape[d])
			}
			if err := a.ReadBytesInto(ctx, out, items...); err != nil {
				t.Fatal(err)
			}
		})
		// The items slice above is the caller's: one allocation of its own
		// (it escapes through the variadic call).
		if allocs > 3 {
			t.Errorf("%s: cached one-element read: %.1f allocations, want at most 2 (+1 for the items)", name, allocs)
		}
		pts, err := a.Points([][]int{{1, 2, 3}, {0, 1, 2}}[:len(shape)])
		if err != nil {
			t.Fatal(err)
		}
		pout := make([]byte, 3*len(out))
		allocs = testing.AllocsPerRun(200, func() {
			if err := a.ReadPointsSelection(ctx, pout, pts); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 3 {
			t.Errorf("%s: 3 cached points: %.1f allocations, want at most 3", name, allocs)
		}
	}
}
