package virtual_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/virtual"
)

// TestConditionalS3: references with an ETag read from S3 (gofakes3)
// through its GetIf; once the object is rewritten, the old ETag is
// ErrChanged, never the new bytes; a last-modified checksum before the
// write is ErrChanged, one after it reads (strict too: S3 checks both).
func TestConditionalS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "b")
	st := srv.Store(t, "p")
	if err := st.Set(ctx, "f.nc", []byte("hello world")); err != nil {
		t.Fatal(err)
	}
	_, etag, err := st.GetVersion(ctx, "f.nc")
	if err != nil || etag == "" {
		t.Fatalf("etag %q: %v", etag, err)
	}
	open := func(opts ...virtual.Option) *virtual.Resolver {
		r, err := virtual.New(append(opts, virtual.Allow("s3://b/p"), virtual.WithStoreOptions(storeurl.WithS3(srv.Options()...)))...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open()
	ref := virtual.Ref{URL: "s3://b/p/f.nc", Offset: 6, Length: 5, Checksum: virtual.Checksum{ETag: etag}}
	if got, err := r.Get(ctx, ref); err != nil || string(got) != "world" {
		t.Fatalf("matching ETag: %q, %v", got, err)
	}
	unquoted := ref
	unquoted.Checksum.ETag = etag[1 : len(etag)-1]
	if got, err := r.Get(ctx, unquoted); err != nil || string(got) != "world" {
		t.Errorf("ETag without quotes: %q, %v", got, err)
	}
	if err := st.Set(ctx, "f.nc", []byte("HELLO WORLD")); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, ref)
	if !errors.Is(err, virtual.ErrChanged) || !errors.Is(err, store.ErrChanged) || got != nil {
		t.Errorf("rewritten object: %q, %v, want ErrChanged", got, err)
	}
	lm := virtual.Ref{URL: "s3://b/p/f.nc", Offset: 0, Length: 5, Checksum: virtual.Checksum{LastModified: time.Unix(1e9, 0)}}
	if got, err := r.Get(ctx, lm); !errors.Is(err, virtual.ErrChanged) || got != nil {
		t.Errorf("last-modified before the write: %q, %v, want ErrChanged", got, err)
	}
	lm.Checksum.LastModified = time.Now().Add(time.Hour)
	if got, err := open(virtual.StrictChecksums()).Get(ctx, lm); err != nil || string(got) != "HELLO" {
		t.Errorf("last-modified after the write, strict: %q, %v", got, err)
	}
}

// TestConditionalHTTP: the same over HTTP, the server's ETag checked on
// the answer that carries the bytes.
func TestConditionalHTTP(t *testing.T) {
	ctx := context.Background()
	var version atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body := []byte("0123456789")
		if version.Load() > 0 {
			body = []byte("abcdefghij")
		}
		w.Header().Set("ETag", []string{`"v1"`, `"v2"`}[version.Load()])
		http.ServeContent(w, req, "f.bin", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	r, err := virtual.New(virtual.Allow(srv.URL + "/d/"))
	if err != nil {
		t.Fatal(err)
	}
	ref := virtual.Ref{URL: srv.URL + "/d/f.bin", Offset: 2, Length: 3, Checksum: virtual.Checksum{ETag: `"v1"`}}
	if got, err := r.Get(ctx, ref); err != nil || string(got) != "234" {
		t.Fatalf("matching ETag: %q, %v", got, err)
	}
	version.Store(1)
	if got, err := r.Get(ctx, ref); !errors.Is(err, virtual.ErrChanged) || got != nil {
		t.Errorf("changed: %q, %v, want ErrChanged", got, err)
	}
}
