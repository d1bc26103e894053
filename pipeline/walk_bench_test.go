package pipeline_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// BenchmarkGatherPoints16 is bench/gatherbench -small's 16³ workload for
// profiling the engine's cost per inner chunk: 100,000 random points of a
// 128 × 256 × 256 float32 array (quantised noise, zstd level 1) in 4
// shards of 128³ made of 2048 inner chunks of 16³ (16 KiB), every one of
// which the gather touches; "codec-only" decodes those inner chunks with
// the inner chain on GOMAXPROCS goroutines (encoded bytes loaded first).
// Both report the process's CPU time per gather (cpu-ms/op), steadier
// than wall time on a shared machine:
//
//	go test ./pipeline -run '^$' -bench GatherPoints16 -benchtime 200x -cpuprofile cpu.out
func BenchmarkGatherPoints16(b *testing.B) {
	ctx := context.Background()
	a, dir := gather16Array(b)
	const npts = 100_000
	r := rand.New(rand.NewPCG(7, 11))
	shape := a.Shape()
	pts := make([][]int, 3)
	for d := range pts {
		pts[d] = make([]int, npts)
		for k := range pts[d] {
			pts[d][k] = r.IntN(shape[d])
		}
	}
	cpuPerOp := func(b *testing.B, c0 float64) {
		b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms/op")
	}
	b.Run("engine", func(b *testing.B) {
		out := make([]byte, npts*4)
		b.ReportAllocs()
		c0 := cpuSeconds()
		for b.Loop() {
			p, err := a.Points(pts)
			if err != nil {
				b.Fatal(err)
			}
			if err := a.ReadPointsSelection(ctx, out, p); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, c0)
		for k := range npts {
			i := (pts[0][k]*shape[1]+pts[1][k])*shape[2] + pts[2][k]
			if got, want := math.Float32frombits(binary.LittleEndian.Uint32(out[4*k:])), gather16Elem(uint64(i)); got != want {
				b.Fatalf("point %d = %v, want %v", k, got, want)
			}
		}
	})
	b.Run("codec-only", func(b *testing.B) {
		l := a.Sharding()
		var encs [][]byte
		for s := range 4 {
			key := a.ChunkKey([]int{0, s / 2, s % 2})
			sb, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
			if err != nil {
				b.Fatal(err)
			}
			ix, err := l.IndexOf(sb)
			if err != nil {
				b.Fatal(err)
			}
			for lin := range l.NumChunks() {
				if off, n, ok := ix.Entry(lin); ok {
					encs = append(encs, sb[off:off+n])
				}
			}
		}
		workers := runtime.GOMAXPROCS(0)
		dsts := make([][]byte, workers)
		for w := range dsts {
			dsts[w] = make([]byte, l.InnerBytes()+codecs.DecodeSlack)
		}
		c0 := cpuSeconds()
		for b.Loop() {
			var next atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= len(encs) {
							return
						}
						if err := l.Inner().Decode(dsts[w][:l.InnerBytes()], encs[i]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		cpuPerOp(b, c0)
	})
}

func cpuSeconds() float64 { return cputime.Process().Seconds() }

// gather16Elem is the value at C-order index i of gather16Array: quantised
// noise, which zstd compresses about 2×.
func gather16Elem(i uint64) float32 {
	x := i*0x9e3779b97f4a7c15 + 1
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x ^= x >> 31
	return float32(math.Round(float64(x>>40)/float64(1<<24)*4096) / 64)
}

// gather16Array returns BenchmarkGatherPoints16's array and its
// directory, writing it on first use.
func gather16Array(b *testing.B) (*zarr.Array, string) {
	ctx := context.Background()
	if benchDir == "" {
		d, err := os.MkdirTemp("", "gozarr-pipeline-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	dir := filepath.Join(benchDir, "gather16")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	if a, err := zarr.OpenArray(ctx, st, ""); err == nil {
		return a, dir
	}
	zstd, err := codecs.NewZstd(1, false)
	if err != nil {
		b.Fatal(err)
	}
	shape := []int{128, 256, 256}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeFloat32, []int{16, 16, 16}, zarr.Shards(128, 128, 128), zarr.Compress(zstd))
	if err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]float32, nd.NumElements(shape))
	for i := range buf {
		buf[i] = gather16Elem(uint64(i))
	}
	if err := zarr.Write(ctx, a, buf); err != nil {
		b.Fatal(err)
	}
	return a, dir
}
