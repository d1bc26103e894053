package gcs_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/gcs"
)

// Open a bucket prefix and read a range (not run: it needs GCS or an
// emulator; without WithEndpoint, Open uses Application Default
// Credentials, else anonymous access).
func ExampleOpen() {
	ctx := context.Background()
	st, err := gcs.Open(ctx, "my-bucket", "data/image.zarr", gcs.WithEndpoint("http://127.0.0.1:4443"))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := st.Get(ctx, "c/0/0", store.OffsetLen(0, 1024))
	fmt.Println(len(b), err)
}
