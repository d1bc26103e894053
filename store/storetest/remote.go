package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
)

// Remote is a remote store over HTTP (store/s3, store/http) for the shared
// tests of how it meets faulty servers (TestRemote) and its fuzz targets
// (FuzzRemoteRanges, FuzzRemoteSize, FuzzRemoteResponse). The tests put
// their faults in front of a correct server (Serve) or answer themselves.
type Remote struct {
	// Serve returns a correct server holding contents: http.ServeContent
	// over them, a fake S3 with them in its bucket.
	Serve func(t testing.TB, contents map[string][]byte) http.Handler
	// Open returns a store reading from the server at endpoint with cfg
	// (resolved: at least one attempt, Coalesce set).
	Open func(t testing.TB, endpoint string, cfg RemoteConfig) RemoteStore
	// Path is the URL path of key's requests ("/k", "/bucket/prefix/k").
	Path func(key string) string
	// Error writes an error answer of status code as the backend's server
	// does (S3: an XML <Error> with a code).
	Error func(w http.ResponseWriter, code int)
}

// RemoteConfig are the settings the shared tests open a remote store with.
type RemoteConfig struct {
	Attempts int                   // attempts per request (0: 1)
	Timeouts store.Timeouts        // zero fields: the store's defaults
	Client   *http.Client          // nil: the store's own
	Coalesce store.CoalesceOptions // zero: no coalescing (MaxGap -1)
}

// open is r.Open with cfg resolved: 0 attempts mean 1, and zero
// coalescing knobs mean none (MaxGap -1).
func (r Remote) open(t testing.TB, endpoint string, cfg RemoteConfig) RemoteStore {
	cfg.Attempts = max(cfg.Attempts, 1)
	if cfg.Coalesce == (store.CoalesceOptions{}) {
		cfg.Coalesce = store.CoalesceOptions{MaxGap: -1}
	}
	return r.Open(t, endpoint, cfg)
}

// RemoteStore is what a remote store offers that the shared tests use.
type RemoteStore interface {
	store.Reader
	store.RangesReader
	store.IntoReader
	store.SizeReader
}

// Pattern returns n bytes of byte(i*7 + i>>8): a value whose every range
// differs from its neighbours'.
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// front starts a server of contents behind h (h gets the correct server to
// pass requests on) and returns its URL.
func (r Remote) front(t testing.TB, contents map[string][]byte, h func(w http.ResponseWriter, req *http.Request, next http.Handler)) string {
	next := r.Serve(t, contents)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { h(w, req, next) }))
	t.Cleanup(ts.Close)
	return ts.URL
}

// answer starts a server answering every request with h and returns its
// URL.
func answer(t testing.TB, h http.HandlerFunc) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// keyErr fails t unless err is a *store.KeyError for key (wrapping want
// when want is not nil).
func keyErr(t *testing.T, what string, err error, key string, want error) {
	t.Helper()
	var ke *store.KeyError
	if err == nil || !errors.As(err, &ke) || ke.Key != key || (want != nil && !errors.Is(err, want)) {
		t.Errorf("%s = %v; want a KeyError for %s (%v)", what, err, key, want)
	}
}

// counter counts requests per key.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts a request for k and returns its count.
func (c *counter) add(k string) int {
	n, _ := c.addDistinct(k)
	return n
}

// addDistinct counts a request for k and returns its count and how many
// keys have been counted.
func (c *counter) addDistinct(k string) (n, keys int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
	return c.n[k], len(c.n)
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// replay serves req to next into a recorder and copies its headers to w,
// with the Content-Length of the whole body, which it returns.
func replay(w http.ResponseWriter, req *http.Request, next http.Handler) (code int, body []byte) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, req)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
	return rec.Code, rec.Body.Bytes()
}

// TestRemote runs the shared tests of a remote store against faulty
// servers: every fault a retry or slicing repairs (a first attempt
// answered 503 or 500, a reset connection, a body cut short or stalled, a
// 429, a server ignoring Range) gives the right bytes, with no more than
// the range's bytes read; what no retry repairs (a server that always
// fails, never answers or stalls, an overlong or short answer) is an error
// naming the key after the configured attempts, never a hang or a leaked
// goroutine.
func TestRemote(t *testing.T, r Remote) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, Remote)
	}{
		{"FirstAttemptFaults", testFirstAttemptFaults},
		{"PersistentFaults", testPersistentFaults},
		{"RangeIgnored", testRangeIgnored},
		{"OverlongBody", testOverlongBody},
		{"StalledBody", testStalledBody},
		{"HeaderTimeout", testHeaderTimeout},
		{"WrongContentLength", testWrongContentLength},
		{"TooManyRequests", testTooManyRequests},
		{"HangingServer", testHangingServer},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, r) })
	}
}

// testFirstAttemptFaults: the first attempt of every distinct request is
// answered 503, 500, with a reset connection or with a body cut short.
func testFirstAttemptFaults(t *testing.T, r Remote) {
	val := Pattern(200_000)
	var seen counter
	var faults [4]atomic.Int64
	url := r.front(t, map[string][]byte{"v": val, "w": []byte("small")}, func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		n, keys := seen.addDistinct(req.Method + " " + req.URL.String() + " " + req.Header.Get("Range"))
		if n > 1 {
			next.ServeHTTP(w, req)
			return
		}
		kind := keys % 4
		if kind == 3 && req.Method != http.MethodGet {
			kind = 2
		}
		faults[kind].Add(1)
		switch kind {
		case 0:
			r.Error(w, http.StatusServiceUnavailable)
		case 1:
			r.Error(w, http.StatusInternalServerError)
		case 2:
			panic(http.ErrAbortHandler) // closes the connection without an answer
		case 3:
			code, body := replay(w, req, next)
			w.WriteHeader(code)
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	})
	st := r.open(t, url, RemoteConfig{Attempts: 4})
	ctx := context.Background()
	for _, tc := range []struct {
		r    store.ByteRange
		want []byte
	}{
		{store.Full(), val},
		{store.OffsetLen(1000, 5000), val[1000:6000]},
		{store.From(150_000), val[150_000:]},
		{store.Suffix(4096), val[len(val)-4096:]},
		{store.OffsetLen(300_000, 10), []byte{}},
	} {
		if got, err := st.Get(ctx, "v", tc.r); err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("Get(v, %v) = %d bytes, %v; want %d bytes", tc.r, len(got), err, len(tc.want))
		}
	}
	var ranges []store.ByteRange
	for i := range 40 {
		ranges = append(ranges, store.OffsetLen(int64(i*4999), 100))
	}
	got, err := st.GetRanges(ctx, "v", ranges)
	if err == nil {
		CheckRanges(t, val, ranges, got)
	} else {
		t.Errorf("GetRanges: %v", err)
	}
	dst := make([]byte, 3000)
	if n, err := st.ReadInto(ctx, "v", 7000, dst); err != nil || n != 3000 || !bytes.Equal(dst, val[7000:10000]) {
		t.Errorf("ReadInto = %d, %v", n, err)
	}
	if n, err := st.Size(ctx, "w"); err != nil || n != 5 {
		t.Errorf("Size(w) = %d, %v", n, err)
	}
	if _, err := st.Get(ctx, "missing", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing): %v", err)
	}
	for k := range faults {
		if faults[k].Load() == 0 {
			t.Errorf("fault kind %d was never injected", k)
		}
	}
}

// testPersistentFaults: a server answering 503 every time.
func testPersistentFaults(t *testing.T, r Remote) {
	var hits atomic.Int64
	st := r.open(t, answer(t, func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		r.Error(w, http.StatusServiceUnavailable)
	}), RemoteConfig{Attempts: 3})
	_, err := st.Get(context.Background(), "some/key", store.OffsetLen(0, 10))
	keyErr(t, "Get from an always-503 server", err, "some/key", nil)
	if errors.Is(err, store.ErrNotFound) {
		t.Errorf("always-503 is ErrNotFound: %v", err)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("server saw %d attempts, want 3", n)
	}
}

// testRangeIgnored: a server that answers every GET 200 with the whole
// value; of a big value only the part up to the range's end is read.
func testRangeIgnored(t *testing.T, r Remote) {
	val := Pattern(8 << 20)
	url := r.front(t, map[string][]byte{"big": val}, func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		req.Header.Del("Range")
		next.ServeHTTP(w, req)
	})
	rec := NewRecorder(nil)
	st := r.open(t, url, RemoteConfig{Client: rec.Client()})
	ctx := context.Background()
	for _, tc := range []struct {
		r    store.ByteRange
		want []byte
	}{
		{store.OffsetLen(100, 10), val[100:110]},
		{store.OffsetLen(int64(len(val))-5, 10), val[len(val)-5:]},
		{store.OffsetLen(int64(len(val))+5, 10), []byte{}},
		{store.From(int64(len(val)) - 3), val[len(val)-3:]},
		{store.Suffix(7), val[len(val)-7:]},
	} {
		rec.Reset()
		got, err := st.Get(ctx, "big", tc.r)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("Get(%v) = %d bytes, %v; want %d", tc.r, len(got), err, len(tc.want))
		}
		if tc.r == store.OffsetLen(100, 10) && rec.BodyBytes() > 64<<10 {
			t.Errorf("Get(%v) read %d bytes of an 8 MiB body", tc.r, rec.BodyBytes())
		}
	}
	got, err := st.GetRanges(ctx, "big", []store.ByteRange{store.OffsetLen(5, 5), store.OffsetLen(4<<20, 3), store.Suffix(2)})
	if err != nil || !bytes.Equal(got[0], val[5:10]) || !bytes.Equal(got[1], val[4<<20:4<<20+3]) || !bytes.Equal(got[2], val[len(val)-2:]) {
		t.Errorf("GetRanges = %v, %v", got, err)
	}
	dst := make([]byte, 9)
	rec.Reset()
	if n, err := st.ReadInto(ctx, "big", 1000, dst); err != nil || n != 9 || !bytes.Equal(dst, val[1000:1009]) {
		t.Errorf("ReadInto(1000, 9) = %d, %v", n, err)
	}
	if n := rec.BodyBytes(); n > 64<<10 {
		t.Errorf("ReadInto(1000, 9) read %d bytes of an 8 MiB body", n)
	}
}

// testOverlongBody: a 206 answer longer than the range asked for (its
// length announced or not) is refused after reading a few KiB at most.
func testOverlongBody(t *testing.T, r Remote) {
	const huge = 96 << 20
	var sent atomic.Int64
	st := r.open(t, answer(t, func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-9/200000000")
		if req.URL.Path == r.Path("announced") {
			w.Header().Set("Content-Length", strconv.Itoa(huge))
		}
		w.WriteHeader(http.StatusPartialContent)
		w.(http.Flusher).Flush()
		buf := make([]byte, 32<<10)
		for n := 0; n < huge; n += len(buf) {
			k, err := w.Write(buf)
			sent.Add(int64(k))
			if err != nil {
				return
			}
		}
	}), RemoteConfig{Attempts: 1})
	ctx := context.Background()
	for _, key := range []string{"announced", "chunked"} {
		for name, call := range map[string]func() error{
			"Get":      func() error { _, err := st.Get(ctx, key, store.OffsetLen(0, 10)); return err },
			"ReadInto": func() error { _, err := st.ReadInto(ctx, key, 0, make([]byte, 10)); return err },
		} {
			sent.Store(0)
			keyErr(t, name+"("+key+", 10 bytes)", call(), key, store.ErrBadContentRange)
			if n := sent.Load(); n > 8<<20 {
				t.Errorf("%s(%s, 10 bytes) let the server send %d bytes", name, key, n)
			}
		}
	}
}

// testStalledBody: a body that stops arriving fails its attempt after the
// idle timeout: retried, and when it stalls every time, store.ErrStalled.
func testStalledBody(t *testing.T, r Remote) {
	val := Pattern(100_000)
	var hits counter
	url := r.front(t, map[string][]byte{"stall": val, "always": val}, func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		n := hits.add(req.Method + " " + req.URL.Path)
		if req.Method != http.MethodGet || (n > 1 && req.URL.Path != r.Path("always")) {
			next.ServeHTTP(w, req)
			return
		}
		code, body := replay(w, req, next)
		w.WriteHeader(code)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		<-req.Context().Done()
	})
	st := r.open(t, url, RemoteConfig{Attempts: 3, Timeouts: store.Timeouts{Idle: 100 * time.Millisecond}})
	ctx := context.Background()
	err := NoHang(t, "Get(stall)", func() error {
		got, err := st.Get(ctx, "stall", store.OffsetLen(10, 50_000))
		if err == nil && !bytes.Equal(got, val[10:50_010]) {
			err = fmt.Errorf("wrong bytes")
		}
		return err
	})
	if n := hits.get("GET " + r.Path("stall")); err != nil || n != 2 {
		t.Errorf("Get(stall) = %v after %d GETs; want the bytes after 2", err, n)
	}
	for name, call := range map[string]func() error{
		"Get":      func() error { _, err := st.Get(ctx, "always", store.Full()); return err },
		"ReadInto": func() error { _, err := st.ReadInto(ctx, "always", 0, make([]byte, 8)); return err },
	} {
		keyErr(t, name+"(always)", NoHang(t, name, call), "always", store.ErrStalled)
	}
	if n := hits.get("GET " + r.Path("always")); n != 6 {
		t.Errorf("stalled reads tried %d times, want 3 each", n)
	}
}

// testHeaderTimeout: a server that accepts requests and never answers
// fails each attempt after the header timeout.
func testHeaderTimeout(t *testing.T, r Remote) {
	var hits atomic.Int64
	release := make(chan struct{})
	st := r.open(t, answer(t, func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		select {
		case <-req.Context().Done():
		case <-release:
		}
	}), RemoteConfig{Attempts: 2, Timeouts: store.Timeouts{Header: 100 * time.Millisecond}})
	t.Cleanup(func() { close(release) })
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Get":  func() error { _, err := st.Get(ctx, "k", store.OffsetLen(0, 4)); return err },
		"Size": func() error { _, err := st.Size(ctx, "k"); return err },
	} {
		hits.Store(0)
		err := NoHang(t, name, call)
		keyErr(t, name+" from a server that never answers", err, "k", nil)
		if n := hits.Load(); n != 2 {
			t.Errorf("%s: %d attempts, want 2", name, n)
		}
	}
}

// testWrongContentLength: answers whose Content-Length disagrees with
// their body (cut short: retried) or their Content-Range (refused).
func testWrongContentLength(t *testing.T, r Remote) {
	var hits counter
	st := r.open(t, answer(t, func(w http.ResponseWriter, req *http.Request) {
		n := hits.add(req.URL.Path)
		a := "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 10\r\n\r\n01234" // 5 of 10
		switch req.URL.Path {
		case r.Path("short-once"):
			if n > 1 {
				a += "56789"
			}
		case r.Path("less"): // announces 5 of a 10-byte range
			a = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 5\r\n\r\n0123456789"
		case r.Path("more"): // announces 20 bytes for a 10-byte range
			a = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 20\r\n\r\n0123456789abcdefghij"
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.WriteString(a)
		buf.Flush()
		conn.Close()
	}), RemoteConfig{Attempts: 3})
	ctx := context.Background()
	if got, err := st.Get(ctx, "short-once", store.OffsetLen(0, 10)); err != nil || string(got) != "0123456789" {
		t.Errorf("Get(short-once) = %q, %v; want the retried answer", got, err)
	}
	for _, tc := range []struct {
		key   string
		want  error
		tries int
	}{
		{"short", nil, 3}, // cut short: retried, then the read error
		{"less", nil, -1}, // a body longer than announced: refused or read as cut short
		{"more", nil, -1},
	} {
		_, err := st.Get(ctx, tc.key, store.OffsetLen(0, 10))
		keyErr(t, "Get("+tc.key+")", err, tc.key, tc.want)
		if n := hits.get(r.Path(tc.key)); tc.tries > 0 && n != tc.tries {
			t.Errorf("Get(%s): %d attempts, want %d", tc.key, n, tc.tries)
		}
	}
}

// testTooManyRequests: 429 answers (Retry-After 0) are retried.
func testTooManyRequests(t *testing.T, r Remote) {
	var seen counter
	url := r.front(t, map[string][]byte{"k": []byte("value")}, func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		if seen.add(req.Method+" "+req.URL.String()) == 1 {
			w.Header().Set("Retry-After", "0")
			r.Error(w, http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, req)
	})
	st := r.open(t, url, RemoteConfig{Attempts: 2})
	ctx := context.Background()
	if got, err := st.Get(ctx, "k", store.OffsetLen(1, 3)); err != nil || string(got) != "alu" {
		t.Errorf("Get after a 429 = %q, %v", got, err)
	}
	if n, err := st.Size(ctx, "k"); err != nil || n != 5 {
		t.Errorf("Size after a 429 = %d, %v", n, err)
	}
}

// testHangingServer: a deadline ends every read from a server that never
// answers with context.DeadlineExceeded naming the key, and no goroutine
// is left behind.
func testHangingServer(t *testing.T, r Remote) {
	release := make(chan struct{})
	url := answer(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/warm" {
			return
		}
		select {
		case <-req.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	st := r.open(t, url, RemoteConfig{})
	if resp, err := http.Get(url + "/warm"); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	before := runtime.NumGoroutine()
	for name, call := range map[string]func(context.Context) error{
		"Get":       func(ctx context.Context) error { _, err := st.Get(ctx, "k", store.Full()); return err },
		"GetSuffix": func(ctx context.Context) error { _, err := st.Get(ctx, "k", store.Suffix(8)); return err },
		"GetRanges": func(ctx context.Context) error {
			var rs []store.ByteRange
			for i := range 16 {
				rs = append(rs, store.OffsetLen(int64(i)<<22, 10), store.Suffix(int64(i+1)))
			}
			_, err := st.GetRanges(ctx, "k", rs)
			return err
		},
		"ReadInto": func(ctx context.Context) error { _, err := st.ReadInto(ctx, "k", 3, make([]byte, 4)); return err },
		"Size":     func(ctx context.Context) error { _, err := st.Size(ctx, "k"); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := call(ctx)
		cancel()
		keyErr(t, name+" against a hanging server", err, "k", context.DeadlineExceeded)
	}
	// Let the transport and the server notice the closed connections (a
	// loaded machine takes its time: up to 10 s, asserting no timing).
	after := runtime.NumGoroutine()
	for i := 0; i < 1000 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after the hanging calls\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// FuzzRemoteRanges is a fuzz target's body: fuzzed ranges of a value read
// through GetRanges from r's server behind RangeFaults. Every answer the
// store accepts must be exactly the right bytes, and the faults that a
// retry or slicing repairs (none, Range ignored, a 503, no Content-Length)
// must not fail the read.
func FuzzRemoteRanges(f *testing.F, r Remote) {
	f.Add(uint16(1000), uint8(FaultNone), false, []byte{1, 10, 0, 20, 0, 1, 200, 0, 5, 0})
	f.Add(uint16(1000), uint8(FaultIgnore), true, []byte{1, 10, 0, 20, 0, 3, 0, 0, 7, 0, 2, 0xe0, 3, 0, 0})
	f.Add(uint16(5000), uint8(FaultOverlong), false, []byte{1, 0, 0, 10, 0, 1, 0x80, 0x13, 0xff, 0})
	f.Add(uint16(300), uint8(FaultTruncate), true, []byte{1, 5, 0, 100, 0, 0, 0, 0, 0, 0})
	f.Add(uint16(300), uint8(FaultRetry), false, []byte{3, 0, 0, 50, 0, 2, 250, 0, 0, 0, 1, 0, 2, 0, 0})
	f.Add(uint16(300), uint8(FaultShift), false, []byte{1, 5, 0, 10, 0, 3, 0, 0, 9, 0})
	f.Add(uint16(70), uint8(FaultChunked), true, []byte{1, 60, 0, 40, 0, 2, 10, 0, 0, 0, 3, 0, 0, 200, 0})
	f.Add(uint16(0), uint8(FaultNone), false, []byte{3, 0, 0, 5, 0, 1, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, size uint16, fault uint8, coalesce bool, rdata []byte) {
		val := Pattern(int(size))
		ts := httptest.NewServer(RangeFaults(r.Serve(t, map[string][]byte{"k": val}), int(fault)))
		defer ts.Close()
		cfg := RemoteConfig{Attempts: 3, Timeouts: fuzzTimeouts}
		if coalesce {
			cfg.Coalesce = store.CoalesceOptions{MaxGap: 100, MaxSize: 1000}
		}
		// Three attempts: a store that learns, from a 200 answer, that
		// the server ignores ranges sends a retry without its Range
		// header, which FaultRetry counts as a new request.
		st := r.open(t, ts.URL, cfg)
		ranges := FuzzRanges(rdata)
		got, err := st.GetRanges(context.Background(), "k", ranges)
		if err != nil {
			var ke *store.KeyError
			if !errors.As(err, &ke) || ke.Key != "k" {
				t.Fatalf("GetRanges error %v does not name the key", err)
			}
			switch int(fault) % NumFaults {
			case FaultNone, FaultIgnore, FaultRetry, FaultChunked:
				t.Fatalf("GetRanges(%v) with fault %d: %v", ranges, fault, err)
			}
			return
		}
		CheckRanges(t, val, ranges, got)
	})
}

// fuzzTimeouts keep a fuzzed answer from stalling a run for long.
var fuzzTimeouts = store.Timeouts{Header: 10 * time.Second, Idle: 10 * time.Second}

// FuzzRemoteSize is a fuzz target's body: Size (a HEAD, and a GET when
// the HEAD tells no length) of r's store fed arbitrary raw answers
// (status line, headers, body as the server writes them). It must never
// panic or hang, a size it accepts is not negative, and its errors name
// the key.
func FuzzRemoteSize(f *testing.F, r Remote) {
	f.Add(uint16(200), "Content-Length: 10\r\n", []byte("0123456789"))
	f.Add(uint16(200), "", []byte("no length"))
	f.Add(uint16(200), "Transfer-Encoding: chunked\r\n", []byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add(uint16(200), "Content-Length: -1\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 99999999999999999999\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 1\r\nContent-Length: 2\r\n", []byte("ab"))
	f.Add(uint16(206), "Content-Length: 3\r\nContent-Range: bytes 0-2/10\r\n", []byte("012"))
	f.Add(uint16(416), "Content-Range: bytes */10\r\n", []byte{})
	f.Add(uint16(404), "Content-Type: application/xml\r\n", []byte{})
	f.Add(uint16(403), "Content-Length: 5\r\n", []byte("nope!"))
	f.Add(uint16(301), "x-amz-bucket-region: eu-west-1\r\n", []byte{})
	f.Add(uint16(302), "Location: /k\r\n", []byte{})
	f.Add(uint16(100), "", []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Add(uint16(503), "Retry-After: 99999999999999999999\r\n", []byte{})
	f.Fuzz(func(t *testing.T, status uint16, header string, body []byte) {
		a := append([]byte(fmt.Sprintf("HTTP/1.1 %d X\r\n%s\r\n", status%1000, header)), body...)
		ts := httptest.NewServer(RawAnswer(func(*http.Request) []byte { return a }))
		defer ts.Close()
		st := r.open(t, ts.URL, RemoteConfig{Attempts: 1, Timeouts: fuzzTimeouts})
		n, err := st.Size(context.Background(), "k")
		var ke *store.KeyError
		switch {
		case err == nil && n < 0:
			t.Fatalf("Size = %d", n)
		case err != nil && (!errors.As(err, &ke) || ke.Key != "k"):
			t.Fatalf("Size error %v does not name the key", err)
		}
	})
}

// settable answers every request with the answer last set.
type settable struct {
	mu     sync.Mutex
	status int
	cr     string
	body   []byte
}

func (f *settable) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := http.Header{"Content-Type": {"application/xml"}}
	if f.cr != "" {
		h.Set("Content-Range", f.cr)
	}
	return &http.Response{
		StatusCode: f.status, Status: strconv.Itoa(f.status), Header: h,
		Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req,
	}, nil
}

// FuzzRemoteResponse is a fuzz target's body: arbitrary answers (status,
// Content-Range, body, which may be the backend's XML error) to Get and
// ReadInto of r's store (CheckFuzzedRead): never a panic, and what they
// accept fits the range asked for.
func FuzzRemoteResponse(f *testing.F, r Remote) {
	f.Add(uint8(0), "", []byte("0123456789"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 2-4/10", []byte("234"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 7-9/10", []byte("789"), uint8(3), int64(0), int64(3))
	f.Add(uint8(1), "bytes 0-9/3", []byte("0123456789"), uint8(3), int64(0), int64(3))
	f.Add(uint8(1), "bytes 0--1/0", []byte(""), uint8(3), int64(0), int64(4))
	f.Add(uint8(1), "bytes 5-4/10", []byte("x"), uint8(2), int64(5), int64(0))
	f.Add(uint8(2), "bytes */10", []byte(""), uint8(1), int64(20), int64(5))
	f.Add(uint8(2), "", []byte(`<Error><Code>InvalidRange</Code></Error>`), uint8(1), int64(20), int64(5))
	f.Add(uint8(3), "", []byte(`<Error><Code>NoSuchKey</Code></Error>`), uint8(0), int64(0), int64(0))
	f.Add(uint8(6), "", []byte(`<Error><Code>AccessDenied</Code><Message>no</Message></Error>`), uint8(2), int64(1), int64(0))
	f.Add(uint8(1), "bytes 0-99999999999999999999/1", []byte("ab"), uint8(0), int64(0), int64(0))
	statuses := []int{200, 206, 416, 404, 500, 503, 403, 301, 204}
	rt := &settable{}
	st := r.open(f, "http://fuzz.invalid", RemoteConfig{Attempts: 1, Client: &http.Client{Transport: rt}})
	f.Fuzz(func(t *testing.T, status uint8, cr string, body []byte, kind uint8, off, n int64) {
		rt.mu.Lock()
		rt.status, rt.cr, rt.body = statuses[int(status)%len(statuses)], cr, body
		rt.mu.Unlock()
		CheckFuzzedRead(t, st, "k", kind, off, n)
	})
}

// PathAfter returns a Remote.Path for servers whose keys live under base
// ("/bucket/prefix"): base + "/" + key.
func PathAfter(base string) func(key string) string {
	base = strings.TrimSuffix(base, "/")
	return func(key string) string { return base + "/" + key }
}
