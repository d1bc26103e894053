package http_test

import (
	"context"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
)

// TestClosingServerGated: a server that closes its connection after every
// answer (as python -m http.server does, with its listen backlog of 5) gets
// at most 4 requests waiting at once after its first answer, where a server
// keeping connections alive gets the store's full concurrency. Without the
// gate, 64 reads of distinct keys opened up to 64 connections at once,
// and against Python's server each dropped SYN cost a 1 s retransmit (110
// chunks took 31 s, 0.2 s gated).
func TestClosingServerGated(t *testing.T) {
	for _, keepAlive := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepalive=%v", keepAlive), func(t *testing.T) {
			var inFlight, peak atomic.Int64
			srv := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(10 * time.Millisecond)
				w.Write([]byte(r.URL.Path))
			}))
			srv.Config.SetKeepAlivesEnabled(keepAlive)
			srv.Start()
			defer srv.Close()
			st, err := http.New(srv.URL+"/data", http.WithConcurrency(64))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := st.Get(ctx, "first", store.ByteRange{}); err != nil { // learns how the server answers
				t.Fatal(err)
			}
			peak.Store(0)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := fmt.Sprintf("c/%d", i)
					v, err := st.Get(ctx, key, store.ByteRange{})
					if err == nil && string(v) != "/data/"+key {
						err = fmt.Errorf("%s: got %q", key, v)
					}
					if err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			got := peak.Load()
			if !keepAlive && got > 4 {
				t.Errorf("closing server: %d requests at once, want at most 4", got)
			}
			if keepAlive && got <= 4 {
				t.Errorf("keep-alive server: %d requests at once, want the store's concurrency (gate applied where it should not be)", got)
			}
		})
	}
}
