package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// interopCase is a sharded array gozarr writes for other readers.
type interopCase struct {
	name         string
	dt           dtype.DataType
	fill         string // fill_value JSON
	shape, shard []int
	chunk        []int         // inner chunk shape
	inner        []codecs.Spec // inner codecs (nil: sharding inside, see nested)
	nested       []int         // for nested sharding: the innermost chunk shape
	index        []codecs.Spec
	loc          IndexLocation
	zarrita      bool // zarrita.js 0.7 can read it (no index at start, no nesting)
}

func interopCases() []interopCase {
	gz := []codecs.Spec{bytesLE, spec("gzip", `{"level":5}`)}
	zs := []codecs.Spec{bytesLE, spec("zstd", `{"level":3,"checksum":false}`)}
	return []interopCase{
		{name: "zstd_crc_end_edges", dt: dtype.TypeFloat32, fill: "-1.5", shape: []int{50, 45}, shard: []int{20, 20}, chunk: []int{5, 4},
			inner: zs, index: crcIndex, loc: IndexEnd, zarrita: true},
		{name: "gzip_crc_end", dt: dtype.TypeInt32, fill: "0", shape: []int{33, 70}, shard: []int{16, 32}, chunk: []int{8, 8},
			inner: gz, index: crcIndex, loc: IndexEnd, zarrita: true},
		{name: "raw_nocrc_end", dt: dtype.TypeUint16, fill: "7", shape: []int{17, 19}, shard: []int{8, 12}, chunk: []int{4, 3},
			inner: rawInner, index: []codecs.Spec{bytesLE}, loc: IndexEnd, zarrita: true},
		{name: "zstd_1d_float64", dt: dtype.TypeFloat64, fill: "0.0", shape: []int{1000}, shard: []int{256}, chunk: []int{32},
			inner: zs, index: crcIndex, loc: IndexEnd, zarrita: true},
		{name: "zstd_crc_start", dt: dtype.TypeInt32, fill: "0", shape: []int{30, 41}, shard: []int{12, 16}, chunk: []int{4, 4},
			inner: zs, index: crcIndex, loc: IndexStart},
		{name: "gzip_start", dt: dtype.TypeInt32, fill: "3", shape: []int{21, 9}, shard: []int{8, 8}, chunk: []int{4, 2},
			inner: gz, index: crcIndex, loc: IndexStart},
		{name: "nested_end_start", dt: dtype.TypeInt32, fill: "0", shape: []int{40, 37}, shard: []int{16, 16}, chunk: []int{8, 8},
			nested: []int{4, 4}, index: crcIndex, loc: IndexEnd},
	}
}

// codec builds the case's sharding codec.
func (ic interopCase) codec(t testing.TB) *Codec {
	t.Helper()
	inner := ic.inner
	if ic.nested != nil {
		c, err := New(ic.nested, []codecs.Spec{bytesLE, spec("zstd", `{"level":1,"checksum":false}`)}, crcIndex, IndexStart)
		if err != nil {
			t.Fatal(err)
		}
		s, err := codecs.SpecOf(c)
		if err != nil {
			t.Fatal(err)
		}
		inner = []codecs.Spec{s}
	}
	c, err := New(ic.chunk, inner, ic.index, ic.loc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// values returns the array's contents: a deterministic pattern with the
// whole first shard and the second shard's first inner chunk left at the
// fill value (a missing shard and a missing inner chunk).
func (ic interopCase) values(t testing.TB, fill []byte) []byte {
	t.Helper()
	item := ic.dt.Size()
	out := make([]byte, nd.NumElements(ic.shape)*item)
	forEachCoordIndexed(ic.shape, func(i int, c []int) {
		firstShard, secondsFirst := true, true
		for d := range c {
			if c[d] >= ic.shard[d] {
				firstShard = false
			}
			lo := 0
			if d == len(c)-1 {
				lo = ic.shard[d]
			}
			if c[d] < lo || c[d] >= lo+ic.chunk[d] {
				secondsFirst = false
			}
		}
		e := out[i*item : (i+1)*item]
		if firstShard || secondsFirst {
			copy(e, fill)
			return
		}
		v := (uint64(i)*2654435761>>5)%2000 + 1
		switch ic.dt {
		case dtype.TypeFloat32:
			binary.LittleEndian.PutUint32(e, math.Float32bits(float32(v)/4))
		case dtype.TypeFloat64:
			binary.LittleEndian.PutUint64(e, math.Float64bits(float64(v)/8))
		case dtype.TypeInt32:
			binary.LittleEndian.PutUint32(e, uint32(int32(v)-1000))
		case dtype.TypeUint16:
			binary.LittleEndian.PutUint16(e, uint16(v))
		default:
			t.Fatalf("no pattern for %s", ic.dt)
		}
	})
	return out
}

func forEachCoordIndexed(shape []int, fn func(int, []int)) {
	i := 0
	forEachCoord(shape, func(c []int) { fn(i, c); i++ })
}

// written is an array written to disk.
type written struct {
	dir      string
	a        *refArray // shape, shard shape, fill, data, key naming
	l        *Layout
	shards   map[string][]byte // key → shard bytes
	expected string            // raw little-endian contents
}

// write writes the case into a directory under root: zarr.json, the
// shards, and the expected contents as raw bytes.
func (ic interopCase) write(t testing.TB, root string) *written {
	t.Helper()
	fill, err := dtype.ParseFill(ic.dt, json.RawMessage(ic.fill))
	if err != nil {
		t.Fatal(err)
	}
	c := ic.codec(t)
	a := &refArray{name: ic.name, shape: ic.shape, shardShape: ic.shard, dt: ic.dt, fill: fill, sep: "/"}
	a.data = ic.values(t, fill)
	l, err := c.Layout(a.repr())
	if err != nil {
		t.Fatal(err)
	}
	w := &written{dir: filepath.Join(root, ic.name+".zarr"), a: a, l: l, shards: map[string][]byte{}}
	s, err := codecs.SpecOf(c)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{
		"zarr_format": 3, "node_type": "array", "shape": ic.shape, "data_type": ic.dt.Name(),
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": ic.shard}},
		"chunk_key_encoding": map[string]any{"name": "default", "configuration": map[string]any{"separator": "/"}},
		"fill_value":         json.RawMessage(ic.fill),
		"codecs":             []codecs.Spec{s},
		"attributes":         map[string]any{},
	}
	doc, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "zarr.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	forEachCoord(a.grid(), func(coords []int) {
		enc, isEmpty, err := l.EncodeShard(nil, a.paddedShard(coords))
		if err != nil {
			t.Fatal(err)
		}
		if isEmpty {
			return
		}
		key := a.key(coords)
		w.shards[key] = enc
		p := filepath.Join(w.dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, enc, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if n := nd.NumElements(a.grid()); len(w.shards) != n-1 {
		t.Fatalf("%s: %d of %d shards stored, want all but the first", ic.name, len(w.shards), n)
	}
	w.expected = filepath.Join(root, ic.name+".raw")
	if err := os.WriteFile(w.expected, a.data, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// rawShard describes the layout verifyRaw checks a shard against.
type rawShard struct {
	shape, chunk []int
	item         int
	fill         []byte
	crc          bool
	start        bool
	decode       func(t testing.TB, enc []byte, want []byte) // checks one inner chunk
}

// verifyRaw re-reads a shard's bytes by the specification, without this
// package's reader: the index (2 uint64 little-endian per inner chunk, C
// order, then a crc32c of it when crc) at the start or the end; empty
// entries exactly for the inner chunks that are all fill; the stored
// chunks back to back in Morton order right after (before) the index,
// filling the shard exactly; each decoding to its part of data.
func verifyRaw(t testing.TB, where string, b []byte, r rawShard, data []byte) {
	t.Helper()
	grid := make([]int, len(r.shape))
	for d := range grid {
		grid[d] = r.shape[d] / r.chunk[d]
	}
	n := nd.NumElements(grid)
	isz := 16 * n
	if r.crc {
		isz += 4
	}
	if len(b) < isz {
		t.Fatalf("%s: %d bytes, index alone is %d", where, len(b), isz)
	}
	idx, body, bodyStart := b[len(b)-isz:], b[:len(b)-isz], 0
	if r.start {
		idx, body, bodyStart = b[:isz], b[isz:], isz
	}
	if r.crc {
		sum := crc32.Checksum(idx[:16*n], crc32.MakeTable(crc32.Castagnoli))
		if got := binary.LittleEndian.Uint32(idx[16*n:]); got != sum {
			t.Fatalf("%s: index crc32c %08x, computed %08x", where, got, sum)
		}
	}
	shardView := nd.Contiguous(data, r.shape, r.item)
	ones := slices.Repeat([]int{1}, len(r.shape))
	type stored struct{ i, off, n int }
	var order []stored
	forEachCoordIndexed(grid, func(i int, c []int) {
		off := binary.LittleEndian.Uint64(idx[16*i:])
		nb := binary.LittleEndian.Uint64(idx[16*i+8:])
		start := make([]int, len(c))
		for d := range c {
			start[d] = c[d] * r.chunk[d]
		}
		want := make([]byte, nd.NumElements(r.chunk)*r.item)
		nd.Copy(nd.Contiguous(want, r.chunk, r.item), shardView.Slice(start, r.chunk, ones))
		if off == math.MaxUint64 && nb == math.MaxUint64 {
			if !bytes.Equal(want, bytes.Repeat(r.fill, len(want)/r.item)) {
				t.Fatalf("%s: inner chunk %v missing but not all fill", where, c)
			}
			return
		}
		if bytes.Equal(want, bytes.Repeat(r.fill, len(want)/r.item)) {
			t.Fatalf("%s: inner chunk %v is all fill but stored", where, c)
		}
		if off < uint64(bodyStart) || off+nb > uint64(bodyStart+len(body)) {
			t.Fatalf("%s: inner chunk %v at [%d, +%d) outside the data region", where, c, off, nb)
		}
		r.decode(t, b[off:off+nb], want)
		order = append(order, stored{i, int(off), int(nb)})
	})
	slices.SortFunc(order, func(x, y stored) int { return x.off - y.off })
	pos := bodyStart
	morton := MortonOrder(grid)
	rank := make([]int, n)
	for k, i := range morton {
		rank[i] = k
	}
	for k, s := range order {
		if s.off != pos {
			t.Fatalf("%s: chunk %d at %d, want %d (back to back)", where, s.i, s.off, pos)
		}
		if k > 0 && rank[s.i] < rank[order[k-1].i] {
			t.Fatalf("%s: chunks not in Morton order", where)
		}
		pos += s.n
	}
	if pos != bodyStart+len(body) {
		t.Fatalf("%s: %d bytes of chunks, data region has %d", where, pos-bodyStart, len(body))
	}
}

// rawFor returns the raw layout description of a case's shards.
func (ic interopCase) rawFor(fill []byte) rawShard {
	item := ic.dt.Size()
	zdec, _ := zstd.NewReader(nil)
	leaf := func(t testing.TB, enc, want []byte) {
		t.Helper()
		var got []byte
		var err error
		name := "bytes"
		if ic.nested != nil || len(ic.inner) > 1 {
			name = "zstd"
			if ic.nested == nil {
				name = ic.inner[1].Name
			}
		}
		switch name {
		case "bytes":
			got = enc
		case "zstd":
			got, err = zdec.DecodeAll(enc, nil)
		case "gzip":
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(enc)); err == nil {
				got, err = io.ReadAll(zr)
			}
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("inner chunk does not decode to its data (%s): %v", name, err)
		}
	}
	r := rawShard{shape: ic.shard, chunk: ic.chunk, item: item, fill: fill, crc: len(ic.index) == 2, start: ic.loc == IndexStart, decode: leaf}
	if ic.nested != nil {
		sub := rawShard{shape: ic.chunk, chunk: ic.nested, item: item, fill: fill, crc: true, start: true, decode: leaf}
		r.decode = func(t testing.TB, enc, want []byte) {
			t.Helper()
			verifyRaw(t, "inner shard", enc, sub, want)
		}
	}
	return r
}

// TestShardRawLayout writes sharded arrays and re-reads every shard by the
// specification (not through this package's reader), including the cases
// zarrita.js cannot read (index at the start, nested shards), then reads
// each array back through Layout.Read.
func TestShardRawLayout(t *testing.T) {
	root := t.TempDir()
	for _, ic := range interopCases() {
		t.Run(ic.name, func(t *testing.T) {
			w := ic.write(t, root)
			r := ic.rawFor(w.a.fill)
			for key, b := range w.shards {
				coords := parseKey(t, key)
				verifyRaw(t, key, b, r, w.a.paddedShard(coords))
			}
			got := make([]byte, len(w.a.data))
			outView := nd.Contiguous(got, ic.shape, ic.dt.Size())
			sel := make(nd.Selection, len(ic.shape))
			for d, s := range ic.shape {
				sel[d] = nd.Dim{Start: 0, Count: s, Step: 1}
			}
			s := loadStore(t, &refArray{dir: w.dir})
			for p := range sel.Chunks(ic.shard) {
				if err := readLayout(w.l, context.Background(), StoreSource(s, "", w.a.key(p.Coords)), partSelection(p), p.DstView(outView), ReadOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if i := sameElems(ic.dt, got, w.a.data); i >= 0 {
				t.Fatalf("read back differs at element %d", i)
			}
		})
	}
}

func parseKey(t testing.TB, key string) []int {
	var out []int
	for _, f := range strings.Split(key, "/")[1:] {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestZarritaInterop writes sharded arrays with gozarr and reads them with
// zarrita.js (testdata/interop/read_zarrita.mjs), comparing every value.
// It needs node and GOZARR_ZARRITA_DIR, a directory with
// node_modules/zarrita installed (npm install zarrita).
func TestZarritaInterop(t *testing.T) {
	dir := os.Getenv("GOZARR_ZARRITA_DIR")
	if dir == "" {
		t.Skip("GOZARR_ZARRITA_DIR not set: set it to a directory where `npm install zarrita` was run to read gozarr's shards with zarrita.js")
	}
	nm := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "zarrita", "package.json")); err != nil {
		t.Fatalf("GOZARR_ZARRITA_DIR=%s has no node_modules/zarrita: %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found on PATH")
	}
	script, err := filepath.Abs("../testdata/interop/read_zarrita.mjs")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ran := 0
	for _, ic := range interopCases() {
		if !ic.zarrita {
			continue // checked by TestShardRawLayout
		}
		t.Run(ic.name, func(t *testing.T) {
			w := ic.write(t, root)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, node, script, w.dir, w.expected, nm).CombinedOutput()
			t.Logf("%s", bytes.TrimSpace(out))
			if err != nil {
				t.Fatalf("zarrita: %v\n%s", err, out)
			}
			if !bytes.HasPrefix(out, []byte("ok ")) {
				t.Fatalf("unexpected output %q", out)
			}
			ran++
		})
	}
	if ran < 4 {
		t.Fatalf("only %d arrays read by zarrita", ran)
	}
	// The script must also notice a wrong value.
	t.Run("detects a mismatch", func(t *testing.T) {
		ic := interopCases()[1]
		w := ic.write(t, t.TempDir())
		b, err := os.ReadFile(w.expected)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0x40
		if err := os.WriteFile(w.expected, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(node, script, w.dir, w.expected, nm).CombinedOutput()
		if err == nil {
			t.Fatalf("a changed value went unnoticed: %s", out)
		}
		if !bytes.Contains(out, []byte("differ")) {
			t.Fatalf("unclear report: %s", out)
		}
	})
}
