package cache

import (
	"errors"
	"fmt"
	"runtime"
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
// compressed as a Blosc frame (codecs/blosc, with its SSE2 unshuffle),
// bounded by the compressed bytes (plus key and EntryOverhead), least
// recently used out first. Get decompresses into a fresh slice. Values that
// do not shrink are kept as they are (plus a 16-byte header).
//
// Frames of 4 KiB and more are kept outside the Go heap, so the cache's
// bytes do not raise the garbage collector's heap goal: resident memory
// stays close to the bound instead of up to twice it. A cache bounded by at
// most 64 GiB carves them from one reserved mapping (address space, not
// memory, until written) in 1 KiB grains; others map each frame of 16 KiB
// and more on its own (anonymous memory on Unix). Frames are freed when
// evicted or removed, once no Get is still reading them. It is safe for
// concurrent use.
type Compressed struct {
	c     core[*frame]
	opt   CompressedOptions
	arena *arena // nil: frames are mapped one by one
	flight
}

// maxArena is the largest bound a Compressed cache reserves one arena of
// address space for; larger (or unbounded) caches map frames one by one.
const maxArena = 64 << 30

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
	z := &Compressed{c: newCore(max(0, maxBytes), loadFrame), opt: opt}
	if maxBytes >= arenaMin && maxBytes <= maxArena {
		// Room for the bound plus fragmentation; frames that find none
		// are mapped on their own.
		if z.arena = newArena(roundBlock(maxBytes + maxBytes/4 + 1<<20)); z.arena != nil {
			runtime.AddCleanup(z, unmapBytes, z.arena.mem)
		}
	}
	z.c.pass = func(en entry[*frame]) (moved, func(), error) {
		if !en.v.retain() {
			return moved{}, nil, errFreed
		}
		return moved{packed: en.v, raw: int(en.raw), elem: en.elem}, en.v.release, nil
	}
	return z
}

// errFreed reports a frame freed by a concurrent eviction: a plain miss.
var errFreed = errors.New("cache: entry evicted meanwhile")

// loadFrame decompresses an entry's frame, holding a reference meanwhile.
func loadFrame(en entry[*frame]) ([]byte, error) {
	if !en.v.retain() {
		return nil, errFreed
	}
	defer en.v.release()
	return unpack(en.v.b, int(en.raw))
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
	v, err := loadFrame(en)
	if errors.Is(err, errFreed) {
		return nil, 0, false
	}
	if err != nil {
		z.c.fail(fmt.Errorf("%w: compressed entry %q: %v", ErrCache, key, err))
		z.removeEntry(key, en.v)
		return nil, 0, false
	}
	return v, en.elem, true
}

// removeEntry drops key if it still holds f.
func (z *Compressed) removeEntry(key string, f *frame) {
	if old, ok := z.c.delIf(key, func(en entry[*frame]) bool { return en.v == f }); ok {
		old.v.release()
	}
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
	f := z.pack(value, elemSize)
	dropped, _ := z.c.add(entry[*frame]{key: key, v: f, w: weight(key, f.size()), raw: int64(len(value)), elem: elemSize})
	if len(dropped) > 0 {
		z.c.handDown(dropped, func(en entry[*frame]) { en.v.release() })
	}
}

// Remove implements Cache.
func (z *Compressed) Remove(key string) {
	if en, ok := z.c.del(key); ok {
		en.v.release()
	}
}

// Stats implements Cache: Bytes counts compressed bytes (in the whole
// 1 KiB grains or pages frames occupy off the heap), ValueBytes the
// decompressed sizes.
func (z *Compressed) Stats() Stats { return z.c.stats() }

func (z *Compressed) setOnEvict(f evictFunc, tr *transit) { z.c.setOnEvict(f, tr) }

// pack shuffles and compresses value into a Blosc frame (lz4 or zstd at
// level 1, byte shuffle by elem when elem > 1). Blosc stores data that does
// not shrink as it is, so a frame is at most 16 bytes over the value.
func (z *Compressed) pack(value []byte, elem int) *frame {
	opt := blosc.Options{Cname: z.opt.Codec.cname(), Clevel: 1, Typesize: max(elem, 1)}
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
	if z.arena != nil && len(frame) >= arenaMin {
		if f := z.arena.frame(frame); f != nil {
			return f
		}
	}
	return newFrame(frame)
}

// packPool holds the scratch buffers frames are compressed into.
var packPool = sync.Pool{New: func() any { return new([]byte) }}

// unpack decompresses a Blosc frame into a new slice of n bytes.
func unpack(data []byte, n int) ([]byte, error) {
	out, err := blosc.Decompress(make([]byte, 0, n), data, n)
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

func (z *Compressed) fail(err error) { z.c.fail(err) }
