package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
)

// Read ranges of values a web server holds below a base URL.
func Example() {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path != "/data.zarr/c/0" {
			nethttp.NotFound(w, r)
			return
		}
		nethttp.ServeContent(w, r, "", time.Time{}, bytes.NewReader([]byte("0123456789")))
	}))
	defer srv.Close()
	ctx := context.Background()
	st, err := http.New(srv.URL + "/data.zarr/")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := st.Get(ctx, "c/0", store.Suffix(3))
	fmt.Printf("%s %v\n", b, err)
	n, err := st.Size(ctx, "c/0")
	fmt.Println(n, err)
	_, err = st.Get(ctx, "c/1", store.Full())
	fmt.Println(err != nil && errors.Is(err, store.ErrNotFound))
	// Output:
	// 789 <nil>
	// 10 <nil>
	// true
}
