package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store/virtual"
)

const virtualFixtures = "../../testdata/virtual"

// TestRefsTargets runs get, info, tree and stats on kerchunk references
// files; get's values equal h5py's.
func TestRefsTargets(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	for _, c := range []struct{ refs, node, want string }{
		{"filters.json", "zlib_shuffle", "zlib_shuffle"},
		{"filters.json", "bitshuffle_lz4", "bitshuffle_lz4"},
		{"filters.json", "lzf", "lzf"},
		{"gen_v1.json", "grid", "grid"},
		{"cf.json", "temp", "temp"},
	} {
		out := filepath.Join(tmp, c.want+".npy")
		target := filepath.Join(virtualFixtures, c.refs, c.node)
		var buf bytes.Buffer
		if err := run(ctx, []string{"get", "--format", "npy", "-o", out, target}, &buf, &buf); err != nil {
			t.Errorf("get %s: %v", target, err)
			continue
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := npy.ReadFile(filepath.Join(virtualFixtures, c.want+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
			t.Errorf("get %s: values differ from h5py's", target)
		}
	}
	for _, args := range [][]string{
		{"info", filepath.Join(virtualFixtures, "cf.json", "temp")},
		{"tree", filepath.Join(virtualFixtures, "filters.json")},
		{"stats", filepath.Join(virtualFixtures, "filters.json", "packed")},
	} {
		var out bytes.Buffer
		if err := run(ctx, args, &out, &out); err != nil {
			t.Errorf("%v: %v", args, err)
		} else if out.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
	}
}

// TestRefsAllow: references outside the file's directory are refused,
// naming the URL, before any request, unless --allow names their prefix.
func TestRefsAllow(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.ServeContent(w, r, "d", time.Time{}, bytes.NewReader([]byte{1, 0, 2, 0, 3, 0, 4, 0}))
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "outside.bin"), make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `"a/.zarray": {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i2", "compressor": null, "fill_value": 0, "order": "C", "filters": null}`
	write := func(url string) string {
		p := filepath.Join(dir, "refs.json")
		doc := fmt.Sprintf(`{"version": 1, "refs": {".zgroup": {"zarr_format": 2}, %s, "a/0": [%q, 0, 8]}}`, meta, url)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, url := range []string{"/etc/passwd", "file:///etc/passwd", "../outside.bin", srv.URL + "/d", "s3://other-bucket/d"} {
		target := write(url) + "/a"
		var out bytes.Buffer
		err := run(ctx, []string{"get", target}, &out, &out)
		if !errors.Is(err, virtual.ErrNotAllowed) || !strings.Contains(err.Error(), url) {
			t.Errorf("reference to %s: %v, want a refusal naming it", url, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests before --allow", n)
	}
	target := write(srv.URL+"/d") + "/a"
	var out bytes.Buffer
	if err := run(ctx, []string{"--allow", srv.URL, "get", target}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out.String()); strings.Join(got, " ") != "1 2 3 4" {
		t.Errorf("get with --allow printed %q", out.String())
	}
	if err := run(ctx, []string{"get", "--allow"}, &out, &out); !errors.Is(err, errUsage) {
		t.Errorf("--allow without a value: %v", err)
	}
}
