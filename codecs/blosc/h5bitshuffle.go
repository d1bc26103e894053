package blosc

// The bitshuffle codec (bytes -> bytes): the bitshuffle library's HDF5
// filter (32008, as h5py with hdf5plugin or the bitshuffle package write
// it), for virtual references to HDF5 chunks. It lives here because its
// bit transpose is blosc's.
//
// Format (https://github.com/kiyo-masui/bitshuffle, src/bshuf_h5filter.c
// and src/bitshuffle.c): the chunk's elements (elementsize bytes each) in
// blocks of blocksize elements (a multiple of 8; 0 means the library's
// default, 8192 bytes' worth rounded down to a multiple of 8 and at least
// 128), the last block cut down to a multiple of 8 elements; each block
// bit-shuffled as blosc's bitshuffle lays it out (bit i of row 8j+b is bit
// b of byte j of element i); the elements past the last block, and any
// bytes past the last element, stored as they are. With "cname": "lz4" or
// "zstd" the chunk starts with its decoded size (8 bytes, big-endian) and
// the block size in bytes (4 bytes, big-endian), and each block is stored
// as its compressed size (4 bytes, big-endian) and one raw LZ4 block or
// one zstd frame.
// JSON name: "numcodecs.bitshuffle" (Zarr v2 id "bitshuffle")
// Configuration example (the HDF5 filter's cd_values 2, 3 and 4):
//
//	{"name": "numcodecs.bitshuffle", "configuration": {"elementsize": 4, "blocksize": 0, "cname": "lz4"}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/pierrec/lz4/v4"
)

// H5Bitshuffle is the "numcodecs.bitshuffle" codec. Decoding checks the
// decoded size against the limit before allocating and every block's size
// against the input. An H5Bitshuffle is immutable and safe for concurrent
// use.
type H5Bitshuffle struct {
	elem      int
	blocksize int    // elements, 0: the default
	cname     string // "none", "lz4" or "zstd"
}

// NewH5Bitshuffle returns the codec for elements of elementsize bytes in
// blocks of blocksize elements (0: the library's default; else a multiple
// of 8), with the inner compressor cname: "none", "lz4" or "zstd".
func NewH5Bitshuffle(elementsize, blocksize int, cname string) (*H5Bitshuffle, error) {
	const name = "numcodecs.bitshuffle"
	if elementsize < 1 || elementsize > MaxTypeSize {
		return nil, fmt.Errorf("%w: %s: elementsize %d is not in 1..%d", codecs.ErrInvalidConfig, name, elementsize, MaxTypeSize)
	}
	if blocksize < 0 || blocksize%8 != 0 || blocksize > 1<<28 {
		return nil, fmt.Errorf("%w: %s: blocksize %d is not 0 or a multiple of 8", codecs.ErrInvalidConfig, name, blocksize)
	}
	switch cname {
	case "", "none":
		cname = "none"
	case "lz4", "zstd":
	default:
		return nil, fmt.Errorf("%w: %s: cname %q (want none, lz4 or zstd)", codecs.ErrInvalidConfig, name, cname)
	}
	return &H5Bitshuffle{elem: elementsize, blocksize: blocksize, cname: cname}, nil
}

func init() {
	codecs.Register("numcodecs.bitshuffle", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Elementsize *int   `json:"elementsize"`
			Blocksize   int    `json:"blocksize"`
			Cname       string `json:"cname"`
			Clevel      *int   `json:"clevel"` // zstd's level when encoding
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Elementsize == nil {
			return nil, fmt.Errorf("%w: numcodecs.bitshuffle: no elementsize", codecs.ErrInvalidConfig)
		}
		return NewH5Bitshuffle(*cfg.Elementsize, cfg.Blocksize, cfg.Cname)
	})
}

// Name returns "numcodecs.bitshuffle".
func (c *H5Bitshuffle) Name() string { return "numcodecs.bitshuffle" }

// Configuration returns {"elementsize", "blocksize", "cname"}.
func (c *H5Bitshuffle) Configuration() any {
	return struct {
		Elementsize int    `json:"elementsize"`
		Blocksize   int    `json:"blocksize"`
		Cname       string `json:"cname"`
	}{c.elem, c.blocksize, c.cname}
}

// blockElems returns the block size in elements.
func (c *H5Bitshuffle) blockElems() int {
	if c.blocksize > 0 {
		return c.blocksize
	}
	return defaultBshufBlock(c.elem)
}

// defaultBshufBlock is bshuf_default_block_size.
func defaultBshufBlock(elem int) int {
	return max(8192/elem/8*8, 128)
}

// MaxEncodedSize returns the header and every block at LZ4's or zstd's
// worst case with its size (n itself without compression).
func (c *H5Bitshuffle) MaxEncodedSize(n int) int {
	n = max(n, 0)
	if c.cname == "none" {
		return n
	}
	bb := c.blockElems() * c.elem
	nb := n/bb + 1
	return 12 + n + nb*(4+lz4.CompressBlockBound(bb)-bb) + nb*64
}

// blocks calls fn for each block of a chunk of n bytes: its byte offset
// and length (whole elements, a multiple of 8 of them), and returns where
// the bytes stored as they are start.
func blocks(n, elem, bs int, fn func(off, size int) error) (int, error) {
	elems := n / elem
	off := 0
	for e := 0; e < elems; {
		k := min(bs, elems-e)
		k -= k % 8
		if k == 0 {
			break
		}
		if err := fn(off, k*elem); err != nil {
			return off, err
		}
		off += k * elem
		e += k
	}
	return off, nil
}

// Encode appends the filter's encoding of src to dst.
func (c *H5Bitshuffle) Encode(dst, src []byte) ([]byte, error) {
	tmp := bufpool.Get(c.blockElems() * c.elem * 2)
	defer bufpool.Put(tmp)
	if c.cname == "none" {
		start := len(dst)
		dst = ensureLen(dst, len(src))
		out := dst[start:]
		rest, _ := blocks(len(src), c.elem, c.blockElems(), func(off, size int) error {
			bitshuffle(out[off:off+size], src[off:off+size], c.elem, (*tmp)[:size])
			return nil
		})
		copy(out[rest:], src[rest:])
		return dst, nil
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(src)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.blockElems()*c.elem))
	shuf, scratch := (*tmp)[:len(*tmp)/2], (*tmp)[len(*tmp)/2:]
	rest, err := blocks(len(src), c.elem, c.blockElems(), func(off, size int) error {
		bitshuffle(shuf[:size], src[off:off+size], c.elem, scratch[:size])
		at := len(dst)
		if c.cname == "zstd" {
			dst = binary.BigEndian.AppendUint32(dst, 0)
			dst = zstdEncoder(5).EncodeAll(shuf[:size], dst)
			binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
			return nil
		}
		dst = ensureLen(dst, 4+lz4.CompressBlockBound(size))
		comp := lz4Fast.Get().(*lz4.CompressorCCompat)
		n, err := comp.CompressBlock(shuf[:size], dst[at+4:])
		lz4Fast.Put(comp)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: lz4 compression failed: %v", c.Name(), err)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(n))
		dst = dst[:at+4+n]
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, src[rest:]...), nil
}

// ensureLen returns dst extended by n bytes.
func ensureLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	return slices.Grow(dst, n)[:len(dst)+n]
}

// Decode appends the decoding of src to dst. A decoded size above limit
// or not a whole number of elements, a block size that is not a multiple
// of 8 elements, a block that runs past the input or does not decode to
// its size, and a chunk of another length than its header says are
// ErrCorrupt.
func (c *H5Bitshuffle) Decode(dst, src []byte, limit int) ([]byte, error) {
	name := c.Name()
	limit = max(limit, 0)
	if c.cname == "none" {
		if len(src) > limit {
			return dst, fmt.Errorf("%w: %s: %d bytes, at most %d expected", ErrCorrupt, name, len(src), limit)
		}
		bs := c.blockElems()
		tmp := bufpool.Get(bs * c.elem)
		defer bufpool.Put(tmp)
		start := len(dst)
		dst = ensureLen(dst, len(src))
		out := dst[start:]
		rest, _ := blocks(len(src), c.elem, bs, func(off, size int) error {
			bitunshuffle(out[off:off+size], src[off:off+size], c.elem, (*tmp)[:size])
			return nil
		})
		copy(out[rest:], src[rest:])
		return dst, nil
	}
	if len(src) < 12 {
		return dst, fmt.Errorf("%w: %s: %d bytes, too short for the 12-byte header", ErrCorrupt, name, len(src))
	}
	total := binary.BigEndian.Uint64(src)
	bb := int(binary.BigEndian.Uint32(src[8:]))
	if total > uint64(limit) {
		return dst, fmt.Errorf("%w: %s: header says %d bytes, at most %d expected", ErrCorrupt, name, total, limit)
	}
	n := int(total)
	if n%c.elem != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes are not whole %d-byte elements", ErrCorrupt, name, n, c.elem)
	}
	if bb <= 0 || bb%c.elem != 0 || (bb/c.elem)%8 != 0 || bb > maxBlockSize {
		return dst, fmt.Errorf("%w: %s: block of %d bytes is not a multiple of 8 %d-byte elements", ErrCorrupt, name, bb, c.elem)
	}
	bs := bb / c.elem
	// Each block costs at least 5 bytes of input and decodes to at most
	// about 255 times its compressed size: refuse what this input cannot
	// hold before allocating.
	nblocks := n / bb
	if 4*uint64(nblocks) > uint64(len(src)) || uint64(n) > 256*uint64(len(src))+64*uint64(nblocks+1)+uint64(bb) {
		return dst, fmt.Errorf("%w: %s: header says %d bytes, a %d-byte input cannot hold that", ErrCorrupt, name, n, len(src))
	}
	tmp := bufpool.Get(2 * bb)
	defer bufpool.Put(tmp)
	dec, scratch := (*tmp)[:bb], (*tmp)[bb:2*bb]
	start := len(dst)
	dst = ensureLen(dst, n)
	out := dst[start:]
	in := src[12:]
	rest, err := blocks(n, c.elem, bs, func(off, size int) error {
		if len(in) < 4 {
			return fmt.Errorf("%w: %s: input ends before the block at %d", ErrCorrupt, name, off)
		}
		k := int(binary.BigEndian.Uint32(in))
		in = in[4:]
		if k > len(in) {
			return fmt.Errorf("%w: %s: block at %d of %d bytes, %d left", ErrCorrupt, name, off, k, len(in))
		}
		var err error
		if c.cname == "zstd" {
			err = decodeZstd(dec[:size], in[:k])
		} else {
			err = decodeLZ4(dec[:size], in[:k])
		}
		if err != nil {
			return fmt.Errorf("%s: block at %d: %w", name, off, err)
		}
		in = in[k:]
		bitunshuffle(out[off:off+size], dec[:size], c.elem, scratch[:size])
		return nil
	})
	if err != nil {
		return dst[:start], err
	}
	if len(in) != n-rest {
		return dst[:start], fmt.Errorf("%w: %s: %d bytes after the last block, want %d", ErrCorrupt, name, len(in), n-rest)
	}
	copy(out[rest:], in)
	return dst, nil
}
