package storeurl_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
)

func mustOpen(t *testing.T, loc string, opts ...storeurl.Option) store.Reader {
	t.Helper()
	st, err := storeurl.Open(context.Background(), loc, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", loc, err)
	}
	return st
}

func get(t *testing.T, r store.Reader, key string) string {
	t.Helper()
	b, err := r.Get(context.Background(), key, store.Full())
	if err != nil {
		t.Fatalf("Get(%q) from %T: %v", key, r, err)
	}
	return string(b)
}

func TestLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my data.zarr")
	if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c", "0"), []byte("chunk"), 0o644); err != nil {
		t.Fatal(err)
	}
	fileURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	for _, loc := range []string{dir, fileURL, "file://localhost" + filepath.ToSlash(dir)} {
		st := mustOpen(t, loc)
		if _, ok := st.(*fs.Store); !ok {
			t.Errorf("Open(%q) = %T, want *fs.Store", loc, st)
		}
		if _, ok := st.(store.Store); !ok {
			t.Errorf("Open(%q) is not a store.Store", loc)
		}
		if got := get(t, st, "c/0"); got != "chunk" {
			t.Errorf("Open(%q): c/0 = %q", loc, got)
		}
	}
	// A relative path.
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, mustOpen(t, "my data.zarr"), "c/0"); got != "chunk" {
		t.Errorf("relative path: c/0 = %q", got)
	}
	// Read-only and create.
	ro := mustOpen(t, dir, storeurl.WithFS(fs.ReadOnly())).(store.Store)
	if err := ro.Set(context.Background(), "x", nil); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on a read-only fs store: %v", err)
	}
	newDir := filepath.Join(t.TempDir(), "a", "b.zarr")
	if _, err := storeurl.Open(context.Background(), newDir); err == nil {
		t.Errorf("Open of a missing directory succeeded")
	}
	w := mustOpen(t, newDir, storeurl.CreateDir()).(store.Store)
	if err := w.Set(context.Background(), "zarr.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(newDir, "zarr.json")); err != nil {
		t.Error(err)
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	a := mustOpen(t, "memory://").(*mem.Store)
	b := mustOpen(t, "memory://")
	if store.Reader(a) == b {
		t.Error("two memory:// opens returned the same store")
	}
	n1 := mustOpen(t, "memory://shared").(store.Store)
	if err := n1.Set(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if got := get(t, mustOpen(t, "memory://shared/"), "k"); got != "v" {
		t.Errorf("memory://shared seen again: k = %q", got)
	}
	if _, err := mustOpen(t, "memory://other").Get(ctx, "k", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("memory://other sees k: %v", err)
	}
}

func TestHTTP(t *testing.T) {
	ts := httptest.NewServer(fileHandler(map[string]string{"/x.zarr/zarr.json": "{}"}))
	t.Cleanup(ts.Close)
	st := mustOpen(t, ts.URL+"/x.zarr", storeurl.WithHTTP(http.WithHeader("X-Token", "t")))
	if _, ok := st.(*http.Store); !ok {
		t.Fatalf("Open(http) = %T", st)
	}
	if _, ok := st.(store.Writer); ok {
		t.Error("the HTTP store is a store.Writer")
	}
	if got := get(t, st, "zarr.json"); got != "{}" {
		t.Errorf("zarr.json = %q", got)
	}
}

func TestS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "bkt")
	seed := srv.Store(t, "data/x.zarr")
	if err := seed.Set(ctx, "zarr.json", []byte(`{"zarr_format":3}`)); err != nil {
		t.Fatal(err)
	}
	t.Run("options", func(t *testing.T) {
		st := mustOpen(t, "s3://bkt/data/x.zarr", storeurl.WithS3(srv.Options()...))
		s3st, ok := st.(*s3.Store)
		if !ok || s3st.Bucket() != "bkt" || s3st.Prefix() != "data/x.zarr/" {
			t.Fatalf("Open(s3) = %v (%T)", st, st)
		}
		if got := get(t, st, "zarr.json"); got != `{"zarr_format":3}` {
			t.Errorf("zarr.json = %q", got)
		}
	})
	t.Run("environment", func(t *testing.T) {
		isolateAWS(t)
		t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
		t.Setenv("AWS_REGION", "eu-west-3")
		t.Setenv("AWS_ACCESS_KEY_ID", "envkey")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
		rec := s3test.NewRecorder(nil)
		st := mustOpen(t, "s3://bkt/data", storeurl.WithS3(s3.WithHTTPClient(rec.Client())))
		if got := get(t, st, "x.zarr/zarr.json"); got != `{"zarr_format":3}` {
			t.Errorf("x.zarr/zarr.json = %q", got)
		}
		reqs := rec.Requests("GET")
		if len(reqs) != 1 || reqs[0].Path != "/bkt/data/x.zarr/zarr.json" {
			t.Fatalf("requests %+v; want one path-style GET", reqs)
		}
		auth := reqs[0].Header.Get("Authorization")
		if !bytes.Contains([]byte(auth), []byte("Credential=envkey/")) || !bytes.Contains([]byte(auth), []byte("/eu-west-3/s3/")) {
			t.Errorf("Authorization %q does not use the environment's key and region", auth)
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		isolateAWS(t)
		t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
		rec := s3test.NewRecorder(nil)
		st := mustOpen(t, "s3://bkt/data/x.zarr/", storeurl.WithS3(s3.WithHTTPClient(rec.Client())))
		if got := get(t, st, "zarr.json"); got != `{"zarr_format":3}` {
			t.Errorf("zarr.json = %q", got)
		}
		for _, q := range rec.Requests("") {
			if a := q.Header.Get("Authorization"); a != "" {
				t.Errorf("anonymous request signed: %q", a)
			}
		}
	})
}

// isolateAWS hides the machine's AWS configuration from the test, and keeps
// the SDK from asking an instance metadata service for credentials.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ROLE_ARN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		loc  string
		want error
	}{
		{"", storeurl.ErrInvalidURL},
		{"gs://bucket/x", storeurl.ErrUnsupported},
		{"ftp://host/x", storeurl.ErrUnsupported},
		{"file://otherhost/data", storeurl.ErrInvalidURL},
		{"file://", storeurl.ErrInvalidURL},
		{"s3://", storeurl.ErrInvalidURL},
		{"s3:///prefix", storeurl.ErrInvalidURL},
		{"http://", http.ErrBaseURL},
		{"s3://bkt/a/../b", store.ErrInvalidKey},
	} {
		st, err := storeurl.Open(context.Background(), tc.loc, storeurl.WithS3(s3.WithAnonymous(), s3.WithRegion("us-east-1")))
		if !errors.Is(err, tc.want) {
			t.Errorf("Open(%q) = %v, %v; want %v", tc.loc, st, err, tc.want)
		}
	}
}
