package pipeline_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/gozarr/gozarr/internal/cputime"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// Benchmarks of small reads (one element, a 64×64 tile, a few points) of
// the benchmark suite's zstd-sharded array at the geometry: 8192²
// float32 (256 MiB) in 4096² shards of 512² inner chunks (1 MiB decoded),
// zstd level 1. The array is written once into a directory under
// os.TempDir (gozarr-smallread-8192, reused while it reads back) and read
// from the page cache:
//
//	go test ./pipeline -run '^$' -bench 'SmallRead' -benchmem
//
// "cached" reads go through an LRU that already holds every inner chunk,
// "uncached" ones through no chunk cache (the shard indexes cached); the
// uncached point reports its time as a ratio to decoding its inner chunk
// alone (x-decode), measured in the same loop.

const (
	smallN     = 8192
	smallShard = 4096
	smallInner = 512
)

var smallOnce struct {
	sync.Mutex
	dir string
}

// smallArrayDir returns the directory of the stored small-read array,
// writing it when it is missing.
func smallArrayDir(b *testing.B) string {
	smallOnce.Lock()
	defer smallOnce.Unlock()
	if smallOnce.dir != "" {
		return smallOnce.dir
	}
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("gozarr-smallread-%d", smallN))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	if a, err := zarr.OpenArray(ctx, st, ""); err == nil && a.Shape()[0] == smallN {
		var probe [4]byte
		if a.ReadBytesInto(ctx, probe[:], nd.Index(smallN-1), nd.Index(smallN-1)) == nil && probe != [4]byte{} {
			smallOnce.dir = dir
			return dir
		}
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if st, err = fs.New(dir); err != nil {
		b.Fatal(err)
	}
	doc := fmt.Sprintf(`{"zarr_format": 3, "node_type": "array", "shape": [%d, %d], "data_type": "float32",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [%d, %d]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,
		"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [%d, %d],
			"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]}`,
		smallN, smallN, smallShard, smallShard, smallInner, smallInner)
	m, err := zarr.ParseArrayMetadata([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "", m)
	if err != nil {
		b.Fatal(err)
	}
	// One shard row at a time: 64 MiB of values.
	rows := make([]byte, smallShard*smallN*4)
	x := uint64(1)
	for r0 := 0; r0 < smallN; r0 += smallShard {
		for i := range smallShard {
			for j := range smallN {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				gi := r0 + i
				v := 100*math.Sin(6*math.Pi*float64(gi)/smallN)*math.Cos(4*math.Pi*float64(j)/smallN) + 0.5*(float64(x>>11)/(1<<53)-0.5)
				binary.LittleEndian.PutUint32(rows[4*(i*smallN+j):], math.Float32bits(float32(math.Round(v*64)/64)))
			}
		}
		if err := a.WriteBytes(ctx, rows, nd.Range(r0, r0+smallShard), nd.All()); err != nil {
			b.Fatal(err)
		}
	}
	smallOnce.dir = dir
	return dir
}

// threadCPU returns the CPU time the calling thread has used (0 where the
// platform cannot tell).
func threadCPU() time.Duration { return cputime.Thread() }

// processCPU returns the CPU time (user and system) the process has used.
func processCPU() time.Duration { return cputime.Process() }

// cpuPerOp runs loop on a locked thread and reports its thread CPU time per
// op (cpu-ns/op): on a loaded machine wall time counts the other
// processes' turns, CPU time much less so.
func cpuPerOp(b *testing.B, loop func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ops := threadCPU(), 0
	for b.Loop() {
		loop()
		ops++
	}
	b.ReportMetric(float64(threadCPU()-t0)/float64(max(ops, 1)), "cpu-ns/op")
}

// smallArray opens the stored array with opts.
func smallArray(b *testing.B, opts ...zarr.Option) *zarr.Array {
	st, err := fs.New(smallArrayDir(b), fs.ReadOnly())
	if err != nil {
		b.Fatal(err)
	}
	a, err := zarr.OpenArray(context.Background(), st, "", opts...)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// cachedSmallArray opens the array with an LRU holding every inner chunk.
func cachedSmallArray(b *testing.B) *zarr.Array {
	a, _ := cachedSmallArrayLRU(b)
	return a
}

// cachedSmallArrayLRU is cachedSmallArray also returning its LRU.
func cachedSmallArrayLRU(b *testing.B) (*zarr.Array, *cache.LRU) {
	l := cache.NewLRU(smallN*smallN*4 + 64<<20)
	a := smallArray(b, zarr.WithCache(l))
	out := make([]byte, smallN*smallN*4)
	if err := a.ReadBytesInto(context.Background(), out); err != nil {
		b.Fatal(err)
	}
	return a, l
}

// BenchmarkSmallRead measures one-element, tile and few-point reads.
func BenchmarkSmallRead(b *testing.B) {
	ctx := context.Background()
	b.Run("point-cached", func(b *testing.B) {
		a := cachedSmallArray(b)
		rng := rand.New(rand.NewPCG(1, 2))
		var out [1]float32
		b.SetBytes(4)
		b.ReportAllocs()
		cpuPerOp(b, func() {
			i, j := rng.IntN(smallN), rng.IntN(smallN)
			if err := zarr.ReadInto(ctx, a, out[:], nd.Index(i), nd.Index(j)); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("points16-cached", func(b *testing.B) {
		a := cachedSmallArray(b)
		rng := rand.New(rand.NewPCG(1, 2))
		is, js := make([]int, 16), make([]int, 16)
		out := make([]byte, 16*4)
		b.SetBytes(16 * 4)
		b.ReportAllocs()
		cpuPerOp(b, func() {
			for k := range is {
				is[k], js[k] = rng.IntN(smallN), rng.IntN(smallN)
			}
			pts, err := a.Points([][]int{is, js})
			if err != nil {
				b.Fatal(err)
			}
			if err := a.ReadPointsSelection(ctx, out, pts); err != nil {
				b.Fatal(err)
			}
		})
	})
	// tile64-cached-hot: tiles of the same 4 inner chunks (4 MiB, which
	// the CPU's 16 MiB L3 holds), against tile64-cached's random tiles of
	// any of the 256 (out of the CPU caches).
	b.Run("tile64-cached-hot", func(b *testing.B) {
		a := cachedSmallArray(b)
		rng := rand.New(rand.NewPCG(1, 2))
		out := make([]float32, 64*64)
		b.SetBytes(64 * 64 * 4)
		b.ReportAllocs()
		cpuPerOp(b, func() {
			i, j := rng.IntN(2*smallInner/64)*64, rng.IntN(2*smallInner/64)*64
			if err := zarr.ReadInto(ctx, a, out, nd.Range(i, i+64), nd.Range(j, j+64)); err != nil {
				b.Fatal(err)
			}
		})
	})
	for _, aligned := range []bool{true, false} {
		name := "tile64-cached"
		if !aligned {
			name = "tile64-cached-straddling"
		}
		b.Run(name, func(b *testing.B) {
			a := cachedSmallArray(b)
			rng := rand.New(rand.NewPCG(1, 2))
			out := make([]float32, 64*64)
			b.SetBytes(64 * 64 * 4)
			b.ReportAllocs()
			cpuPerOp(b, func() {
				i, j := rng.IntN(smallN/64)*64, rng.IntN(smallN/64)*64
				if !aligned { // across the corner of four inner chunks
					i, j = (rng.IntN(smallN/smallInner-1)+1)*smallInner-32, (rng.IntN(smallN/smallInner-1)+1)*smallInner-32
				}
				if err := zarr.ReadInto(ctx, a, out, nd.Range(i, i+64), nd.Range(j, j+64)); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	// A 64×64 tile read from the cache against the copy of a tile alone
	// (nd.Copy out of one of the cache's own values, a random tile of a
	// random inner chunk: as cold in the CPU caches as the read's), in
	// batches of 16 that alternate which goes first, by thread CPU time
	// per tile. x-copy is the read's time over the copy's: what the read
	// costs beyond its copy.
	b.Run("tile64-vs-copy", func(b *testing.B) {
		a, l := cachedSmallArrayLRU(b)
		var chunks [][]byte
		for _, k := range l.Keys() {
			if v, ok := l.Get(k); ok && len(v) == smallInner*smallInner*4 {
				chunks = append(chunks, v)
			}
		}
		if len(chunks) != (smallN/smallInner)*(smallN/smallInner) {
			b.Fatalf("%d inner chunks cached", len(chunks))
		}
		rng := rand.New(rand.NewPCG(1, 2))
		out := make([]float32, 64*64)
		outb := make([]byte, 64*64*4)
		dst := nd.Contiguous(outb, []int{64, 64}, 4)
		shape, strides := []int{64, 64}, []int{smallInner * 4, 4}
		const batch = 16
		var srcs [batch]nd.View
		var tiles [batch][2]int
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var tRead, tCopy time.Duration
		readFirst := true
		b.SetBytes(64 * 64 * 4 * batch)
		b.ReportAllocs()
		for b.Loop() {
			for k := range batch {
				tiles[k] = [2]int{rng.IntN(smallN/64) * 64, rng.IntN(smallN/64) * 64}
				i, j := rng.IntN(smallInner/64)*64, rng.IntN(smallInner/64)*64
				srcs[k] = nd.View{Data: chunks[rng.IntN(len(chunks))], Offset: (i*smallInner + j) * 4, Shape: shape, Strides: strides, ItemSize: 4}
			}
			read := func() {
				t := threadCPU()
				for _, p := range tiles {
					if err := zarr.ReadInto(ctx, a, out, nd.Range(p[0], p[0]+64), nd.Range(p[1], p[1]+64)); err != nil {
						b.Fatal(err)
					}
				}
				tRead += threadCPU() - t
			}
			cp := func() {
				t := threadCPU()
				for _, s := range srcs {
					nd.Copy(dst, s)
				}
				tCopy += threadCPU() - t
			}
			if readFirst {
				read()
				cp()
			} else {
				cp()
				read()
			}
			readFirst = !readFirst
		}
		b.ReportMetric(float64(tRead)/float64(b.N*batch), "read-cpu-ns/tile")
		b.ReportMetric(float64(tCopy)/float64(b.N*batch), "copy-cpu-ns/tile")
		if tCopy > 0 {
			b.ReportMetric(float64(tRead)/float64(tCopy), "x-copy")
		}
	})
	b.Run("point-uncached", func(b *testing.B) {
		a := smallArray(b)
		l := a.Sharding()
		// The encoded inner chunks of one shard row, for the decode-alone
		// baseline, read with the array's own store.
		st, err := fs.New(smallArrayDir(b), fs.ReadOnly())
		if err != nil {
			b.Fatal(err)
		}
		per := smallShard / smallInner
		enc := map[[2]int][]byte{}
		for si := range smallN / smallShard {
			for sj := range smallN / smallShard {
				key := a.ChunkKey([]int{si, sj})
				shard, err := st.Get(ctx, key, store.Full())
				if err != nil {
					b.Fatal(err)
				}
				ix, err := l.IndexOf(shard)
				if err != nil {
					b.Fatal(err)
				}
				for ii := range per {
					for jj := range per {
						off, n, ok := ix.Entry(l.Linear([]int{ii, jj}))
						if !ok {
							b.Fatal("missing inner chunk")
						}
						enc[[2]int{si*per + ii, sj*per + jj}] = shard[off : off+n]
					}
				}
			}
		}
		// Warm the index cache.
		var out [1]float32
		for si := range smallN / smallShard {
			for sj := range smallN / smallShard {
				if err := zarr.ReadInto(ctx, a, out[:], nd.Index(si*smallShard), nd.Index(sj*smallShard)); err != nil {
					b.Fatal(err)
				}
			}
		}
		inner := l.Inner()
		scratch := make([]byte, inner.Repr().NumBytes())
		rng := rand.New(rand.NewPCG(1, 2))
		var tRead, tDecode time.Duration
		b.SetBytes(4)
		b.ReportAllocs()
		// The read and the decode alone alternate which goes first: the
		// second one finds the chunk's bytes in the CPU caches, which made
		// the ratio 1.25 with the read always first and 0.90-0.98 with it
		// always second on the same quiet machine.
		readFirst := true
		for b.Loop() {
			i, j := rng.IntN(smallN), rng.IntN(smallN)
			read := func() {
				t := time.Now()
				if err := zarr.ReadInto(ctx, a, out[:], nd.Index(i), nd.Index(j)); err != nil {
					b.Fatal(err)
				}
				tRead += time.Since(t)
			}
			decode := func() {
				t := time.Now()
				if err := inner.Decode(scratch, enc[[2]int{i / smallInner, j / smallInner}]); err != nil {
					b.Fatal(err)
				}
				tDecode += time.Since(t)
			}
			if readFirst {
				read()
				decode()
			} else {
				decode()
				read()
			}
			readFirst = !readFirst
		}
		b.ReportMetric(float64(tRead)/float64(tDecode), "x-decode")
	})
}

// BenchmarkParallelPointReads measures random cached one-element reads of
// one *zarr.Array from 1, 2 and 8 goroutines. Each op of the benchmark is
// one round: every concurrency level runs for 200 ms, in a rotating order.
// It reports the throughput of each level (ops/s-G), the ratio of 8
// goroutines to 1 (x8/1, the median over rounds), the same ratio of ops
// per CPU second of the process (cpu-eff8/1: 1 when eight goroutines
// waste no CPU on each other; on a machine whose cores are busy with
// other work this is the figure that shows contention, since there the
// wall-clock ratio measures the kernel's scheduler) and the latency
// percentiles of each level (p50-ns-G, p99-ns-G, over all rounds):
//
//	go test ./pipeline -run '^$' -bench ParallelPointReads -benchtime 5x
func BenchmarkParallelPointReads(b *testing.B) {
	ctx := context.Background()
	a := cachedSmallArray(b)
	levels := []int{1, 2, 8}
	lat := map[int][]time.Duration{}
	ops := map[int]float64{}
	var ratios, effs []float64
	round := 0
	for b.Loop() {
		rate, eff := map[int]float64{}, map[int]float64{}
		for k := range levels {
			g := levels[(k+round)%len(levels)]
			var wg sync.WaitGroup
			var mu sync.Mutex
			deadline := time.Now().Add(200 * time.Millisecond)
			total := 0
			start, cpu0 := time.Now(), processCPU()
			for w := range g {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
					var out [1]float32
					mine := make([]time.Duration, 0, 1<<16)
					n := 0
					for {
						t0 := time.Now()
						if t0.After(deadline) {
							break
						}
						i, j := rng.IntN(smallN), rng.IntN(smallN)
						if err := zarr.ReadInto(ctx, a, out[:], nd.Index(i), nd.Index(j)); err != nil {
							b.Error(err)
							return
						}
						if n%16 == 0 { // a sample of the latencies
							mine = append(mine, time.Since(t0))
						}
						n++
					}
					mu.Lock()
					total += n
					lat[g] = append(lat[g], mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			rate[g] = float64(total) / time.Since(start).Seconds()
			eff[g] = float64(total) / (processCPU() - cpu0).Seconds()
			ops[g] += rate[g]
		}
		ratios = append(ratios, rate[8]/rate[1])
		effs = append(effs, eff[8]/eff[1])
		round++
	}
	slices.Sort(ratios)
	slices.Sort(effs)
	b.ReportMetric(ratios[len(ratios)/2], "x8/1")
	b.ReportMetric(effs[len(effs)/2], "cpu-eff8/1")
	for _, g := range levels {
		l := lat[g]
		slices.Sort(l)
		b.ReportMetric(ops[g]/float64(round), fmt.Sprintf("ops/s-%d", g))
		b.ReportMetric(float64(l[len(l)/2]), fmt.Sprintf("p50-ns-%d", g))
		b.ReportMetric(float64(l[len(l)*99/100]), fmt.Sprintf("p99-ns-%d", g))
	}
}
