package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// uniquePrefix returns a fresh key prefix (storetest.UniquePrefix).
func uniquePrefix(base string) string { return storetest.UniquePrefix(base) }

// cleanup deletes every key below st's prefix when t ends.
func cleanup(t *testing.T, st *s3.Store) { storetest.Cleanup(t, st) }

func TestConformanceFake(t *testing.T) {
	srv := s3test.NewFake(t, "conformance")
	storetest.TestStore(t, func(t *testing.T) store.Store {
		return srv.Store(t, uniquePrefix("fake"))
	})
}

func TestConformanceRealS3(t *testing.T) {
	srv := s3test.FromEnv(t)
	storetest.TestStore(t, func(t *testing.T) store.Store {
		st := srv.Store(t, uniquePrefix("gozarr-test"))
		cleanup(t, st)
		return st
	})
}

// servers returns the fake and, when configured, the real S3 server.
func servers(t *testing.T) map[string]*s3test.Server {
	m := map[string]*s3test.Server{"fake": s3test.NewFake(t, "bucket")}
	if real, ok := s3test.LookupEnv(); ok {
		m["real"] = real
	} else {
		t.Logf("real S3 server not configured (%s unset): fake only", s3test.EnvEndpoint)
	}
	return m
}

// TestRequestEconomy checks which requests each read form sends: one GET
// each, with the Range header the package doc promises, and a HEAD (no GET)
// for zero-length ranges.
func TestRequestEconomy(t *testing.T) {
	for name, srv := range servers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rec := s3test.NewRecorder(nil)
			st := srv.Store(t, uniquePrefix("economy"), s3.WithHTTPClient(rec.Client()))
			cleanup(t, st)
			val := []byte("0123456789")
			if err := st.Set(ctx, "c/0", val); err != nil {
				t.Fatal(err)
			}
			storetest.CheckRangeRequests(t, st, "c/0", rec, nil)
			// Nearby ranges coalesce into one GET; a suffix is its own.
			rec.Reset()
			got, err := st.GetRanges(ctx, "c/0", []store.ByteRange{store.OffsetLen(6, 2), store.OffsetLen(0, 2), store.Suffix(1)})
			if err != nil || !slices.EqualFunc(got, [][]byte{[]byte("67"), []byte("01"), []byte("9")}, bytes.Equal) {
				t.Errorf("GetRanges = %q, %v", got, err)
			}
			var hdrs []string
			for _, q := range rec.Requests("GET") {
				hdrs = append(hdrs, q.Range)
			}
			slices.Sort(hdrs)
			if want := []string{"bytes=-1", "bytes=0-7"}; !slices.Equal(hdrs, want) || rec.Count("") != 2 {
				t.Errorf("GetRanges sent GETs with ranges %q (%d requests); want %q", hdrs, rec.Count(""), want)
			}
		})
	}
}

// TestCoalesceOff checks that with coalescing disabled every range is a
// request, and all run under the limit.
func TestCoalesceOff(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "b")
	rec := s3test.NewRecorder(nil)
	st := srv.Store(t, "p", s3.WithHTTPClient(rec.Client()), s3.WithConcurrency(2),
		s3.WithCoalesce(store.CoalesceOptions{MaxGap: -1, MaxSize: 1}))
	val := bytes.Repeat([]byte("abcdefgh"), 1000)
	if err := st.Set(ctx, "v", val); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	var ranges []store.ByteRange
	for i := range 20 {
		ranges = append(ranges, store.OffsetLen(int64(i*100), 10))
	}
	got, err := st.GetRanges(ctx, "v", ranges)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if !bytes.Equal(b, val[i*100:i*100+10]) {
			t.Errorf("range %d = %q", i, b)
		}
	}
	if n := rec.Count("GET"); n != 20 {
		t.Errorf("%d GETs, want 20", n)
	}
}

func TestPrefixIsolation(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "b")
	a := srv.Store(t, "data/a")
	b := srv.Store(t, "/data/ab/") // leading and trailing slashes are trimmed
	root := srv.Store(t, "")
	if a.Prefix() != "data/a/" || b.Prefix() != "data/ab/" {
		t.Fatalf("prefixes %q %q", a.Prefix(), b.Prefix())
	}
	for st, k := range map[*s3.Store]string{a: "x", b: "y"} {
		if err := st.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	all := storetest.ListKeys(t, root, "")
	if want := []string{"data/a/x", "data/ab/y"}; !slices.Equal(all, want) {
		t.Errorf("root List = %q, want %q", all, want)
	}
	for k, err := range a.List(ctx, "") {
		if err != nil || k != "x" {
			t.Errorf("a.List yielded %q, %v", k, err)
		}
	}
	if _, err := a.Get(ctx, "y", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a.Get(y) err = %v, want ErrNotFound", err)
	}
	if _, err := s3.New(root.Client(), "b", "a/../b"); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("New with prefix a/../b: err = %v, want ErrInvalidKey", err)
	}
	if _, err := s3.New(root.Client(), "", ""); !errors.Is(err, s3.ErrBucket) {
		t.Errorf("New with empty bucket: err = %v, want ErrBucket", err)
	}
}

func TestMissingBucket(t *testing.T) {
	srv := s3test.NewFake(t, "b")
	srv.Bucket = "nosuchbucket"
	st := srv.Store(t, "")
	_, err := st.Get(context.Background(), "k", store.Full())
	if !errors.Is(err, s3.ErrBucket) || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get in a missing bucket: err = %v, want ErrBucket and not ErrNotFound", err)
	}
}

// TestListPagination lists more keys than one ListObjectsV2 page holds.
func TestListPagination(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "b")
	rec := s3test.NewRecorder(nil)
	st := srv.Store(t, "many", s3.WithHTTPClient(rec.Client()))
	var want []string
	for i := range 1001 {
		k := fmt.Sprintf("c/%04d", i)
		want = append(want, k)
	}
	for _, k := range want {
		if _, err := srv.Backend.PutObject("b", "many/"+k, nil, bytes.NewReader([]byte(k)), int64(len(k)), nil); err != nil {
			t.Fatal(err)
		}
	}
	rec.Reset()
	got := storetest.ListKeys(t, st, "c/")
	if !slices.Equal(got, want) {
		t.Errorf("List returned %d keys, want %d (first %q)", len(got), len(want), got[:min(3, len(got))])
	}
	if n := rec.Count("GET"); n != 2 {
		t.Errorf("List of 1001 keys took %d pages, want 2", n)
	}
	keys, dirs, err := st.ListDir(ctx, "c")
	if err != nil || len(keys) != 1001 || len(dirs) != 0 || keys[0] != "0000" {
		t.Errorf("ListDir(c) = %d keys, %q, %v", len(keys), dirs, err)
	}
	// Stopping early makes no further page request.
	rec.Reset()
	for range st.List(ctx, "") {
		break
	}
	if n := rec.Count("GET"); n != 1 {
		t.Errorf("List stopped after one key made %d requests, want 1", n)
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
