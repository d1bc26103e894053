package pipeline_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Plan a read of a sharded array, look at what it will touch, then run
// that plan: the units ExecuteRead fetches and decodes are the ones the
// plan lists, and the index reads of the walk are not made again (the
// array's index cache keeps them).
func ExampleExecuteRead() {
	ctx := context.Background()
	st := mem.New()
	meta, err := zarr.NewArrayMetadata([]int{8, 8}, dtype.TypeUint8, []int{2, 4}, zarr.Shards(4, 8))
	if err != nil {
		panic(err)
	}
	a, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		panic(err)
	}
	vals := make([]uint8, 64)
	for i := range vals {
		vals[i] = uint8(i)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		panic(err)
	}
	plan, err := a.Plan(nd.Range(3, 6), nd.Slice(7, 0, -3))
	if err != nil {
		panic(err)
	}
	units := 0
	for _, err := range plan.ReadUnits(ctx, st) {
		if err != nil {
			panic(err)
		}
		units++
	}
	shape := plan.Selection().FullShape()
	out := make([]byte, nd.NumElements(shape))
	if err := pipeline.ExecuteRead(ctx, st, plan, nd.Contiguous(out, shape, 1), pipeline.Options{}); err != nil {
		panic(err)
	}
	fmt.Println(plan.NumWriteUnits(), "shards,", units, "inner chunks; shape", shape)
	fmt.Println(out)
	// Output:
	// 2 shards, 4 inner chunks; shape [3 3]
	// [31 28 25 39 36 33 47 44 41]
}
