package storeurl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
)

// Open the store a location names: here a local directory, as a path or
// a file:// URL (s3://, gs://, az://, http(s):// and .zip archives open
// the same way once their packages are linked).
func Example() {
	dir, err := os.MkdirTemp("", "storeurl-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "zarr.json"), []byte(`{"zarr_format":3,"node_type":"group"}`), 0o644)
	ctx := context.Background()
	for _, loc := range []string{dir, "file://" + filepath.ToSlash(dir)} {
		st, err := storeurl.Open(ctx, loc)
		if err != nil {
			fmt.Println(err)
			return
		}
		b, err := st.Get(ctx, "zarr.json", store.OffsetLen(2, 11))
		fmt.Printf("%T %s %v\n", st, b, err)
	}
	// Output:
	// *fs.Store zarr_format <nil>
	// *fs.Store zarr_format <nil>
}
