package numcodecs

// The numcodecs lz4 codec (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/compression/lz4.html
// (the original size as a 4-byte little-endian integer, then one LZ4 block:
// https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md)
// JSON name: "numcodecs.lz4"
// Configuration example (Zarr v2: {"id": "lz4", "acceleration": 1}):
//
//	{"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/gozarr/gozarr/codecs"
	"github.com/pierrec/lz4/v4"
)

// DefaultLZ4Acceleration is numcodecs' default LZ4 acceleration.
const DefaultLZ4Acceleration = 1

// LZ4 is the "numcodecs.lz4" codec
// (https://numcodecs.readthedocs.io/en/stable/compression/lz4.html),
// configured as {"acceleration": 1}: the uncompressed size as a
// little-endian uint32, then one raw LZ4 block (no frame). Acceleration
// trades ratio for speed as in LZ4_compress_fast; values below 1 mean 1.
// Encoding uses the C-compatible fast compressor of pierrec/lz4, so output
// matches liblz4's. Chunks must be under 2 GiB (numcodecs stores the size
// as a C int). Decoding checks the header size against the limit before
// allocating and requires the block to fill exactly that size. An LZ4 is
// immutable and safe for concurrent use.
type LZ4 struct {
	acceleration int
}

// NewLZ4 returns the lz4 codec with the given acceleration (values below 1
// are kept as written and behave as 1, as in numcodecs).
func NewLZ4(acceleration int) *LZ4 { return &LZ4{acceleration: acceleration} }

func init() {
	codecs.Register(prefix+"lz4", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Acceleration *int `json:"acceleration"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		acc := DefaultLZ4Acceleration
		if cfg.Acceleration != nil {
			acc = *cfg.Acceleration
		}
		return NewLZ4(acc), nil
	})
}

// Name returns "numcodecs.lz4".
func (c *LZ4) Name() string { return prefix + "lz4" }

// Configuration returns {"acceleration": n}.
func (c *LZ4) Configuration() any {
	return struct {
		Acceleration int `json:"acceleration"`
	}{c.acceleration}
}

// MaxEncodedSize returns 4 plus LZ4's worst-case block size for n bytes.
func (c *LZ4) MaxEncodedSize(n int) int { return 4 + lz4.CompressBlockBound(max(n, 0)) }

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}

// Encode appends the size header and the LZ4 block of src to dst. Input of
// 2 GiB or more is ErrInvalidConfig (the header cannot hold its size).
func (c *LZ4) Encode(dst, src []byte) ([]byte, error) {
	if len(src) > math.MaxInt32 {
		return dst, fmt.Errorf("%w: numcodecs.lz4: %d bytes, at most %d fit the size header", codecs.ErrInvalidConfig, len(src), math.MaxInt32)
	}
	bound := lz4.CompressBlockBound(len(src))
	start := len(dst)
	out := ensure(dst, 4+bound)
	binary.LittleEndian.PutUint32(out[start:], uint32(len(src)))
	comp := lz4Compressors.Get().(*lz4.CompressorCCompat)
	comp.Acceleration = max(c.acceleration, 1)
	n, err := comp.CompressBlock(src, out[start+4:])
	lz4Compressors.Put(comp)
	if err != nil || n <= 0 {
		return dst, fmt.Errorf("numcodecs.lz4: compression failed (%d): %v", n, err)
	}
	return out[:start+4+n], nil
}

// Decode appends the decompressed block of src to dst. Input shorter than
// the header, a size above limit (checked before allocating) or above
// 2^31-1, and a block that does not decode to exactly that size are
// ErrCorrupt. An empty block (size 0, which numcodecs itself refuses) is
// accepted when the block decodes to nothing.
func (c *LZ4) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("%w: numcodecs.lz4: %d bytes, too short for the size header", codecs.ErrCorrupt, len(src))
	}
	size := binary.LittleEndian.Uint32(src)
	if size > math.MaxInt32 || int64(size) > int64(max(limit, 0)) {
		return dst, fmt.Errorf("%w: numcodecs.lz4: header says %d bytes: %w", codecs.ErrCorrupt, size, &codecs.LimitError{What: "decoded size", Limit: max(limit, 0)})
	}
	block := src[4:]
	if size == 0 {
		// LZ4_compress_fast writes a single zero token for empty input.
		if len(block) == 1 && block[0] == 0 {
			return dst, nil
		}
		return dst, fmt.Errorf("%w: numcodecs.lz4: size 0 with a %d-byte block", codecs.ErrCorrupt, len(block))
	}
	// A block of b bytes decodes to at most 255*b+24 bytes or so; refuse a
	// size no block this short could reach before allocating it.
	if uint64(size) > 256*uint64(len(block))+64 {
		return dst, fmt.Errorf("%w: numcodecs.lz4: header says %d bytes, a %d-byte block cannot hold that", codecs.ErrCorrupt, size, len(block))
	}
	start := len(dst)
	out := ensure(dst, int(size))
	n, err := lz4.UncompressBlock(block, out[start:])
	if err != nil {
		return dst, fmt.Errorf("%w: numcodecs.lz4: %v", codecs.ErrCorrupt, err)
	}
	if n != int(size) {
		return dst, fmt.Errorf("%w: numcodecs.lz4: block decodes to %d bytes, header says %d", codecs.ErrCorrupt, n, size)
	}
	return out, nil
}
