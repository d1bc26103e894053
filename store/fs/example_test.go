package fs_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gozarr-example")
	defer os.RemoveAll(dir)

	s, err := fs.New(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = s.Set(ctx, "arr/zarr.json", []byte(`{"zarr_format":3}`))
	_ = s.Set(ctx, "arr/c/0/0", []byte("chunk bytes"))
	keys, dirs, _ := s.ListDir(ctx, "arr/")
	fmt.Println(keys, dirs)

	buf := make([]byte, 5)
	n, _ := s.ReadInto(ctx, "arr/c/0/0", 6, buf) // straight into buf, no allocation
	fmt.Printf("%s\n", buf[:n])

	_, err = s.Get(ctx, "../etc/passwd", store.Full())
	fmt.Println(err)
	// Output:
	// [zarr.json] [c/]
	// bytes
	// validate "../etc/passwd": invalid key: ".." segment
}
