package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// fronted returns a fake S3 server with handler h in front of it (h gets
// the fake's handler to pass requests on), and a store on it under prefix
// "p" with extra options.
func fronted(t *testing.T, h func(w http.ResponseWriter, r *http.Request, next http.Handler), extra ...s3.Option) (*s3test.Server, *s3.Store) {
	t.Helper()
	fake := s3test.NewFake(t, "b")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, fake.Handler) }))
	t.Cleanup(ts.Close)
	srv := *fake
	srv.Endpoint = ts.URL
	return fake, srv.Store(t, "p", extra...)
}

// put stores value under the store key key (prefix "p") straight into the
// fake's backend.
func put(t *testing.T, fake *s3test.Server, key string, value []byte) {
	t.Helper()
	if _, err := fake.Backend.PutObject("b", "p/"+key, nil, bytes.NewReader(value), int64(len(value)), nil); err != nil {
		t.Fatal(err)
	}
}

// patterned returns n bytes of byte(i*7).
func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// TestRangeIgnored checks reads from a server that ignores Range and
// answers every GET with the whole object: right bytes, and of a big
// object only the part up to the range's end is read.
func TestRangeIgnored(t *testing.T) {
	rec := s3test.NewRecorder(nil)
	fake, st := fronted(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		r.Header.Del("Range")
		next.ServeHTTP(w, r)
	}, s3.WithHTTPClient(rec.Client()))
	val := patterned(8 << 20)
	put(t, fake, "big", val)
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
		if _, _, ok := tc.r.Bounded(); ok && tc.r.String() == "bytes=100-109" && rec.BodyBytes() > 64<<10 {
			t.Errorf("Get(%v) read %d bytes of an 8 MiB body", tc.r, rec.BodyBytes())
		}
	}
	got, err := st.GetRanges(ctx, "big", []store.ByteRange{store.OffsetLen(5, 5), store.OffsetLen(4<<20, 3), store.Suffix(2)})
	if err != nil || !bytes.Equal(got[0], val[5:10]) || !bytes.Equal(got[1], val[4<<20:4<<20+3]) || !bytes.Equal(got[2], val[len(val)-2:]) {
		t.Errorf("GetRanges = %v, %v", got, err)
	}
	dst := make([]byte, 9)
	if n, err := st.ReadInto(ctx, "big", 1000, dst); err != nil || n != 9 || !bytes.Equal(dst, val[1000:1009]) {
		t.Errorf("ReadInto(1000, 9) = %d, %v", n, err)
	}
}

// TestOverlongBody checks that a 206 answer longer than the range asked
// for is refused after reading a few KiB at most, not read whole.
func TestOverlongBody(t *testing.T) {
	rec := s3test.NewRecorder(nil)
	const huge = 96 << 20
	_, st := fronted(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		w.Header().Set("Content-Range", "bytes 0-9/200000000")
		if r.URL.Path == "/b/p/announced" {
			w.Header().Set("Content-Length", strconv.Itoa(huge))
		}
		w.WriteHeader(http.StatusPartialContent)
		w.(http.Flusher).Flush()
		buf := make([]byte, 32<<10)
		for n := 0; n < huge; n += len(buf) {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}, s3.WithHTTPClient(rec.Client()), s3.WithRetry(1, time.Millisecond))
	ctx := context.Background()
	for _, key := range []string{"announced", "chunked"} {
		rec.Reset()
		_, err := st.Get(ctx, key, store.OffsetLen(0, 10))
		if !errors.Is(err, store.ErrBadContentRange) {
			t.Errorf("Get(%s, 10 bytes) = %v; want ErrBadContentRange", key, err)
		}
		if n := rec.BodyBytes(); n > 64<<10 {
			t.Errorf("Get(%s, 10 bytes) read %d bytes of the body", key, n)
		}
	}
	rec.Reset()
	if _, err := st.ReadInto(ctx, "announced", 0, make([]byte, 10)); !errors.Is(err, store.ErrBadContentRange) {
		t.Errorf("ReadInto(announced, 10 bytes) = %v; want ErrBadContentRange", err)
	}
}

// stallOnce lets the first GET of each key in stall stop after half its
// body (every GET for keys starting with "always"), and passes everything
// else on. It counts GETs per path.
type stallOnce struct {
	mu   sync.Mutex
	hits map[string]int
}

func (s *stallOnce) handle(w http.ResponseWriter, r *http.Request, next http.Handler) {
	s.mu.Lock()
	s.hits[r.Method+" "+r.URL.Path]++
	n := s.hits[r.Method+" "+r.URL.Path]
	s.mu.Unlock()
	stall := r.Method == http.MethodGet && (n == 1 || strings.Contains(r.URL.Path, "/always")) &&
		(strings.Contains(r.URL.Path, "/stall") || strings.Contains(r.URL.Path, "/always") || r.URL.Query().Has("list-type"))
	if !stall {
		next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	body := rec.Body.Bytes()
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	w.Write(body[:len(body)/2])
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func (s *stallOnce) count(method, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[method+" "+path]
}

// TestStalledBody checks that bodies that stop arriving fail their attempt
// after the idle timeout: a read or listing is retried and succeeds, and a
// body that stalls every time ends in ErrStalled, never a hang.
func TestStalledBody(t *testing.T) {
	s := &stallOnce{hits: map[string]int{}}
	fake, st := fronted(t, s.handle, s3.WithTimeouts(store.Timeouts{Idle: 100 * time.Millisecond}), s3.WithRetry(3, time.Millisecond))
	val := patterned(100_000)
	for _, k := range []string{"stall", "always", "other"} {
		put(t, fake, k, val)
	}
	ctx := context.Background()
	err := storetest.NoHang(t, "Get(stall)", func() error {
		got, err := st.Get(ctx, "stall", store.OffsetLen(10, 50_000))
		if err == nil && !bytes.Equal(got, val[10:50_010]) {
			err = fmt.Errorf("wrong bytes")
		}
		return err
	})
	if err != nil || s.count("GET", "/b/p/stall") != 2 {
		t.Errorf("Get(stall) = %v after %d GETs; want the bytes after 2", err, s.count("GET", "/b/p/stall"))
	}
	err = storetest.NoHang(t, "Get(always)", func() error { _, err := st.Get(ctx, "always", store.Full()); return err })
	var ke *store.KeyError
	if !errors.Is(err, store.ErrStalled) || !errors.As(err, &ke) || ke.Key != "always" {
		t.Errorf("Get(always) = %v; want ErrStalled naming the key", err)
	}
	err = storetest.NoHang(t, "List", func() error {
		var keys []string
		for k, err := range st.List(ctx, "") {
			if err != nil {
				return err
			}
			keys = append(keys, k)
		}
		if fmt.Sprint(keys) != "[always other stall]" {
			return fmt.Errorf("listed %q", keys)
		}
		return nil
	})
	if err != nil {
		t.Errorf("List through a listing that stalls once: %v", err)
	}
}

// TestHeaderTimeout checks that a server that accepts requests and never
// answers fails them after the header timeout instead of hanging.
func TestHeaderTimeout(t *testing.T) {
	var hits atomic.Int64
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select { // a PUT's handler that reads no body does not see the client go
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
	st := srv.Store(t, "", s3.WithTimeouts(store.Timeouts{Header: 100 * time.Millisecond}), s3.WithRetry(2, time.Millisecond))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Get":  func() error { _, err := st.Get(ctx, "k", store.OffsetLen(0, 4)); return err },
		"Size": func() error { _, err := st.Size(ctx, "k"); return err },
		"Set":  func() error { return st.Set(ctx, "k", []byte("v")) },
		"List": func() error {
			for _, err := range st.List(ctx, "") {
				return err
			}
			return nil
		},
	} {
		hits.Store(0)
		err := storetest.NoHang(t, name, call)
		var ke *store.KeyError
		if err == nil || !errors.As(err, &ke) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s from a server that never answers = %v; want a KeyError", name, err)
		}
		if n := hits.Load(); n != 2 {
			t.Errorf("%s: %d attempts, want 2", name, n)
		}
	}
}

// TestTooManyRequests checks that 429 answers are retried.
func TestTooManyRequests(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	fake, st := fronted(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		sig := r.Method + " " + r.URL.String()
		mu.Lock()
		seen[sig]++
		n := seen[sig]
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>TooManyRequests</Code><Message>slow down</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
	put(t, fake, "k", []byte("value"))
	ctx := context.Background()
	if got, err := st.Get(ctx, "k", store.OffsetLen(1, 3)); err != nil || string(got) != "alu" {
		t.Errorf("Get after a 429 = %q, %v", got, err)
	}
	if n, err := st.Size(ctx, "k"); err != nil || n != 5 {
		t.Errorf("Size after a 429 = %d, %v", n, err)
	}
	if err := st.Set(ctx, "w", []byte("x")); err != nil {
		t.Errorf("Set after a 429: %v", err)
	}
	if err := st.Delete(ctx, "w"); err != nil {
		t.Errorf("Delete after a 429: %v", err)
	}
}

// TestWrongContentLength checks answers whose body is shorter than their
// Content-Length: retried, and an error when it happens every time.
func TestWrongContentLength(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	fake, st := fronted(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		if r.Method != http.MethodGet || (r.URL.Path == "/b/p/once" && n > 1) {
			next.ServeHTTP(w, r)
			return
		}
		conn, buf, _ := w.(http.Hijacker).Hijack()
		buf.WriteString("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 10\r\n\r\n01234")
		buf.Flush()
		conn.Close()
	}, s3.WithRetry(3, time.Millisecond))
	put(t, fake, "once", []byte("0123456789abcdef"))
	put(t, fake, "always", []byte("0123456789abcdef"))
	ctx := context.Background()
	if got, err := st.Get(ctx, "once", store.OffsetLen(0, 10)); err != nil || string(got) != "0123456789" {
		t.Errorf("Get(once) = %q, %v; want the retried answer", got, err)
	}
	_, err := st.Get(ctx, "always", store.OffsetLen(0, 10))
	var ke *store.KeyError
	if err == nil || !errors.As(err, &ke) || ke.Key != "always" {
		t.Errorf("Get(always) = %v; want a KeyError for always", err)
	}
}

// TestRedirect checks that S3's PermanentRedirect (a bucket in another
// region) is an error naming the key, not a missing key.
func TestRedirect(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusMovedPermanently)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PermanentRedirect</Code><Message>use the other endpoint</Message><Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint></Error>`)
	}))
	t.Cleanup(ts.Close)
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
	st := srv.Store(t, "", s3.WithRetry(3, time.Millisecond))
	_, err := st.Get(context.Background(), "k", store.Full())
	var ke *store.KeyError
	if err == nil || !errors.As(err, &ke) || ke.Key != "k" || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "PermanentRedirect") {
		t.Errorf("Get from a redirecting bucket = %v; want a PermanentRedirect KeyError for k", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("redirect answered %d times, want 1 (not retried)", n)
	}
}
