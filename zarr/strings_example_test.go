package zarr_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Write and read variable-length strings: a v3 "string" array (vlen-utf8),
// as zarr-python writes for dtype=str. Elements never written read as the
// fill value, "" by default.
func ExampleReadStrings() {
	ctx := context.Background()
	meta, err := zarr.NewArrayMetadata([]int{2, 3}, dtype.TypeVarString, []int{1, 2})
	if err != nil {
		panic(err)
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "names", meta)
	if err != nil {
		panic(err)
	}
	if err := zarr.WriteStrings(ctx, a, []string{"α", "beta", "γάμμα"}, nd.Index(0)); err != nil {
		panic(err)
	}
	vals, shape, err := zarr.ReadStrings(ctx, a)
	if err != nil {
		panic(err)
	}
	fmt.Println(shape, fmt.Sprintf("%q", vals))
	col, _, _ := zarr.ReadStrings(ctx, a, nd.All(), nd.Index(1))
	fmt.Printf("%q\n", col)
	// Output:
	// [2 3] ["α" "beta" "γάμμα" "" "" ""]
	// ["beta" ""]
}

// Variable-length bytes, in Zarr v2 ("|O" with the vlen-bytes filter).
func ExampleWriteByteStrings() {
	ctx := context.Background()
	a, err := zarr.CreateArrayV2(ctx, mem.New(), "blobs", &zarr.ArrayMetadataV2{
		Shape: []int{3}, Chunks: []int{2}, DataType: dtype.TypeVarBytes})
	if err != nil {
		panic(err)
	}
	if err := zarr.WriteByteStrings(ctx, a, [][]byte{{0, 1}, {}, []byte("xyz")}); err != nil {
		panic(err)
	}
	got, _, err := zarr.ReadByteStrings(ctx, a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %s\n", got, a.Metadata().Codecs[0].Name)
	// Output:
	// ["\x00\x01" "" "xyz"] vlen-bytes
}
