package zarrbeam_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/zarr"
	"github.com/gozarr/gozarr/zarrbeam"
)

// Re-encode an array from one store to another with new chunks and
// shards, on prism in this process. In-process memory:// stores stand in
// for any store URL (a directory, s3://, gs://) here; a real runner's
// workers need stores they can all reach.
func Example() {
	ctx := context.Background()
	src := zarrbeam.Ref{URL: "memory://example-src"}
	dst := zarrbeam.Ref{URL: "memory://example-dst"}

	// A 1024² float32 source in 128² chunks.
	meta, _ := zarr.NewArrayMetadata([]int{1024, 1024}, dtype.TypeFloat32, []int{128, 128})
	a, err := zarrbeam.CreateArray(ctx, src, meta)
	if err != nil {
		log.Fatal(err)
	}
	vals := make([]float32, 1024*1024)
	for i := range vals {
		vals[i] = float32(i)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		log.Fatal(err)
	}

	// The destination's metadata first: 512² shards of 256² inner chunks.
	zs, _ := codecs.NewZstd(3, false)
	meta, _ = zarr.NewArrayMetadata([]int{1024, 1024}, dtype.TypeFloat32, []int{256, 256},
		zarr.Shards(512, 512), zarr.Compress(zs))
	if _, err := zarrbeam.CreateArray(ctx, dst, meta); err != nil {
		log.Fatal(err)
	}

	// The pipeline: rechunk within 2 MiB per region, then finalize.
	p, s := beam.NewPipelineWithRoot()
	written := zarrbeam.Rechunk(s, src, dst, zarrbeam.RechunkOptions{MaxMem: 2 << 20})
	zarrbeam.Finalize(s, dst, written, zarrbeam.FinalizeOptions{})
	if _, err := prism.Execute(ctx, p); err != nil {
		log.Fatal(err)
	}

	b, err := dst.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	want, _, _ := a.ReadBytes(ctx)
	got, _, _ := b.ReadBytes(ctx)
	fmt.Println("shards", b.Shards(), "chunks", b.Chunks())
	fmt.Println("equal to the source:", bytes.Equal(got, want))
	// Output:
	// shards [512 512] chunks [256 256]
	// equal to the source: true
}
