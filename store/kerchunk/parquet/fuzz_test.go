package parquet_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/kerchunk/parquet"
	"github.com/gozarr/gozarr/store/mem"
)

// FuzzRefsFile reads every chunk of an array through an arbitrary refs
// file: errors, never a panic or an unbounded allocation.
func FuzzRefsFile(f *testing.F) {
	arraytest.AddFiles(f, fixtures, "kerchunk_sub.parq/zlib_shuffle/refs.0.parq", "kerchunk_cf.parq/temp/refs.1.parq", "kerchunk_sub.parq/sparse/refs.0.parq")
	meta := []byte(`{"metadata": {".zgroup": {"zarr_format": 2}, "a/.zarray": {"zarr_format": 2, "shape": [6, 9], "chunks": [4, 5], "dtype": "<f4", "compressor": null, "fill_value": 0, "order": "C", "filters": null}}, "record_size": 4}`)
	f.Fuzz(func(t *testing.T, refs []byte) {
		ctx := context.Background()
		m := mem.New()
		m.Set(ctx, ".zmetadata", meta)
		m.Set(ctx, "a/refs.0.parq", refs)
		m.Set(ctx, "x", make([]byte, 64))
		s, err := parquet.Open(ctx, m, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"a/0.0", "a/0.1", "a/1.0", "a/1.1"} {
			s.Get(ctx, k, store.Full())
			s.Locate(ctx, k)
		}
	})
}

// FuzzMetadata opens references whose .zmetadata document is arbitrary
// (with one of kerchunk's refs files under the array "temp") and reads
// every key it lists: errors, never a panic or an unbounded allocation.
func FuzzMetadata(f *testing.F) {
	for _, p := range []string{"kerchunk_cf.parq/.zmetadata", "kerchunk_sub.parq/.zmetadata"} {
		b, err := os.ReadFile(filepath.Join(fixtures, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"metadata": {"temp/.zarray": {"zarr_format": 2, "shape": [1e18, 4], "chunks": [1, 1], "dtype": "<f4", "compressor": null, "fill_value": 0, "order": "C", "filters": null}}, "record_size": 1}`))
	refs, err := os.ReadFile(filepath.Join(fixtures, "kerchunk_cf.parq/temp/refs.0.parq"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		ctx := context.Background()
		m := mem.New()
		m.Set(ctx, ".zmetadata", meta)
		m.Set(ctx, "temp/refs.0.parq", refs)
		s, err := parquet.Open(ctx, m, "")
		if err != nil {
			return
		}
		n := 0
		for k, err := range s.List(ctx, "") {
			if n++; err != nil || n > 64 {
				break
			}
			s.Get(ctx, k, store.Full())
			s.Locate(ctx, k)
		}
	})
}
