package storeurl_test

import (
	nethttp "net/http"
	"strings"
	"time"
)

// fileHandler serves fixed files by path, honouring Range.
func fileHandler(files map[string]string) nethttp.Handler {
	return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		v, ok := files[r.URL.Path]
		if !ok {
			nethttp.NotFound(w, r)
			return
		}
		nethttp.ServeContent(w, r, r.URL.Path, time.Time{}, strings.NewReader(v))
	})
}
