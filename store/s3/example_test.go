package s3_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
)

// Open a bucket prefix on an S3-compatible server and read a range (not
// run: it needs a server; Open alone also finds AWS credentials and
// endpoints in the environment).
func ExampleOpen() {
	ctx := context.Background()
	st, err := s3.Open(ctx, "my-bucket", "data/image.zarr",
		s3.WithEndpoint("http://127.0.0.1:7070"),
		s3.WithStaticCredentials("access-key", "secret-key", ""),
		s3.WithConcurrency(32))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := st.Get(ctx, "zarr.json", store.Full())
	fmt.Println(len(b), err)
}
