package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
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
			rec := storetest.NewRecorder(nil)
			ts := newServer(t, serveContents(contents, ignore))
			st, err := http.New(ts.URL+"/data/", http.WithClient(rec.Client()))
			if err != nil {
				t.Fatal(err)
			}
			storetest.CheckRangeRequests(t, st, "c/0", rec, func(i int, rr storetest.RangeRequest) string {
				if ignore && i > 1 {
					// Detected at the first ranged read (i == 1): no
					// Range header after it.
					return ""
				}
				return rr.Header
			})
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

// TestRetryAfter checks that 429 and 503 answers are retried after the
// wait their Retry-After asks for, and that a wait longer than the store
// accepts fails at once.
func TestRetryAfter(t *testing.T) {
	var mu sync.Mutex
	times := map[string][]time.Time{}
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		times[r.URL.Path] = append(times[r.URL.Path], time.Now())
		n := len(times[r.URL.Path])
		mu.Unlock()
		switch {
		case r.URL.Path == "/after1" && n == 1:
			w.Header().Set("Retry-After", "1")
			nethttp.Error(w, "slow down", nethttp.StatusTooManyRequests)
		case r.URL.Path == "/date" && n == 1:
			w.Header().Set("Retry-After", time.Now().Add(time.Second).UTC().Format(nethttp.TimeFormat))
			nethttp.Error(w, "busy", nethttp.StatusServiceUnavailable)
		case r.URL.Path == "/plain" && n == 1:
			nethttp.Error(w, "slow down", nethttp.StatusTooManyRequests)
		case r.URL.Path == "/hour":
			w.Header().Set("Retry-After", "3600")
			nethttp.Error(w, "come back later", nethttp.StatusTooManyRequests)
		default:
			nethttp.ServeContent(w, r, "", time.Time{}, strings.NewReader("value"))
		}
	}))
	st, err := http.New(ts.URL, http.WithRetry(4, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range []string{"after1", "date", "plain"} {
		if got, err := st.Get(ctx, key, store.Full()); err != nil || string(got) != "value" {
			t.Errorf("Get(%s) = %q, %v; want the value after a retry", key, got, err)
		}
		mu.Lock()
		if n := len(times["/"+key]); n != 2 {
			t.Errorf("Get(%s): %d requests, want 2", key, n)
		}
		mu.Unlock()
	}
	mu.Lock()
	if ts := times["/after1"]; len(ts) == 2 && ts[1].Sub(ts[0]) < time.Second {
		t.Errorf("Get(after1) retried after %v, before the second Retry-After asked for", ts[1].Sub(ts[0]))
	}
	mu.Unlock()
	_, err = st.Get(ctx, "hour", store.Full())
	var se *http.StatusError
	if !errors.As(err, &se) || se.StatusCode != nethttp.StatusTooManyRequests || se.RetryAfter != time.Hour {
		t.Errorf("Get(hour) = %v; want a 429 StatusError asking for 1h", err)
	}
	mu.Lock()
	if n := len(times["/hour"]); n != 1 {
		t.Errorf("Get(hour): %d requests, want 1 (an hour is too long to wait)", n)
	}
	mu.Unlock()
}

// TestRedirects checks that redirected reads land on the right bytes with
// their Range header, and that a redirect loop fails after one round of
// redirects, not one per retry.
func TestRedirects(t *testing.T) {
	contents := map[string][]byte{"c/0": []byte("0123456789")}
	data := serveContents(contents, false)
	var loops atomic.Int64
	var mu sync.Mutex
	var ranges []string
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		code, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case code == "data":
			mu.Lock()
			ranges = append(ranges, r.Header.Get("Range"))
			mu.Unlock()
			data.ServeHTTP(w, r)
		case code == "loop":
			loops.Add(1)
			nethttp.Redirect(w, r, r.URL.Path, nethttp.StatusFound)
		case ok:
			c, _ := strconv.Atoi(code)
			nethttp.Redirect(w, r, "/data/"+rest, c)
		}
	}))
	ctx := context.Background()
	for _, code := range []int{301, 302, 303, 307, 308} {
		st, err := http.New(fmt.Sprintf("%s/%d", ts.URL, code))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		ranges = nil
		mu.Unlock()
		if got, err := st.Get(ctx, "c/0", store.OffsetLen(2, 3)); err != nil || string(got) != "234" {
			t.Errorf("Get through a %d redirect = %q, %v; want 234", code, got, err)
		}
		mu.Lock()
		if len(ranges) != 1 || ranges[0] != "bytes=2-4" {
			t.Errorf("%d redirect: the target saw Range %q; want [bytes=2-4]", code, ranges)
		}
		mu.Unlock()
	}
	st, err := http.New(ts.URL+"/loop", http.WithRetry(4, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Get(ctx, "c/0", store.Full())
	var ke *store.KeyError
	if !errors.Is(err, http.ErrTooManyRedirects) || !errors.As(err, &ke) || ke.Key != "c/0" {
		t.Errorf("Get through a redirect loop = %v; want ErrTooManyRedirects naming c/0", err)
	}
	if n := loops.Load(); n > 11 {
		t.Errorf("redirect loop: %d requests, want one round (at most 11)", n)
	}
}
