package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"strconv"
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

// hugeBody is the length of the body a lying server sends: more than
// store.ReadBody trusts to allocate, so that reading it whole shows.
const hugeBody = 96 << 20

// writePattern writes n bytes of byte(i) to w, stopping at the first
// failed write (the client went away).
func writePattern(w nethttp.ResponseWriter, n int) {
	buf := make([]byte, 32<<10)
	for off := 0; off < n; off += len(buf) {
		for i := range buf {
			buf[i] = byte(off + i)
		}
		if _, err := w.Write(buf[:min(len(buf), n-off)]); err != nil {
			return
		}
	}
}

// TestOverlongBody checks that an answer longer than the range asked for
// is not read whole: a 206 answer is an error after at most a few KiB, a
// 200 answer (range ignored) is read only up to the range's end.
func TestOverlongBody(t *testing.T) {
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/206":
			w.Header().Set("Content-Range", "bytes 0-9/200000000")
			w.Header().Set("Content-Length", strconv.Itoa(hugeBody))
			w.WriteHeader(nethttp.StatusPartialContent)
		case "/206-chunked":
			w.Header().Set("Content-Range", "bytes 0-9/200000000")
			w.WriteHeader(nethttp.StatusPartialContent)
			w.(nethttp.Flusher).Flush() // no Content-Length
		case "/200":
			w.Header().Set("Content-Length", strconv.Itoa(hugeBody))
		}
		writePattern(w, hugeBody)
	}))
	ctx := context.Background()
	rec := s3test.NewRecorder(nil)
	st, err := http.New(ts.URL, http.WithClient(rec.Client()), http.WithRetry(1, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	const maxRead = 64 << 10
	for _, key := range []string{"206", "206-chunked"} {
		rec.Reset()
		_, err := st.Get(ctx, key, store.OffsetLen(0, 10))
		if !errors.Is(err, store.ErrBadContentRange) {
			t.Errorf("Get(%s, 10 bytes) = %v; want ErrBadContentRange", key, err)
		}
		if n := rec.BodyBytes(); n > maxRead {
			t.Errorf("Get(%s, 10 bytes) read %d bytes of the body", key, n)
		}
		rec.Reset()
		_, err = st.ReadInto(ctx, key, 0, make([]byte, 10))
		if !errors.Is(err, store.ErrBadContentRange) {
			t.Errorf("ReadInto(%s, 10 bytes) = %v; want ErrBadContentRange", key, err)
		}
		if n := rec.BodyBytes(); n > maxRead {
			t.Errorf("ReadInto(%s, 10 bytes) read %d bytes of the body", key, n)
		}
	}
	rec.Reset()
	got, err := st.Get(ctx, "200", store.OffsetLen(1000, 10))
	if want := []byte{232, 233, 234, 235, 236, 237, 238, 239, 240, 241}; err != nil || !bytes.Equal(got, want) {
		t.Errorf("Get(200, [1000, 1010)) = %v, %v; want %v", got, err, want)
	}
	if n := rec.BodyBytes(); n > maxRead {
		t.Errorf("Get(200, [1000, 1010)) read %d bytes of the body", n)
	}
}

// stallServer answers GETs for /stall-once/k with headers and half the
// body and then nothing, the first time only; /stall/k always. It counts
// the requests per path.
type stallServer struct {
	mu   sync.Mutex
	hits map[string]int
}

func (s *stallServer) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	n := s.hits[r.URL.Path]
	s.mu.Unlock()
	val := []byte("0123456789")
	stall := strings.HasPrefix(r.URL.Path, "/stall/") || (strings.HasPrefix(r.URL.Path, "/stall-once/") && n == 1)
	if !stall || r.Method == nethttp.MethodHead {
		nethttp.ServeContent(w, r, "", time.Time{}, bytes.NewReader(val))
		return
	}
	w.Header().Set("Content-Length", "10")
	w.WriteHeader(nethttp.StatusOK)
	w.Write(val[:5])
	w.(nethttp.Flusher).Flush()
	<-r.Context().Done()
}

func (s *stallServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TestStalledBody checks that a body that stops arriving after the headers
// fails the attempt after the idle timeout: retried, and when it stalls
// every time, an error wrapping store.ErrStalled, never a hang.
func TestStalledBody(t *testing.T) {
	srv := &stallServer{hits: map[string]int{}}
	ts := newServer(t, srv)
	st, err := http.New(ts.URL, http.WithTimeouts(store.Timeouts{Idle: 100 * time.Millisecond}), http.WithRetry(3, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = storetest.NoHang(t, "Get(stall-once/k)", func() error {
		got, err := st.Get(ctx, "stall-once/k", store.Full())
		if err == nil && string(got) != "0123456789" {
			err = fmt.Errorf("got %q", got)
		}
		return err
	})
	if err != nil || srv.count("/stall-once/k") != 2 {
		t.Errorf("Get(stall-once/k) = %v after %d requests; want the value after 2", err, srv.count("/stall-once/k"))
	}
	for name, call := range map[string]func() error{
		"Get":      func() error { _, err := st.Get(ctx, "stall/a", store.Full()); return err },
		"ReadInto": func() error { _, err := st.ReadInto(ctx, "stall/b", 0, make([]byte, 8)); return err },
	} {
		err := storetest.NoHang(t, name, call)
		var ke *store.KeyError
		if !errors.Is(err, store.ErrStalled) || !errors.As(err, &ke) || !strings.HasPrefix(ke.Key, "stall/") {
			t.Errorf("%s of a body that always stalls = %v; want ErrStalled naming the key", name, err)
		}
	}
	if a, b := srv.count("/stall/a"), srv.count("/stall/b"); a != 3 || b != 3 {
		t.Errorf("stalled reads tried %d and %d times, want 3 each", a, b)
	}
}

// TestHeaderTimeout checks that a server that accepts the request and never
// answers fails each attempt after the header timeout instead of hanging
// the read.
func TestHeaderTimeout(t *testing.T) {
	var hits atomic.Int64
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		hits.Add(1)
		<-r.Context().Done()
	}))
	st, err := http.New(ts.URL, http.WithTimeouts(store.Timeouts{Header: 100 * time.Millisecond}), http.WithRetry(2, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Get":  func() error { _, err := st.Get(ctx, "k", store.OffsetLen(0, 4)); return err },
		"Size": func() error { _, err := st.Size(ctx, "k"); return err },
	} {
		hits.Store(0)
		err := storetest.NoHang(t, name, call)
		var ke *store.KeyError
		if err == nil || !errors.As(err, &ke) || ke.Key != "k" {
			t.Errorf("%s from a server that never answers = %v; want a KeyError for k", name, err)
		}
		if n := hits.Load(); n != 2 {
			t.Errorf("%s: %d attempts, want 2", name, n)
		}
	}
}

// rawAnswer hijacks the connection and writes answer as is, then closes.
func rawAnswer(w nethttp.ResponseWriter, answer string) {
	conn, buf, err := w.(nethttp.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	buf.WriteString(answer)
	buf.Flush()
	conn.Close()
}

// TestWrongContentLength checks answers whose Content-Length disagrees
// with their body or their Content-Range.
func TestWrongContentLength(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	ts := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/short-once" && n > 1:
			rawAnswer(w, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 10\r\n\r\n0123456789")
		case strings.HasPrefix(r.URL.Path, "/short"): // announces 10, sends 5
			rawAnswer(w, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 10\r\n\r\n01234")
		case r.URL.Path == "/less": // announces 5 of a 10-byte range
			rawAnswer(w, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 5\r\n\r\n0123456789")
		case r.URL.Path == "/more": // announces 20 bytes for a 10-byte range
			rawAnswer(w, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 20\r\n\r\n0123456789abcdefghij")
		}
	}))
	st, err := http.New(ts.URL, http.WithRetry(3, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
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
		{"less", store.ErrBadContentRange, 1},
		{"more", store.ErrBadContentRange, 1},
	} {
		_, err := st.Get(ctx, tc.key, store.OffsetLen(0, 10))
		var ke *store.KeyError
		if err == nil || !errors.As(err, &ke) || ke.Key != tc.key || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Get(%s) = %v; want a KeyError (%v)", tc.key, err, tc.want)
		}
		mu.Lock()
		n := hits["/"+tc.key]
		mu.Unlock()
		if n != tc.tries {
			t.Errorf("Get(%s): %d attempts, want %d", tc.key, n, tc.tries)
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
