package zarr_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// writeVLenExpected writes NAME.vlen.json beside a gozarr-written array:
// the values zarr-python must read (bytes as base64), for
// testdata/interop/check_zarr_python.py.
func writeVLenExpected(t *testing.T, dir, name string, d dtype.DataType, shape []int, vals []string) {
	t.Helper()
	f := vlenFixture{Shape: shape, DType: "string", Values: vals}
	if d == dtype.TypeVarBytes {
		f.DType = "bytes"
		f.Values = make([]string, len(vals))
		for i, v := range vals {
			f.Values[i] = base64.StdEncoding.EncodeToString([]byte(v))
		}
	}
	if f.Shape == nil {
		f.Shape = []int{}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".vlen.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteVLenForPeers writes every string and bytes fixture again with
// gozarr (v3 from its metadata, v2 from its .zarray), and arrays built
// with NewArrayMetadata and CreateArrayV2, into GOZARR_WRITE_DIR for
// check_zarr_python.py.
func TestWriteVLenForPeers(t *testing.T) {
	dir, dst := peerDir(t)
	ctx := context.Background()
	src, err := fs.New(vlenDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, a *zarr.Array, vals []string) {
		t.Helper()
		d := a.Metadata().DataType
		if d == dtype.TypeVarBytes {
			bs := make([][]byte, len(vals))
			for i, v := range vals {
				bs[i] = []byte(v)
			}
			err = zarr.WriteByteStrings(ctx, a, bs)
		} else {
			err = zarr.WriteStrings(ctx, a, vals)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		writeVLenExpected(t, dir, name, d, a.Shape(), vals)
	}
	for name, want := range vlenCases(t) {
		a, err := zarr.OpenArray(ctx, src, name+".zarr")
		if err != nil {
			t.Fatal(err)
		}
		out := "vlen_" + name
		var b *zarr.Array
		if strings.HasPrefix(name, "v2_") {
			doc, err := os.ReadFile(filepath.Join(vlenDir, name+".zarr", ".zarray"))
			if err != nil {
				t.Fatal(err)
			}
			m2, err := zarr.ParseArrayMetadataV2(doc, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err = zarr.CreateArrayV2(ctx, dst, out+".zarr", m2)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		} else if b, err = zarr.CreateArray(ctx, dst, out+".zarr", a.Metadata()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		write(out, b, want.Values)
	}
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		t.Fatal(err)
	}
	vals := vlenValues(48, 3)
	for _, c := range []struct {
		name  string
		d     dtype.DataType
		opts  []zarr.MetadataOption
		chunk []int
	}{
		{"built_string", dtype.TypeVarString, []zarr.MetadataOption{zarr.Compress(zs)}, []int{3, 5}},
		{"built_string_sharded", dtype.TypeVarString, []zarr.MetadataOption{zarr.Shards(4, 4), zarr.Compress(zs)}, []int{2, 2}},
		{"built_string_fill", dtype.TypeVarString, []zarr.MetadataOption{zarr.Fill([]byte("NA"))}, []int{6, 8}},
		{"built_bytes", dtype.TypeVarBytes, nil, []int{5, 5}},
	} {
		m, err := zarr.NewArrayMetadata([]int{6, 8}, c.d, c.chunk, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, dst, c.name+".zarr", m)
		if err != nil {
			t.Fatal(err)
		}
		write(c.name, a, vals)
	}
	for _, c := range []struct {
		name string
		m    zarr.ArrayMetadataV2
	}{
		{"built_v2_string", zarr.ArrayMetadataV2{Shape: []int{6, 8}, Chunks: []int{4, 3}, DataType: dtype.TypeVarString}},
		{"built_v2_string_F", zarr.ArrayMetadataV2{Shape: []int{6, 8}, Chunks: []int{4, 3}, DataType: dtype.TypeVarString, Order: "F", DimensionSeparator: "/"}},
		{"built_v2_bytes", zarr.ArrayMetadataV2{Shape: []int{6, 8}, Chunks: []int{5, 5}, DataType: dtype.TypeVarBytes, FillValue: []byte("\x00?")}},
	} {
		a, err := zarr.CreateArrayV2(ctx, dst, c.name+".zarr", &c.m)
		if err != nil {
			t.Fatal(err)
		}
		write(c.name, a, vals)
	}
}
