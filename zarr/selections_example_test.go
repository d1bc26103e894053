package zarr_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Select beyond slices: random rows (an orthogonal selection, like
// zarr-python's oindex or NumPy's np.ix_), scattered points (a coordinate
// selection, like vindex), and whole chunks by grid position (blocks).
// Each touched inner chunk is decoded once, whatever the order asked.
func ExampleReadPoints() {
	ctx := context.Background()
	meta, _ := zarr.NewArrayMetadata([]int{6, 8}, dtype.TypeInt32, []int{2, 2}, zarr.Shards(4, 4))
	a, _ := zarr.CreateArray(ctx, mem.New(), "grid", meta)
	vals := make([]int32, 6*8)
	for i := range vals {
		vals[i] = int32(i)
	}
	_ = zarr.Write(ctx, a, vals)

	// Rows 5, 0, 5 (any order, repeats allowed) and columns where a mask is true.
	rows, shape, err := zarr.Read[int32](ctx, a, nd.IndexArray(5, 0, -1), nd.Mask([]bool{true, false, false, false, false, false, false, true}))
	fmt.Println(rows, shape, err)

	// Points (0, 7), (5, 1), (2, 2): one index array per dimension.
	pts, err := zarr.ReadPoints[int32](ctx, a, [][]int{{0, 5, 2}, {7, 1, 2}})
	fmt.Println(pts, err)

	// The block (shard) at grid position (1, 0): rows 4..5 (clipped), columns 0..3.
	items, _ := a.BlockItems(nd.Index(1), nd.Index(0))
	block, shape, err := zarr.Read[int32](ctx, a, items...)
	fmt.Println(block, shape, err)

	// Writes take the same selections; a repeated point keeps its last value.
	_ = zarr.WritePoints(ctx, a, []int32{-1, -2}, [][]int{{3, 3}, {3, 3}})
	v, _ := zarr.ReadPoints[int32](ctx, a, [][]int{{3}, {3}})
	fmt.Println(v)
	// Output:
	// [40 47 0 7 40 47] [3 2] <nil>
	// [7 41 18] <nil>
	// [32 33 34 35 40 41 42 43] [2 4] <nil>
	// [-2]
}

// Read two selections side by side into one buffer, a 2×8 mosaic, with no
// copy: each read goes straight into its sub-box of the larger buffer.
func ExampleArray_ReadView() {
	ctx := context.Background()
	meta, _ := zarr.NewArrayMetadata([]int{6, 8}, dtype.TypeUint8, []int{4, 4})
	a, _ := zarr.CreateArray(ctx, mem.New(), "img", meta)
	vals := make([]byte, 6*8)
	for i := range vals {
		vals[i] = byte(i)
	}
	_ = a.WriteBytes(ctx, vals)

	mosaic := make([]byte, 2*8)
	whole := nd.Contiguous(mosaic, []int{2, 8}, 1)
	left := whole.Slice([]int{0, 0}, []int{2, 4}, []int{1, 1})
	right := whole.Slice([]int{0, 4}, []int{2, 4}, []int{1, 1})
	err1 := a.ReadView(ctx, left, nd.Range(0, 2), nd.Range(0, 4))           // rows 0-1, columns 0-3
	err2 := a.ReadView(ctx, right, nd.IndexArray(5, 4), nd.Slice(7, 3, -1)) // rows 5, 4; columns 7..4
	fmt.Println(mosaic, err1, err2)
	// Output: [0 1 2 3 47 46 45 44 8 9 10 11 39 38 37 36] <nil> <nil>
}
