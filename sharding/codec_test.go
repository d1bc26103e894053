package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// TestRoundTrip encodes shards of several shapes, codecs and index places,
// with some inner chunks all fill, and decodes them whole and in part.
func TestRoundTrip(t *testing.T) {
	gzipInner := []codecs.Spec{bytesLE, spec("gzip", `{"level":1}`)}
	transposed := []codecs.Spec{spec("transpose", `{"order":[1,0]}`), bytesLE, spec("zstd", `{"level":1,"checksum":false}`)}
	bigEndian := []codecs.Spec{spec("bytes", `{"endian":"big"}`)}
	cases := []struct {
		name         string
		shape, chunk []int
		inner        []codecs.Spec
		loc          IndexLocation
		holes        []int
	}{
		{"2d zstd end", []int{12, 10}, []int{4, 5}, zstdInner, IndexEnd, []int{1, 4}},
		{"2d gzip start", []int{12, 10}, []int{4, 5}, gzipInner, IndexStart, []int{0}},
		{"2d raw start", []int{12, 10}, []int{3, 2}, rawInner, IndexStart, []int{7, 8, 9}},
		{"2d transpose inside", []int{8, 8}, []int{4, 4}, transposed, IndexEnd, nil},
		{"2d big-endian inner", []int{8, 6}, []int{4, 3}, bigEndian, IndexEnd, []int{3}},
		{"1d", []int{30}, []int{7 + 3}, zstdInner, IndexEnd, []int{2}},
		{"3d", []int{4, 6, 6}, []int{2, 3, 2}, rawInner, IndexEnd, []int{0, 5, 11}},
		{"single inner chunk", []int{5, 5}, []int{5, 5}, zstdInner, IndexStart, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.shape, tc.chunk, tc.inner, tc.loc, tc.holes...)
			for _, h := range tc.holes {
				if _, _, ok := f.ix.Entry(h); ok {
					t.Fatalf("fill chunk %d stored", h)
				}
			}
			present := 0
			for i := range f.ix.NumChunks() {
				if _, _, ok := f.ix.Entry(i); ok {
					present++
				}
			}
			if present != f.l.NumChunks()-len(tc.holes) {
				t.Fatalf("%d chunks stored, want %d", present, f.l.NumChunks()-len(tc.holes))
			}
			if len(f.enc) > f.l.MaxEncodedSize() {
				t.Fatalf("encoded %d bytes, MaxEncodedSize says %d", len(f.enc), f.l.MaxEncodedSize())
			}
			repr := f.l.Shard()
			got := make([]byte, repr.NumBytes())
			if err := f.l.Codec().Decode(got, f.enc, repr); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f.data) {
				t.Fatal("round trip differs")
			}
			// Encode appends to dst.
			prefix := []byte("prefix")
			enc2, err := f.l.Codec().Encode(slices.Clone(prefix), f.data, repr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc2[:len(prefix)], prefix) || !bytes.Equal(enc2[len(prefix):], f.enc) {
				t.Fatal("Encode does not append the same shard after dst")
			}
			r := rand.New(rand.NewPCG(3, 4))
			for range 40 {
				sel := randomSelection(r, tc.shape)
				f.read(t, sel, ReadOptions{Concurrency: 1 + r.IntN(3)})
			}
		})
	}
}

// randomSelection returns a random in-bounds selection of shape.
func randomSelection(r *rand.Rand, shape []int) nd.Selection {
	sel := make(nd.Selection, len(shape))
	for d, n := range shape {
		step := 1 + r.IntN(3)
		if r.IntN(4) == 0 {
			step = -step
		}
		start := r.IntN(n)
		var most int
		if step > 0 {
			most = (n-1-start)/step + 1
		} else {
			most = start/(-step) + 1
		}
		sel[d] = nd.Dim{Start: start, Count: 1 + r.IntN(most), Step: step}
	}
	return sel
}

// TestEmptyShard: a shard all fill is reported empty and encodes to an
// index of empty entries, which decodes to the fill value.
func TestEmptyShard(t *testing.T) {
	c, err := New([]int{2, 2}, zstdInner, crcIndex, IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	fill := []byte{0, 0, 0xc0, 0x7f} // float32 NaN
	repr := codecs.ChunkRepr{Shape: []int{4, 4}, DType: dtype.TypeFloat32, Fill: fill}
	l, err := c.Layout(repr)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat(fill, 16)
	enc, isEmpty, err := l.EncodeShard(nil, src)
	if err != nil || !isEmpty {
		t.Fatalf("EncodeShard: empty %v, err %v", isEmpty, err)
	}
	if len(enc) != l.IndexSize() || !bytes.Equal(enc[:64], bytes.Repeat([]byte{0xff}, 64)) {
		t.Fatalf("empty shard encodes to %x", enc)
	}
	got := make([]byte, 64)
	if err := c.Decode(got, enc, repr); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("Decode: %v", err)
	}
	// One element off the fill value makes its inner chunk (only) stored.
	src[4*5] = 1
	enc, isEmpty, err = l.EncodeShard(nil, src)
	if err != nil || isEmpty {
		t.Fatal(isEmpty, err)
	}
	ix, err := l.IndexOf(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got := chunkOrder(ix); !slices.Equal(got, []int{0}) {
		t.Fatalf("stored chunks %v, want [0]", got)
	}
}

// TestMortonOrder pins the write order against zarr-python's, as seen in
// the reference corpus (v3_shard_uncompressed_zero_chunks: 4x3 chunks).
func TestMortonOrder(t *testing.T) {
	tests := []struct {
		shape []int
		want  []int32
	}{
		{[]int{4, 3}, []int32{0, 3, 1, 4, 6, 9, 7, 10, 2, 5, 8, 11}},
		{[]int{2, 2}, []int32{0, 2, 1, 3}},
		{[]int{1, 4}, []int32{0, 1, 2, 3}},
		{[]int{3}, []int32{0, 1, 2}},
		{[]int{2, 1, 2}, []int32{0, 2, 1, 3}},
		{[]int{}, []int32{0}},
	}
	for _, tc := range tests {
		if got := MortonOrder(tc.shape); !slices.Equal(got, tc.want) {
			t.Errorf("MortonOrder(%v) = %v, want %v", tc.shape, got, tc.want)
		}
	}
}

// TestConfig checks the JSON configuration round trip and the errors of
// bad configurations.
func TestConfig(t *testing.T) {
	cfg := `{"chunk_shape":[2,3],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}`
	k, err := codecs.New(codecs.Spec{Name: Name, Configuration: json.RawMessage(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	c := k.(*Codec)
	if c.IndexLocation() != IndexEnd || !slices.Equal(c.ChunkShape(), []int{2, 3}) {
		t.Fatalf("parsed %+v", c.Configuration())
	}
	s, err := codecs.SpecOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"chunk_shape":[2,3],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}`; string(s.Configuration) != want {
		t.Fatalf("configuration %s\nwant %s", s.Configuration, want)
	}
	bad := []struct {
		name, cfg string
		want      error
	}{
		{"no config", ``, codecs.ErrInvalidConfig},
		{"no chunk_shape", `{"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}]}`, codecs.ErrInvalidConfig},
		{"zero chunk dim", `{"chunk_shape":[0],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}]}`, codecs.ErrInvalidConfig},
		{"bad location", `{"chunk_shape":[2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}],"index_location":"middle"}`, codecs.ErrInvalidConfig},
		{"unknown field", `{"chunk_shape":[2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}],"extra":1}`, codecs.ErrInvalidConfig},
		{"unknown inner codec", `{"chunk_shape":[2],"codecs":[{"name":"nope"}],"index_codecs":[{"name":"bytes"}]}`, codecs.ErrUnknownCodec},
		{"empty index codecs", `{"chunk_shape":[2],"codecs":[{"name":"bytes"}],"index_codecs":[]}`, codecs.ErrInvalidConfig},
	}
	for _, tc := range bad {
		_, err := codecs.New(codecs.Spec{Name: Name, Configuration: json.RawMessage(tc.cfg)})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	// Layout errors: shapes that do not fit, a variable-size index chain.
	repr := codecs.ChunkRepr{Shape: []int{4, 6}, DType: dtype.TypeUint8, Fill: []byte{0}}
	layoutBad := []struct {
		name  string
		chunk []int
		index []codecs.Spec
		repr  codecs.ChunkRepr
	}{
		{"not a multiple", []int{3, 3}, crcIndex, repr},
		{"rank mismatch", []int{2}, crcIndex, repr},
		{"gzip index", []int{2, 3}, []codecs.Spec{bytesLE, spec("gzip", `{"level":1}`)}, repr},
	}
	for _, tc := range layoutBad {
		c, err := New(tc.chunk, rawInner, tc.index, IndexEnd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Layout(tc.repr); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s: Layout error %v, want ErrInvalidConfig", tc.name, err)
		}
		if n := c.MaxEncodedSize(tc.repr); n != math.MaxInt {
			t.Errorf("%s: MaxEncodedSize %d", tc.name, n)
		}
	}
}

// badFixture is a 2x2-chunk shard of 2x2 uint8 inner chunks, uncompressed
// or zstd, index bytes+crc32c at the end.
func badLayout(t testing.TB, inner []codecs.Spec, loc IndexLocation) *Layout {
	t.Helper()
	c, err := New([]int{2, 2}, inner, crcIndex, loc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Layout(codecs.ChunkRepr{Shape: []int{4, 4}, DType: dtype.TypeUint8, Fill: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// craft builds a shard from data bytes and index entries (pairs), with a
// correct crc32c, the index at l's place.
func craft(t testing.TB, l *Layout, data []byte, entries ...uint64) []byte {
	t.Helper()
	idx, err := EncodeIndex(l, nil, entries)
	if err != nil {
		t.Fatal(err)
	}
	if l.Codec().IndexLocation() == IndexStart {
		return append(idx, data...)
	}
	return append(slices.Clone(data), idx...)
}

const E = math.MaxUint64

// TestBadInput runs hostile shards through Decode and Read: each a
// documented error, none a panic.
func TestBadInput(t *testing.T) {
	raw := badLayout(t, rawInner, IndexEnd)
	rawStart := badLayout(t, rawInner, IndexStart)
	z := badLayout(t, zstdInner, IndexEnd)
	four := []byte{1, 2, 3, 4}
	good := craft(t, raw, four, 0, 4, E, E, E, E, E, E)
	flipped := slices.Clone(good)
	flipped[len(flipped)-1] ^= 1
	flippedEntry := slices.Clone(good)
	flippedEntry[4+1] ^= 1 // nbytes of chunk 0, crc now wrong
	tests := []struct {
		name string
		l    *Layout
		b    []byte
		want error
	}{
		{"empty", raw, nil, ErrCorruptIndex},
		{"shorter than the index", raw, good[len(good)-10:], ErrCorruptIndex},
		{"index checksum mismatch", raw, flipped, codecs.ErrChecksum},
		{"entry changed under the checksum", raw, flippedEntry, codecs.ErrChecksum},
		{"chunk past the end", raw, craft(t, raw, four, 2, 4, E, E, E, E, E, E), ErrCorruptIndex},
		{"chunk into the index", raw, craft(t, raw, four, 4, 4, E, E, E, E, E, E), ErrCorruptIndex},
		{"chunk before the index at start", rawStart, craft(t, rawStart, four, 0, 4, E, E, E, E, E, E), ErrCorruptIndex},
		{"offset overflows", raw, craft(t, raw, four, 1<<63, 4, E, E, E, E, E, E), ErrCorruptIndex},
		{"offset+nbytes overflows", raw, craft(t, raw, four, 1<<62, 3<<62, E, E, E, E, E, E), ErrCorruptIndex},
		{"half-empty entry", raw, craft(t, raw, four, E, 4, E, E, E, E, E, E), ErrCorruptIndex},
		{"half-empty entry (offset)", raw, craft(t, raw, four, 0, E, E, E, E, E, E, E), ErrCorruptIndex},
		{"uncompressed chunk of the wrong size", raw, craft(t, raw, four, 0, 3, E, E, E, E, E, E), codecs.ErrCorrupt},
		{"corrupt inner chunk", z, craft(t, z, []byte("not zstd at all"), 0, 15, E, E, E, E, E, E), codecs.ErrCorrupt},
		{"empty inner chunk", z, craft(t, z, nil, 0, 0, E, E, E, E, E, E), codecs.ErrCorrupt},
	}
	full := nd.Selection{{Start: 0, Count: 4, Step: 1}, {Start: 0, Count: 4, Step: 1}}
	part := nd.Selection{{Start: 1, Count: 1, Step: 1}, {Start: 0, Count: 2, Step: 1}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, 16)
			err := tc.l.Codec().Decode(dst, tc.b, tc.l.Shard())
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode: %v, want %v", err, tc.want)
			}
			// From a local store (which tells a shard's size) the whole
			// index is checked, whatever a read needs.
			for _, sel := range []nd.Selection{full, part} {
				out := make([]byte, sel.NumElements())
				err := readLayout(tc.l, context.Background(), BytesSource(tc.b), sel, nd.Contiguous(out, sel.FullShape(), 1), ReadOptions{})
				if !errors.Is(err, tc.want) {
					t.Fatalf("Read %v: %v, want %v", sel, err, tc.want)
				}
			}
			// From a remote store (whose shard sizes are unknown) only the
			// chunks a selection needs are checked: read what the bad entry
			// names.
			f := &fixture{l: tc.l, cs: &countingStore{r: memWith(t, "s", tc.b)}}
			out := make([]byte, 16)
			err = readLayout(f.l, context.Background(), StoreSource(f.cs, "", "s"), full, nd.Contiguous(out, []int{4, 4}, 1), ReadOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Read from a store: %v, want %v", err, tc.want)
			}
		})
	}
	// Sanity: the good shard decodes.
	dst := make([]byte, 16)
	if err := raw.Codec().Decode(dst, good, raw.Shard()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, []byte{1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("decoded %v", dst)
	}
}

// TestTruncatedStoredShard: an index read by range from a remote store
// (whose shard sizes are unknown) cannot check offsets against the shard's
// size; the short data read is the error. A local store tells the size, and
// the whole index is refused.
func TestTruncatedStoredShard(t *testing.T) {
	raw := badLayout(t, rawInner, IndexStart)
	b := craft(t, raw, []byte{1, 2, 3, 4}, uint64(raw.IndexSize()), 4, uint64(raw.IndexSize()+4), 4, E, E, E, E)
	local := memWith(t, "s", b) // chunk 1 names bytes past the end
	one := nd.Selection{{Start: 0, Count: 2, Step: 1}, {Start: 0, Count: 2, Step: 1}}
	if err := readLayout(raw, context.Background(), StoreSource(local, "", "s"), one, nd.Contiguous(make([]byte, 4), []int{2, 2}, 1), ReadOptions{}); !errors.Is(err, ErrCorruptIndex) {
		t.Fatalf("local store: %v, want ErrCorruptIndex", err)
	}
	s := &countingStore{r: local}
	for _, sel := range []nd.Selection{
		{{Start: 0, Count: 2, Step: 1}, {Start: 2, Count: 2, Step: 1}},
		{{Start: 1, Count: 1, Step: 1}, {Start: 3, Count: 1, Step: 1}},
	} {
		out := make([]byte, sel.NumElements())
		err := readLayout(raw, context.Background(), StoreSource(s, "", "s"), sel, nd.Contiguous(out, sel.FullShape(), 1), ReadOptions{})
		if !errors.Is(err, ErrCorruptIndex) {
			t.Fatalf("%v: %v, want ErrCorruptIndex", sel, err)
		}
	}
	// The intact chunk still reads.
	sel := nd.Selection{{Start: 0, Count: 2, Step: 1}, {Start: 0, Count: 2, Step: 1}}
	out := make([]byte, 4)
	if err := readLayout(raw, context.Background(), StoreSource(s, "", "s"), sel, nd.Contiguous(out, []int{2, 2}, 1), ReadOptions{}); err != nil || !bytes.Equal(out, []byte{1, 2, 3, 4}) {
		t.Fatalf("%v %v", out, err)
	}
}

// TestOverlappingChunks: the specification does not forbid two entries
// naming the same bytes; such a shard reads.
func TestOverlappingChunks(t *testing.T) {
	raw := badLayout(t, rawInner, IndexEnd)
	b := craft(t, raw, []byte{1, 2, 3, 4, 5, 6}, 0, 4, 2, 4, 0, 4, E, E)
	dst := make([]byte, 16)
	if err := raw.Codec().Decode(dst, b, raw.Shard()); err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 2, 3, 4, 3, 4, 5, 6, 1, 2, 0, 0, 3, 4, 0, 0}
	if !bytes.Equal(dst, want) {
		t.Fatalf("decoded %v, want %v", dst, want)
	}
}

// TestReadArgs: selections and views that do not fit are ErrSelection.
func TestReadArgs(t *testing.T) {
	raw := badLayout(t, rawInner, IndexEnd)
	ok := nd.Selection{{Start: 0, Count: 2, Step: 1}, {Start: 0, Count: 2, Step: 1}}
	tests := []struct {
		name string
		sel  nd.Selection
		dst  nd.View
	}{
		{"rank", nd.Selection{{Start: 0, Count: 2, Step: 1}}, nd.Contiguous(make([]byte, 2), []int{2}, 1)},
		{"past the end", nd.Selection{{Start: 3, Count: 2, Step: 1}, {Start: 0, Count: 2, Step: 1}}, nd.Contiguous(make([]byte, 4), []int{2, 2}, 1)},
		{"negative start", nd.Selection{{Start: -1, Count: 1, Step: 1}, {Start: 0, Count: 2, Step: 1}}, nd.Contiguous(make([]byte, 2), []int{1, 2}, 1)},
		{"zero step", nd.Selection{{Start: 0, Count: 2, Step: 0}, {Start: 0, Count: 2, Step: 1}}, nd.Contiguous(make([]byte, 4), []int{2, 2}, 1)},
		{"view shape", ok, nd.Contiguous(make([]byte, 4), []int{4, 1}, 1)},
		{"item size", ok, nd.Contiguous(make([]byte, 8), []int{2, 2}, 2)},
	}
	for _, tc := range tests {
		err := readLayout(raw, context.Background(), BytesSource(nil), tc.sel, tc.dst, ReadOptions{})
		if !errors.Is(err, ErrSelection) {
			t.Errorf("%s: %v, want ErrSelection", tc.name, err)
		}
	}
}

// TestReadCancelled: a cancelled context stops Read before any I/O.
func TestReadCancelled(t *testing.T) {
	f := newFixture(t, []int{16, 16}, []int{4, 4}, zstdInner, IndexEnd)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sel := box([]int{4, 4}, []int{0, 0}, []int{2, 2})
	out := make([]byte, sel.NumElements()*4)
	err := readLayout(f.l, ctx, StoreSource(f.cs, "", "s"), sel, nd.Contiguous(out, sel.FullShape(), 4), ReadOptions{Concurrency: 4})
	if !errors.Is(err, context.Canceled) || f.cs.calls() != 0 {
		t.Fatalf("err %v after %d calls", err, f.cs.calls())
	}
}

// TestDecodeIndexSizes: DecodeIndex checks the index and shard sizes.
func TestDecodeIndexSizes(t *testing.T) {
	raw := badLayout(t, rawInner, IndexEnd)
	b := craft(t, raw, nil, E, E, E, E, E, E, E, E)
	if _, err := raw.DecodeIndex(b, -1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b    []byte
		size int64
	}{{b[1:], -1}, {append(slices.Clone(b), 0), -1}, {b, int64(len(b) - 1)}} {
		if _, err := raw.DecodeIndex(tc.b, tc.size); !errors.Is(err, ErrCorruptIndex) {
			t.Errorf("%d bytes, shard %d: %v", len(tc.b), tc.size, err)
		}
	}
	ix, _ := raw.DecodeIndex(b, int64(len(b)))
	if !ix.IsEmpty() || ix.NumChunks() != 4 {
		t.Fatal("empty index not empty")
	}
	if binary.LittleEndian.Uint64(b) != E {
		t.Fatal("empty entries are not 2^64-1")
	}
}
