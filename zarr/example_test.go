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

// Create a sharded, zstd-compressed array with the builder (4×4 shards of
// 2×2 chunks), write it, and read a strided selection back.
func Example() {
	ctx := context.Background()
	st := mem.New()
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	meta, err := zarr.NewArrayMetadata([]int{6, 8}, dtype.TypeInt32, []int{2, 2},
		zarr.Shards(4, 4), zarr.Compress(zs))
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := zarr.CreateArray(ctx, st, "grid", meta)
	if err != nil {
		fmt.Println(err)
		return
	}
	vals := make([]int32, 6*8)
	for i := range vals {
		vals[i] = int32(i)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		fmt.Println(err)
		return
	}
	got, shape, err := zarr.Read[int32](ctx, a, nd.Slice(-1, -7, -2), nd.Every(3))
	fmt.Println(got, shape, err)
	// Output: [40 43 46 24 27 30 8 11 14] [3 3] <nil>
}
