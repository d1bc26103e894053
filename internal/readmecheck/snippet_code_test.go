package readmecheck

// The README's Go snippets, each inside a function that declares what the
// snippet uses and checks what it made; TestReadmeSnippetsCopied checks
// that the snippets here are the README's text, TestReadmeSnippets runs
// them on copies of the reference data (zarr-python and numcodecs wrote
// every array read here except the loader's).

import (
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/store"
)

// copyDir copies the directory tree src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// float32s reads a little-endian float32 .npy file of the test data.
func float32s(t *testing.T, path string) ([]float32, []int) {
	t.Helper()
	a, err := npy.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	if a.Descr != "<f4" || a.FortranOrder {
		t.Fatalf("%s: %s, want C-order <f4", path, a.Descr)
	}
	out := make([]float32, len(a.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:]))
	}
	return out, a.Shape
}

// jsonValues reads the "values" of a test data description (.json beside
// each vlen and object fixture, written by its generator script).
func jsonValues(t *testing.T, path string) []any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Values []any }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d.Values
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snippetGo is README.md's "Go" snippet. The working directory holds
// data/, a group with the array temperature (v3_ndim3, 14×15×14 float32).
func snippetGo(t *testing.T, ctx context.Context, buf []float32) {
	st, err := fs.New("data")                        // an existing directory (os.MkdirAll first); or mem.New(), s3.Open(...)
	a, err := zarr.OpenArray(ctx, st, "temperature") // v3 zarr.json, else v2 .zarray
	vals, shape, err := zarr.Read[float32](ctx, a, nd.Range(0, 10), nd.All(), nd.Index(-1))
	err = zarr.ReadInto(ctx, a, buf, nd.Ellipsis, nd.Every(2)) // into your own []float32
	err = zarr.Write(ctx, a, vals, nd.Range(0, 10), nd.All(), nd.Index(-1))
	raw, shape, err := a.ReadBytes(ctx) // any dtype, little-endian bytes (a.ReadBytesInto: your buffer)
	must(t, err)
	want, wshape := float32s(t, "testdata/refdata/v3_ndim3.npy")
	if !slices.Equal(shape, wshape) || len(raw) != 4*len(want) {
		t.Errorf("ReadBytes: shape %v, %d bytes; want %v, %d", shape, len(raw), wshape, 4*len(want))
	}
	at := func(i, j, k int) float32 { return want[(i*wshape[1]+j)*wshape[2]+k] }
	for i := range 10 {
		for j := range wshape[1] {
			if vals[i*wshape[1]+j] != at(i, j, wshape[2]-1) {
				t.Fatalf("Read: [%d, %d] = %v, want %v", i, j, vals[i*wshape[1]+j], at(i, j, wshape[2]-1))
			}
		}
	}
	for n, v := range buf {
		i, j, k := n/(wshape[1]*7), n/7%wshape[1], 2*(n%7)
		if v != at(i, j, k) {
			t.Fatalf("ReadInto: [%d, %d, %d] = %v, want %v", i, j, k, v, at(i, j, k))
		}
	}

	zs, _ := codecs.NewZstd(3, false) // typed codecs, no JSON
	meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32, []int{256, 256},
		zarr.Shards(1024, 1024), zarr.Compress(zs), // chunks of 256² (read units) in shards of 1024² (write units)
		zarr.DimensionNames("y", "x"), zarr.FillValue(math.NaN()))
	b, err := zarr.CreateArray(ctx, st, "new", meta, zarr.WithConcurrency(64, 0))
	chunks, shards := b.Chunks(), b.Shards()        // [256 256] [1024 1024], as zarr-python's a.chunks, a.shards
	plan, err := b.Plan(nd.Range(0, 300), nd.All()) // the chunks, shards and inner chunks a selection touches
	must(t, err)
	if plan == nil {
		t.Error("Plan: nil")
	}
	if !slices.Equal(chunks, []int{256, 256}) || !slices.Equal(shards, []int{1024, 1024}) {
		t.Errorf("Chunks %v, Shards %v; want [256 256] [1024 1024]", chunks, shards)
	}

	g, err := zarr.OpenGroup(ctx, st, "")
	children, err := g.Children(ctx)
	must(t, err)
	var names []string
	for _, c := range children {
		names = append(names, c.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"new", "temperature"}) {
		t.Errorf("Children: %v", names)
	}
}

// snippetStrings is the "Strings and bytes of any length" snippet: a is
// vlen's v3_string_fill (9 strings), b its v3_bytes (11 byte strings).
func snippetStrings(t *testing.T, ctx context.Context, a, b *zarr.Array, n int, zs codecs.BytesToBytes) {
	names, shape, err := zarr.ReadStrings(ctx, a, nd.Range(0, 100)) // []string (fixed-width <U, |S arrays too)
	err = zarr.WriteStrings(ctx, a, []string{"α", "", "γ"}, nd.Range(0, 3))
	blobs, shape, err := zarr.ReadByteStrings(ctx, b) // [][]byte; WriteByteStrings
	meta, err := zarr.NewArrayMetadata([]int{n}, dtype.TypeVarString, []int{65536}, zarr.Compress(zs))
	must(t, err)
	for i, v := range jsonValues(t, "testdata/vlen/v3_string_fill.json") {
		if names[i] != v {
			t.Errorf("ReadStrings: [%d] = %q, want %q", i, names[i], v)
		}
	}
	if len(names) != 9 {
		t.Errorf("ReadStrings of [0:100] of 9: %d strings", len(names))
	}
	after, _, err := zarr.ReadStrings(ctx, a, nd.Range(0, 4))
	must(t, err)
	if !slices.Equal(after, []string{"α", "", "γ", names[3]}) {
		t.Errorf("after WriteStrings: %q", after)
	}
	if !slices.Equal(shape, []int{11}) {
		t.Errorf("ReadByteStrings: shape %v", shape)
	}
	for i, v := range jsonValues(t, "testdata/vlen/v3_bytes.json") {
		if want, _ := base64.StdEncoding.DecodeString(v.(string)); string(blobs[i]) != string(want) {
			t.Errorf("ReadByteStrings: [%d] = %x, want %x", i, blobs[i], want)
		}
	}
	if !slices.Equal(meta.Shape, []int{n}) {
		t.Errorf("NewArrayMetadata: shape %v", meta.Shape)
	}
}

// snippetObjects is the "Object arrays and narrow types" snippet: a is
// numcodecs' msgpack2 fixture (10 objects), r its vlen-array <i4 one.
func snippetObjects(t *testing.T, ctx context.Context, a, r *zarr.Array) {
	vals, shape, err := zarr.ReadObjects(ctx, a) // []any: nil, bool, int64, float64, string, []byte, []any, map[string]any
	err = zarr.WriteObjects(ctx, a, []any{map[string]any{"k": 1.5}, nil}, nd.Range(0, 2))
	rows, shape, err := zarr.ReadRagged[int32](ctx, r) // [][]int32 from vlen-array {"dtype": "<i4"}; WriteRagged
	must(t, err)
	if len(vals) != 10 || vals[0] != "foo" || vals[2] != int64(1) || vals[3] != 2.5 || vals[9] != "Hej Världen!" {
		t.Errorf("ReadObjects: %v", vals)
	}
	after, _, err := zarr.ReadObjects(ctx, a, nd.Range(0, 3))
	must(t, err)
	if m, ok := after[0].(map[string]any); !ok || m["k"] != 1.5 || after[1] != nil || after[2] != int64(1) {
		t.Errorf("after WriteObjects: %v", after)
	}
	if !slices.Equal(shape, []int{2, 4}) {
		t.Errorf("ReadRagged: shape %v", shape)
	}
	for i, v := range jsonValues(t, "testdata/objects/vlen_array_i4.json") {
		var want []int32
		for _, x := range v.(map[string]any)["values"].([]any) {
			want = append(want, int32(x.(float64)))
		}
		if !slices.Equal(rows[i], want) {
			t.Errorf("ReadRagged: [%d] = %v, want %v", i, rows[i], want)
		}
	}
}

// snippetSelections is the "Selections beyond slices" snippet on a copy
// of v3_dtype_float32 (28×23 float32 in 8×9 chunks).
func snippetSelections(t *testing.T, ctx context.Context, a *zarr.Array, keep []bool, is, js []int, mask []bool,
	batch nd.View, origin, count, step []int, idx ...int) {
	rows, shape, err := zarr.Read[float32](ctx, a, nd.IndexArray(7, 3, 3, -1), nd.All())     // oindex: any order, repeats, negatives
	cols, shape, err := a.ReadBytes(ctx, nd.All(), nd.Mask(keep))                            // a boolean mask of one dimension
	pts, err := zarr.ReadPoints[float32](ctx, a, [][]int{is, js})                            // vindex: point k is (is[k], js[k])
	vals, err := zarr.ReadMask[float32](ctx, a, mask)                                        // a mask of the whole array, C order (a.ReadMaskBytes: bytes)
	items, err := a.BlockItems(nd.Index(2), nd.Range(0, 3))                                  // blocks: shards (chunks) by grid position
	err = a.ReadView(ctx, batch.Slice(origin, count, step), nd.IndexArray(idx...), nd.All()) // into a sub-box of your buffer
	err = zarr.WritePoints(ctx, a, vals, [][]int{is, js})                                    // writes too; a repeated index keeps its last value
	must(t, err)
	want, ws := float32s(t, "testdata/refdata/v3_dtype_float32.npy")
	at := func(i, j int) float32 {
		if i < 0 {
			i += ws[0]
		}
		return want[i*ws[1]+j]
	}
	for r, i := range []int{7, 3, 3, -1} {
		for j := range ws[1] {
			if rows[r*ws[1]+j] != at(i, j) {
				t.Fatalf("Read Indices: row %d [%d] = %v, want %v", r, j, rows[r*ws[1]+j], at(i, j))
			}
		}
	}
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	if !slices.Equal(shape, []int{ws[0], kept}) || len(cols) != 4*ws[0]*kept {
		t.Errorf("ReadBytes with a mask: shape %v, %d bytes", shape, len(cols))
	}
	for k := range is {
		if pts[k] != at(is[k], js[k]) || vals[k] != pts[k] {
			t.Errorf("point %d (%d, %d): ReadPoints %v, ReadMask %v, want %v", k, is[k], js[k], pts[k], vals[k], at(is[k], js[k]))
		}
	}
	// Chunks of 8×9 in 28×23: block row 2 is rows 16:24, block columns 0:3 all 23 columns.
	if len(items) != 2 {
		t.Errorf("BlockItems: %v", items)
	}
	// The view: rows idx of the array into batch's sub-box at origin.
	for r, i := range idx {
		for j := range count[1] {
			off := batch.Offset + (origin[0]+r*step[0])*batch.Strides[0] + (origin[1]+j*step[1])*batch.Strides[1]
			if v := math.Float32frombits(binary.LittleEndian.Uint32(batch.Data[off:])); v != at(i, j) {
				t.Fatalf("ReadView: [%d, %d] = %v, want %v", r, j, v, at(i, j))
			}
		}
	}
	col, _ := nd.IndexArrayOfShape([]int{2, 1}, []int{0, 2})                                              // NumPy's advanced indexing, any rank:
	grid, shape, err := zarr.Read[float32](ctx, a, nd.Vectorized([]nd.Item{col, nd.IndexArray(1, 3)})...) // a[[[0], [2]], [1, 3]], shape [2 2]
	must(t, err)
	if !slices.Equal(shape, []int{2, 2}) || !slices.Equal(grid, []float32{at(0, 1), at(0, 3), at(2, 1), at(2, 3)}) {
		t.Errorf("a[[[0], [2]], [1, 3]]: shape %v values %v", shape, grid)
	}
}

// snippetCaches is the "Caches and iteration" snippet: g holds
// temperature (v3_ndim3) and pressure (v3_dtype_float32), s3store is any
// store, process gets every block.
func snippetCaches(ctx context.Context, g *zarr.Group, s3store store.Reader, process func(start, shape []int, data []byte)) error {
	c := cache.NewLRU(512 << 20) // or NewCompressed, NewDisk, NewTiered
	a, _ := g.OpenArray(ctx, "temperature", zarr.WithCache(c))
	b, _ := g.OpenArray(ctx, "pressure", zarr.WithCache(c)) // one budget, shared
	disk, _ := cache.NewDisk(8<<30, cache.DiskOptions{})    // one file in a private temp dir, removed on Close
	defer disk.Close()
	t, _ := cache.NewTiered(cache.NewLRU(100<<20),
		cache.NewCompressed(500<<20, cache.CompressedOptions{ElemSize: 4}), disk)
	remote := cache.NewStore(s3store, cache.NewLRU(256<<20)) // encoded bytes, by (key, range)

	for t, err := range a.Tiles(ctx, 128<<20) { // two tiles of ≤ 64 MiB, next one prefetched
		if err != nil {
			return err
		}
		process(t.Start, t.Shape, t.Data) // t.Data is reused after this step
	}
	if b == nil || t == nil || remote == nil {
		return errors.New("an array, the tiered cache or the store cache is nil")
	}
	_, _, err := b.ReadBytes(ctx)
	return err
}

// snippetLoader is the "Training batches" snippet: x is 1024×64 float32
// (each row's values its row number), labels its 1024 int32 row numbers.
func snippetLoader(ctx context.Context, x, labels *zarr.Array, rank, world int, saved loader.State,
	train func(x, y, past []byte)) (loader.State, error) {
	ds := loader.Dataset{Fields: []loader.Field{
		{Name: "x", Array: x},      // rows of x along axis 0 are the samples
		{Name: "y", Array: labels}, // aligned on the same axis
		{Name: "past", Array: x, Offsets: []int{-2, -1, 0}, Rest: []nd.Item{nd.Range(0, 64)}}, // windows, boxes
	}, Stride: 1}
	l, err := loader.New(ctx, ds, loader.Config{BatchSize: 256, Seed: 1, Epochs: 10,
		Sampler: loader.Sampler{Kind: loader.BlockShuffle, K: 16}, // or Sequential, ChunkShuffle, Permutation, Weighted
		Rank:    rank, World: world, Last: loader.DropLast,        // disjoint chunk-aligned partitions per rank
		Budget: 512 << 20, Prefetch: 4, Reads: 32, // bytes in flight, batches ahead, reads at once
		From: saved}) // a State: resume exactly there
	defer l.Close() // no goroutine left after it
	for {
		b, err := l.Next(ctx) // io.EOF after the last epoch
		if err != nil {
			break
		}
		train(b.Data[0], b.Data[1], b.Data[2]) // C order, b.Shape(f); b.Samples says which
		b.Release()                            // the buffer goes back to the loader
		saved = l.State()                      // {epoch, batch, key}: a few bytes of JSON
	}
	fmt.Println(l.Stats().Amplification()) // chunk bytes decoded ÷ bytes delivered
	return saved, err
}
