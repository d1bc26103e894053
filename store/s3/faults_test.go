package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

// faultKind is what the flaky server does to the first attempt of a request.
type faultKind int

const (
	faultSlowDown faultKind = iota // 503 SlowDown, S3's throttling answer
	faultInternal                  // 500 InternalError
	faultReset                     // connection closed before any answer
	faultTruncate                  // full headers, half the body, then closed
	numFaults
)

// flaky is an http.Handler in front of the fake S3 server that spoils the
// first attempt of every distinct request (method, path, query, Range),
// cycling through the fault kinds, and passes later attempts through. So
// every request (reads, writes, deletes, listing pages) needs a retry, and
// none needs more than two.
type flaky struct {
	next    http.Handler
	mu      sync.Mutex
	seen    map[string]bool
	n       int
	counts  [numFaults]atomic.Int64
	methods map[string]*atomic.Int64 // spoilt requests by method
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sig := r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery + " " + r.Header.Get("Range")
	f.mu.Lock()
	first := !f.seen[sig]
	f.seen[sig] = true
	kind := faultKind(f.n % int(numFaults))
	if first {
		f.n++
	}
	f.mu.Unlock()
	if !first {
		f.next.ServeHTTP(w, r)
		return
	}
	if kind == faultTruncate && r.Method != http.MethodGet {
		kind = faultReset
	}
	f.counts[kind].Add(1)
	if c := f.methods[r.Method]; c != nil {
		c.Add(1)
	}
	switch kind {
	case faultSlowDown:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	case faultInternal:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
	case faultReset:
		panic(http.ErrAbortHandler) // closes the connection without an answer
	case faultTruncate:
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := rec.Body.Bytes()
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

func TestFaultsRetried(t *testing.T) {
	ctx := context.Background()
	fake := s3test.NewFake(t, "b")
	f := &flaky{next: fake.Handler, seen: map[string]bool{},
		methods: map[string]*atomic.Int64{http.MethodPut: {}, http.MethodDelete: {}}}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	srv := *fake
	srv.Endpoint = ts.URL
	st := srv.Store(t, "flaky")

	val := make([]byte, 200_000)
	for i := range val {
		val[i] = byte(i * 7 >> 3)
	}
	if err := st.Set(ctx, "v", val); err != nil {
		t.Fatalf("Set through the flaky server: %v", err)
	}
	if err := st.Set(ctx, "w", []byte("small")); err != nil {
		t.Fatal(err)
	}
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
		got, err := st.Get(ctx, "v", tc.r)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("Get(v, %v) = %d bytes, %v; want %d bytes", tc.r, len(got), err, len(tc.want))
		}
	}
	var ranges []store.ByteRange
	var want [][]byte
	for i := range 40 {
		off := int64(i * 4999)
		ranges = append(ranges, store.OffsetLen(off, 100))
		want = append(want, val[off:off+100])
	}
	got, err := s3.New(st.Client(), "b", "flaky", s3.WithCoalesce(store.CoalesceOptions{MaxGap: -1}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := got.GetRanges(ctx, "v", ranges)
	if err != nil {
		t.Fatalf("GetRanges through the flaky server: %v", err)
	}
	for i := range res {
		if !bytes.Equal(res[i], want[i]) {
			t.Errorf("GetRanges result %d wrong", i)
		}
	}
	dst := make([]byte, 3000)
	if n, err := st.ReadInto(ctx, "v", 7000, dst); err != nil || n != 3000 || !bytes.Equal(dst, val[7000:10000]) {
		t.Errorf("ReadInto = %d, %v", n, err)
	}
	if n, err := st.Size(ctx, "w"); err != nil || n != 5 {
		t.Errorf("Size(w) = %d, %v", n, err)
	}
	var keys []string
	for k, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		keys = append(keys, k)
	}
	if fmt.Sprint(keys) != "[v w]" {
		t.Errorf("List = %q", keys)
	}
	if _, err := st.Get(ctx, "missing", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing) through the flaky server: %v", err)
	}
	if err := st.Delete(ctx, "w"); err != nil {
		t.Errorf("Delete(w) through the flaky server: %v", err)
	}
	if _, err := st.Get(ctx, "w", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(w) after Delete: %v", err)
	}
	// A listing of several pages, each page's first request spoilt.
	var many []string
	for i := range 2500 {
		k := fmt.Sprintf("many/%04d", i)
		many = append(many, k)
		if _, err := fake.Backend.PutObject("b", "flaky/"+k, nil, bytes.NewReader(nil), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	keys = keys[:0]
	for k, err := range st.List(ctx, "many/") {
		if err != nil {
			t.Fatalf("List(many/) through the flaky server: %v", err)
		}
		keys = append(keys, k)
	}
	if !slices.Equal(keys, many) {
		t.Errorf("List(many/) through the flaky server: %d keys, want %d", len(keys), len(many))
	}
	if ks, _, err := st.ListDir(ctx, "many/"); err != nil || len(ks) != len(many) {
		t.Errorf("ListDir(many/) through the flaky server: %d keys, %v", len(ks), err)
	}
	for k := range numFaults {
		if f.counts[k].Load() == 0 {
			t.Errorf("fault kind %d was never injected", k)
		}
	}
	for _, m := range []string{http.MethodPut, http.MethodDelete} {
		if f.methods[m].Load() == 0 {
			t.Errorf("no %s was spoilt", m)
		}
	}
}

// TestFaultsPersistent checks that a server failing every time yields an
// error naming the key after the configured attempts, not a hang.
func TestFaultsPersistent(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<Error><Code>SlowDown</Code><Message>slow down</Message></Error>`)
	}))
	t.Cleanup(ts.Close)
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
	st := srv.Store(t, "", s3.WithRetry(3, time.Millisecond))
	_, err := st.Get(context.Background(), "some/key", store.OffsetLen(0, 10))
	var ke *store.KeyError
	if err == nil || !errors.As(err, &ke) || ke.Key != "some/key" || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get from an always-503 server: err = %v; want a KeyError for some/key", err)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("server saw %d attempts, want 3", n)
	}
}

// TestHangingServer checks that a deadline ends reads from a server that
// never answers, and that no goroutine is left behind.
func TestHangingServer(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" { // ListBuckets, the warm-up call
			w.WriteHeader(http.StatusOK)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
	st := srv.Store(t, "p")

	// Warm up the client so pooled connections and lazily started
	// goroutines exist before counting.
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	st.Client().ListBuckets(wctx, nil) // the empty answer does not parse: no matter
	wcancel()
	before := runtime.NumGoroutine()

	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := st.Get(ctx, "k", store.Full()); return err }},
		{"GetSuffix", func(ctx context.Context) error { _, err := st.Get(ctx, "k", store.Suffix(8)); return err }},
		{"GetRanges", func(ctx context.Context) error {
			var rs []store.ByteRange
			for i := range 16 {
				rs = append(rs, store.OffsetLen(int64(i)<<22, 10), store.Suffix(int64(i+1)))
			}
			_, err := st.GetRanges(ctx, "k", rs)
			return err
		}},
		{"ReadInto", func(ctx context.Context) error { _, err := st.ReadInto(ctx, "k", 0, make([]byte, 8)); return err }},
		{"Size", func(ctx context.Context) error { _, err := st.Size(ctx, "k"); return err }},
		{"Set", func(ctx context.Context) error { return st.Set(ctx, "k", []byte("v")) }},
		{"List", func(ctx context.Context) error {
			for _, err := range st.List(ctx, "") {
				return err
			}
			return nil
		}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		start := time.Now()
		err := tc.call(ctx)
		cancel()
		t.Logf("%s returned after %v: %v", tc.name, time.Since(start).Round(time.Millisecond), err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s against a hanging server: err = %v, want context.DeadlineExceeded", tc.name, err)
		}
		var ke *store.KeyError
		if !errors.As(err, &ke) {
			t.Errorf("%s: err %v is not a *store.KeyError", tc.name, err)
		}
	}
	// Let the transport and the server notice the closed connections.
	after := runtime.NumGoroutine()
	for i := 0; i < 200 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after the hanging calls\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
