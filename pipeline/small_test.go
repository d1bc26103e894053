package pipeline_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// TestCachedPointAllocs: a one-element read whose inner chunk the chunk
// cache holds, and a point read of a few cached points, allocate nothing
// (the cache key is built in pooled scratch and looked up as bytes); no
// engine, selection or goroutine.
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
		if allocs > 1 {
			t.Errorf("%s: cached one-element read: %.1f allocations, want none (+1 for the items)", name, allocs)
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
		if allocs > 0 {
			t.Errorf("%s: 3 cached points: %.1f allocations, want none", name, allocs)
		}
	}
}

// TestCachedBox reads random boxes (integers and step-1 slices, some
// straddling several chunks, some touching more than the fast path takes)
// of a plain and a sharded array through ReadBytesInto, with a cold and a
// warm chunk cache, and compares with the written values; a warm read of a
// box of at most 16 read units reads nothing from the store and allocates
// nothing (pipeline.ReadCachedBox).
func TestCachedBox(t *testing.T) {
	ctx := context.Background()
	shape := []int{300, 200}
	sharded := []codecs.Spec{spec(t, "sharding_indexed", map[string]any{"chunk_shape": []int{16, 24},
		"codecs":       json.RawMessage(`[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]`),
		"index_codecs": json.RawMessage(`[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]`)})}
	for name, layout := range map[string]struct {
		chunks []int
		specs  []codecs.Spec
	}{"plain": {[]int{64, 48}, zstdSpecs(t)}, "sharded": {[]int{64, 48}, sharded}} {
		t.Run(name, func(t *testing.T) {
			st, vals := makeArray(t, shape, layout.chunks, layout.specs)
			hs := &hookStore{Store: st}
			l := cache.NewLRU(1 << 20)
			a, err := zarr.OpenArray(ctx, hs, "a", zarr.WithCache(l))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for round := range 2 { // cold, then warm
				if round == 1 {
					if _, _, err := a.ReadBytes(ctx); err != nil {
						t.Fatal(err)
					}
				}
				for range 200 {
					var items [2]nd.Item
					var lo, n [2]int
					for d, s := range shape {
						lo[d], n[d] = rng.IntN(s), 1
						if rng.IntN(4) == 0 {
							items[d] = nd.Index(lo[d] - s*rng.IntN(2)) // negative: from the end
						} else {
							n[d] = 1 + rng.IntN(min(s-lo[d], []int{8, 70, 200}[rng.IntN(3)]))
							items[d] = nd.Range(lo[d], lo[d]+n[d])
						}
					}
					got := make([]float32, n[0]*n[1])
					gets := hs.gets.Load()
					if err := zarr.ReadInto(ctx, a, got, items[:]...); err != nil {
						t.Fatalf("%v: %v", items, err)
					}
					for i := range n[0] {
						for j := range n[1] {
							if w := vals[(lo[0]+i)*shape[1]+lo[1]+j]; got[i*n[1]+j] != w {
								t.Fatalf("round %d %v: [%d,%d] = %v, want %v", round, items, i, j, got[i*n[1]+j], w)
							}
						}
					}
					if round == 1 && hs.gets.Load() != gets {
						t.Fatalf("warm read of %v read the store %d times", items, hs.gets.Load()-gets)
					}
				}
			}
			if raceEnabled {
				return
			}
			out := make([]byte, 20*30*4)
			items := []nd.Item{nd.Range(40, 60), nd.Range(30, 60)} // 4 chunks, or 4 inner chunks of 4 shards
			if allocs := testing.AllocsPerRun(100, func() {
				if err := a.ReadBytesInto(ctx, out, items...); err != nil {
					t.Fatal(err)
				}
			}); allocs != 0 {
				t.Errorf("a cached box read allocates %v times", allocs)
			}
		})
	}
	// No chunk cache, an output of the wrong size, no box: false.
	g := &pipeline.Grid{Shape: []int{4, 4}, ChunkShape: []int{2, 2}}
	sel, _ := nd.Normalize([]nd.Item{nd.Range(0, 2), nd.Index(1)}, g.Shape)
	if pipeline.ReadCachedBox(g, sel, make([]byte, 8)) {
		t.Error("ReadCachedBox without a chunk cache")
	}
}
