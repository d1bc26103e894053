package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// serveContents answers GET and HEAD for the keys of contents below /data/
// with http.ServeContent (which honours Range), and 404 otherwise. With
// ignoreRange it answers like Python's http.server: 200 and the whole body,
// whatever the Range header says.
func serveContents(contents map[string][]byte, ignoreRange bool) nethttp.Handler {
	return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		key, ok := strings.CutPrefix(r.URL.Path, "/data/")
		v, found := contents[key]
		if !ok || !found {
			nethttp.NotFound(w, r)
			return
		}
		if ignoreRange {
			w.Header().Set("Content-Length", fmt.Sprint(len(v)))
			w.WriteHeader(nethttp.StatusOK)
			if r.Method != nethttp.MethodHead {
				w.Write(v)
			}
			return
		}
		nethttp.ServeContent(w, r, key, time.Time{}, bytes.NewReader(v))
	})
}

func newServer(t *testing.T, h nethttp.Handler) *httptest.Server {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func TestConformance(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignoreRange=%v", ignore), func(t *testing.T) {
			storetest.TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
				ts := newServer(t, serveContents(contents, ignore))
				st, err := http.New(ts.URL + "/data")
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}

// TestRangeHeaders checks the requests each read form sends to a server
// that honours ranges, and to one that ignores them.
func TestRangeHeaders(t *testing.T) {
	contents := map[string][]byte{"c/0": []byte("0123456789"), "odd name%.bin": []byte("x")}
	ctx := context.Background()
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignoreRange=%v", ignore), func(t *testing.T) {
			rec := s3test.NewRecorder(nil)
			ts := newServer(t, serveContents(contents, ignore))
			st, err := http.New(ts.URL+"/data/", http.WithClient(rec.Client()))
			if err != nil {
				t.Fatal(err)
			}
			for i, tc := range []struct {
				r      store.ByteRange
				method string
				header string // sent to a range-honouring server
				want   string
			}{
				{store.Full(), "GET", "", "0123456789"},
				{store.OffsetLen(2, 3), "GET", "bytes=2-4", "234"},
				{store.From(7), "GET", "bytes=7-", "789"},
				{store.Suffix(4), "GET", "bytes=-4", "6789"},
				{store.OffsetLen(20, 5), "GET", "bytes=20-24", ""},
				{store.OffsetLen(3, 0), "HEAD", "", ""},
				{store.Suffix(2), "GET", "bytes=-2", "89"},
			} {
				rec.Reset()
				got, err := st.Get(ctx, "c/0", tc.r)
				if err != nil || got == nil || string(got) != tc.want {
					t.Errorf("Get(%v) = %q, %v; want %q", tc.r, got, err, tc.want)
				}
				wantHdr := tc.header
				if ignore && i > 1 {
					// Detected at the first ranged read (i == 1): no
					// Range header after it.
					wantHdr = ""
				}
				reqs := rec.Requests("")
				if len(reqs) != 1 || reqs[0].Method != tc.method || reqs[0].Range != wantHdr {
					t.Errorf("Get(%v) sent %+v; want one %s with Range %q", tc.r, reqs, tc.method, wantHdr)
				}
			}
			if st.RangesIgnored() != ignore {
				t.Errorf("RangesIgnored() = %v, want %v", st.RangesIgnored(), ignore)
			}
			// Keys are escaped segment by segment.
			if got, err := st.Get(ctx, "odd name%.bin", store.Full()); err != nil || string(got) != "x" {
				t.Errorf("Get(odd name%%.bin) = %q, %v", got, err)
			}
			if u := st.URL("odd name%.bin"); !strings.HasSuffix(u, "/data/odd%20name%25.bin") {
				t.Errorf("URL = %q", u)
			}
		})
	}
}

// TestWholeRangeNotMarked checks that a 200 answer to a range covering the
// whole value does not mark the server as ignoring ranges.
func TestWholeRangeNotMarked(t *testing.T) {
	ts := newServer(t, serveContents(map[string][]byte{"k": []byte("abc")}, true))
	st, _ := http.New(ts.URL + "/data")
	if got, err := st.Get(context.Background(), "k", store.Suffix(10)); err != nil || string(got) != "abc" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if st.RangesIgnored() {
		t.Error("RangesIgnored after a range covering the whole value")
	}
}

func TestHeaderAndStatus(t *testing.T) {
	ctx := context.Background()
	h := serveContents(map[string][]byte{"k": []byte("secret")}, false)
	var hits atomic.Int64
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			nethttp.Error(w, "no", nethttp.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	anon, _ := http.New(ts.URL + "/data")
	_, err := anon.Get(ctx, "k", store.Full())
	var se *http.StatusError
	var ke *store.KeyError
	if !errors.As(err, &se) || se.StatusCode != 403 || !errors.As(err, &ke) || ke.Key != "k" || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get without token: err = %v; want a 403 StatusError in a KeyError for k", err)
	}
	if !strings.Contains(fmt.Sprint(err), "403") || !strings.Contains(fmt.Sprint(err), `"k"`) {
		t.Errorf("error %q does not name the status and the key", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("403 was tried %d times, want 1 (not retried)", n)
	}
	auth, _ := http.New(ts.URL+"/data", http.WithHeader("Authorization", "Bearer tok"))
	if got, err := auth.Get(ctx, "k", store.OffsetLen(1, 2)); err != nil || string(got) != "ec" {
		t.Errorf("Get with token = %q, %v", got, err)
	}
	if n, err := auth.Size(ctx, "k"); err != nil || n != 6 {
		t.Errorf("Size with token = %d, %v", n, err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "http://", "/local/path", "://bad", "s3://b/p"} {
		if _, err := http.New(u); !errors.Is(err, http.ErrBaseURL) {
			t.Errorf("New(%q): err = %v, want ErrBaseURL", u, err)
		}
	}
}

// TestConcurrencyLimit checks that no more requests than the limit are in
// flight at once.
func TestConcurrencyLimit(t *testing.T) {
	val := bytes.Repeat([]byte("0123456789"), 1000)
	h := serveContents(map[string][]byte{"v": val}, false)
	var cur, peak atomic.Int64
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		h.ServeHTTP(w, r)
		cur.Add(-1)
	}))
	st, _ := http.New(ts.URL+"/data", http.WithConcurrency(3), http.WithCoalesce(store.CoalesceOptions{MaxGap: -1}))
	var ranges []store.ByteRange
	for i := range 30 {
		ranges = append(ranges, store.OffsetLen(int64(i*300), 7))
	}
	got, err := st.GetRanges(context.Background(), "v", ranges)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if !bytes.Equal(b, val[i*300:i*300+7]) {
			t.Errorf("range %d = %q", i, b)
		}
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d requests in flight, limit 3", p)
	}
}

// TestFaults: the first attempt of every request is answered with 503, a
// reset connection or a body cut short; reads still return the right bytes.
func TestFaults(t *testing.T) {
	val := make([]byte, 100_000)
	for i := range val {
		val[i] = byte(i * 13 >> 2)
	}
	h := serveContents(map[string][]byte{"v": val}, false)
	var mu sync.Mutex
	seen := map[string]bool{}
	var faults atomic.Int64
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		sig := r.Method + r.URL.Path + r.Header.Get("Range")
		mu.Lock()
		first := !seen[sig]
		seen[sig] = true
		n := len(seen)
		mu.Unlock()
		if !first {
			h.ServeHTTP(w, r)
			return
		}
		faults.Add(1)
		switch n % 3 {
		case 0:
			nethttp.Error(w, "slow down", nethttp.StatusServiceUnavailable)
		case 1:
			panic(nethttp.ErrAbortHandler)
		case 2:
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
			w.(nethttp.Flusher).Flush()
			panic(nethttp.ErrAbortHandler)
		}
	}))
	st, _ := http.New(ts.URL+"/data", http.WithRetry(4, 5*time.Millisecond))
	ctx := context.Background()
	for _, tc := range []struct {
		r    store.ByteRange
		want []byte
	}{
		{store.Full(), val},
		{store.OffsetLen(10, 5000), val[10:5010]},
		{store.Suffix(777), val[len(val)-777:]},
		{store.From(99_000), val[99_000:]},
	} {
		if got, err := st.Get(ctx, "v", tc.r); err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("Get(%v) = %d bytes, %v", tc.r, len(got), err)
		}
	}
	dst := make([]byte, 1234)
	if n, err := st.ReadInto(ctx, "v", 4321, dst); err != nil || n != len(dst) || !bytes.Equal(dst, val[4321:4321+1234]) {
		t.Errorf("ReadInto = %d, %v", n, err)
	}
	if faults.Load() < 5 {
		t.Errorf("only %d faults injected", faults.Load())
	}
}

func TestHangingServer(t *testing.T) {
	release := make(chan struct{})
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/warm" {
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) })
	st, _ := http.New(ts.URL)
	resp, err := nethttp.Get(ts.URL + "/warm")
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	before := runtime.NumGoroutine()
	for name, call := range map[string]func(context.Context) error{
		"Get":      func(ctx context.Context) error { _, err := st.Get(ctx, "k", store.Suffix(5)); return err },
		"Size":     func(ctx context.Context) error { _, err := st.Size(ctx, "k"); return err },
		"ReadInto": func(ctx context.Context) error { _, err := st.ReadInto(ctx, "k", 3, make([]byte, 4)); return err },
		"GetRanges": func(ctx context.Context) error {
			_, err := st.GetRanges(ctx, "k", []store.ByteRange{store.OffsetLen(0, 1), store.OffsetLen(1<<30, 1), store.Suffix(3), store.Full()})
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		cancel()
		t.Logf("%s returned after %v: %v", name, time.Since(start).Round(time.Millisecond), err)
		var ke *store.KeyError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ke) || ke.Key != "k" {
			t.Errorf("%s against a hanging server: err = %v; want DeadlineExceeded in a KeyError for k", name, err)
		}
	}
	after := runtime.NumGoroutine()
	for i := 0; i < 200 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ base, key, want string }{
		{"http://h/x", "a/b", "http://h/x/a/b"},
		{"http://h/x/", "a/b", "http://h/x/a/b"},
		{"https://h", "zarr.json", "https://h/zarr.json"},
		{"http://h/x?sig=1&t=2", "c/0/1", "http://h/x/c/0/1?sig=1&t=2"},
		{"http://h/my%20data", "a b/c#d?e", "http://h/my%20data/a%20b/c%23d%3Fe"},
	} {
		st, err := http.New(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.URL(tc.key); got != tc.want {
			t.Errorf("New(%q).URL(%q) = %q, want %q", tc.base, tc.key, got, tc.want)
		}
	}
}
