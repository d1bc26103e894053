package zarr_test

import (
	"context"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// rectBenchArrays returns 1024² float32 arrays, written, in chunks of 64²
// as a regular grid, as a rectilinear grid of one run per dimension, and as
// one whose edges alternate 60 and 68 (every chunk a block of its own).
func rectBenchArrays(b *testing.B) map[string]*zarr.Array {
	ctx := context.Background()
	s := mem.New()
	const n = 1024
	uniform := make([]int, n/64)
	alternating := make([]int, n/64)
	for i := range uniform {
		uniform[i] = 64
		alternating[i] = 60 + 8*(i%2)
	}
	data := make([]byte, 4*n*n)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	out := map[string]*zarr.Array{}
	for name, opt := range map[string][]zarr.MetadataOption{
		"regular":     nil,
		"rect-runs":   {zarr.RectilinearChunks(uniform, uniform)},
		"rect-blocks": {zarr.RectilinearChunks(alternating, alternating)},
	} {
		var chunks []int
		if opt == nil {
			chunks = []int{64, 64}
		}
		meta, err := zarr.NewArrayMetadata([]int{n, n}, dtype.TypeFloat32, chunks, opt...)
		if err != nil {
			b.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, s, name, meta)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.WriteBytes(ctx, data); err != nil {
			b.Fatal(err)
		}
		out[name] = a
	}
	return out
}

// BenchmarkRectilinearRead reads a 1024² float32 array whole, a 100² box
// and one element, from a regular grid and from the same chunks as
// rectilinear grids (one block; 256 blocks). Compare the rectilinear rows
// with the regular row of the same run (procCPU-MB/s: per second of the
// process's CPU time).
func BenchmarkRectilinearRead(b *testing.B) {
	arrays := rectBenchArrays(b)
	ctx := context.Background()
	for _, sel := range []struct {
		name  string
		items []nd.Item
		bytes int64
	}{
		{"all", nil, 4 << 20},
		{"box100", []nd.Item{nd.Range(450, 550), nd.Range(450, 550)}, 4 * 100 * 100},
		{"element", []nd.Item{nd.Index(700), nd.Index(300)}, 4},
	} {
		for _, name := range []string{"regular", "rect-runs", "rect-blocks"} {
			a := arrays[name]
			b.Run(sel.name+"/"+name, func(b *testing.B) {
				out := make([]byte, sel.bytes)
				b.SetBytes(sel.bytes)
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					if err := a.ReadBytesInto(ctx, out, sel.items...); err != nil {
						b.Fatal(err)
					}
				}
				// the process's CPU time (all workers), which a loaded
				// machine disturbs less than the wall time
				if el := (cputime.Process() - cpu0).Seconds(); el > 0 {
					b.ReportMetric(float64(sel.bytes)*float64(b.N)/el/1e6, "procCPU-MB/s")
				}
			})
		}
	}
}
