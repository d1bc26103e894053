package zarr_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Create a sharded, zstd-compressed array, write it, and read a strided
// selection back.
func Example() {
	ctx := context.Background()
	st := mem.New()
	shard, _ := json.Marshal(map[string]any{
		"chunk_shape":    []int{2, 2},
		"codecs":         []any{map[string]any{"name": "bytes", "configuration": map[string]string{"endian": "little"}}, map[string]any{"name": "zstd", "configuration": map[string]any{"level": 1, "checksum": false}}},
		"index_codecs":   []any{map[string]any{"name": "bytes", "configuration": map[string]string{"endian": "little"}}, map[string]any{"name": "crc32c"}},
		"index_location": "end",
	})
	meta := &zarr.ArrayMetadata{
		Shape: []int{6, 8}, DataType: dtype.TypeInt32, ChunkShape: []int{4, 4},
		ChunkKeyEncoding: zarr.DefaultKeyEncoding(), FillValue: make([]byte, 4),
		Codecs: []codecs.Spec{{Name: "sharding_indexed", Configuration: shard}},
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
