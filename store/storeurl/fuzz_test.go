package storeurl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store/storeurl"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want storeurl.Location
	}{
		{"/data/x.zarr", storeurl.Location{Scheme: "file", Path: "/data/x.zarr"}},
		{"x.zarr", storeurl.Location{Scheme: "file", Path: "x.zarr"}},
		{`C:\data\x.zarr`, storeurl.Location{Scheme: "file", Path: `C:\data\x.zarr`}},
		{"./a://b", storeurl.Location{Scheme: "file", Path: "./a://b"}},
		{"file:///data/my%20x.zarr", storeurl.Location{Scheme: "file", Path: "/data/my x.zarr"}},
		{"FILE://localhost/d", storeurl.Location{Scheme: "file", Path: "/d"}},
		{"s3://bkt", storeurl.Location{Scheme: "s3", Bucket: "bkt"}},
		{"s3://bkt/", storeurl.Location{Scheme: "s3", Bucket: "bkt"}},
		{"s3://bkt/a/b.zarr", storeurl.Location{Scheme: "s3", Bucket: "bkt", Prefix: "a/b.zarr"}},
		{"https://h:8080/x?t=1", storeurl.Location{Scheme: "https", URL: "https://h:8080/x?t=1"}},
		{"Http://h/x", storeurl.Location{Scheme: "http", URL: "Http://h/x"}},
		{"memory://", storeurl.Location{Scheme: "memory"}},
		{"memory://name/", storeurl.Location{Scheme: "memory", Name: "name"}},
	} {
		got, err := storeurl.Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParse checks that Parse never panics, and that what it accepts is
// consistent: a known scheme with its own fields filled.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "/data/x.zarr", "file:///a%20b", "file://host/x", "s3://b/p/q", "s3:///x",
		"https://h/x?y#z", "memory://n", "gs://x", "://x", "a://", "file://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		loc, err := storeurl.Parse(in)
		if err != nil {
			if !errors.Is(err, storeurl.ErrInvalidURL) && !errors.Is(err, storeurl.ErrUnsupported) {
				t.Fatalf("Parse(%q): error %v wraps neither sentinel", in, err)
			}
			return
		}
		switch loc.Scheme {
		case "file":
			if loc.Path == "" {
				t.Fatalf("Parse(%q): file location without a path", in)
			}
		case "s3":
			if loc.Bucket == "" || strings.Contains(loc.Bucket, "/") {
				t.Fatalf("Parse(%q): bucket %q", in, loc.Bucket)
			}
		case "http", "https":
			if loc.URL != in {
				t.Fatalf("Parse(%q): URL %q", in, loc.URL)
			}
		case "memory":
		default:
			t.Fatalf("Parse(%q): scheme %q", in, loc.Scheme)
		}
	})
}
