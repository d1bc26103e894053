package cache

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
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
// compressed, bounded by the compressed bytes (plus key and
// EntryOverhead), least recently used out first. Get decompresses into a
// fresh slice. Values that do not shrink are kept as they are. It is safe
// for concurrent use.
type Compressed struct {
	c   core[packed]
	opt CompressedOptions
	flight
}

// packed is one compressed value.
type packed struct {
	data []byte
	mode uint8 // stored raw, lz4 or zstd
}

const (
	modeRaw uint8 = iota
	modeLZ4
	modeZstd
)

var (
	zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
	zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true))
	lz4Pool    = sync.Pool{New: func() any { return new(lz4.Compressor) }}
	bufPool    sync.Pool // of *[]byte scratch
)

// getBuf returns a pooled scratch slice of length n.
func getBuf(n int) *[]byte {
	if p, ok := bufPool.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n)
	return &b
}

func putBuf(p *[]byte) { bufPool.Put(p) }

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

// pack shuffles and compresses value into a new exact-size slice.
func pack(value []byte, elem int, codec Codec) packed {
	src := value
	if elem > 1 && len(value) >= 2*elem {
		sp := getBuf(len(value))
		defer putBuf(sp)
		shuffle(*sp, value, elem)
		src = *sp
	}
	switch codec {
	case Zstd:
		dp := getBuf(zstdEnc.MaxEncodedSize(len(src)))
		defer putBuf(dp)
		out := zstdEnc.EncodeAll(src, (*dp)[:0])
		if len(out) < len(src) {
			return packed{data: append([]byte(nil), out...), mode: modeZstd}
		}
	default:
		dp := getBuf(lz4.CompressBlockBound(len(src)))
		defer putBuf(dp)
		c := lz4Pool.Get().(*lz4.Compressor)
		n, err := c.CompressBlock(src, *dp)
		lz4Pool.Put(c)
		if err == nil && n > 0 && n < len(src) {
			return packed{data: append([]byte(nil), (*dp)[:n]...), mode: modeLZ4}
		}
	}
	return packed{data: append([]byte(nil), src...), mode: modeRaw}
}

// unpack decompresses p into a new slice of n bytes and unshuffles it.
func unpack(p packed, n, elem int) ([]byte, error) {
	shuffled := elem > 1 && n >= 2*elem
	out := make([]byte, n)
	dst := out
	if shuffled {
		sp := getBuf(n)
		defer putBuf(sp)
		dst = *sp
	}
	switch p.mode {
	case modeRaw:
		if len(p.data) != n {
			return nil, fmt.Errorf("stored %d bytes, want %d", len(p.data), n)
		}
		copy(dst, p.data)
	case modeLZ4:
		k, err := lz4.UncompressBlock(p.data, dst)
		if err != nil {
			return nil, err
		}
		if k != n {
			return nil, fmt.Errorf("decompressed %d bytes, want %d", k, n)
		}
	case modeZstd:
		got, err := zstdDec.DecodeAll(p.data, dst[:0])
		if err != nil {
			return nil, err
		}
		if len(got) != n || (n > 0 && &got[0] != &dst[0]) {
			return nil, fmt.Errorf("decompressed %d bytes, want %d", len(got), n)
		}
	}
	if shuffled {
		unshuffle(out, dst, elem)
	}
	return out, nil
}

// shuffle writes src's bytes to dst grouped by their position within
// elements of elem bytes: byte b of element i goes to b*count + i. Bytes
// past the last whole element are copied as they are.
func shuffle(dst, src []byte, elem int) {
	count := len(src) / elem
	switch elem {
	case 4:
		d0 := dst[:count]
		d1, d2, d3 := dst[count : 2*count][:len(d0)], dst[2*count : 3*count][:len(d0)], dst[3*count : 4*count][:len(d0)]
		s := src[:4*len(d0)]
		for i := range d0 {
			x := binary.LittleEndian.Uint32(s[4*i:])
			d0[i], d1[i], d2[i], d3[i] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
		}
	default:
		for b := range elem {
			d := dst[b*count : (b+1)*count]
			for i := range count {
				d[i] = src[i*elem+b]
			}
		}
	}
	copy(dst[count*elem:], src[count*elem:])
}

// unshuffle inverts shuffle.
func unshuffle(dst, src []byte, elem int) {
	count := len(src) / elem
	switch elem {
	case 4:
		s0 := src[:count]
		s1, s2, s3 := src[count : 2*count][:len(s0)], src[2*count : 3*count][:len(s0)], src[3*count : 4*count][:len(s0)]
		d := dst[:4*len(s0)]
		for i := range s0 {
			binary.LittleEndian.PutUint32(d[4*i:], uint32(s0[i])|uint32(s1[i])<<8|uint32(s2[i])<<16|uint32(s3[i])<<24)
		}
	default:
		for b := range elem {
			s := src[b*count : (b+1)*count]
			for i := range count {
				dst[i*elem+b] = s[i]
			}
		}
	}
	copy(dst[count*elem:], src[count*elem:])
}

func (z *Compressed) has(key string) bool { return z.c.has(key) }

func (z *Compressed) touch(key string) bool { return z.c.touch(key) }
