package zarr_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// extDir holds the extension data type fixtures of issue 14 (fixed-width
// strings, datetimes, timedeltas in v2 and v3), made by
// testdata/extdtypes/make_extdtypes.py with zarr-python 3.4.1.
const extDir = "../testdata/extdtypes"

// extCases lists the fixture names (NAME.zarr beside NAME.npy).
func extCases(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(extDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".zarr"); ok {
			names = append(names, n)
		}
	}
	if len(names) < 40 {
		t.Fatalf("only %d fixtures in %s", len(names), extDir)
	}
	return names
}

// TestExtDTypeFixtures reads every fixture through the API and compares
// its bytes, descriptor and shape with what zarr-python read.
func TestExtDTypeFixtures(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(extDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range extCases(t) {
		t.Run(name, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, st, name+".zarr")
			if err != nil {
				t.Fatal(err)
			}
			want, err := npy.ReadFile(filepath.Join(extDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			d := a.Metadata().DataType
			if want.Descr[0] == '>' {
				n := d.SwapUnit()
				for i := 0; i+n <= len(want.Data); i += n {
					slices.Reverse(want.Data[i : i+n])
				}
				want.Descr = "<" + want.Descr[1:]
			}
			if d.NumpyDescr() != want.Descr {
				t.Errorf("descr %s, want %s", d.NumpyDescr(), want.Descr)
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, want.Shape) || string(got) != string(want.Data) {
				t.Errorf("read %v %x\nwant %v %x", shape, got, want.Shape, want.Data)
			}
		})
	}
}

// TestExtDTypeTyped reads the fixtures through the typed helpers: strings
// through dtype.Strings, datetimes as int64 counts with NaT.
func TestExtDTypeTyped(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(extDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v2", "v3"} {
		a, err := zarr.OpenArray(ctx, st, v+"_U3.zarr")
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := a.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := dtype.Strings(a.Metadata().DataType, b)
		if want := []string{"ab", "", "é€x", "zz", "zz", "zz"}; err != nil || !slices.Equal(ss, want) {
			t.Errorf("%s strings %q, %v; want %q", v, ss, err, want)
		}
		m, err := zarr.OpenArray(ctx, st, v+"_M8_10s.zarr")
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := zarr.Read[int64](ctx, m)
		if want := []int64{0, 1, -1, 12345, dtype.NaT}; err != nil || !slices.Equal(n, want) {
			t.Errorf("%s datetimes %v, %v; want %v", v, n, err, want)
		}
		if tm, ok := m.Metadata().DataType.Time(n[3]); !ok || tm.Unix() != 123450 {
			t.Errorf("%s Time(12345 × 10 s) = %v, %v", v, tm, ok)
		}
		if _, _, err := zarr.Read[int32](ctx, m); err == nil {
			t.Errorf("%s: int32 read of a datetime array", v)
		}
	}
}

// peerDir returns GOZARR_WRITE_DIR, created, and a store on it; it skips
// the test when the variable is unset.
func peerDir(t *testing.T) (string, *fs.Store) {
	t.Helper()
	dir := os.Getenv("GOZARR_WRITE_DIR")
	if dir == "" {
		t.Skip("set GOZARR_WRITE_DIR to write arrays with gozarr for a peer to read")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

// TestWriteExtForPeers writes every v3 extension data type fixture with
// gozarr (same metadata and values) into GOZARR_WRITE_DIR, for
// testdata/interop/check_zarr_python.py to read with zarr-python.
func TestWriteExtForPeers(t *testing.T) {
	dir, dst := peerDir(t)
	ctx := context.Background()
	src, err := fs.New(extDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range extCases(t) {
		if !strings.HasPrefix(name, "v3_") {
			continue
		}
		a, err := zarr.OpenArray(ctx, src, name+".zarr")
		if err != nil {
			t.Fatal(err)
		}
		data, shape, err := a.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := "ext_" + name
		b, err := zarr.CreateArray(ctx, dst, out+".zarr", a.Metadata())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := b.WriteBytes(ctx, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := npy.WriteFile(filepath.Join(dir, out+".npy"), a.Metadata().DataType.NumpyDescr(), shape, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteBuiltExtForPeers writes extension-type arrays made with
// NewArrayMetadata (the builder's codecs, not zarr-python's) into
// GOZARR_WRITE_DIR for check_zarr_python.py.
func TestWriteBuiltExtForPeers(t *testing.T) {
	dir, st := peerDir(t)
	ctx := context.Background()
	s4, _ := dtype.FixedBytes(4)
	u2, _ := dtype.FixedUTF32(2)
	ns, _ := dtype.Datetime64(dtype.Nanoseconds, 1)
	for _, c := range []struct {
		name string
		d    dtype.DataType
		data []byte
	}{
		{"built_S4", s4, []byte("ab\x00\x00wxyz\x00\x00\x00\x00")},
		{"built_U2", u2, []byte("a\x00\x00\x00\x00\x00\x00\x00x\x00\x00\x00y\x00\x00\x00")},
		{"built_M8ns", ns, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}},
	} {
		n := len(c.data) / c.d.Size()
		meta, err := zarr.NewArrayMetadata([]int{n}, c.d, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, st, c.name+".zarr", meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteBytes(ctx, c.data); err != nil {
			t.Fatal(err)
		}
		if err := npy.WriteFile(filepath.Join(dir, c.name+".npy"), c.d.NumpyDescr(), []int{n}, c.data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExtDTypeRoundTrip creates v3 arrays of the extension types (bfloat16
// included, which zarr-python cannot write), writes, reopens from the
// stored document and reads back.
func TestExtDTypeRoundTrip(t *testing.T) {
	ctx := context.Background()
	u2, _ := dtype.FixedUTF32(2)
	ms, _ := dtype.Timedelta64(dtype.Milliseconds, 5)
	for _, c := range []struct {
		d    dtype.DataType
		fill string
		data []byte
		doc  string // the data_type as Marshal writes it
	}{
		{dtype.TypeBFloat16, `"NaN"`, []byte{0x80, 0x3f, 0xc0, 0x7f, 0, 0x80}, `"data_type": "bfloat16"`},
		{u2, `"a"`, []byte("x\x00\x00\x00y\x00\x00\x00z\x00\x00\x00\x00\x00\x00\x00a\x00\x00\x00\x00\x00\x00\x00"),
			`"data_type": {
    "name": "fixed_length_utf32",
    "configuration": {
      "length_bytes": 8
    }
  }`},
		{ms, `-9223372036854775808`, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 2, 0, 0, 0, 0, 0, 0, 0}, `"unit": "ms",`},
	} {
		st := mem.New()
		n := len(c.data) / c.d.Size()
		fill, err := dtype.ParseFill(c.d, json.RawMessage(c.fill))
		if err != nil {
			t.Fatal(err)
		}
		meta, err := zarr.NewArrayMetadata([]int{n}, c.d, []int{2}, zarr.Fill(fill))
		if err != nil {
			t.Fatalf("%s: %v", c.d, err)
		}
		a, err := zarr.CreateArray(ctx, st, "a", meta)
		if err != nil {
			t.Fatalf("%s: %v", c.d, err)
		}
		if err := a.WriteBytes(ctx, c.data); err != nil {
			t.Fatal(err)
		}
		doc, _ := st.Get(ctx, "a/zarr.json", store.OffsetLen(0, 1<<20))
		if !strings.Contains(string(doc), c.doc) {
			t.Errorf("%s: zarr.json lacks %s:\n%s", c.d, c.doc, doc)
		}
		b, err := zarr.OpenArray(ctx, st, "a")
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := b.ReadBytes(ctx)
		if err != nil || string(got) != string(c.data) || b.Metadata().DataType != c.d {
			t.Errorf("%s: read %x %v (%s), want %x", c.d, got, err, b.Metadata().DataType, c.data)
		}
	}
}
