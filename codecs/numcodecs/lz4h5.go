package numcodecs

// The imagecodecs_lz4h5 codec (bytes -> bytes): HDF5's LZ4 filter (32004,
// as hdf5plugin and the HDF Group's filter plugins write it), under the id
// kerchunk and VirtualiZarr give it.
//
// Format (https://github.com/HDFGroup/hdf5_plugins, LZ4/src/H5Zlz4.c; and
// imagecodecs' lz4h5 codec): the decoded size as an 8-byte big-endian
// integer, the block size as a 4-byte big-endian integer, then for each
// block of that many decoded bytes (the last one shorter) its stored size
// as a 4-byte big-endian integer followed by that many bytes: one raw LZ4
// block, or the block's bytes as they are when the stored size equals the
// block's decoded size.
// JSON name: "numcodecs.imagecodecs_lz4h5"
// Configuration example (Zarr v2: {"id": "imagecodecs_lz4h5"}):
//
//	{"name": "numcodecs.imagecodecs_lz4h5", "configuration": {"blocksize": 0}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/pierrec/lz4/v4"
)

// DefaultLZ4H5BlockSize is the HDF5 filter's block size when none is
// given: 1 GiB (so a chunk is one block).
const DefaultLZ4H5BlockSize = 1 << 30

// LZ4H5 is the "numcodecs.imagecodecs_lz4h5" codec. Decoding checks the
// decoded size in the header against the limit before allocating, and
// every block's size against the input. An LZ4H5 is immutable and safe for
// concurrent use.
type LZ4H5 struct {
	blocksize int // decoded bytes per block when encoding; 0: the default
}

// NewLZ4H5 returns the codec, encoding blocks of blocksize decoded bytes
// (0: DefaultLZ4H5BlockSize). Decoding reads the block size of each
// chunk's header.
func NewLZ4H5(blocksize int) (*LZ4H5, error) {
	if blocksize < 0 || blocksize > lz4MaxInput {
		return nil, fmt.Errorf("%w: numcodecs.imagecodecs_lz4h5: blocksize %d is not in 0..%d", codecs.ErrInvalidConfig, blocksize, lz4MaxInput)
	}
	return &LZ4H5{blocksize: blocksize}, nil
}

// lz4MaxInput is LZ4_MAX_INPUT_SIZE.
const lz4MaxInput = 0x7E000000

func init() {
	codecs.Register(prefix+"imagecodecs_lz4h5", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Level     *int `json:"level"` // imagecodecs' acceleration; decoding ignores it
			Blocksize *int `json:"blocksize"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		bs := 0
		if cfg.Blocksize != nil {
			bs = *cfg.Blocksize
		}
		return NewLZ4H5(bs)
	})
}

// Name returns "numcodecs.imagecodecs_lz4h5".
func (c *LZ4H5) Name() string { return prefix + "imagecodecs_lz4h5" }

// Configuration returns {"blocksize": n}.
func (c *LZ4H5) Configuration() any {
	return struct {
		Blocksize int `json:"blocksize"`
	}{c.blocksize}
}

func (c *LZ4H5) block(n int) int {
	bs := c.blocksize
	if bs == 0 {
		bs = DefaultLZ4H5BlockSize
	}
	return max(min(bs, n), 1)
}

// MaxEncodedSize returns the header and every block stored as it is, with
// its size.
func (c *LZ4H5) MaxEncodedSize(n int) int {
	n = max(n, 0)
	bs := c.block(n)
	return 12 + n + 4*((n+bs-1)/bs)
}

// Encode appends the framed blocks of src to dst, as the HDF5 filter
// writes them: a block that LZ4 does not shrink is stored as it is.
func (c *LZ4H5) Encode(dst, src []byte) ([]byte, error) {
	bs := c.block(len(src))
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(src)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(bs))
	comp := lz4Compressors.Get().(*lz4.CompressorCCompat)
	defer lz4Compressors.Put(comp)
	comp.Acceleration = 1
	for off := 0; off < len(src); off += bs {
		blk := src[off:min(off+bs, len(src))]
		at := len(dst)
		dst = slices.Grow(dst, 4+lz4.CompressBlockBound(len(blk)))[:at+4+lz4.CompressBlockBound(len(blk))]
		n, err := comp.CompressBlock(blk, dst[at+4:])
		if err != nil || n <= 0 || n >= len(blk) {
			n = len(blk)
			copy(dst[at+4:], blk)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(n))
		dst = dst[:at+4+n]
	}
	return dst, nil
}

// Decode appends the decoding of src to dst. A decoded size above limit,
// a block size of 0, a block whose stored size runs past the input or
// that does not decode to its block's size, and bytes after the last
// block are ErrCorrupt.
func (c *LZ4H5) Decode(dst, src []byte, limit int) ([]byte, error) {
	name := c.Name()
	if len(src) < 12 {
		return dst, fmt.Errorf("%w: %s: %d bytes, too short for the 12-byte header", codecs.ErrCorrupt, name, len(src))
	}
	total := binary.BigEndian.Uint64(src)
	bs := uint64(binary.BigEndian.Uint32(src[8:]))
	if total > uint64(max(limit, 0)) || total > math.MaxInt {
		return dst, fmt.Errorf("%w: %s: header says %d bytes: %w", codecs.ErrCorrupt, name, total, &codecs.LimitError{What: "decoded size", Limit: max(limit, 0)})
	}
	if bs == 0 || bs > lz4MaxInput {
		if total == 0 && len(src) == 12 {
			return dst, nil
		}
		return dst, fmt.Errorf("%w: %s: block size %d", codecs.ErrCorrupt, name, bs)
	}
	// Every block costs at least 4 bytes of input, and an LZ4 block of b
	// bytes decodes to at most 255*b+24 or so: refuse a size no input this
	// short could reach before allocating it.
	nblocks := (total + bs - 1) / bs
	if 4*nblocks > uint64(len(src)-12) || total > 256*uint64(len(src))+64*nblocks {
		return dst, fmt.Errorf("%w: %s: header says %d bytes in blocks of %d, a %d-byte input cannot hold that", codecs.ErrCorrupt, name, total, bs, len(src))
	}
	start := len(dst)
	out := ensure(dst, int(total))
	o := out[start:]
	in := src[12:]
	for pos := uint64(0); pos < total; {
		want := min(bs, total-pos)
		if len(in) < 4 {
			return dst, fmt.Errorf("%w: %s: input ends before block at %d", codecs.ErrCorrupt, name, pos)
		}
		n := uint64(binary.BigEndian.Uint32(in))
		in = in[4:]
		if n > uint64(len(in)) || n == 0 {
			return dst, fmt.Errorf("%w: %s: block at %d of %d stored bytes, %d left", codecs.ErrCorrupt, name, pos, n, len(in))
		}
		blk := o[pos : pos+want]
		if n == want {
			copy(blk, in[:n])
		} else {
			k, err := lz4.UncompressBlock(in[:n], blk)
			if err != nil || uint64(k) != want {
				return dst, fmt.Errorf("%w: %s: block at %d decodes to %d bytes, want %d: %v", codecs.ErrCorrupt, name, pos, k, want, err)
			}
		}
		in = in[n:]
		pos += want
	}
	if len(in) != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes after the last block", codecs.ErrCorrupt, name, len(in))
	}
	return out, nil
}
