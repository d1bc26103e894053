package http_test

import (
	"bytes"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/storetest"
)

// remote is store/http for storetest's shared fault tests and fuzz
// targets: http.ServeContent over the values, at /key.
var remote = storetest.Remote{
	Serve: func(_ testing.TB, contents map[string][]byte) nethttp.Handler {
		return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
			v, ok := contents[strings.TrimPrefix(r.URL.Path, "/")]
			if !ok {
				nethttp.NotFound(w, r)
				return
			}
			nethttp.ServeContent(w, r, "", time.Time{}, bytes.NewReader(v))
		})
	},
	Open: func(t testing.TB, endpoint string, cfg storetest.RemoteConfig) storetest.RemoteStore {
		opts := []http.Option{http.WithRetry(cfg.Attempts, time.Millisecond), http.WithTimeouts(cfg.Timeouts), http.WithCoalesce(cfg.Coalesce)}
		if cfg.Client != nil {
			opts = append(opts, http.WithClient(cfg.Client))
		}
		st, err := http.New(endpoint, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return st
	},
	Path:  storetest.PathAfter(""),
	Error: func(w nethttp.ResponseWriter, code int) { nethttp.Error(w, nethttp.StatusText(code), code) },
}

// TestRemote runs storetest's fault tests over HTTP: first attempts
// spoilt, persistent 503s, ignored ranges, overlong, stalled and short
// bodies, 429s, a server that never answers.
func TestRemote(t *testing.T) { storetest.TestRemote(t, remote) }

// FuzzGetRanges: storetest.FuzzRemoteRanges over HTTP.
func FuzzGetRanges(f *testing.F) { storetest.FuzzRemoteRanges(f, remote) }

// FuzzSize: storetest.FuzzRemoteSize over HTTP (HEAD, then GET).
func FuzzSize(f *testing.F) { storetest.FuzzRemoteSize(f, remote) }

// FuzzResponse: storetest.FuzzRemoteResponse over HTTP.
func FuzzResponse(f *testing.F) { storetest.FuzzRemoteResponse(f, remote) }
