package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"context"
	"fmt"
	"testing"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
)

// reportStore puts the store calls and bytes per operation beside the timings.
func reportStore(b *testing.B, cs *countingStore) {
	e := cs.economy()
	b.ReportMetric(float64(e.calls)/float64(b.N), "gets/op")
	b.ReportMetric(float64(e.ranges)/float64(b.N), "ranges/op")
	b.ReportMetric(float64(e.bytes)/float64(b.N), "readB/op")
}

// BenchmarkReadInnerChunk reads one 32x32 int32 inner chunk (zstd) of a
// 256x256 shard, with a cold index (no cache) and a warm one.
func BenchmarkReadInnerChunk(b *testing.B) {
	f := newFixture(b, []int{256, 256}, []int{32, 32}, zstdInner, IndexEnd)
	sel := box([]int{32, 32}, []int{3, 5}, []int{4, 6})
	out := make([]byte, sel.NumElements()*4)
	dst := nd.Contiguous(out, sel.FullShape(), 4)
	for _, mode := range []string{"cold", "warm"} {
		b.Run(mode, func(b *testing.B) {
			opt := ReadOptions{}
			if mode == "warm" {
				opt.Cache = NewIndexCache(0)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			f.cs.reset()
			for b.Loop() {
				if err := readLayout(f.l, context.Background(), StoreSource(f.cs, "m", "s"), sel, dst, opt); err != nil {
					b.Fatal(err)
				}
			}
			reportStore(b, f.cs)
		})
	}
}

// BenchmarkReadShard reads a whole 256x256 int32 shard (64 zstd inner
// chunks) from a store, and decodes one held in memory.
func BenchmarkReadShard(b *testing.B) {
	f := newFixture(b, []int{256, 256}, []int{32, 32}, zstdInner, IndexEnd)
	sel := box([]int{32, 32}, []int{0, 0}, []int{8, 8})
	out := make([]byte, len(f.data))
	dst := nd.Contiguous(out, sel.FullShape(), 4)
	for _, conc := range []int{1, 2} {
		b.Run(fmt.Sprintf("store/concurrency=%d", conc), func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			f.cs.reset()
			for b.Loop() {
				if err := readLayout(f.l, context.Background(), StoreSource(f.cs, "m", "s"), sel, dst, ReadOptions{Concurrency: conc}); err != nil {
					b.Fatal(err)
				}
			}
			reportStore(b, f.cs)
		})
	}
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		b.ReportAllocs()
		for b.Loop() {
			if err := f.l.DecodeShard(out, f.enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadArray reads a whole 1024x1024 int32 array of 16 shards of
// 256x256 (zstd inner chunks of 32x32) from store/mem, shard by shard into
// one output, and a 1000x1000 window of it, with a warm index cache.
func BenchmarkReadArray(b *testing.B) {
	f := newFixture(b, []int{256, 256}, []int{32, 32}, zstdInner, IndexEnd)
	s := mem.New()
	for i := range 4 {
		for j := range 4 {
			if err := s.Set(context.Background(), fmt.Sprintf("c/%d/%d", i, j), f.enc); err != nil {
				b.Fatal(err)
			}
		}
	}
	cs := &countingStore{r: s}
	out := make([]byte, 1024*1024*4)
	whole := nd.Contiguous(out, []int{1024, 1024}, 4)
	for _, tc := range []struct {
		name   string
		lo, hi int
		cache  bool
	}{{"whole", 0, 1024, false}, {"window-warm", 12, 1012, true}} {
		b.Run(tc.name, func(b *testing.B) {
			opt := ReadOptions{}
			if tc.cache {
				opt.Cache = NewIndexCache(0)
			}
			n := tc.hi - tc.lo
			b.SetBytes(int64(n * n * 4))
			b.ReportAllocs()
			cs.reset()
			for b.Loop() {
				arraySel := nd.Selection{{Start: tc.lo, Count: n, Step: 1}, {Start: tc.lo, Count: n, Step: 1}}
				outView := whole.Slice([]int{0, 0}, []int{n, n}, []int{1, 1})
				for p := range arraySel.Chunks([]int{256, 256}) {
					key := fmt.Sprintf("c/%d/%d", p.Coords[0], p.Coords[1])
					if err := readLayout(f.l, context.Background(), StoreSource(cs, "m", key), partSelection(p), p.DstView(outView), opt); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportStore(b, cs)
		})
	}
}
