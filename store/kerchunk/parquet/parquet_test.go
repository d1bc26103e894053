package parquet_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/kerchunk/parquet"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// fixtures holds the HDF5 files and, as name.parq, kerchunk's Parquet
// references to them (testdata/virtual/make_kerchunk.py).
const fixtures = "../../../testdata/virtual"

// TestKerchunkParquet reads every array of the Parquet references kerchunk
// wrote (record_size 3, so chunks span several refs files) and compares
// with h5py's values.
func TestKerchunkParquet(t *testing.T) {
	ctx := context.Background()
	abs, st := readOnly(t, fixtures)
	for _, c := range []struct {
		dir    string
		arrays []string
	}{{"kerchunk_cf.parq/", []string{"temp"}}, {"kerchunk_sub.parq/", []string{"zlib_shuffle", "raw_be", "sparse"}}} {
		s, err := parquet.Open(ctx, st, c.dir, parquet.WithLocation(abs), parquet.Allow(abs))
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		for _, name := range c.arrays {
			a, err := zarr.OpenArray(ctx, s, name)
			if err != nil {
				t.Errorf("%s%s: %v", c.dir, name, err)
				continue
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Errorf("%s%s: %v", c.dir, name, err)
				continue
			}
			want, err := npy.ReadFile(filepath.Join(fixtures, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, want.Shape) || !bytes.Equal(got, want.Data) {
				t.Errorf("%s%s: values differ from h5py's", c.dir, name)
			}
		}
		// Without Allow, the targets (outside the references' directory)
		// are refused.
		s, err = parquet.Open(ctx, st, c.dir, parquet.WithLocation(abs))
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, s, c.arrays[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.ReadBytes(ctx); !errors.Is(err, virtual.ErrNotAllowed) {
			t.Errorf("%s without Allow: %v, want ErrNotAllowed", c.dir, err)
		}
	}
}

// TestHostile: broken metadata and a refs file whose offset column is a
// string are errors, not panics.
func TestHostile(t *testing.T) {
	ctx := context.Background()
	for _, doc := range []string{`[]`, `{"metadata": {}}`, `{"metadata": {}, "record_size": 0}`, `{"metadata": {}, "record_size": 1e9}`,
		`{"metadata": {"a/.zarray": "{\"shape\": [2], \"chunks\": [0]}"}, "record_size": 10}`} {
		m := mem.New()
		m.Set(ctx, ".zmetadata", []byte(doc))
		if _, err := parquet.Open(ctx, m, ""); !errors.Is(err, parquet.ErrInvalid) && !errors.Is(err, parquet.ErrTooLarge) {
			t.Errorf("%s: %v", doc, err)
		}
	}
	type bad struct {
		Path   string `parquet:"path"`
		Offset string `parquet:"offset"`
		Size   int64  `parquet:"size"`
	}
	var buf bytes.Buffer
	if err := pq.Write(&buf, []bad{{"x", "12", 4}}); err != nil {
		t.Fatal(err)
	}
	m := mem.New()
	m.Set(ctx, ".zmetadata", []byte(`{"metadata": {".zgroup": {"zarr_format": 2}, "a/.zarray": {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i2", "compressor": null, "fill_value": 0, "order": "C", "filters": null}}, "record_size": 10}`))
	m.Set(ctx, "a/refs.0.parq", buf.Bytes())
	m.Set(ctx, "x", []byte("12345678"))
	s, err := parquet.Open(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a/0", store.Full()); !errors.Is(err, parquet.ErrInvalid) {
		t.Errorf("offset column of strings: %v, want ErrInvalid", err)
	}
	m.Set(ctx, "a/refs.0.parq", []byte("PAR1 not really PAR1"))
	s, _ = parquet.Open(ctx, m, "")
	if _, err := s.Get(ctx, "a/0", store.Full()); !errors.Is(err, parquet.ErrInvalid) {
		t.Errorf("garbage refs file: %v, want ErrInvalid", err)
	}
}
