package numcodecs

// The numcodecs bz2 codec (bytes -> bytes), decode only.
//
// Format: https://numcodecs.readthedocs.io/en/stable/compression/bz2.html
// (a bzip2 stream, as Python's bz2.compress writes it)
// JSON name: "numcodecs.bz2"
// Configuration example (Zarr v2: {"id": "bz2", "level": 1}):
//
//	{"name": "numcodecs.bz2", "configuration": {"level": 1}}

import (
	"bytes"
	"compress/bzip2"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gozarr/gozarr/codecs"
)

// BZ2 is the "numcodecs.bz2" codec
// (https://numcodecs.readthedocs.io/en/stable/compression/bz2.html),
// configured as {"level": 1} (1 to 9, numcodecs' default 1; any is read):
// bzip2 streams.
// It decodes only, with Go's compress/bzip2 (concatenated streams are read
// in turn, as Python does); Encode returns ErrUnsupported, since no bzip2
// encoder is available without a new dependency. A BZ2 is immutable and
// safe for concurrent use.
type BZ2 struct {
	level int
}

// NewBZ2 returns the bz2 codec at a level. The level only matters to the
// metadata (the codec decodes only), so any level is accepted. The error
// is always nil.
func NewBZ2(level int) (*BZ2, error) {
	return &BZ2{level: level}, nil
}

func init() {
	codecs.Register(prefix+"bz2", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Level *int `json:"level"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		level := 1
		if cfg.Level != nil {
			level = *cfg.Level
		}
		return NewBZ2(level)
	})
}

// Name returns "numcodecs.bz2".
func (b *BZ2) Name() string { return prefix + "bz2" }

// Configuration returns {"level": n}.
func (b *BZ2) Configuration() any {
	return struct {
		Level int `json:"level"`
	}{b.level}
}

// MaxEncodedSize bounds a bzip2 stream of n bytes (the bzip2 manual's
// 1% + 600 bytes worst case, with slack).
func (b *BZ2) MaxEncodedSize(n int) int { return n + n/100 + 1024 }

// CheckEncode returns ErrUnsupported: gozarr cannot write bzip2.
func (b *BZ2) CheckEncode() error {
	return fmt.Errorf("numcodecs.bz2: %w: bzip2 encoding (Go's compress/bzip2 only decodes); choose zlib, zstd or blosc to write", ErrUnsupported)
}

// Encode returns ErrUnsupported: gozarr cannot write bzip2.
func (b *BZ2) Encode(dst, src []byte) ([]byte, error) {
	return dst, b.CheckEncode()
}

// Decode appends the decompression of the bzip2 stream src to dst. A
// malformed or truncated stream is ErrCorrupt, a block or stream CRC
// mismatch ErrChecksum, and output beyond limit bytes ErrCorrupt, found
// before more than limit bytes are allocated. Empty input decodes to
// nothing, as in Python.
func (b *BZ2) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		return dst, nil // as Python's bz2.decompress(b"")
	}
	r := bzip2.NewReader(bytes.NewReader(src))
	guess := min(limit, 8*len(src)+4096)
	out, err := codecs.ReadLimited(dst, r, limit, guess)
	if err == nil {
		return out, nil
	}
	var se bzip2.StructuralError
	switch {
	case errors.Is(err, codecs.ErrCorrupt): // beyond the limit
		return dst, fmt.Errorf("numcodecs.bz2: %w", err)
	case errors.As(err, &se) && bytes.Contains([]byte(se), []byte("checksum")):
		return dst, fmt.Errorf("%w: numcodecs.bz2: %v", codecs.ErrChecksum, err)
	case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
		// The decoder ran out of input before the end-of-stream marker:
		// the stream is cut short, or damaged so that its bits no longer
		// decode to that marker (a flipped bit).
		return dst, fmt.Errorf("%w: numcodecs.bz2: the stream is truncated or damaged: %d bytes end before its end-of-stream marker", codecs.ErrCorrupt, len(src))
	}
	return dst, fmt.Errorf("%w: numcodecs.bz2: damaged stream: %v", codecs.ErrCorrupt, err)
}
