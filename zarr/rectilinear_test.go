package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// rectDir holds v3 arrays with rectilinear chunk grids written by
// zarr-python 3.4, made by testdata/rectilinear/make_rectilinear.py.
const rectDir = "../testdata/rectilinear"

var rectFixtures = []struct {
	name  string
	dtype string
	grid  [][]int // expected GridShape
	inner []int   // inner chunk shape when sharded
}{
	{"r2d_int32", "int32", [][]int{{2, 3}}, nil},
	{"r3d_uint16_partial", "uint16", [][]int{{2, 2, 3}}, nil},
	{"r1d_f64_runs", "float64", [][]int{{19}}, nil},
	{"r2d_sharded", "int16", [][]int{{2, 2}}, []int{2, 2}},
	{"r2d_overhang_u8", "uint8", [][]int{{2, 2}}, nil},
}

// refSelect returns the elements of full (C order, shape) that sel picks,
// in C order of sel's output: the reference each read is compared with.
func refSelect(full []byte, shape []int, item int, sel nd.Selection) []byte {
	out := []byte{}
	lens := make([]int, len(sel))
	for d, dim := range sel {
		lens[d] = dim.Len()
		if lens[d] == 0 {
			return out
		}
	}
	pos := make([]int, len(sel))
	for {
		off := 0
		for d, dim := range sel {
			off = off*shape[d] + dim.At(pos[d])
		}
		out = append(out, full[off*item:(off+1)*item]...)
		d := len(sel) - 1
		for ; d >= 0; d-- {
			if pos[d]++; pos[d] < lens[d] {
				break
			}
			pos[d] = 0
		}
		if d < 0 {
			return out
		}
	}
}

// randomItems returns a random selection of shape: per dimension an
// index, a slice (any step, either direction) or an index array.
func randomItems(rng *rand.Rand, shape []int) []nd.Item {
	items := make([]nd.Item, len(shape))
	for d, n := range shape {
		switch rng.IntN(5) {
		case 0:
			items[d] = nd.Index(rng.IntN(n))
		case 1:
			idx := make([]int, 1+rng.IntN(4))
			for k := range idx {
				idx[k] = rng.IntN(n)
			}
			items[d] = nd.IndexArray(idx...)
		case 2:
			items[d] = nd.All()
		default:
			a, b := rng.IntN(n+1), rng.IntN(n+1)
			step := 1 + rng.IntN(4)
			if rng.IntN(3) == 0 {
				a, b, step = max(a, b), min(a, b)-1, -step
				if b < 0 {
					items[d] = nd.SliceFrom(a).WithStep(step)
					continue
				}
			}
			items[d] = nd.Slice(min(a, b), max(a, b), step)
			if step < 0 {
				items[d] = nd.Slice(a, b, step)
			}
		}
	}
	return items
}

// TestRectilinearFixtures reads zarr-python's rectilinear arrays whole and
// (with and without a chunk cache) through random selections (slices of any step, indices, index arrays,
// coordinate selections, single elements) and compares every value with
// zarr-python's reading.
func TestRectilinearFixtures(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(rectDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rectFixtures {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprint(c.name, "/cached=", cached), func(t *testing.T) {
				var opts []zarr.Option
				if cached {
					opts = append(opts, zarr.WithCache(cache.NewLRU(1<<20)))
				}
				a, err := zarr.OpenArray(ctx, st, c.name+".zarr", opts...)
				if err != nil {
					t.Fatal(err)
				}
				m := a.Metadata()
				if m.Rectilinear == nil || m.DataType.Name() != c.dtype || !slices.Equal(m.GridShape(), c.grid[0]) {
					t.Fatalf("grid %v, data type %s, grid shape %v", m.Rectilinear, m.DataType, m.GridShape())
				}
				if (a.Sharding() != nil) != (c.inner != nil) || c.inner != nil && !slices.Equal(a.Sharding().ChunkShape(), c.inner) {
					t.Fatalf("sharding %v, want inner chunks %v", a.Sharding(), c.inner)
				}
				want, err := npy.ReadFile(filepath.Join(rectDir, c.name+".npy"))
				if err != nil {
					t.Fatal(err)
				}
				got, shape, err := a.ReadBytes(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(shape, want.Shape) || !bytes.Equal(got, want.Data) {
					t.Fatalf("read %v %x\nwant %v %x", shape, got, want.Shape, want.Data)
				}
				item := m.DataType.Size()
				rng := rand.New(rand.NewPCG(26, uint64(len(c.name))))
				for range 300 {
					items := randomItems(rng, m.Shape)
					sel, err := a.Selection(items...)
					if err != nil {
						t.Fatal(err)
					}
					got, _, err := a.ReadBytes(ctx, items...)
					if err != nil {
						t.Fatalf("%v: %v", items, err)
					}
					if ref := refSelect(want.Data, want.Shape, item, sel); !bytes.Equal(got, ref) {
						t.Fatalf("%v: read %x, want %x", items, got, ref)
					}
				}
				// Coordinate selections and single elements.
				for range 50 {
					n := 1 + rng.IntN(20)
					coords := make([][]int, len(m.Shape))
					for d := range coords {
						for range n {
							coords[d] = append(coords[d], rng.IntN(m.Shape[d]))
						}
					}
					pts, err := a.Points(coords)
					if err != nil {
						t.Fatal(err)
					}
					got := make([]byte, n*item)
					if err := a.ReadPointsSelection(ctx, got, pts); err != nil {
						t.Fatal(err)
					}
					for k := range n {
						one := make([]nd.Item, len(m.Shape))
						off := 0
						for d := range coords {
							one[d] = nd.Index(coords[d][k])
							off = off*m.Shape[d] + coords[d][k]
						}
						if !bytes.Equal(got[k*item:(k+1)*item], want.Data[off*item:(off+1)*item]) {
							t.Fatalf("point %d: %x, want %x", k, got[k*item:(k+1)*item], want.Data[off*item:(off+1)*item])
						}
						e := make([]byte, item)
						if err := a.ReadBytesInto(ctx, e, one...); err != nil || !bytes.Equal(e, want.Data[off*item:(off+1)*item]) {
							t.Fatalf("element %v: %x %v", one, e, err)
						}
					}
				}
			})
		}
	}
}

// TestRectilinearMetadataRoundTrip parses each fixture's zarr.json and
// writes it back: the chunk grid comes out as zarr-python wrote it.
func TestRectilinearMetadataRoundTrip(t *testing.T) {
	for _, c := range rectFixtures {
		doc, err := os.ReadFile(filepath.Join(rectDir, c.name+".zarr", "zarr.json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := zarr.ParseArrayMetadata(doc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if grid(t, out) != grid(t, doc) {
			t.Errorf("%s: chunk_grid %s, zarr-python wrote %s", c.name, grid(t, out), grid(t, doc))
		}
	}
}

// grid returns the compact chunk_grid of a zarr.json document.
func grid(t *testing.T, doc []byte) string {
	t.Helper()
	m, err := zarr.ParseArrayMetadata(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Rectilinear.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw := string(doc)
	i := strings.Index(raw, `"chunk_grid"`)
	j := strings.Index(raw, `"chunk_key_encoding"`)
	compact := strings.Join(strings.Fields(raw[i+len(`"chunk_grid"`)+1:j]), "")
	compact = strings.TrimSuffix(compact, ",")
	if compact != string(b) {
		return compact + " (re-marshalled " + string(b) + ")"
	}
	return compact
}

// rectModel is a rectilinear array written by gozarr in random pieces,
// with the values it must hold.
func rectWriteRead(t *testing.T, s *mem.Store, name string, shape []int, edges [][]int, opts ...zarr.MetadataOption) (*zarr.Array, []byte) {
	return rectWriteReadChunks(t, s, name, shape, edges, nil, opts...)
}

// rectWriteReadChunks is rectWriteRead with chunks: when not nil, edges are
// those of shards (RectilinearShards) of chunks of that shape.
func rectWriteReadChunks(t *testing.T, s *mem.Store, name string, shape []int, edges [][]int, chunks []int, opts ...zarr.MetadataOption) (*zarr.Array, []byte) {
	t.Helper()
	ctx := context.Background()
	grid := zarr.RectilinearChunks(edges...)
	if chunks != nil {
		grid = zarr.RectilinearShards(edges...)
	}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeInt32, chunks, append([]zarr.MetadataOption{grid, zarr.Fill([]byte{9, 0, 0, 0})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, name, meta)
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for _, x := range shape {
		n *= x
	}
	model := make([]byte, 4*n)
	for i := range n {
		model[4*i] = 9
	}
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	for w := range 40 {
		items := randomItems(rng, shape)
		if w == 0 {
			items = make([]nd.Item, len(shape)) // everything once
		}
		sel, err := a.Selection(items...)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 4*nd.NumElements(sel.FullShape()))
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		if err := a.WriteBytes(ctx, data, items...); err != nil {
			t.Fatalf("write %v: %v", items, err)
		}
		// The model: where an index repeats, the last value wins.
		k := 0
		lens := sel.FullShape()
		pos := make([]int, len(sel))
		for range nd.NumElements(lens) {
			off := 0
			for d, dim := range sel {
				off = off*shape[d] + dim.At(pos[d])
			}
			copy(model[4*off:4*off+4], data[4*k:4*k+4])
			k++
			for d := len(sel) - 1; d >= 0; d-- {
				if pos[d]++; pos[d] < lens[d] {
					break
				}
				pos[d] = 0
			}
		}
	}
	got, _, err := a.ReadBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, model) {
		t.Fatalf("%s: read back other values", name)
	}
	return a, model
}

// TestRectilinearWrite writes rectilinear arrays (plain, compressed,
// sharded) in random pieces and reads them back; the stored keys are the
// chunks' grid coordinates.
func TestRectilinearWrite(t *testing.T) {
	s := mem.New()
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		t.Fatal(err)
	}
	rectWriteRead(t, s, "plain", []int{11, 9}, [][]int{{1, 4, 6}, {3, 3, 2, 5}})
	rectWriteRead(t, s, "zstd", []int{17}, [][]int{{5, 5, 5, 1, 1}}, zarr.Compress(zs))
	rectWriteReadChunks(t, s, "sharded", []int{12, 10}, [][]int{{4, 8}, {6, 2, 2}}, []int{2, 2}, zarr.Compress(zs))
	rectWriteRead(t, s, "three", []int{4, 5, 6}, [][]int{{1, 3}, {5}, {2, 2, 1, 1}})
	ctx := context.Background()
	var got []string
	for k, err := range s.List(ctx, "plain/c/") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	slices.Sort(got)
	var want []string
	for i := range 3 {
		for j := range 4 {
			want = append(want, fmt.Sprintf("plain/c/%d/%d", i, j))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}

// TestRectilinearPlan checks the plan of a read: its units are the grid's
// chunks with their coordinates and keys, and planning a small selection
// of a grid of 10^9 chunks touches what it selects only.
func TestRectilinearPlan(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(rectDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "r2d_int32.zarr")
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(nd.Range(2, 4), nd.Range(5, 8))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for u, err := range p.ReadUnits(ctx, st) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, fmt.Sprint(u.Key, u.Chunk, u.Part.SrcStart, u.Part.Count, u.Part.DstStart))
	}
	// Rows 2..3 lie in chunks 0 (edge 3: row 2) and 1 (row 3); columns
	// 5..7 in chunk 1 (edges 4, 4, 5: its elements 1..3).
	want := []string{"r2d_int32.zarr/c/0/1[0 1] [2 1] [1 3] [0 0]", "r2d_int32.zarr/c/1/1[1 1] [0 1] [1 3] [1 0]"}
	if !slices.Equal(keys, want) || p.NumWriteUnits() != 2 {
		t.Errorf("units %q (%d), want %q", keys, p.NumWriteUnits(), want)
	}

	// 10^9 chunks of one element, then two runs: one element's plan.
	doc := `{"zarr_format":3,"node_type":"array","shape":[1000000010],"data_type":"uint8",
"chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[[1,1000000000],[5,2]]]}},
"chunk_key_encoding":{"name":"default"},"fill_value":3,"codecs":[{"name":"bytes"}]}`
	s := mem.New()
	if err := s.Set(ctx, "big/zarr.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	b, err := zarr.OpenArray(ctx, s, "big")
	if err != nil {
		t.Fatal(err)
	}
	if g := b.Metadata().GridShape(); g[0] != 1000000002 {
		t.Fatalf("grid %v", g)
	}
	if err := b.WriteBytes(ctx, []byte{1, 2, 3}, nd.Range(999999999, 1000000002)); err != nil {
		t.Fatal(err)
	}
	got, _, err := b.ReadBytes(ctx, nd.Range(999999998, 1000000004))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte{3, 1, 2, 3, 3, 3}) {
		t.Errorf("read %v", got)
	}
	keys = nil
	for k, err := range s.List(ctx, "big/c/") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"big/c/1000000000", "big/c/999999999"}) {
		t.Errorf("keys %v", keys)
	}
}

// TestRectilinearHostile: metadata that breaks the grid is refused with a
// clear error, in bounded memory, whatever its counts.
func TestRectilinearHostile(t *testing.T) {
	docFor := func(shape, shapes string) string {
		return `{"zarr_format":3,"node_type":"array","shape":` + shape + `,"data_type":"uint8",
"chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":` + shapes + `}},
"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]}`
	}
	cases := []struct {
		shape, shapes, want string
	}{
		{"[10]", "[[3, 3]]", "sum to 6, less than"},
		{"[10]", "[[3, 0, 7]]", "at least 1"},
		{"[10]", "[[3, -2, 9]]", "at least 1"},
		{"[10]", "[0]", "at least 1"},
		{"[10]", "[[[2, 0]]]", "at least 1"},
		{"[10]", "[[[0, 5]]]", "at least 1"},
		{"[10]", "[[[2, 3, 4]]]", "[edge, count]"},
		{"[10]", "[[]]", "no chunk edges"},
		{"[10]", "[[1.5, 9]]", "not an integer"},
		{"[10]", `[["3"]]`, "not an integer"},
		{"[10]", "[[[1, 99999999999999999999]]]", "not an integer in range"},
		{"[10, 10]", "[[10]]", "1 dimensions, shape has 2"},
		{"[10]", "[[5], [5]]", "2 dimensions, shape has 1"},
		{"[1000000000]", "[[[1, 999999999]]]", "less than"},
		{"[9000000000000000000]", "[[[4611686018427387904, 1], [4611686018427387904, 1]]]", "overflow"},
		{"[10]", "{}", "chunk_shapes"},
		{"[10]", "[[[1, 1000000000]], 1]", "2 dimensions"},
		{"[10]", "[[1000000000000000]]", "larger than"},
	}
	for _, c := range cases {
		_, err := zarr.ParseArrayMetadata([]byte(docFor(c.shape, c.shapes)))
		if err == nil || !errors.Is(err, zarr.ErrInvalidMetadata) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want ErrInvalidMetadata saying %q", c.shape, c.shapes, err, c.want)
		}
	}
	for _, cfg := range []string{`{"chunk_shapes":[[10]]}`, `{"kind":"inline"}`, `{"kind":"inline","chunk_shapes":[[10]],"x":1}`, `[1]`} {
		doc := strings.Replace(docFor("[10]", "[[10]]"), `{"kind":"inline","chunk_shapes":[[10]]}`, cfg, 1)
		if _, err := zarr.ParseArrayMetadata([]byte(doc)); !errors.Is(err, zarr.ErrInvalidMetadata) {
			t.Errorf("configuration %s: %v", cfg, err)
		}
	}
	doc := strings.Replace(docFor("[10]", "[[10]]"), `"inline"`, `"external"`, 1)
	if _, err := zarr.ParseArrayMetadata([]byte(doc)); !errors.Is(err, zarr.ErrUnsupported) {
		t.Errorf("kind external: %v", err)
	}
	// 10^9 run lengths on an array of that length parse into a grid of one
	// run: memory does not grow with the count.
	var ms = testing.AllocsPerRun(5, func() {
		if _, err := zarr.ParseArrayMetadata([]byte(docFor("[1000000000]", "[[[1, 1000000000]]]"))); err != nil {
			t.Fatal(err)
		}
	})
	if ms > 500 {
		t.Errorf("%v allocations to parse a grid of 10^9 chunks", ms)
	}
	// Sharded: an edge that is not a multiple of the inner chunk.
	sharded := `{"zarr_format":3,"node_type":"array","shape":[10],"data_type":"uint8",
"chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[4, 6]]}},
"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[4],
"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"},{"name":"crc32c"}]}}]}`
	s := mem.New()
	ctx := context.Background()
	if err := s.Set(ctx, "a/zarr.json", []byte(sharded)); err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.OpenArray(ctx, s, "a"); err == nil || !strings.Contains(err.Error(), "not a multiple") {
		t.Errorf("indivisible shard edge: %v", err)
	}
	if _, err := zarr.NewArrayMetadata([]int{10}, dtype.TypeUint8, []int{10}, zarr.RectilinearChunks([]int{4, 6})); err == nil {
		t.Error("a chunk shape with RectilinearChunks accepted")
	}
	if _, err := zarr.NewArrayMetadata([]int{10}, dtype.TypeUint8, nil, zarr.RectilinearChunks([]int{4, 5})); err == nil {
		t.Error("edges short of the shape accepted")
	}
}

// TestZarrPythonReadsRectilinear asks zarr-python 3.4 (the chroot) to read
// rectilinear arrays gozarr wrote (plain, run-length encoded, sharded) and
// compare them with the values written.
func TestZarrPythonReadsRectilinear(t *testing.T) {
	tool, _ := filepath.Abs("../../shared/tools/zarr-python")
	if _, err := os.Stat("/tmp/refenv/usr/bin/python3"); err != nil {
		t.Skip("no reference chroot at /tmp/refenv (see ../shared/tools/zarr-python-env.sh)")
	}
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("no zarr-python tool: %v", err)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "rectpy")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s := mem.New()
	zs, _ := codecs.NewZstd(3, false)
	arrays := map[string]*zarr.Array{}
	models := map[string][]byte{}
	arrays["plain"], models["plain"] = rectWriteRead(t, s, "plain", []int{11, 9}, [][]int{{1, 4, 6}, {3, 3, 2, 5}})
	arrays["runs"], models["runs"] = rectWriteRead(t, s, "runs", []int{30}, [][]int{{2, 2, 2, 2, 10, 10, 5}}, zarr.Compress(zs))
	arrays["sharded"], models["sharded"] = rectWriteReadChunks(t, s, "sharded", []int{12, 10}, [][]int{{4, 8}, {6, 2, 2}}, []int{2, 2}, zarr.Compress(zs))
	fsys, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.Get(ctx, k, store.Full())
		if err != nil {
			t.Fatal(err)
		}
		if err := fsys.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, model := range models {
		if err := os.WriteFile(filepath.Join(dir, name+".raw"), model, 0o644); err != nil {
			t.Fatal(err)
		}
		script := `import sys, numpy as np, zarr
zarr.config.set({"array.rectilinear_chunks": True})
a = zarr.open_array(sys.argv[1] + "/" + sys.argv[2], mode="r")
want = np.fromfile(sys.argv[1] + "/" + sys.argv[2] + ".raw", dtype="<i4").reshape(a.shape)
assert np.array_equal(a[...], want), "values differ"
print(a.metadata.chunk_grid)
`
		out, err := exec.Command(tool, "-c", script, dir, name).CombinedOutput()
		if err != nil {
			t.Errorf("%s: zarr-python: %v: %s", name, err, out)
		}
	}
}

// TestRectilinearStrings writes and reads variable-length strings in a
// rectilinear grid, plain and sharded: every chunk shape's chain is bound
// to the operation's arena.
func TestRectilinearStrings(t *testing.T) {
	ctx := context.Background()
	for _, chunks := range [][]int{nil, {1, 2}} {
		grid := zarr.RectilinearChunks([]int{2, 3}, []int{4, 2})
		if chunks != nil {
			grid = zarr.RectilinearShards([]int{2, 3}, []int{4, 2})
		}
		meta, err := zarr.NewArrayMetadata([]int{5, 6}, dtype.TypeVarString, chunks, grid)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, mem.New(), "s", meta)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]string, 30)
		for i := range want {
			want[i] = strings.Repeat("x", i%7) + fmt.Sprint(i)
		}
		if err := zarr.WriteStrings(ctx, a, want); err != nil {
			t.Fatal(err)
		}
		got, _, err := zarr.ReadStrings(ctx, a, nd.Range(1, 4), nd.Slice(5, 0, -2))
		if err != nil {
			t.Fatal(err)
		}
		var ref []string
		for i := 1; i < 4; i++ {
			for j := 5; j > 0; j -= 2 {
				ref = append(ref, want[i*6+j])
			}
		}
		if !slices.Equal(got, ref) {
			t.Errorf("chunks %v: read %q, want %q", chunks, got, ref)
		}
	}
}

// TestRectilinearBlockError: a corrupt chunk in one block of a grid of
// many one-chunk blocks (read by several workers) fails the read with
// ErrCorrupt, every time, and a cancelled context stops it; the other
// blocks still read.
func TestRectilinearBlockError(t *testing.T) {
	ctx := context.Background()
	s := mem.New()
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		t.Fatal(err)
	}
	edges := []int{3, 5, 3, 5, 3, 5, 3, 5} // every chunk a block of its own
	meta, err := zarr.NewArrayMetadata([]int{32, 32}, dtype.TypeInt32, nil, zarr.RectilinearChunks(edges, edges), zarr.Compress(zs))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4*32*32)
	for i := range data {
		data[i] = byte(i * 13)
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "a/c/6/2", []byte("not zstd")); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, _, err := a.ReadBytes(ctx); !errors.Is(err, codecs.ErrCorrupt) {
			t.Fatalf("read with a corrupt chunk: %v", err)
		}
	}
	// rows 0..23 do not reach chunk row 6 (rows 24..26)
	got, _, err := a.ReadBytes(ctx, nd.Range(0, 24), nd.Range(0, 32))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[:4*24*32]) {
		t.Error("the blocks before the corrupt one read wrong values")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := a.ReadBytes(cctx, nd.Range(0, 24), nd.Range(0, 32)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v", err)
	}
}
