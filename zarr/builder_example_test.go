package zarr_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Create a sharded, zstd-compressed array with the typed builder (no codec
// JSON), write it, and read a corner back.
func ExampleNewArrayMetadata() {
	ctx := context.Background()
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		panic(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{8, 8}, dtype.TypeInt32, []int{4, 8},
		zarr.Sharded(2, 4), zarr.Compress(zs))
	if err != nil {
		panic(err)
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "grid", meta)
	if err != nil {
		panic(err)
	}
	vals := make([]int32, 64)
	for i := range vals {
		vals[i] = int32(i)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		panic(err)
	}
	corner, shape, err := zarr.Read[int32](ctx, a, nd.Range(5, 8), nd.Range(6, 8))
	if err != nil {
		panic(err)
	}
	fmt.Println(meta.Codecs[0].Name, a.Sharding().ChunkShape(), shape, corner)
	// Output: sharding_indexed [2 4] [3 2] [46 47 54 55 62 63]
}
