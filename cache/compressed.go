package cache

import (
	"fmt"
	"sync"

	"github.com/gozarr/gozarr/codecs/blosc"
)

// Codec is the compressor of a Compressed cache.
type Codec uint8

const (
	// LZ4 is LZ4 block compression (github.com/pierrec/lz4/v4): the
	// fastest to decompress. The default.
	LZ4 Codec = iota
	// Zstd is zstd at its fastest level (klauspost/compress/zstd
	// SpeedFastest, about level 1): smaller, slower to decompress.
	Zstd
)

// String names the codec.
func (c Codec) String() string {
	if c == Zstd {
		return "zstd"
	}
	return "lz4"
}

// CompressedOptions configure a Compressed cache. The zero value is LZ4
// with no byte shuffle.
type CompressedOptions struct {
	// ElemSize is the element size values are byte-shuffled by before
	// compression (all first bytes of the elements, then all second
	// bytes, ...), which makes numeric data compress much better. AddElem
	// overrides it per value; ≤ 1 means no shuffle. Default 0.
	ElemSize int
	// Codec is the compressor. Default LZ4.
	Codec Codec
}

// Compressed is an in-memory cache that keeps each value byte-shuffled and
// compressed as a Blosc frame (codecs/blosc, with its SSE2 unshuffle), bounded by the compressed bytes (plus key and
// EntryOverhead), least recently used out first. Get decompresses into a
// fresh slice. Values that do not shrink are kept as they are. It is safe
// for concurrent use.
type Compressed struct {
	c   core[packed]
	opt CompressedOptions
	flight
}

// packed is one compressed value: a Blosc frame.
type packed struct {
	data []byte
}

// cname returns the Blosc inner codec of a Codec.
func (c Codec) cname() string {
	if c == Zstd {
		return blosc.Zstd
	}
	return blosc.LZ4
}

// NewCompressed returns an empty Compressed cache holding at most maxBytes
// of compressed values (plus keys and EntryOverhead per entry).
func NewCompressed(maxBytes int64, opt CompressedOptions) *Compressed {
	return &Compressed{c: newCore(max(0, maxBytes), func(en entry[packed]) ([]byte, error) {
		return unpack(en.v, int(en.raw), en.elem)
	}), opt: opt}
}

// Get implements Cache: it decompresses the value into a fresh slice. A
// value that fails to decompress is dropped, counted as an error and
// reported as a miss.
func (z *Compressed) Get(key string) ([]byte, bool) {
	v, _, ok := z.getElem(key)
	return v, ok
}

func (z *Compressed) getElem(key string) ([]byte, int, bool) {
	en, ok := z.c.get(key)
	if !ok {
		return nil, 0, false
	}
	v, err := unpack(en.v, int(en.raw), en.elem)
	if err != nil {
		z.c.fail(fmt.Errorf("%w: compressed entry %q: %v", ErrCache, key, err))
		z.c.del(key)
		return nil, 0, false
	}
	return v, en.elem, true
}

// Add implements Cache, shuffling by the options' ElemSize.
func (z *Compressed) Add(key string, value []byte) { z.AddElem(key, value, 0) }

// AddElem implements ElemAdder: value is shuffled by elemSize (≤ 0: the
// options' ElemSize) and compressed. The cache keeps only the compressed
// copy: value itself is not retained.
func (z *Compressed) AddElem(key string, value []byte, elemSize int) {
	if elemSize <= 0 {
		elemSize = z.opt.ElemSize
	}
	p := pack(value, elemSize, z.opt.Codec)
	dropped, _ := z.c.add(entry[packed]{key: key, v: p, w: weight(key, len(p.data)), raw: int64(len(value)), elem: elemSize})
	if len(dropped) > 0 {
		z.c.handDown(dropped, nil)
	}
}

// Remove implements Cache.
func (z *Compressed) Remove(key string) { z.c.del(key) }

// Stats implements Cache: Bytes counts compressed bytes, ValueBytes the
// decompressed sizes.
func (z *Compressed) Stats() Stats { return z.c.stats() }

func (z *Compressed) setOnEvict(f evictFunc, tr *transit) { z.c.setOnEvict(f, tr) }

// pack shuffles and compresses value into a Blosc frame (lz4 or zstd at
// level 1, byte shuffle by elem when elem > 1). Blosc stores data that does
// not shrink as it is, so a frame is at most 16 bytes over the value.
func pack(value []byte, elem int, codec Codec) packed {
	opt := blosc.Options{Cname: codec.cname(), Clevel: 1, Typesize: max(elem, 1)}
	if elem > 1 {
		opt.Shuffle = blosc.ByteShuffle
	}
	scratch := packPool.Get().(*[]byte)
	defer packPool.Put(scratch)
	if cap(*scratch) < len(value)+blosc.HeaderSize {
		*scratch = make([]byte, 0, len(value)+blosc.HeaderSize)
	}
	frame, err := blosc.Compress((*scratch)[:0], value, opt)
	if err != nil {
		// Options are fixed and valid; keep the value stored all the same.
		frame, _ = blosc.Compress((*scratch)[:0], value, blosc.Options{Cname: blosc.LZ4})
	}
	// An exact copy: the cache must hold only the compressed bytes, not a
	// buffer with room for the whole value.
	return packed{data: append([]byte(nil), frame...)}
}

// packPool holds the scratch buffers frames are compressed into.
var packPool = sync.Pool{New: func() any { return new([]byte) }}

// unpack decompresses p into a new slice of n bytes.
func unpack(p packed, n, _ int) ([]byte, error) {
	out, err := blosc.Decompress(make([]byte, 0, n), p.data, n)
	if err != nil {
		return nil, err
	}
	if len(out) != n {
		return nil, fmt.Errorf("decompressed %d bytes, want %d", len(out), n)
	}
	return out, nil
}

func (z *Compressed) has(key string) bool { return z.c.has(key) }

func (z *Compressed) touch(key string) bool { return z.c.touch(key) }
