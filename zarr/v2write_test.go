package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// v2Case is one v2 array to write: its metadata and values (memory
// representation, C order) with the .npy descriptor of those values.
type v2Case struct {
	name   string
	meta   *zarr.ArrayMetadataV2
	descr  string
	shape  []int
	data   []byte
	zarray []byte // the document zarr-python wrote, when known
}

// v2Cases returns every v2 reference array (compressors, filters, orders,
// separators, fill values, dtypes of the corpus), the v2 extension
// data type fixtures and the numcodecs filter fixtures, each as parsed from zarr-python's documents.
func v2Cases(t *testing.T) []v2Case {
	t.Helper()
	var out []v2Case
	add := func(name, dir string, want *npy.Array) {
		za, err := os.ReadFile(filepath.Join(dir, ".zarray"))
		if err != nil {
			t.Fatal(err)
		}
		attrs, _ := os.ReadFile(filepath.Join(dir, ".zattrs"))
		m, err := zarr.ParseArrayMetadataV2(za, attrs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want.Descr[0] == '>' { // gozarr's memory representation is little-endian
			d, _, _ := dtype.ParseNumpy(want.Descr)
			n := d.SwapUnit()
			for i := 0; i+n <= len(want.Data); i += n {
				for a, b := i, i+n-1; a < b; a, b = a+1, b-1 {
					want.Data[a], want.Data[b] = want.Data[b], want.Data[a]
				}
			}
			want.Descr = "<" + want.Descr[1:]
		}
		out = append(out, v2Case{name: name, meta: m, descr: want.Descr, shape: want.Shape, data: want.Data, zarray: za})
	}
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat == 2 {
			add(strings.ReplaceAll(c.Name, "/", "_"), c.Dir(), c.ExpectedArray(t))
		}
	}
	for _, name := range extCases(t) {
		if strings.HasPrefix(name, "v2_") {
			want, err := npy.ReadFile(filepath.Join(extDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			add("ext_"+name, filepath.Join(extDir, name+".zarr"), want)
		}
	}
	ents, err := os.ReadDir(filterDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".zarr"); ok && !strings.HasPrefix(name, "v3_") {
			want, err := npy.ReadFile(filepath.Join(filterDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			add("filter_"+name, filepath.Join(filterDir, e.Name()), want)
		}
	}
	return out
}

// filterDir holds v2 arrays written through numcodecs' filters and
// compressors (testdata/filters/make_filters.py).
const filterDir = "../testdata/filters"

// TestCreateArrayV2 writes every v2 case with CreateArrayV2 and the values,
// then reopens it from the store and reads it back; the .zarray written is
// zarr-python's byte for byte.
func TestCreateArrayV2(t *testing.T) {
	ctx := context.Background()
	for _, c := range v2Cases(t) {
		t.Run(c.name, func(t *testing.T) {
			st := mem.New()
			a, err := zarr.CreateArrayV2(ctx, st, "a", c.meta)
			if err != nil {
				t.Fatal(err)
			}
			if a.ZarrFormat() != 2 {
				t.Errorf("format %d", a.ZarrFormat())
			}
			if err := a.WriteBytes(ctx, c.data); err != nil {
				t.Fatal(err)
			}
			doc, err := st.Get(ctx, "a/.zarray", store.OffsetLen(0, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimSpace(doc), bytes.TrimSpace(c.zarray)) {
				t.Errorf(".zarray\n%s\nwant\n%s", doc, c.zarray)
			}
			b, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := b.ReadBytes(ctx)
			if err != nil || !bytes.Equal(got, c.data) {
				t.Errorf("read back %x, %v; want %x", got, err, c.data)
			}
		})
	}
}

// TestCreateArrayV2Defaults builds v2 metadata from a DataType alone.
func TestCreateArrayV2Defaults(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	zs, err := zarr.NewNumcodec("zstd", map[string]any{"level": 1})
	if err != nil {
		t.Fatal(err)
	}
	m := &zarr.ArrayMetadataV2{Shape: []int{3, 2}, Chunks: []int{2, 2}, DataType: dtype.TypeUint16, BigEndian: true,
		Order: "F", DimensionSeparator: "/", Compressor: &zs, Attributes: map[string]any{"a": 1}}
	a, err := zarr.CreateArrayV2(ctx, st, "x", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.Write(ctx, a, []uint16{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"x/.zarray", "x/.zattrs", "x/0/0", "x/1/0"}
	for _, k := range keys {
		if _, err := st.Get(ctx, k, store.OffsetLen(0, 1)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	doc, _ := st.Get(ctx, "x/.zarray", store.OffsetLen(0, 1<<20))
	for _, want := range []string{`"dtype": ">u2"`, `"order": "F"`, `"dimension_separator": "/"`, `"id": "zstd"`, `"fill_value": null`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf(".zarray lacks %s:\n%s", want, doc)
		}
	}
	g, err := zarr.CreateGroupV2(ctx, st, "", map[string]any{"t": "x"}, zarr.Overwrite())
	if err != nil || g.ZarrFormat() != 2 {
		t.Fatal(err)
	}
	g, err = zarr.OpenGroup(ctx, st, "")
	if err != nil || g.ZarrFormat() != 2 || g.Attributes()["t"] != "x" {
		t.Fatalf("group %v, %v", g, err)
	}
	if _, err := st.Get(ctx, "x/.zarray", store.OffsetLen(0, 1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Overwrite of the root group kept x/.zarray: %v", err)
	}
	if _, err := zarr.CreateArrayV2(ctx, st, "y", &zarr.ArrayMetadataV2{Shape: []int{1}, Chunks: []int{1}}); err == nil {
		t.Error("no dtype accepted")
	}
}

// TestWriteV2ForPeers writes every v2 case with CreateArrayV2 into
// GOZARR_WRITE_DIR (as v2w_NAME.zarr and .npy) for
// testdata/interop/check_zarr_python.py, and a consolidated v2 and v3
// group for testdata/interop/check_consolidated.py.
func TestWriteV2ForPeers(t *testing.T) {
	dir, st := peerDir(t)
	ctx := context.Background()
	for _, c := range v2Cases(t) {
		a, err := zarr.CreateArrayV2(ctx, st, "v2w_"+c.name+".zarr", c.meta)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := a.WriteBytes(ctx, c.data); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := npy.WriteFile(filepath.Join(dir, "v2w_"+c.name+".npy"), c.descr, c.shape, c.data); err != nil {
			t.Fatal(err)
		}
	}
	for _, format := range []int{2, 3} {
		root := "cons_v" + string(rune('0'+format)) + ".group"
		if _, err := createGroup(ctx, st, root, format, map[string]any{"title": "gozarr"}); err != nil {
			t.Fatal(err)
		}
		if _, err := createGroup(ctx, st, root+"/sub", format, nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/a", "/sub/b"} {
			a, err := createArray(ctx, st, root+p, format)
			if err != nil {
				t.Fatal(err)
			}
			if err := zarr.Write(ctx, a, []int32{1, 2, 3, 4}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := zarr.Consolidate(ctx, st, root); err != nil {
			t.Fatal(err)
		}
	}
}
