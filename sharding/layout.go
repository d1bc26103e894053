package sharding

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/nd"
)

// empty is the index value of a missing inner chunk (both halves).
const empty = math.MaxUint64

// Layout is a Codec resolved for one shard representation: the inner chain
// (resolved for the inner chunk), the index chain, the number of inner
// chunks per shard along each dimension, the index size and where it sits.
// Resolve it once per array with Codec.Layout. A Layout is immutable and
// safe for concurrent use.
type Layout struct {
	codec      *Codec
	shard      codecs.ChunkRepr
	chunkShape []int
	perShard   []int // inner chunks per shard along each dimension
	cpsStrides []int // C-order strides of the inner chunk grid
	n          int   // inner chunks per shard
	inner      *codecs.Chain
	innerBytes int // decoded size of one inner chunk
	index      *codecs.Chain
	indexSize  int // encoded index size in bytes
	orderOnce  sync.Once
	order      []int32 // write order (writeOrder): linear (C-order) inner chunk indexes in Morton order
	nested     *Layout // the inner chain's layout when it is sharding_indexed alone
	identity   bool    // inner chunks are stored as their decoded bytes
	fill       []byte
	itemSize   int
}

// Layout resolves the codec for shards of representation shard. The
// shard's shape must have one entry per inner chunk dimension, each a
// multiple of the inner chunk's; the index chain must have a fixed encoded
// size. Errors wrap codecs.ErrInvalidConfig (or the inner chain's errors).
// It is the codec prepared with no options (PrepareArrayToBytes); a chain
// prepares it itself, once, and sharding.LayoutOf returns that layout.
func (c *Codec) Layout(shard codecs.ChunkRepr) (*Layout, error) {
	return c.prepare(shard, codecs.PrepareOptions{})
}

// prepare resolves the codec for shards of representation shard, its
// inner chain prepared with opts.
func (c *Codec) prepare(shard codecs.ChunkRepr, opts codecs.PrepareOptions) (*Layout, error) {
	if len(shard.Shape) != len(c.chunkShape) {
		return nil, fmt.Errorf("%w: sharding_indexed: chunk_shape %v has %d dimensions, shard shape %v has %d",
			codecs.ErrInvalidConfig, c.chunkShape, len(c.chunkShape), shard.Shape, len(shard.Shape))
	}
	l := &Layout{codec: c, shard: shard, chunkShape: c.chunkShape, fill: shard.Fill, itemSize: shard.DType.Size()}
	l.shard.Shape = append([]int{}, shard.Shape...)
	l.perShard = make([]int, len(shard.Shape))
	l.n = 1
	for d, s := range shard.Shape {
		if s%c.chunkShape[d] != 0 {
			return nil, fmt.Errorf("%w: sharding_indexed: shard shape %v is not a multiple of the inner chunk shape %v (the codec's chunk_shape)",
				codecs.ErrInvalidConfig, shard.Shape, c.chunkShape)
		}
		l.perShard[d] = s / c.chunkShape[d]
		if l.perShard[d] != 0 && l.n > MaxInnerChunks/l.perShard[d] {
			return nil, fmt.Errorf("%w: sharding_indexed: %v inner chunks per shard, more than MaxInnerChunks (%d)", codecs.ErrInvalidConfig, l.perShard, MaxInnerChunks)
		}
		l.n *= l.perShard[d]
	}
	l.cpsStrides = nd.CStrides(l.perShard, 1)
	innerRepr := codecs.ChunkRepr{Shape: c.chunkShape, DType: shard.DType, Fill: shard.Fill}
	var err error
	if l.inner, err = codecs.Prepare(c.inner, innerRepr, opts); err != nil {
		return nil, fmt.Errorf("sharding_indexed codecs: %w", err)
	}
	l.innerBytes = innerRepr.NumBytes()
	l.identity = l.inner.Identity()
	l.nested, _ = LayoutOf(l.inner) // prepared with the inner chain
	fillIdx := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	indexRepr := codecs.ChunkRepr{Shape: append(append([]int{}, l.perShard...), 2), DType: dtype.TypeUint64, Fill: fillIdx}
	if l.index, err = codecs.Prepare(c.index, indexRepr, codecs.PrepareOptions{}); err != nil {
		return nil, fmt.Errorf("sharding_indexed index_codecs: %w", err)
	}
	// The index must have a fixed encoded size: its chain's bound, which
	// the chain declares (no index is encoded to find out, so opening a
	// shard of many inner chunks costs nothing).
	if !l.index.FixedSize() {
		return nil, fmt.Errorf("%w: sharding_indexed: index_codecs must have a fixed encoded size", codecs.ErrInvalidConfig)
	}
	l.indexSize = l.index.MaxEncodedSize()
	return l, nil
}

// MaxInnerChunks is the most inner chunks a shard may have: 2^22, whose
// index alone takes 64 MiB. A reader fetches and decodes a shard's whole
// index before any inner chunk, so a larger one would cost its size in
// memory and transfer for every shard read; such layouts are refused when
// the array is opened.
const MaxInnerChunks = 1 << 22

// writeOrder returns the order inner chunks are written in (mortonOrder),
// computed on the first write.
func (l *Layout) writeOrder() []int32 {
	l.orderOnce.Do(func() { l.order = mortonOrder(l.perShard) })
	return l.order
}

// mortonOrder returns the linear (C-order) indexes of a grid of the given
// shape sorted by their compressed Morton code: bit b of every dimension
// that still has a bit b, dimension 0 lowest, then bit b+1, ... This is the
// order zarr-python writes inner chunks in. Grids too large for a 64-bit
// code keep C order.
func mortonOrder(shape []int) []int32 {
	n := nd.NumElements(shape)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	nbits := make([]int, len(shape))
	total, maxBits := 0, 0
	for d, s := range shape {
		if s > 1 {
			nbits[d] = bits.Len(uint(s - 1))
		}
		total += nbits[d]
		maxBits = max(maxBits, nbits[d])
	}
	if total > 63 || n <= 1 {
		return order
	}
	keys := make([]uint64, n)
	coords := make([]int, len(shape))
	for i := range n {
		var key uint64
		out := 0
		for b := range maxBits {
			for d := range shape {
				if b < nbits[d] {
					key |= uint64((coords[d]>>b)&1) << out
					out++
				}
			}
		}
		keys[i] = key
		for d := len(shape) - 1; d >= 0; d-- { // next C-order coordinate
			coords[d]++
			if coords[d] < shape[d] {
				break
			}
			coords[d] = 0
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if keys[a] < keys[b] {
			return -1
		}
		if keys[a] > keys[b] {
			return 1
		}
		return 0
	})
	return order
}

// Codec returns the codec the layout was resolved from.
func (l *Layout) Codec() *Codec { return l.codec }

// Shard returns the shard representation the layout was resolved for.
func (l *Layout) Shard() codecs.ChunkRepr { return l.shard }

// ChunkShape returns the inner chunk shape (do not modify).
func (l *Layout) ChunkShape() []int { return l.chunkShape }

// ChunksPerShard returns the number of inner chunks along each dimension
// (do not modify).
func (l *Layout) ChunksPerShard() []int { return l.perShard }

// NumChunks returns the number of inner chunks in a shard.
func (l *Layout) NumChunks() int { return l.n }

// Inner returns the inner codec chain, resolved for one inner chunk.
func (l *Layout) Inner() *codecs.Chain { return l.inner }

// Nested returns the layout of the inner shards when the inner chain is
// sharding_indexed alone, else nil.
func (l *Layout) Nested() *Layout { return l.nested }

// IndexSize returns the encoded size of the index in bytes.
func (l *Layout) IndexSize() int { return l.indexSize }

// MaxEncodedSize returns the index size plus the inner chain's bound for
// every inner chunk, saturating at math.MaxInt.
func (l *Layout) MaxEncodedSize() int {
	per := l.inner.MaxEncodedSize()
	if per > 0 && l.n > (math.MaxInt-l.indexSize)/per {
		return math.MaxInt
	}
	return l.indexSize + l.n*per
}

// Index is a decoded, validated shard index: for every inner chunk (in C
// order of its coordinates within the shard) either an (offset, nbytes)
// pair, relative to the start of the shard, or "missing". An Index is
// immutable and safe for concurrent use.
type Index struct {
	e []int64 // offset, nbytes per inner chunk; -1, -1 when missing
}

// NumChunks returns the number of entries.
func (ix *Index) NumChunks() int { return len(ix.e) / 2 }

// Entry returns the place of inner chunk i (C-order linear index within the
// shard), or ok == false when it is missing (reads as the fill value).
func (ix *Index) Entry(i int) (offset, nbytes int64, ok bool) {
	off, n := ix.e[2*i], ix.e[2*i+1]
	return off, n, off >= 0
}

// IsEmpty reports whether every inner chunk is missing.
func (ix *Index) IsEmpty() bool {
	for i := 0; i < len(ix.e); i += 2 {
		if ix.e[i] >= 0 {
			return false
		}
	}
	return true
}

// memSize is the number of bytes the index holds in memory (for caches).
func (ix *Index) memSize() int64 { return int64(8*len(ix.e)) + 64 }

// DecodeIndex decodes and validates an encoded index b (exactly
// IndexSize() bytes). shardSize is the size of the whole shard when known,
// or -1: entries are then checked for overflow and against the index
// region as far as possible, and the reader checks the rest when it reads
// the chunks. Errors: ErrCorruptIndex, codecs.ErrChecksum (from a crc32c
// index codec), or the index chain's own errors.
func (l *Layout) DecodeIndex(b []byte, shardSize int64) (*Index, error) {
	if len(b) != l.indexSize {
		return nil, fmt.Errorf("%w: index has %d bytes, want %d", ErrCorruptIndex, len(b), l.indexSize)
	}
	if shardSize >= 0 && shardSize < int64(l.indexSize) {
		return nil, fmt.Errorf("%w: shard of %d bytes is shorter than its %d-byte index", ErrCorruptIndex, shardSize, l.indexSize)
	}
	bufp := getScratch(16 * l.n)
	defer putScratch(bufp)
	raw := *bufp
	if err := l.index.Decode(raw, b); err != nil {
		return nil, fmt.Errorf("shard index: %w", err)
	}
	// The region chunks may occupy: [lo, hi).
	lo, hi := int64(0), int64(math.MaxInt64)
	if l.codec.loc == IndexStart {
		lo = int64(l.indexSize)
		if shardSize >= 0 {
			hi = shardSize
		}
	} else if shardSize >= 0 {
		hi = shardSize - int64(l.indexSize)
	}
	ix := &Index{e: make([]int64, 2*l.n)}
	for i := range l.n {
		off := binary.LittleEndian.Uint64(raw[16*i:])
		n := binary.LittleEndian.Uint64(raw[16*i+8:])
		if off == empty && n == empty {
			ix.e[2*i], ix.e[2*i+1] = -1, -1
			continue
		}
		if off > math.MaxInt64 || n > math.MaxInt64 || off > math.MaxInt64-n {
			return nil, fmt.Errorf("%w: inner chunk %v: offset %d + nbytes %d overflows", ErrCorruptIndex, l.coords(i), off, n)
		}
		if int64(off) < lo || int64(off+n) > hi {
			return nil, fmt.Errorf("%w: inner chunk %v: bytes [%d, %d) outside the chunk region [%d, %d) of the shard",
				ErrCorruptIndex, l.coords(i), off, off+n, lo, hi)
		}
		ix.e[2*i], ix.e[2*i+1] = int64(off), int64(n)
	}
	return ix, nil
}

// coords returns the coordinates within the shard of inner chunk i.
func (l *Layout) coords(i int) []int {
	c := make([]int, len(l.perShard))
	for d := range c {
		c[d] = i / l.cpsStrides[d]
		i %= l.cpsStrides[d]
	}
	return c
}

// encodeIndex appends the encoded index of entries (2 per chunk, as
// uint64, empty = math.MaxUint64) to dst.
func (l *Layout) encodeIndex(dst []byte, entries []uint64) ([]byte, error) {
	bufp := getScratch(16 * l.n)
	defer putScratch(bufp)
	raw := *bufp
	for i, v := range entries {
		binary.LittleEndian.PutUint64(raw[8*i:], v)
	}
	out, err := l.index.Encode(dst, raw)
	if err != nil {
		return nil, fmt.Errorf("shard index: %w", err)
	}
	return out, nil
}

// EncodeShard appends the encoding of the whole shard src (C order,
// Shard().NumBytes() bytes) to dst: inner chunks that are not byte for byte
// the fill value, encoded with the inner chain, in Morton order, and the
// index where the codec puts it. empty reports that every inner chunk was
// fill; out then holds a valid index-only shard, but zarr-python (and the
// gozarr pipeline) delete the shard's key instead of storing it. It runs on
// the calling goroutine, with pooled scratch buffers; package pipeline
// encodes the inner chunks of a shard concurrently with a Builder.
func (l *Layout) EncodeShard(dst, src []byte) (out []byte, empty bool, err error) {
	if len(src) != l.shard.NumBytes() {
		return nil, false, fmt.Errorf("sharding_indexed: Encode of %d bytes, shard has %d", len(src), l.shard.NumBytes())
	}
	b := l.NewBuilder(dst)
	shardView := nd.Contiguous(src, l.shard.Shape, l.itemSize)
	scratch := getScratch(l.innerBytes)
	defer putScratch(scratch)
	for _, lin := range l.WriteOrder() {
		chunk := l.InnerChunk(shardView, int(lin), *scratch)
		if nd.IsFilled(chunk, l.fill) {
			continue
		}
		if err := b.Encode(int(lin), chunk); err != nil {
			return nil, false, err
		}
	}
	return b.Finish()
}

// InnerChunk returns the bytes of inner chunk lin (C-order index) of the
// whole decoded shard shard: a slice of shard's data when they are
// contiguous there, else gathered into scratch (InnerBytes() long).
func (l *Layout) InnerChunk(shard nd.View, lin int, scratch []byte) []byte {
	start := make([]int, len(l.chunkShape))
	ones := make([]int, len(l.chunkShape))
	for d := range start {
		start[d] = lin / l.cpsStrides[d] * l.chunkShape[d]
		lin %= l.cpsStrides[d]
		ones[d] = 1
	}
	sub := shard.Slice(start, l.chunkShape, ones)
	if chunk, ok := sub.IsContiguous(); ok {
		return chunk
	}
	nd.Copy(nd.Contiguous(scratch, l.chunkShape, l.itemSize), sub)
	return scratch[:l.innerBytes]
}

// WriteOrder returns the order inner chunks are written in, as zarr-python
// writes them: their C-order indexes in Morton order (do not modify). It is
// computed on first use.
func (l *Layout) WriteOrder() []int32 { return l.writeOrder() }

// IsFill reports whether the decoded inner chunk b is all fill value, byte
// for byte: such inner chunks are not stored.
func (l *Layout) IsFill(b []byte) bool { return nd.IsFilled(b, l.fill) }

// Builder assembles one encoded shard from its inner chunks, which are
// appended in write order (WriteOrder) as encodings (Append) or encoded on
// the spot (Encode); chunks never appended are missing (fill value). A
// writer may encode inner chunks concurrently and append them in order. A
// Builder is not safe for concurrent use.
type Builder struct {
	l       *Layout
	entries []uint64
	base    int
	out     []byte
	empty   bool
}

// NewBuilder starts a shard at the end of dst.
func (l *Layout) NewBuilder(dst []byte) *Builder {
	entries, base, out := l.beginShard(dst)
	return &Builder{l: l, entries: entries, base: base, out: out, empty: true}
}

// Append adds the encoded inner chunk enc at C-order index lin.
func (b *Builder) Append(lin int, enc []byte) {
	before := len(b.out)
	b.out = append(b.out, enc...)
	b.entries[2*lin], b.entries[2*lin+1] = uint64(before-b.base), uint64(len(enc))
	b.empty = false
}

// Encode encodes the decoded inner chunk chunk (InnerBytes() bytes) with
// the inner chain straight into the shard, at C-order index lin.
func (b *Builder) Encode(lin int, chunk []byte) error {
	before := len(b.out)
	out, err := b.l.inner.Encode(b.out, chunk)
	if err != nil {
		return fmt.Errorf("inner chunk %v: %w", b.l.coords(lin), err)
	}
	b.out = out
	b.entries[2*lin], b.entries[2*lin+1] = uint64(before-b.base), uint64(len(out)-before)
	b.empty = false
	return nil
}

// Finish writes the index and returns the shard (appended to the dst given
// to NewBuilder). empty reports that no inner chunk was appended: out is
// then a valid index-only shard, which writers delete instead of storing.
func (b *Builder) Finish() (out []byte, empty bool, err error) {
	l := b.l
	if l.codec.loc == IndexStart {
		enc, err := l.encodeIndex(nil, b.entries)
		if err != nil {
			return nil, false, err
		}
		copy(b.out[b.base:b.base+l.indexSize], enc)
		return b.out, b.empty, nil
	}
	if b.out, err = l.encodeIndex(b.out, b.entries); err != nil {
		return nil, false, err
	}
	return b.out, b.empty, nil
}

// fullSelection selects the whole shard.
func (l *Layout) fullSelection() nd.Selection {
	sel := make(nd.Selection, len(l.shard.Shape))
	for d, s := range l.shard.Shape {
		sel[d] = nd.Dim{Start: 0, Count: s, Step: 1}
	}
	return sel
}

// getScratch returns a pooled buffer of length n (internal/bufpool, the
// one pool of the library's large buffers), with spare capacity for the
// inner decoders (codecs.DecodeSlack).
func getScratch(n int) *[]byte {
	b := bufpool.Get(n + codecs.DecodeSlack)
	*b = (*b)[:n]
	return b
}

// putScratch returns a buffer from getScratch to the pool.
func putScratch(b *[]byte) { bufpool.Put(b) }

// beginShard starts a shard at the end of dst: index entries all empty, the
// offset the shard starts at, and dst with room for the index when it
// comes first.
func (l *Layout) beginShard(dst []byte) (entries []uint64, base int, out []byte) {
	entries = make([]uint64, 2*l.n)
	for i := range entries {
		entries[i] = math.MaxUint64
	}
	base = len(dst)
	if l.codec.loc == IndexStart {
		dst = append(dst, make([]byte, l.indexSize)...)
	}
	return entries, base, dst
}

// UpdateInner builds in scratch (InnerBytes() long) the decoded inner
// chunk that part p of it replaced by src gives: the stored encoding
// decoded (fill value when stored is nil) unless p covers it whole, then
// src copied into p's place. It returns nil when the result is all fill
// (the inner chunk is then not stored).
func (l *Layout) UpdateInner(scratch, stored []byte, p nd.ChunkPart, src nd.View) ([]byte, error) {
	scratch = scratch[:l.innerBytes]
	chunkView := nd.Contiguous(scratch, l.chunkShape, l.itemSize)
	switch {
	case p.IsWhole(l.chunkShape):
	case stored != nil:
		if err := l.inner.Decode(scratch, stored); err != nil {
			return nil, fmt.Errorf("inner chunk %v: %w", p.Coords, err)
		}
	default:
		nd.Fill(chunkView, l.fill)
	}
	p.CopyIn(chunkView, src)
	if nd.IsFilled(scratch, l.fill) {
		return nil, nil
	}
	return scratch, nil
}
