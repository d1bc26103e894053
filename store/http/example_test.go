package http_test

import (
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"testing/fstest"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
)

// Read ranges of values a static file server holds below a base URL.
func Example() {
	files := fstest.MapFS{"data.zarr/c/0": {Data: []byte("0123456789")}}
	srv := httptest.NewServer(nethttp.FileServerFS(files))
	defer srv.Close()
	st, err := http.New(srv.URL + "/data.zarr/")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	b, err := st.Get(ctx, "c/0", store.Suffix(3))
	fmt.Printf("%s %v\n", b, err)
	n, err := st.Size(ctx, "c/0")
	fmt.Println(n, err)
	_, err = st.Get(ctx, "c/1", store.Full())
	fmt.Println(errors.Is(err, store.ErrNotFound))
	// Output:
	// 789 <nil>
	// 10 <nil>
	// true
}
