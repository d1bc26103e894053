package pipeline_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// BenchmarkGatherPoints reads 100,000 random points of gatherbench's
// cube16-small geometry (128 × 256 × 256 float32, shards of 128³, inner
// chunks of 16³ compressed with zstd, about 49 points per inner chunk),
// stored in a directory: the gather's own cost per point (normalising,
// grouping, placing) and per inner chunk (the engine) beside the codec's.
// vindex reads the per-dimension lists as zarr-python's vindex takes
// them (Array.ReadPointsInto: normalised as they are grouped); points
// normalises them into an nd.Points first (Array.Points) and reads
// those; selection reads points normalised once; cached is vindex
// through a chunk cache that holds every inner chunk (no codec: a lookup
// per chunk and the placement of its points).
func BenchmarkGatherPoints(b *testing.B) {
	ctx := context.Background()
	shape := []int{128, 256, 256}
	zstd, err := codecs.NewZstd(1, false)
	if err != nil {
		b.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeFloat32, []int{16, 16, 16}, zarr.Shards(128, 128, 128), zarr.Compress(zstd))
	if err != nil {
		b.Fatal(err)
	}
	st, err := fs.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		b.Fatal(err)
	}
	vals := make([]float32, nd.NumElements(shape))
	for i := range vals {
		vals[i] = float32(i % (1 << 20))
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	r := rand.New(rand.NewPCG(7, 11))
	coords := make([][]int, 3)
	for d := range coords {
		coords[d] = make([]int, n)
		for k := range coords[d] {
			coords[d][k] = r.IntN(shape[d])
		}
	}
	lru := cache.NewLRU(int64(4*len(vals) + 1<<20))
	cached, err := zarr.OpenArray(ctx, st, "", zarr.WithCache(lru))
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := cached.ReadBytesInto(ctx, make([]byte, 4*len(vals))); err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B) {
		for _, k := range []int{0, n / 2, n - 1} {
			want := float32((coords[0][k]*256*256 + coords[1][k]*256 + coords[2][k]) % (1 << 20))
			if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*k:])); got != want {
				b.Fatalf("point %d: %v, want %v", k, got, want)
			}
		}
	}
	pts, err := a.Points(coords)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"vindex", func() error { return a.ReadPointsInto(ctx, out, coords) }},
		{"points", func() error {
			p, err := a.Points(coords)
			if err != nil {
				return err
			}
			return a.ReadPointsSelection(ctx, out, p)
		}},
		{"selection", func() error { return a.ReadPointsSelection(ctx, out, pts) }},
		{"cached", func() error { return cached.ReadPointsInto(ctx, out, coords) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				if err := c.read(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N)/n, "cpu-ns/point")
			check(b)
		})
	}
}
