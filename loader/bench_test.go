package loader

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// BenchmarkEpoch runs an epoch of each window sampler over a 64 MiB
// float32 array of 4096 rows of 16 KiB on disk, zstd inner chunks of 256
// rows in shards of 1024 (bench/loaderbench does the same at 1 GiB, and
// over S3).
func BenchmarkEpoch(b *testing.B) {
	ctx := context.Background()
	st, err := fs.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	zs, _ := codecs.NewZstd(1, false)
	meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32, []int{256, 4096}, zarr.Shards(1024, 4096), zarr.Compress(zs))
	if err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "x", meta)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]float32, 1024*4096)
	for r0 := 0; r0 < 4096; r0 += 1024 {
		for i := range rows {
			rows[i] = float32(r0+i/4096) + float32(i%1024)/1024
		}
		if err := zarr.Write(ctx, a, rows, nd.Range(r0, r0+1024), nd.All()); err != nil {
			b.Fatal(err)
		}
	}
	ds := Dataset{Fields: []Field{{Array: a}}}
	for _, k := range kinds[:3] {
		b.Run(k.String(), func(b *testing.B) {
			b.SetBytes(4096 * 4096 * 4)
			b.ReportAllocs()
			for b.Loop() {
				l, err := New(ctx, ds, Config{BatchSize: 256, Sampler: Sampler{Kind: k, K: 4}, Reads: 16, Prefetch: 4})
				if err != nil {
					b.Fatal(err)
				}
				for {
					bt, err := l.Next(ctx)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					bt.Release()
				}
				l.Close()
			}
		})
	}
}
