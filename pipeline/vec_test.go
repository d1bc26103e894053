package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// vecStore is a filesystem store that counts its vectored reads.
type vecStore struct {
	*fs.Store
	vecs atomic.Int64
}

func (v *vecStore) ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error) {
	v.vecs.Add(1)
	vr, ok := any(v.Store).(store.VectorReader) // not on every platform
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return vr.ReadVec(ctx, key, off, bufs)
}

// plainStore hides every optional interface of a store but Get: the
// reference path, decoding from fetched bytes and copying.
type plainStore struct{ r store.Reader }

func (p plainStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return p.r.Get(ctx, key, r)
}

// intoStore keeps ReadInto and Size but hides ReadVec: the buffered path
// of a local store, reading each chunk into a pooled buffer.
type intoStore struct{ s *fs.Store }

func (p intoStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return p.s.Get(ctx, key, r)
}
func (p intoStore) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	return p.s.ReadInto(ctx, key, off, dst)
}
func (p intoStore) Size(ctx context.Context, key string) (int64, error) {
	return p.s.Size(ctx, key)
}

// needVec skips a test on platforms where the filesystem store has no
// vectored reads.
func needVec(t *testing.T) {
	t.Helper()
	if _, ok := any(&fs.Store{}).(store.VectorReader); !ok {
		t.Skipf("store/fs has no vectored reads on %s", runtime.GOOS)
	}
}

// readAllWays reads items of the array at path through the vectored path
// (with every whole uncompressed chunk read that way), the buffered local
// path and the plain Get path, checks that all three agree, and returns
// the result and how many vectored reads ran.
func readAllWays(t *testing.T, root, path string, items []nd.Item) ([]byte, int64) {
	t.Helper()
	ctx := context.Background()
	st, err := fs.New(root, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	vs := &vecStore{Store: st}
	var results [][]byte
	for _, r := range []store.Reader{vs, intoStore{st}, plainStore{st}} {
		a, err := zarr.OpenArray(ctx, r, path)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := a.ReadBytes(ctx, items...)
		if err != nil {
			t.Fatalf("read %v through %T: %v", items, r, err)
		}
		results = append(results, got)
	}
	for i, name := range []string{"buffered", "plain"} {
		if !slices.Equal(results[0], results[i+1]) {
			t.Fatalf("read %v: vectored and %s reads differ", items, name)
		}
	}
	return results[0], vs.vecs.Load()
}

// TestVectoredReadCorpus reads the uncompressed, unsharded reference
// arrays (bytes codec alone, little-endian) with every whole chunk read
// straight into the output, and compares with their .npy.
func TestVectoredReadCorpus(t *testing.T) {
	needVec(t)
	defer setMinVecRun(1)()
	n := 0
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat != 3 || c.ShardShape != nil || !c.HasTag("codec:bytes") || !c.HasTag("endian:little") || len(c.Codecs) == 0 {
			continue
		}
		if strings.Count(string(c.Codecs), `"name"`) != 1 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			want := c.ExpectedArray(t)
			got, vecs := readAllWays(t, refdata.Dir(), c.Path, nil)
			if !slices.Equal(got, want.Data) {
				t.Fatalf("read differs from %s", c.Expected)
			}
			// Every chunk not on the last row or column is whole and
			// not contiguous in the output (more than one chunk across).
			grid := c.GridChunkShape()
			whole := 1
			for d := range c.Shape {
				whole *= c.Shape[d] / grid[d]
			}
			if vecs < int64(whole) {
				t.Errorf("%d vectored reads, want at least %d (whole chunks)", vecs, whole)
			}
		})
		n++
	}
	if n < 10 {
		t.Fatalf("only %d uncompressed reference arrays found", n)
	}
}

// writeGenerated writes a float32 array of the given shape and chunks,
// uncompressed, to a new directory, with some chunks missing (fill value
// 7.5), and returns the directory and the expected values.
func writeGenerated(t *testing.T, shape, chunks []int, codecsJSON string) (string, []float32) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"zarr_format": 3, "node_type": "array", "shape": %s, "data_type": "float32",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": %s}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 7.5, "codecs": %s}`,
		jsonInts(shape), jsonInts(chunks), codecsJSON)
	meta, err := zarr.ParseArrayMetadata([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "g", meta)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, nd.NumElements(shape))
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)/31)) + float32(i%17)
	}
	// A band of fill value makes the chunks inside it empty: not stored.
	for i := range vals[:shape[len(shape)-1]*chunks[0]*2] {
		vals[i] = 7.5
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	return dir, vals
}

func jsonInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// TestVectoredReadGenerated reads an array with edge chunks, missing
// chunks, and selections that take whole chunks, parts, steps and single
// indices, through all three read paths.
func TestVectoredReadGenerated(t *testing.T) {
	needVec(t)
	defer setMinVecRun(1)()
	shape, chunks := []int{45, 37, 11}, []int{8, 6, 11}
	dir, vals := writeGenerated(t, shape, chunks, `[{"name": "bytes", "configuration": {"endian": "little"}}]`)
	full := make([]byte, 4*len(vals))
	for i, v := range vals {
		putF32(full[4*i:], v)
	}
	for _, tc := range []struct {
		sel     string
		minVecs int64
	}{
		{":, :, :", 5 * 6},        // 5x6 whole chunks (rows 0-39, cols 0-35); 2 rows of chunks missing
		{"16:40, 6:30, :", 3 * 4}, // whole chunks only
		{"17:40, 6:30, :", 2 * 4}, // first row of chunks cut
		{"16:40, 6:30, 0:10", 0},  // last axis cut: no whole chunk
		{"::2, :, :", 0},          // stepped: parts, not whole chunks
		{"::-1, :, :", 0},         // reversed
		{"16:24, 12:18, :", 0},    // exactly one chunk: contiguous in the output, read with ReadInto
		{"3, :, :", 0},            // an index drops the first axis
		{"16:24, :, :", 6},        // one row of chunks
		{"16:24, 12:18, ::-1", 0}, // reversed last axis
		{"40:45, 30:37, :", 0},    // the corner edge chunk
		{"0:16, 0:12, :", 0},      // missing chunks only (fill)
		{"8:24, 0:12, :", 2},      // missing and stored
		{"16:24, 6:18, 0:11", 2},  // two whole chunks side by side
		{"..., 5", 0},             // one plane of the last axis
		{"16:32, 6:12, :", 0},     // a column of chunks: each contiguous in the output
		{"24:32, :, :", 6},        // a row of chunks, edge column included
		{"16:24, 0:36, :", 6},     // whole chunks across
	} {
		t.Run(tc.sel, func(t *testing.T) { checkSelection(t, dir, full, shape, tc.sel, tc.minVecs) })
	}
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// gatherBytes returns the elements sel selects from a C-order array, in
// C order of sel's output, one element at a time.
func gatherBytes(data []byte, shape []int, item int, sel nd.Selection) []byte {
	full := sel.FullShape()
	out := make([]byte, 0, nd.NumElements(full)*item)
	idx := make([]int, len(sel))
	if nd.NumElements(full) == 0 {
		return out
	}
	for {
		off := 0
		for d, s := range sel {
			off = off*shape[d] + s.Start + idx[d]*s.Step
		}
		out = append(out, data[off*item:(off+1)*item]...)
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < sel[d].Count {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return out
		}
	}
}

// TestVectoredReadCorruptChunk stores an uncompressed chunk one byte too
// long, one byte too short and empty: a read that takes it whole through
// the vectored path is ErrCorrupt naming the chunk; a missing chunk is the
// fill value.
func TestVectoredReadCorruptChunk(t *testing.T) {
	needVec(t)
	ctx := context.Background()
	chunks := []int{16, 512} // 2 KiB runs: read with ReadVec by default
	dir, vals := writeGenerated(t, []int{64, 1024}, chunks, `[{"name": "bytes", "configuration": {"endian": "little"}}]`)
	key := filepath.Join(dir, "g", "c", "2", "1")
	good, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs := &vecStore{Store: st}
	a, err := zarr.OpenArray(ctx, vs, "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"one byte too long", append(slices.Clone(good), 0)},
		{"one byte short", good[:len(good)-1]},
		{"much too long", append(slices.Clone(good), good...)},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(key, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, sel := range [][]nd.Item{nil, {nd.Range(32, 48), nd.Range(0, 1024)}} {
				before := vs.vecs.Load()
				_, _, err := a.ReadBytes(ctx, sel...)
				if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), `"g/c/2/1"`) {
					t.Errorf("read %v: %v, want ErrCorrupt naming g/c/2/1", sel, err)
				}
				if vs.vecs.Load() == before {
					t.Errorf("read %v: no vectored read", sel)
				}
			}
		})
	}
	if err := os.WriteFile(key, good, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := a.ReadBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full := make([]byte, 4*len(vals))
	for i, v := range vals {
		putF32(full[4*i:], v)
	}
	if !slices.Equal(got, full) {
		t.Fatal("read after restoring the chunk differs from the values written")
	}
	// Chunk c/0/1 lies in the band of fill value: not stored.
	if _, err := os.Stat(filepath.Join(dir, "g", "c", "0", "1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("chunk c/0/1 stored (%v); the test expects it missing", err)
	}
	part, _, err := a.ReadBytes(ctx, nd.Range(0, 16), nd.Range(512, 1024))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(part); i += 4 {
		if math.Float32frombits(uint32(part[i])|uint32(part[i+1])<<8|uint32(part[i+2])<<16|uint32(part[i+3])<<24) != 7.5 {
			t.Fatalf("missing chunk: element %d is not the fill value", i/4)
		}
	}
}

// TestVectoredReadShardedGenerated reads a sharded array of uncompressed
// inner chunks with edge shards, missing inner chunks and shards, and
// selections that take whole inner chunks, parts, steps and single
// indices, through all three read paths.
func TestVectoredReadShardedGenerated(t *testing.T) {
	needVec(t)
	shape := []int{45, 2300}
	// Shards of 16×1024, inner chunks of 8×512 float32: 2 KiB runs, read
	// with ReadVec by default.
	dir, vals := writeGenerated(t, shape, []int{16, 1024}, `[{"name": "sharding_indexed", "configuration": {
		"chunk_shape": [8, 512], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]`)
	full := make([]byte, 4*len(vals))
	for i, v := range vals {
		putF32(full[4*i:], v)
	}
	for _, tc := range []struct {
		sel     string
		minVecs int64
	}{
		{":, :", 4},             // rows 0-31 are fill (not stored), 40-44 cut by the edge; rows 32-39: 4 whole inner chunks and an edge one
		{"32:40, :", 4},         // one row of inner chunks
		{"33:40, :", 0},         // inner chunks cut
		{"32:40, 1:2049", 0},    // cut columns
		{"32:40, 0:2048", 4},    // whole inner chunks only
		{"32:40, 512:1024", 1},  // one inner chunk: one run
		{"::2, :", 0},           // stepped
		{"::-1, :", 0},          // reversed
		{"40, :", 0},            // an index drops the first axis
		{"16:40, 1024:2048", 2}, // rows 16-31 not stored; rows 32-39: 2 whole inner chunks
		{"0:16, :", 0},          // a band of missing shards
		{"40:45, 2048:2300", 0}, // the corner edge shard
		{"..., 7", 0},           // one column
		{"32:40, 512:1536", 2},  // two inner chunks in two shards
		{"24:40, ::-1", 0},      // reversed columns
		{"32:40, 2048:2300", 0}, // the edge column: inner chunks cut by the array's edge
	} {
		t.Run(tc.sel, func(t *testing.T) { checkSelection(t, dir, full, shape, tc.sel, tc.minVecs) })
	}
}

// TestShardCost checks what a shard part reserves against the in-flight
// cap: its share of the largest shard when the shard is read through
// buffers, only the index and the inner chunks read in part when inner
// chunks covered whole are read in place.
func TestShardCost(t *testing.T) {
	bytesLE := codecs.Spec{Name: "bytes", Configuration: []byte(`{"endian": "little"}`)}
	c, err := sharding.New([]int{8, 512}, []codecs.Spec{bytesLE}, []codecs.Spec{bytesLE}, sharding.IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Layout(codecs.ChunkRepr{Shape: []int{16, 1024}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)})
	if err != nil {
		t.Fatal(err)
	}
	const index = 4 * 16 // 4 inner chunks of (offset, length)
	const inner = 8 * 512 * 4
	const maxEnc = index + 4*inner // the largest shard
	// share is what a part of n elements reserves when read through
	// buffers: the index and its share of the largest shard.
	share := func(n int64) int64 { return index + maxEnc*n/(16*1024) }
	part := func(start, count, step []int) nd.ChunkPart {
		return nd.ChunkPart{Coords: []int{0, 0}, SrcStart: start, Count: count, SrcStep: step, DstStart: []int{0, 0}}
	}
	noGap := store.CoalesceOptions{MaxGap: -1}
	for _, tc := range []struct {
		name    string
		p       nd.ChunkPart
		inPlace bool
		co      store.CoalesceOptions
		want    int64
	}{
		{"whole shard, buffered", part([]int{0, 0}, []int{16, 1024}, []int{1, 1}), false, noGap, share(16 * 1024)},
		{"half the rows, buffered", part([]int{0, 0}, []int{8, 1024}, []int{1, 1}), false, noGap, share(8 * 1024)},
		{"whole shard, in place", part([]int{0, 0}, []int{16, 1024}, []int{1, 1}), true, noGap, index},
		{"one inner chunk, in place", part([]int{8, 512}, []int{8, 512}, []int{1, 1}), true, noGap, index},
		{"cut rows, in place", part([]int{3, 0}, []int{13, 1024}, []int{1, 1}), true, noGap, index + 2*inner},
		{"cut rows, in place, default gap", part([]int{3, 0}, []int{13, 1024}, []int{1, 1}), true, store.CoalesceOptions{}, share(13 * 1024)},
		{"cut rows, in place, 1000-byte gap", part([]int{3, 0}, []int{13, 1024}, []int{1, 1}), true, store.CoalesceOptions{MaxGap: 1000}, index + 2*(inner+1000)},
		{"cut columns, in place", part([]int{0, 1}, []int{16, 1000}, []int{1, 1}), true, noGap, share(16 * 1000)},
		{"inside one inner chunk, in place", part([]int{9, 600}, []int{2, 3}, []int{1, 1}), true, noGap, share(6)},
		{"stepped, in place", part([]int{0, 0}, []int{8, 1024}, []int{2, 1}), true, noGap, share(8 * 1024)},
		{"reversed columns, in place", part([]int{0, 1023}, []int{8, 1024}, []int{1, -1}), true, noGap, index + 2*inner},
		{"rows 8-15 reversed, in place", part([]int{15, 0}, []int{8, 1024}, []int{-1, 1}), true, noGap, index + 2*inner},
		{"one row, in place", part([]int{5, 0}, []int{1, 1024}, []int{1, 1}), true, noGap, share(1024)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pipeline.ShardCost(l, tc.p, tc.inPlace, tc.co); got != tc.want {
				t.Errorf("cost %d, want %d", got, tc.want)
			}
		})
	}
}

// setMinVecRun sets the shortest output run read with a vectored read, for
// tests that reach that path with small chunks, and returns a function
// that restores it. Tests using it must not run in parallel.
func setMinVecRun(n int) (restore func()) {
	old := vecread.MinRun
	vecread.MinRun = max(n, 1)
	return func() { vecread.MinRun = old }
}

// checkSelection reads sel from the float32 array "g" in dir every way
// (readAllWays), compares with the same selection of full (the values
// written, of the given shape), and checks that at least minVecs chunks
// went through vectored reads.
func checkSelection(t *testing.T, dir string, full []byte, shape []int, selText string, minVecs int64) {
	t.Helper()
	items, err := nd.ParseSelection(selText)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := nd.Normalize(items, shape)
	if err != nil {
		t.Fatal(err)
	}
	got, vecs := readAllWays(t, dir, "g", items)
	want := gatherBytes(full, shape, 4, sel)
	if !slices.Equal(got, want) {
		t.Fatalf("read %q differs from the values written", selText)
	}
	if vecs < minVecs {
		t.Errorf("%d vectored reads, want at least %d", vecs, minVecs)
	}
}
