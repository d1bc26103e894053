package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
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

	if err := st.Set(ctx, "v", []byte("value")); err != nil {
		t.Fatalf("Set through the flaky server: %v", err)
	}
	if err := st.Set(ctx, "w", []byte("small")); err != nil {
		t.Fatal(err)
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
