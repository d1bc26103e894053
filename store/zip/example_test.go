package zip_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/zip"
)

// Archive a store's keys, keep the archive in another store, and read the
// values back through a Reader over it.
func Example() {
	ctx := context.Background()
	src := mem.New()
	_ = src.Set(ctx, "zarr.json", []byte(`{"zarr_format":3,"node_type":"group"}`))
	_ = src.Set(ctx, "a/c/0", []byte("chunk bytes"))
	var archive bytes.Buffer
	if err := zip.Write(ctx, &archive, src); err != nil {
		fmt.Println(err)
		return
	}
	held := mem.New()
	_ = held.Set(ctx, "data.zarr.zip", archive.Bytes())
	r, err := zip.Open(ctx, held, "data.zarr.zip")
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, err := range r.List(ctx, "") {
		fmt.Println(k, err)
	}
	b, err := r.Get(ctx, "a/c/0", store.OffsetLen(6, 5))
	fmt.Printf("%s %v\n", b, err)
	// Output:
	// a/c/0 <nil>
	// zarr.json <nil>
	// bytes <nil>
}
