package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/kerchunk/parquet"
	"github.com/gozarr/gozarr/zarr"
)

// TestConvert: kerchunk's own JSON references (make_kerchunk.py) converted
// to Parquet read the same values as the JSON.
func TestConvert(t *testing.T) {
	ctx := context.Background()
	fixtures, _ := filepath.Abs("../../../../../testdata/virtual")
	out := t.TempDir()
	if err := run(filepath.Join(fixtures, "kerchunk_sub.json"), filepath.Join(out, "sub.parq"), 2); err != nil {
		t.Fatal(err)
	}
	src, _ := fs.New(fixtures, fs.ReadOnly())
	js, err := kerchunk.Open(ctx, src, "kerchunk_sub.json")
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := fs.New(out, fs.ReadOnly())
	ps, err := parquet.Open(ctx, dst, "sub.parq/", parquet.Allow(fixtures))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range []string{"zlib_shuffle", "raw_be", "sparse"} {
		a, err := zarr.OpenArray(ctx, js, name)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := a.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := zarr.OpenArray(ctx, ps, name)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := b.ReadBytes(ctx)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", name, err)
		}
		n++
	}
	for _, bad := range []string{`{"version": 2, "refs": {}}`, `{"version": 1, "refs": {}, "gen": [{}]}`, `{"version": 1, "refs": {"a/0": [1, 2]}}`, `[`} {
		p := filepath.Join(out, "bad.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if err := run(p, filepath.Join(out, "bad.parq"), 2); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
