package virtual_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
)

// A resolver reads references under the references file's own location
// and refuses any other URL before a request is made.
func Example() {
	ctx := context.Background()
	refsDir := mem.New() // the store the references file was read from
	refsDir.Set(ctx, "data.bin", []byte("0123456789"))
	r, err := virtual.New(virtual.WithBase("s3://bucket/refs", refsDir, ""))
	if err != nil {
		panic(err)
	}
	b, err := r.Get(ctx, virtual.Ref{URL: "s3://bucket/refs/data.bin", Offset: 3, Length: 4})
	fmt.Printf("%s %v\n", b, err)
	_, err = r.Get(ctx, virtual.Ref{URL: "file:///etc/shadow", Whole: true})
	fmt.Println(errors.Is(err, virtual.ErrNotAllowed))
	// Output:
	// 3456 <nil>
	// true
}
