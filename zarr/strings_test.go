package zarr_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// vlenDir holds the variable-length string and bytes fixtures of issue 14
// (v2 and v3, sharded, missing chunks, fill values), made by
// testdata/vlen/make_vlen.py with zarr-python 3.4.1.
const vlenDir = "../testdata/vlen"

// vlenFixture is NAME.json: the values zarr-python reads back.
type vlenFixture struct {
	Shape  []int    `json:"shape"`
	DType  string   `json:"dtype"`
	Values []string `json:"values"` // strings, or base64 of bytes
}

func vlenCases(t *testing.T) map[string]vlenFixture {
	t.Helper()
	ents, err := os.ReadDir(vlenDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]vlenFixture{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(vlenDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var f vlenFixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if f.DType == "bytes" {
			for i, v := range f.Values {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					t.Fatal(err)
				}
				f.Values[i] = string(b)
			}
		}
		out[name] = f
	}
	if len(out) < 15 {
		t.Fatalf("only %d fixtures in %s", len(out), vlenDir)
	}
	return out
}

// readVLen reads a string or bytes array's selection as strings.
func readVLen(ctx context.Context, a *zarr.Array, items ...nd.Item) ([]string, []int, error) {
	if a.Metadata().DataType == dtype.TypeVarBytes {
		bs, shape, err := zarr.ReadByteStrings(ctx, a, items...)
		ss := make([]string, len(bs))
		for i, b := range bs {
			ss[i] = string(b)
		}
		return ss, shape, err
	}
	return zarr.ReadStrings(ctx, a, items...)
}

// strided returns the elements of C-order values of shape at every
// second index from 1 in each dimension (the selection [1::2, 1::2, ...]).
func strided(values []string, shape []int) ([]string, []int) {
	var out []string
	oshape := make([]int, len(shape))
	for d, s := range shape {
		oshape[d] = s / 2
	}
	idx := make([]int, len(shape))
	for i := range values {
		rem, ok := i, true
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
			ok = ok && idx[d]%2 == 1
		}
		if ok {
			out = append(out, values[i])
		}
	}
	return out, oshape
}

// TestVLenFixtures reads every zarr-python fixture whole and strided and
// compares it with the values zarr-python read, opened with a chunk cache
// too (which variable-length reads bypass).
func TestVLenFixtures(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(vlenDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range vlenCases(t) {
		t.Run(name, func(t *testing.T) {
			for _, opts := range [][]zarr.Option{nil, {zarr.WithCache(cache.NewLRU(1 << 20))}} {
				a, err := zarr.OpenArray(ctx, st, name+".zarr", opts...)
				if err != nil {
					t.Fatal(err)
				}
				wantType := dtype.TypeVarString
				if want.DType == "bytes" {
					wantType = dtype.TypeVarBytes
				}
				if d := a.Metadata().DataType; d != wantType {
					t.Fatalf("data type %s, want %s", d, wantType)
				}
				got, shape, err := readVLen(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(shape, want.Shape) || !slices.Equal(got, want.Values) {
					t.Fatalf("read %v %q\nwant %v %q", shape, got, want.Shape, want.Values)
				}
				if len(want.Shape) == 0 {
					continue
				}
				items := make([]nd.Item, len(want.Shape))
				for d := range items {
					items[d] = nd.SliceFrom(1).WithStep(2)
				}
				wv, ws := strided(want.Values, want.Shape)
				got, shape, err = readVLen(ctx, a, items...)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(shape, ws) || !slices.Equal(got, wv) {
					t.Fatalf("strided read %v %q\nwant %v %q", shape, got, ws, wv)
				}
			}
		})
	}
}

// TestVLenFixtureMetadata checks what the fixtures' metadata says: fill
// values as content, the v3 view of v2 object arrays.
func TestVLenFixtureMetadata(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(vlenDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, fill string
		codecs     []string
	}{
		{"v3_string_fill", "N/A", []string{"vlen-utf8", "zstd"}},
		{"v2_string_fill", "N/A", []string{"vlen-utf8", "zstd"}},
		{"v3_bytes_fill", "\x01fill", []string{"vlen-bytes", "zstd"}},
		{"v2_bytes_fill", "\x01fill", []string{"vlen-bytes", "zstd"}},
		{"v2_string_F", "", []string{"transpose", "vlen-utf8", "zstd"}},
		{"v3_string_raw", "", []string{"vlen-utf8"}},
		{"v3_string_sharded", "", []string{"sharding_indexed"}},
	} {
		a, err := zarr.OpenArray(ctx, st, c.name+".zarr")
		if err != nil {
			t.Fatal(err)
		}
		m := a.Metadata()
		if string(m.FillValue) != c.fill {
			t.Errorf("%s: fill %q, want %q", c.name, m.FillValue, c.fill)
		}
		var names []string
		for _, s := range m.Codecs {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, c.codecs) {
			t.Errorf("%s: codecs %v, want %v", c.name, names, c.codecs)
		}
		if _, _, err := a.ReadBytes(ctx); !errors.Is(err, codecs.ErrVLenUnbound) {
			t.Errorf("%s: ReadBytes: %v, want ErrVLenUnbound", c.name, err)
		}
		if _, _, err := zarr.Read[int64](ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) {
			t.Errorf("%s: Read[int64]: %v, want ErrTypeMismatch", c.name, err)
		}
	}
}

// vlenValues returns n strings of varied length, unicode and empty ones.
func vlenValues(n, seed int) []string {
	words := []string{"", "a", "héllo", "日本語", "🎉", strings.Repeat("long ", 40), "\x00nul"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", words[(i*3+seed)%len(words)], i%5)
		if (i+seed)%4 == 0 {
			out[i] = ""
		}
	}
	return out
}

// TestVLenRoundTrip writes string and bytes arrays, v2 and v3, sharded
// and not, whole and in parts (read-modify-write of stored chunks), and
// reads them back from a reopened array.
func TestVLenRoundTrip(t *testing.T) {
	ctx := context.Background()
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		make func(st store.Store) (*zarr.Array, error)
	}{
		{"v3", func(st store.Store) (*zarr.Array, error) {
			m, err := zarr.NewArrayMetadata([]int{9, 7}, dtype.TypeVarString, []int{4, 3}, zarr.Compress(zs))
			if err != nil {
				return nil, err
			}
			return zarr.CreateArray(ctx, st, "a", m)
		}},
		{"v3 sharded", func(st store.Store) (*zarr.Array, error) {
			m, err := zarr.NewArrayMetadata([]int{9, 7}, dtype.TypeVarString, []int{2, 3}, zarr.Shards(4, 6), zarr.Compress(zs))
			if err != nil {
				return nil, err
			}
			return zarr.CreateArray(ctx, st, "a", m)
		}},
		{"v3 fill", func(st store.Store) (*zarr.Array, error) {
			m, err := zarr.NewArrayMetadata([]int{9, 7}, dtype.TypeVarString, []int{5, 2}, zarr.Fill([]byte("—")))
			if err != nil {
				return nil, err
			}
			return zarr.CreateArray(ctx, st, "a", m)
		}},
		{"v2", func(st store.Store) (*zarr.Array, error) {
			return zarr.CreateArrayV2(ctx, st, "a", &zarr.ArrayMetadataV2{Shape: []int{9, 7}, Chunks: []int{3, 3}, DataType: dtype.TypeVarString})
		}},
		{"v2 F", func(st store.Store) (*zarr.Array, error) {
			return zarr.CreateArrayV2(ctx, st, "a", &zarr.ArrayMetadataV2{Shape: []int{9, 7}, Chunks: []int{4, 5}, DataType: dtype.TypeVarString, Order: "F"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := mem.New()
			a, err := c.make(st)
			if err != nil {
				t.Fatal(err)
			}
			fill := string(a.Metadata().FillValue)
			want := make([]string, 63)
			for i := range want {
				want[i] = fill
			}
			// A block, then a row across it, then the whole array read back.
			block := vlenValues(4*5, 1)
			if err := zarr.WriteStrings(ctx, a, block, nd.Range(1, 5), nd.Range(2, 7)); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				copy(want[(1+i)*7+2:(1+i)*7+7], block[i*5:(i+1)*5])
			}
			row := vlenValues(7, 2)
			if err := zarr.WriteStrings(ctx, a, row, nd.Index(3)); err != nil {
				t.Fatal(err)
			}
			copy(want[3*7:4*7], row)
			b, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			got, shape, err := zarr.ReadStrings(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, []int{9, 7}) || !slices.Equal(got, want) {
				t.Fatalf("read %q\nwant %q", got, want)
			}
			// Chunks of nothing but the fill value are not stored.
			if err := zarr.WriteStrings(ctx, a, slices.Repeat([]string{fill}, 63)); err != nil {
				t.Fatal(err)
			}
			for k, err := range st.List(ctx, "a/") {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasSuffix(k, "zarr.json") && !strings.HasSuffix(k, "/.zarray") && !strings.HasSuffix(k, "/.zattrs") {
					t.Errorf("chunk %s stored, all fill", k)
				}
			}
		})
	}
}

// TestVLenBytesRoundTrip writes variable-length bytes (NUL bytes, empty
// values) and reads them back, v3 sharded and v2.
func TestVLenBytesRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	m, err := zarr.NewArrayMetadata([]int{10}, dtype.TypeVarBytes, []int{2}, zarr.Shards(4))
	if err != nil {
		t.Fatal(err)
	}
	a3, err := zarr.CreateArray(ctx, st, "b3", m)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := zarr.CreateArrayV2(ctx, st, "b2", &zarr.ArrayMetadataV2{Shape: []int{10}, Chunks: []int{3}, DataType: dtype.TypeVarBytes, FillValue: []byte("?")})
	if err != nil {
		t.Fatal(err)
	}
	data := [][]byte{{0}, {}, []byte("abc"), {0xff, 0, 1}, []byte(strings.Repeat("z", 1000))}
	for _, a := range []*zarr.Array{a3, a2} {
		if err := zarr.WriteByteStrings(ctx, a, data, nd.Range(2, 7)); err != nil {
			t.Fatal(err)
		}
		got, _, err := zarr.ReadByteStrings(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		fill := a.Metadata().FillValue
		want := [][]byte{fill, fill, {0}, {}, []byte("abc"), {0xff, 0, 1}, []byte(strings.Repeat("z", 1000)), fill, fill, fill}
		if len(got) != len(want) {
			t.Fatalf("%d values", len(got))
		}
		for i := range want {
			if string(got[i]) != string(want[i]) || got[i] == nil {
				t.Errorf("%s element %d: %q, want %q", a.Path(), i, got[i], want[i])
			}
		}
		// Each element has its own capacity.
		got[2] = append(got[2], 'X')
		if string(got[3]) != "" || string(got[4]) != "abc" {
			t.Errorf("append to one element changed another: %q %q", got[3], got[4])
		}
		if err := zarr.WriteStrings(ctx, a, []string{"x"}, nd.Range(0, 1)); !errors.Is(err, zarr.ErrTypeMismatch) {
			t.Errorf("WriteStrings on bytes: %v", err)
		}
	}
}

// TestVLenErrors: bad values and types are refused before anything is
// written; a corrupt stored chunk is ErrCorrupt.
func TestVLenErrors(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	m, err := zarr.NewArrayMetadata([]int{4}, dtype.TypeVarString, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "s", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.WriteStrings(ctx, a, []string{"ok", "\xff"}, nd.Range(0, 2)); !errors.Is(err, zarr.ErrInvalidValue) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := zarr.WriteStrings(ctx, a, []string{"one"}); err == nil {
		t.Error("1 value for 4 elements: no error")
	}
	if _, _, err := zarr.ReadByteStrings(ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) {
		t.Errorf("ReadByteStrings of strings: %v", err)
	}
	if err := a.WriteBytes(ctx, slices.Repeat([]byte{1}, 32)); !errors.Is(err, codecs.ErrVLenUnbound) {
		t.Errorf("WriteBytes: %v", err)
	}
	for _, c := range []struct {
		name  string
		chunk []byte
	}{
		{"2^32-1 elements", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}},
		{"length past the end", []byte{2, 0, 0, 0, 1, 0, 0, 0, 'a', 0xff, 0xff, 0xff, 0x7f, 'b'}},
		{"bad UTF-8", []byte{2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 0}},
		{"trailing bytes", []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}},
	} {
		if err := st.Set(ctx, "s/c/0", c.chunk); err != nil {
			t.Fatal(err)
		}
		if _, _, err := zarr.ReadStrings(ctx, a); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
	}
}

// TestStringsFixedWidth reads and writes fixed-width string arrays
// through the string API.
func TestStringsFixedWidth(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(extDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "v3_U3.zarr")
	if err != nil {
		t.Fatal(err)
	}
	got, shape, err := zarr.ReadStrings(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ab", "", "é€x", "zz", "zz", "zz"}; !slices.Equal(got, want) || !slices.Equal(shape, []int{2, 3}) {
		t.Errorf("read %v %q, want %q", shape, got, want)
	}
	u3, _ := dtype.FixedUTF32(3)
	m, err := zarr.NewArrayMetadata([]int{3}, u3, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := zarr.CreateArray(ctx, mem.New(), "u", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.WriteStrings(ctx, b, []string{"日本", "", "abc"}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := zarr.ReadStrings(ctx, b); err != nil || !slices.Equal(got, []string{"日本", "", "abc"}) {
		t.Errorf("round trip %q %v", got, err)
	}
	if err := zarr.WriteStrings(ctx, b, []string{"toolong", "", ""}); err == nil {
		t.Error("a string longer than the type: no error")
	}
}

// TestVLenConcurrentWrites: goroutines writing disjoint rows that share
// every chunk (each with its own arena) lose nothing.
func TestVLenConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	m, err := zarr.NewArrayMetadata([]int{8, 6}, dtype.TypeVarString, []int{8, 3})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "c", m)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for r := range 8 {
		go func() { errs <- zarr.WriteStrings(ctx, a, vlenValues(6, r), nd.Index(r)) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := zarr.ReadStrings(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 8 {
		if !slices.Equal(got[6*r:6*r+6], vlenValues(6, r)) {
			t.Errorf("row %d: %q, want %q", r, got[6*r:6*r+6], vlenValues(6, r))
		}
	}
}

// TestVLenDataset opens the xarray-like datasets (consolidated groups with
// a string coordinate) from their consolidated metadata alone: the
// station array's own document is left out of the store.
func TestVLenDataset(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"dataset_v2.zarr", "dataset_v3.zarr"} {
		t.Run(name, func(t *testing.T) {
			st := mem.New()
			root := filepath.Join(vlenDir, name)
			err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				key := filepath.ToSlash(rel)
				if key == "station/zarr.json" || key == "station/.zarray" {
					return nil
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return st.Set(ctx, key, b)
			})
			if err != nil {
				t.Fatal(err)
			}
			g, err := zarr.OpenGroup(ctx, st, "")
			if err != nil {
				t.Fatal(err)
			}
			a, err := g.OpenArray(ctx, "station")
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := zarr.ReadStrings(ctx, a)
			if want := []string{"Zürich", "Genève", "", "北京"}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("station %q %v, want %q", got, err, want)
			}
			if dn := a.Metadata().DimensionNames; len(dn) != 1 || dn[0] == nil || *dn[0] != "station" {
				t.Errorf("dimension names %v", dn)
			}
			temp, err := g.OpenArray(ctx, "temp")
			if err != nil {
				t.Fatal(err)
			}
			vals, _, err := zarr.Read[float32](ctx, temp, nd.Index(2))
			if err != nil || !slices.Equal(vals, []float32{8, 9, 10, 11}) {
				t.Errorf("temp[2] %v %v", vals, err)
			}
		})
	}
}

// TestObjectDTypeErrors: v2 object arrays gozarr cannot read say why.
func TestObjectDTypeErrors(t *testing.T) {
	for _, c := range []struct{ filters, want string }{
		{`[{"id": "pickle"}]`, `object codec pickle`},
		{`[{"id": "msgpack"}]`, `object codec "msgpack"`},
		{`null`, "without an object codec"},
		{`[{"id": "zstd"}, {"id": "vlen-utf8"}]`, `object codec "zstd"`},
	} {
		doc := `{"shape": [2], "chunks": [2], "dtype": "|O", "fill_value": null, "order": "C", "filters": ` + c.filters + `, "compressor": null, "zarr_format": 2}`
		_, err := zarr.ParseArrayMetadataV2([]byte(doc), nil)
		if !errors.Is(err, zarr.ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("filters %s: %v, want ErrUnsupported naming %s", c.filters, err, c.want)
		}
	}
	m, err := zarr.ParseArrayMetadataV2([]byte(`{"shape": [2], "chunks": [2], "dtype": "|O", "fill_value": 0, "order": "C", "filters": [{"id": "vlen-utf8"}], "compressor": null, "zarr_format": 2}`), nil)
	if err != nil || m.DataType != dtype.TypeVarString || string(m.FillValue) != "0" {
		t.Errorf("fill 0 (zarr-python 2): %v %q", err, m.FillValue)
	}
}
