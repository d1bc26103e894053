package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

func spec(name string, cfg string) codecs.Spec {
	s := codecs.Spec{Name: name}
	if cfg != "" {
		s.Configuration = json.RawMessage(cfg)
	}
	return s
}

var (
	bytesLE   = spec("bytes", `{"endian":"little"}`)
	crcIndex  = []codecs.Spec{bytesLE, spec("crc32c", "")}
	zstdInner = []codecs.Spec{bytesLE, spec("zstd", `{"level":1,"checksum":false}`)}
	rawInner  = []codecs.Spec{bytesLE}
)

// fixture is one encoded int32 shard in a counting store under key "s".
type fixture struct {
	l    *Layout
	data []byte // decoded shard
	enc  []byte
	ix   *Index
	cs   *countingStore
}

// newFixture encodes a shard of shape with random int32 values, leaving
// the inner chunks listed in holes (C-order indexes) all fill (0).
func newFixture(t testing.TB, shape, chunk []int, inner []codecs.Spec, loc IndexLocation, holes ...int) *fixture {
	t.Helper()
	c, err := New(chunk, inner, crcIndex, loc)
	if err != nil {
		t.Fatal(err)
	}
	repr := codecs.ChunkRepr{Shape: shape, DType: dtype.TypeInt32, Fill: make([]byte, 4)}
	l, err := c.Layout(repr)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{l: l, data: make([]byte, repr.NumBytes())}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(f.data); i += 4 {
		binary.LittleEndian.PutUint32(f.data[i:], uint32(r.IntN(1000)+1))
	}
	v := nd.Contiguous(f.data, shape, 4)
	ones := make([]int, len(shape))
	for d := range ones {
		ones[d] = 1
	}
	for _, h := range holes {
		start := Coords(l, h)
		for d := range start {
			start[d] *= chunk[d]
		}
		nd.Fill(v.Slice(start, chunk, ones), make([]byte, 4))
	}
	var isEmpty bool
	if f.enc, isEmpty, err = l.EncodeShard(nil, f.data); err != nil || isEmpty {
		t.Fatal(err, isEmpty)
	}
	if f.ix, err = l.IndexOf(f.enc); err != nil {
		t.Fatal(err)
	}
	s := mem.New()
	if err := s.Set(context.Background(), "s", f.enc); err != nil {
		t.Fatal(err)
	}
	f.cs = &countingStore{r: s}
	return f
}

// read runs Layout.Read of sel on the fixture's stored shard and checks
// the values.
func (f *fixture) read(t *testing.T, sel nd.Selection, opt ReadOptions) {
	t.Helper()
	got := make([]byte, sel.NumElements()*4)
	if err := readLayout(f.l, context.Background(), StoreSource(f.cs, "mem", "s"), sel, nd.Contiguous(got, sel.FullShape(), 4), opt); err != nil {
		t.Fatal(err)
	}
	if want := extract(nd.Contiguous(f.data, f.l.Shard().Shape, 4), sel); !bytes.Equal(got, want) {
		t.Fatalf("selection %v: wrong values", sel)
	}
}

// chunkBytes returns the stored size of inner chunk i.
func (f *fixture) chunkBytes(i int) int64 {
	_, n, _ := f.ix.Entry(i)
	return n
}

// box returns the selection of inner chunks [lo, hi) along each dimension.
func box(chunk []int, lo, hi []int) nd.Selection {
	s := make(nd.Selection, len(chunk))
	for d := range s {
		s[d] = nd.Dim{Start: lo[d] * chunk[d], Count: (hi[d] - lo[d]) * chunk[d], Step: 1}
	}
	return s
}

type economy struct {
	calls, gets, multi, ranges, full int
	bytes                            int64
}

func (c *countingStore) economy() economy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return economy{calls: c.gets + c.multi, gets: c.gets, multi: c.multi, ranges: c.ranges, full: c.full, bytes: c.bytes}
}

func TestRequestEconomy(t *testing.T) {
	shape, chunk := []int{64, 64}, []int{8, 8}
	z := newFixture(t, shape, chunk, zstdInner, IndexEnd, 9)
	raw := newFixture(t, shape, chunk, rawInner, IndexEnd)
	rawStart := newFixture(t, shape, chunk, rawInner, IndexStart)
	idx := int64(z.l.IndexSize())
	if idx != 64*16+4 {
		t.Fatalf("index size %d, want %d", idx, 64*16+4)
	}
	far := store.CoalesceOptions{MaxGap: -1}
	corners := []int{0, 7, 56, 63} // inner chunks (0,0) (0,7) (7,0) (7,7)
	var cornerBytes int64
	for _, i := range corners {
		cornerBytes += z.chunkBytes(i)
	}
	cache := NewIndexCache(0)

	tests := []struct {
		name string
		f    *fixture
		sel  nd.Selection
		opt  ReadOptions
		want economy
	}{
		{"one inner chunk, cold", z, box(chunk, []int{1, 2}, []int{2, 3}), ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 2, bytes: idx + z.chunkBytes(10)}},
		{"one inner chunk, cold, cache", z, box(chunk, []int{1, 2}, []int{2, 3}), ReadOptions{Cache: cache},
			economy{calls: 2, gets: 1, multi: 1, ranges: 2, bytes: idx + z.chunkBytes(10)}},
		{"another inner chunk, warm", z, box(chunk, []int{3, 3}, []int{4, 4}), ReadOptions{Cache: cache},
			economy{calls: 1, multi: 1, ranges: 1, bytes: z.chunkBytes(27)}},
		{"whole shard, cold", z, box(chunk, []int{0, 0}, []int{8, 8}), ReadOptions{},
			economy{calls: 1, gets: 1, ranges: 1, full: 1, bytes: int64(len(z.enc))}},
		{"whole shard, warm", z, box(chunk, []int{0, 0}, []int{8, 8}), ReadOptions{Cache: cache},
			economy{calls: 1, multi: 1, ranges: 1, bytes: int64(len(z.enc)) - idx}},
		{"missing inner chunk", z, box(chunk, []int{1, 1}, []int{2, 2}), ReadOptions{},
			economy{calls: 1, gets: 1, ranges: 1, bytes: idx}},
		{"4 scattered chunks, no gap joining", z, nd.Selection{{Start: 0, Count: 2, Step: 56}, {Start: 3, Count: 2, Step: 57}}, ReadOptions{Coalesce: far},
			economy{calls: 2, gets: 1, multi: 1, ranges: 1 + 4, bytes: idx + cornerBytes}},
		{"3 adjacent chunks (a 4th missing), no gap joining", z, nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 0, Count: 16, Step: 1}}, ReadOptions{Coalesce: far},
			economy{calls: 2, gets: 1, multi: 1, ranges: 1 + 1, bytes: idx + z.chunkBytes(0) + z.chunkBytes(1) + z.chunkBytes(8)}},
		{"4 scattered chunks, default gap", z, nd.Selection{{Start: 0, Count: 2, Step: 56}, {Start: 0, Count: 2, Step: 56}}, ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 1 + 1, bytes: -1}},
		{"uncompressed: one element", raw, nd.Selection{{Start: 13, Count: 1, Step: 1}, {Start: 21, Count: 1, Step: 1}}, ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 2, bytes: idx + 4}},
		{"uncompressed: a row inside one chunk", raw, nd.Selection{{Start: 13, Count: 1, Step: 1}, {Start: 17, Count: 6, Step: 1}}, ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 2, bytes: idx + 6*4}},
		{"uncompressed, index at start: a column inside one chunk, no gap joining", rawStart, nd.Selection{{Start: 9, Count: 5, Step: 1}, {Start: 17, Count: 1, Step: 1}}, ReadOptions{Coalesce: far},
			economy{calls: 2, gets: 1, multi: 1, ranges: 1 + 5, bytes: idx + 5*4}},
		{"uncompressed, index at start: a column inside one chunk", rawStart, nd.Selection{{Start: 9, Count: 5, Step: 1}, {Start: 17, Count: 1, Step: 1}}, ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 1 + 1, bytes: idx + 4*8*4 + 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.cs.reset()
			tc.f.read(t, tc.sel, tc.opt)
			got := tc.f.cs.economy()
			if tc.want.bytes < 0 { // only bounded
				if got.bytes > int64(len(tc.f.enc)) {
					t.Errorf("read %d bytes of a %d-byte shard", got.bytes, len(tc.f.enc))
				}
				got.bytes = -1
			}
			if got != tc.want {
				t.Errorf("store use %+v, want %+v\n%v", got, tc.want, tc.f.cs.log)
			}
		})
	}
	if st := cache.Stats(); st.Hits != 2 || st.Misses != 1 || st.Entries != 1 {
		t.Errorf("cache stats %+v, want 2 hits, 1 miss, 1 entry", st)
	}
}

// TestRequestEconomyNested reads through nested shards: never the whole
// outer shard, inner indexes by range.
func TestRequestEconomyNested(t *testing.T) {
	innerShard := []codecs.Spec{spec("sharding_indexed",
		`{"chunk_shape":[4,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"start"}`)}
	f := newFixture(t, []int{32, 32}, []int{16, 16}, innerShard, IndexEnd, 3)
	outerIdx := int64(f.l.IndexSize())
	subIdx := int64(f.l.Nested().IndexSize())
	if outerIdx != 4*16+4 || subIdx != 16*16+4 {
		t.Fatalf("index sizes %d, %d", outerIdx, subIdx)
	}
	// Sub-shard 1 (rows 0-15, cols 16-31); its inner chunk (1,2) holds
	// rows 4-7, cols 24-27.
	off1, n1, _ := f.ix.Entry(1)
	sub, err := f.l.Nested().IndexOf(f.enc[off1 : off1+n1])
	if err != nil {
		t.Fatal(err)
	}
	_, n12, _ := sub.Entry(1*4 + 2)
	cache := NewIndexCache(0)
	tests := []struct {
		name string
		sel  nd.Selection
		opt  ReadOptions
		want economy
	}{
		{"one innermost chunk", nd.Selection{{Start: 4, Count: 4, Step: 1}, {Start: 24, Count: 4, Step: 1}}, ReadOptions{},
			economy{calls: 3, gets: 1, multi: 2, ranges: 3, bytes: outerIdx + subIdx + n12}},
		{"one innermost chunk, cold cache", nd.Selection{{Start: 4, Count: 4, Step: 1}, {Start: 24, Count: 4, Step: 1}}, ReadOptions{Cache: cache},
			economy{calls: 3, gets: 1, multi: 2, ranges: 3, bytes: outerIdx + subIdx + n12}},
		{"one innermost chunk, warm cache", nd.Selection{{Start: 4, Count: 4, Step: 1}, {Start: 24, Count: 4, Step: 1}}, ReadOptions{Cache: cache},
			economy{calls: 1, multi: 1, ranges: 1, bytes: n12}},
		{"one whole sub-shard", nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 16, Count: 16, Step: 1}}, ReadOptions{},
			economy{calls: 2, gets: 1, multi: 1, ranges: 2, bytes: outerIdx + n1}},
		{"missing sub-shard", nd.Selection{{Start: 16, Count: 16, Step: 1}, {Start: 16, Count: 3, Step: 1}}, ReadOptions{},
			economy{calls: 1, gets: 1, ranges: 1, bytes: outerIdx}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.cs.reset()
			f.read(t, tc.sel, tc.opt)
			if got := f.cs.economy(); got != tc.want {
				t.Errorf("store use %+v, want %+v\n%v", got, tc.want, f.cs.log)
			}
		})
	}
}

// TestMissingShard reads a shard that is not stored: fill value, one request.
func TestMissingShard(t *testing.T) {
	c, err := New([]int{2, 2}, rawInner, crcIndex, IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	fill := []byte{1, 2, 3, 4}
	l, err := c.Layout(codecs.ChunkRepr{Shape: []int{4, 4}, DType: dtype.TypeInt32, Fill: fill})
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{r: mem.New()}
	for _, sel := range []nd.Selection{
		{{Start: 0, Count: 4, Step: 1}, {Start: 0, Count: 4, Step: 1}},
		{{Start: 3, Count: 2, Step: -2}, {Start: 1, Count: 1, Step: 1}},
	} {
		cs.reset()
		got := make([]byte, sel.NumElements()*4)
		if err := readLayout(l, context.Background(), StoreSource(cs, "x", "nope"), sel, nd.Contiguous(got, sel.FullShape(), 4), ReadOptions{Cache: NewIndexCache(0)}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bytes.Repeat(fill, sel.NumElements())) {
			t.Fatalf("%v: not the fill value: %v", sel, got)
		}
		if cs.calls() != 1 {
			t.Fatalf("%v: %d store calls, want 1", sel, cs.calls())
		}
	}
}

// TestIndexSingleFlight: concurrent cold reads of one shard fetch its index once.
func TestIndexSingleFlight(t *testing.T) {
	f := newFixture(t, []int{32, 32}, []int{8, 8}, zstdInner, IndexEnd)
	cache := NewIndexCache(0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			sel := nd.Selection{{Start: 8 * (g % 4), Count: 8, Step: 1}, {Start: 8 * (g / 4), Count: 3, Step: 1}}
			got := make([]byte, sel.NumElements()*4)
			if err := readLayout(f.l, context.Background(), StoreSource(f.cs, "m", "s"), sel, nd.Contiguous(got, sel.FullShape(), 4), ReadOptions{Cache: cache}); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(got, extract(nd.Contiguous(f.data, []int{32, 32}, 4), sel)) {
				t.Error("wrong values")
			}
		})
	}
	wg.Wait()
	if e := f.cs.economy(); e.gets != 1 || e.multi != 8 {
		t.Fatalf("store use %+v, want 1 index get and 8 data calls", e)
	}
	if st := cache.Stats(); st.Entries != 1 || st.Hits+st.Misses != 8 {
		t.Fatalf("cache stats %+v", st)
	}
}

// TestIndexCacheBound checks eviction by bytes and invalidation.
func TestIndexCacheBound(t *testing.T) {
	ix := NewEmptyIndex(100) // 1600 + 64 bytes
	c := NewIndexCache(3 * MemSize(ix))
	for i := range 5 {
		c.Add("s", "k", int64(i), 0, ix)
	}
	st := c.Stats()
	if st.Entries != 3 || st.Bytes != 3*MemSize(ix) {
		t.Fatalf("stats %+v, want 3 entries", st)
	}
	if _, ok := c.Get("s", "k", 0, 0); ok {
		t.Fatal("oldest entry not evicted")
	}
	if _, ok := c.Get("s", "k", 4, 0); !ok {
		t.Fatal("newest entry evicted")
	}
	c.Add("s", "other", 0, 0, ix)
	c.Invalidate("s", "k")
	if st := c.Stats(); st.Entries != 1 || st.Bytes != MemSize(ix) {
		t.Fatalf("after Invalidate: %+v", st)
	}
	big := NewEmptyIndex(1000)
	c.Add("s", "big", 0, 0, big)
	if _, ok := c.Get("s", "big", 0, 0); ok {
		t.Fatal("an index larger than the bound was kept")
	}
}
