package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/gcs"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/zip/ziptest"
)

// Environment variables naming a GCS emulator (see .ci/gcsserver.sh).
const (
	envEndpoint = "GOZARR_GCS_ENDPOINT" // e.g. http://127.0.0.1:4443
	envBucket   = "GOZARR_GCS_BUCKET"   // an existing bucket the tests may write to
)

// emulator returns the emulator's endpoint and bucket, or skips t.
func emulator(t *testing.T) (endpoint, bucket string) {
	t.Helper()
	endpoint, bucket = os.Getenv(envEndpoint), os.Getenv(envBucket)
	if endpoint == "" || bucket == "" {
		t.Skipf("no GCS emulator: set %s and %s (eval \"$(bash .ci/gcsserver.sh start)\" starts fake-gcs-server)", envEndpoint, envBucket)
	}
	return endpoint, bucket
}

// newStore opens a store on a fresh prefix of the emulator's bucket and
// deletes what it holds when t ends.
func newStore(t *testing.T, opts ...gcs.Option) *gcs.Store {
	t.Helper()
	endpoint, bucket := emulator(t)
	prefix := storetest.UniquePrefix("gozarr-test")
	st, err := gcs.Open(context.Background(), bucket, prefix, append([]gcs.Option{gcs.WithEndpoint(endpoint), gcs.WithRetry(2, 0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Cleanup(t, st)
	return st
}

// TestCloud runs storetest's cloud-store tests: conformance, conditional
// reads and a missing bucket on the emulator, a done context, retries.
func TestCloud(t *testing.T) {
	storetest.TestCloud(t, storetest.Cloud{
		New: func(t *testing.T) store.Store { return newStore(t) },
		At: func(t *testing.T, endpoint string, attempts int) store.Store {
			st, err := gcs.Open(context.Background(), "b", "p", gcs.WithEndpoint(endpoint), gcs.WithRetry(attempts, time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Missing: func(t *testing.T) store.Store {
			endpoint, _ := emulator(t)
			st, err := gcs.Open(context.Background(), "no-such-bucket-gozarr", "", gcs.WithEndpoint(endpoint), gcs.WithRetry(1, 0))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		ErrMissing: gcs.ErrBucket,
	})
}

// TestStoreURL opens gs:// URLs through storeurl, which importing the
// package registered; STORAGE_EMULATOR_HOST points the SDK at the
// emulator.
func TestStoreURL(t *testing.T) {
	endpoint, bucket := emulator(t)
	t.Setenv("STORAGE_EMULATOR_HOST", endpoint)
	ctx := context.Background()
	src := newStore(t)
	if err := src.Set(ctx, "zarr.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	r, err := storeurl.Open(ctx, "gs://"+bucket+"/"+src.Prefix())
	if err != nil {
		t.Fatal(err)
	}
	st, ok := r.(*gcs.Store)
	if !ok {
		t.Fatalf("storeurl.Open = %T, want *gcs.Store", r)
	}
	if got, err := st.Get(ctx, "zarr.json", store.Full()); err != nil || string(got) != "{}" {
		t.Errorf("Get through storeurl = %q, %v", got, err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		loc, bucket, prefix string
		ok                  bool
	}{
		{"gs://b/p/x.zarr", "b", "p/x.zarr", true},
		{"gs://b", "b", "", true},
		{"gs://b/", "b", "", true},
		{"https://storage.googleapis.com/b/p", "b", "p", true},
		{"https://STORAGE.googleapis.com/b", "b", "", true},
		{"gs:///p", "", "", false},
		{"https://storage.googleapis.com/", "", "", false},
		{"https://example.com/b/p", "", "", false},
		{"s3://b/p", "", "", false},
	} {
		b, p, err := gcs.ParseURL(tc.loc)
		if (err == nil) != tc.ok || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v", tc.loc, b, p, err)
		}
		if err != nil && !errors.Is(err, storeurl.ErrInvalidURL) {
			t.Errorf("ParseURL(%q): err %v does not wrap storeurl.ErrInvalidURL", tc.loc, err)
		}
	}
}

// fakeGCS answers JSON media downloads with a body longer than asked for
// (a misbehaving server or proxy), and object metadata for HEAD-like
// requests.
func fakeGCS(t *testing.T, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") != "media" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"name":"k","bucket":"b","size":"%d"}`, len(body))
			return
		}
		var a, b int
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b); err != nil {
			w.Write([]byte(body))
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write([]byte(body[a:])) // everything from a, not just to b
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestOverlongBody: a ranged read answered with more than the range is an
// error, and reads at most one byte past it.
func TestOverlongBody(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	srv := fakeGCS(t, body)
	st, err := gcs.Open(context.Background(), "b", "", gcs.WithEndpoint(srv.URL), gcs.WithRetry(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(context.Background(), "k", store.OffsetLen(10, 5))
	if err == nil {
		t.Errorf("Get(Range(10, 5)) = %q, want an error for the %d-byte answer", got, len(body)-10)
	}
	var ke *store.KeyError
	if !errors.As(err, &ke) || ke.Key != "k" {
		t.Errorf("err %v does not name the key", err)
	}
	if n, err := st.Size(context.Background(), "k"); err != nil || n != int64(len(body)) {
		t.Errorf("Size = %d, %v", n, err)
	}
}

// TestZipOverGCS runs the reader conformance suite over a zip store
// reading an archive held in the emulator.
func TestZipOverGCS(t *testing.T) {
	emulator(t)
	ziptest.TestOver(t, func(t *testing.T) store.Store { return newStore(t) })
}
