package storeurl_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/zip"
)

func TestRegister(t *testing.T) {
	ctx := context.Background()
	var got []string
	opener := func(st store.Reader) storeurl.Opener {
		return func(_ context.Context, location string) (store.Reader, error) {
			got = append(got, location)
			return st, nil
		}
	}
	a, b := mem.New(), mem.New()
	if err := storeurl.Register("Xtest", opener(a)); err != nil {
		t.Fatal(err)
	}
	if err := storeurl.RegisterHost("blob.example.net", opener(b)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		loc  string
		want store.Reader
	}{
		{"xtest://bucket/p", a},
		{"XTEST://other", a},
		{"https://acct.blob.example.net/c/p", b},
		{"http://blob.example.net/c", b},
	} {
		st, err := storeurl.Open(ctx, tc.loc)
		if err != nil || st != tc.want {
			t.Errorf("Open(%q) = %v, %v; want the registered store", tc.loc, st, err)
		}
		if loc, err := storeurl.Parse(tc.loc); err != nil || loc.URL != tc.loc {
			t.Errorf("Parse(%q) = %+v, %v", tc.loc, loc, err)
		}
	}
	if len(got) != 4 {
		t.Errorf("openers called with %q", got)
	}
	// Other hosts stay with the HTTP store; unknown schemes stay unsupported.
	if st, err := storeurl.Open(ctx, "https://blob.example.net.evil.org/c"); err != nil || st == b {
		t.Errorf("Open of a look-alike host = %v, %v; want the HTTP store", st, err)
	}
	if _, err := storeurl.Open(ctx, "ytest://x"); !errors.Is(err, storeurl.ErrUnsupported) {
		t.Errorf("Open(ytest://x): err = %v, want ErrUnsupported", err)
	}
	for _, bad := range []string{"file", "https", "memory", "", "a b", "1x"} {
		if err := storeurl.Register(bad, opener(a)); err == nil {
			t.Errorf("Register(%q): no error", bad)
		}
	}
	for _, bad := range []string{"", "a/b", "host:80"} {
		if err := storeurl.RegisterHost(bad, opener(a)); err == nil {
			t.Errorf("RegisterHost(%q): no error", bad)
		}
	}
}

// TestOpenZip opens zip archives by location: a local .ozx or .zip file
// is a read-only zip store; a directory with such a name stays a directory.
func TestOpenZip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := mem.New()
	if err := src.Set(ctx, "zarr.json", []byte(`{"zarr_format":3,"node_type":"group"}`)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := zip.Write(ctx, &buf, src); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.ozx", "b.ZIP"} {
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "c.zip"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		loc     string
		wantZip bool
	}{
		{filepath.Join(dir, "a.ozx"), true},
		{"file://" + filepath.ToSlash(filepath.Join(dir, "b.ZIP")), true},
		{filepath.Join(dir, "c.zip"), false},
	} {
		st, err := storeurl.Open(ctx, tc.loc)
		if err != nil {
			t.Errorf("Open(%q): %v", tc.loc, err)
			continue
		}
		zr, isZip := st.(*zip.Reader)
		if isZip != tc.wantZip {
			t.Errorf("Open(%q) = %T, want a zip store: %v", tc.loc, st, tc.wantZip)
			continue
		}
		if isZip {
			if got, err := zr.Get(ctx, "zarr.json", store.Full()); err != nil || !bytes.Contains(got, []byte("group")) {
				t.Errorf("Open(%q): Get(zarr.json) = %q, %v", tc.loc, got, err)
			}
		}
	}
	// A missing archive is ErrNotFound, not a directory store.
	if _, err := storeurl.Open(ctx, filepath.Join(dir, "nope.ozx")); err == nil {
		t.Error("Open of a missing .ozx: no error")
	}
}

// TestCreateZip writes a new .ozx through Open with CreateDir: a Builder
// whose Close writes the archive and removes its staging directory.
func TestCreateZip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "new.ozx")
	st, err := storeurl.Open(ctx, path, storeurl.CreateDir())
	if err != nil {
		t.Fatal(err)
	}
	b, ok := st.(*zip.Builder)
	if !ok {
		t.Fatalf("Open(new .ozx, CreateDir) = %T, want *zip.Builder", st)
	}
	for _, k := range []string{"zarr.json", "c/0"} {
		if err := b.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "sub"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "new.ozx" {
		t.Errorf("directory after Close holds %v, %v; want only new.ozx", entries, err)
	}
	r, err := storeurl.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, "c/0", store.Full()); err != nil || string(got) != "c/0" {
		t.Errorf("reading the new archive: %q, %v", got, err)
	}
	// Without CreateDir a missing archive is an error, not a Builder.
	if st, err := storeurl.Open(ctx, filepath.Join(dir, "other.zip")); err == nil {
		t.Errorf("Open(missing .zip) = %T, want an error", st)
	}
}

// TestNotLinked: without store/s3 in the program, an s3:// URL is
// ErrNotLinked (an ErrUnsupported) naming the import that brings it, as are
// gs:// and az:// without their modules; Parse still splits s3:// URLs.
func TestNotLinked(t *testing.T) {
	restore := storeurl.Unregister("s3")
	defer restore()
	ctx := context.Background()
	for loc, pkg := range map[string]string{
		"s3://bkt/x.zarr":  "github.com/gozarr/gozarr/store/s3",
		"gs://bkt/x.zarr":  "github.com/gozarr/gozarr/store/gcs",
		"az://c/x.zarr":    "github.com/gozarr/gozarr/store/azure",
		"abfss://c@a/x":    "github.com/gozarr/gozarr/store/azure",
		"S3://bkt/y.zarr/": "github.com/gozarr/gozarr/store/s3",
	} {
		_, err := storeurl.Open(ctx, loc)
		if !errors.Is(err, storeurl.ErrNotLinked) || !errors.Is(err, storeurl.ErrUnsupported) {
			t.Errorf("Open(%q): err = %v, want ErrNotLinked", loc, err)
			continue
		}
		if want := `import _ "` + pkg + `"`; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), loc) {
			t.Errorf("Open(%q): %v; want the location and %s", loc, err, want)
		}
	}
	if loc, err := storeurl.Parse("s3://bkt/a/b"); err != nil || loc.Bucket != "bkt" || loc.Prefix != "a/b" {
		t.Errorf("Parse(s3) without store/s3 = %+v, %v", loc, err)
	}
}

// TestRegisterOptions: an opener registered with RegisterOptions gets the
// WithScheme values of its scheme, in order, then WithTimeouts' value;
// other schemes' options do not reach it.
func TestRegisterOptions(t *testing.T) {
	var got []any
	if err := storeurl.RegisterOptions("otest", func(_ context.Context, _ string, opts []any) (store.Reader, error) {
		got = opts
		return mem.New(), nil
	}); err != nil {
		t.Fatal(err)
	}
	to := store.Timeouts{Connect: 3 * time.Second}
	_, err := storeurl.Open(context.Background(), "otest://x", storeurl.WithScheme("OTEST", 1, "a"),
		storeurl.WithS3(7), storeurl.WithTimeouts(to), storeurl.WithScheme("otest", 2.5))
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{1, "a", 2.5, to}; !reflect.DeepEqual(got, want) {
		t.Errorf("opener got %#v, want %#v", got, want)
	}
	for _, bad := range []string{"http", "memory", "file"} {
		if err := storeurl.RegisterOptions(bad, func(context.Context, string, []any) (store.Reader, error) { return nil, nil }); err == nil {
			t.Errorf("RegisterOptions(%q): no error", bad)
		}
	}
}

// TestWithS3WrongType: WithS3 takes s3.Option values; anything else is an
// error of Open, not ignored.
func TestWithS3WrongType(t *testing.T) {
	_, err := storeurl.Open(context.Background(), "s3://bkt/x", storeurl.WithS3("us-east-1"))
	if err == nil || !strings.Contains(err.Error(), "s3.Option") {
		t.Errorf("Open with WithS3(string): err = %v, want one naming s3.Option", err)
	}
}
