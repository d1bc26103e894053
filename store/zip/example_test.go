package zip_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/zip"
)

// Write an archive entry by entry (zip.Write archives a whole store), keep
// it in a store, and read the values back through a Reader over it.
func Example() {
	var archive bytes.Buffer
	w := zip.NewWriter(&archive)
	ctx := context.Background()
	_ = w.Add(ctx, "zarr.json", []byte(`{"zarr_format":3,"node_type":"group"}`))
	_ = w.Add(ctx, "a/c/0", []byte("chunk bytes"))
	if err := w.Close(); err != nil {
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
