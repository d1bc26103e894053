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
	meta, err := zarr.NewArrayMetadata([]int{8, 8}, dtype.TypeInt32, []int{2, 4},
		zarr.Shards(4, 8), zarr.Compress(zs))
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

// List the shards and inner chunks a selection of a sharded array reads,
// with their byte ranges (known once each shard's index is read; inner
// chunks are stored in Morton order, as zarr-python writes them).
func ExampleArray_Plan() {
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
		vals[i] = uint8(i + 1)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		panic(err)
	}
	plan, err := a.Plan(nd.Range(3, 6), nd.Range(2, 5))
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.NumWriteUnits(), "shards")
	for u, err := range plan.ReadUnits(ctx, st) {
		if err != nil {
			panic(err)
		}
		fmt.Println(u.Key, u.Inner, u.Range, "box", u.Part.SrcStart, u.Part.Count, "at", u.Part.DstStart)
	}
	// Output:
	// 2 shards
	// a/c/0/0 [[1 0]] bytes=8-15 box [1 2] [1 2] at [0 0]
	// a/c/0/0 [[1 1]] bytes=24-31 box [1 0] [1 1] at [0 2]
	// a/c/1/0 [[0 0]] bytes=0-7 box [0 2] [2 2] at [1 0]
	// a/c/1/0 [[0 1]] bytes=16-23 box [0 0] [2 1] at [1 2]
}

// Compress takes the codecs its package's constructors return: a zstd
// compressor followed by a crc32c checksum of each compressed chunk.
func ExampleCompress() {
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		panic(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{100, 100}, dtype.TypeFloat32, []int{50, 50},
		zarr.Compress(zs, codecs.NewCRC32C()))
	if err != nil {
		panic(err)
	}
	for _, c := range meta.Codecs {
		fmt.Print(c.Name, " ")
	}
	fmt.Println()
	// Output: bytes zstd crc32c
}

// Create an array whose chunks vary in length along each dimension (a
// rectilinear chunk grid: rows in chunks of 1, 3 and 4, columns of 5 and 3),
// write it and read a box across chunk boundaries.
func ExampleRectilinearChunks() {
	ctx := context.Background()
	meta, err := zarr.NewArrayMetadata([]int{8, 8}, dtype.TypeInt32, nil,
		zarr.RectilinearChunks([]int{1, 3, 4}, []int{5, 3}))
	if err != nil {
		panic(err)
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "months", meta)
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
	box, shape, err := zarr.Read[int32](ctx, a, nd.Range(0, 2), nd.Range(4, 6))
	if err != nil {
		panic(err)
	}
	fmt.Println(shape, box, meta.GridShape(), a.ChunkKey([]int{2, 1}))
	// Output: [2 2] [4 5 12 13] [3 2] months/c/2/1
}
