package numcodecs

// The numcodecs zlib codec (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/compression/zlib.html
// (a zlib stream, RFC 1950: https://www.rfc-editor.org/rfc/rfc1950)
// JSON name: "numcodecs.zlib"
// Configuration example (Zarr v2: {"id": "zlib", "level": 1}):
//
//	{"name": "numcodecs.zlib", "configuration": {"level": 1}}

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/inflate"
	"github.com/klauspost/compress/zlib"
)

// DefaultZlibLevel is numcodecs' default zlib level.
const DefaultZlibLevel = 1

// Zlib is the "numcodecs.zlib" codec
// (https://numcodecs.readthedocs.io/en/stable/compression/zlib.html),
// configured as {"level": 1}: one zlib stream (RFC 1950) per chunk, as
// Python's zlib.compress writes it. Levels are -1 (zlib's default, 6) to 9
// (others decode but do not encode); the default is 1. Output is valid zlib
// but not byte for byte what C zlib writes. Decoding verifies the Adler-32 trailer (ErrChecksum) and, like
// Python's zlib.decompress, ignores bytes after the end of the stream.
// Writers are pooled; decoding is whole-buffer. A Zlib is immutable and safe for
// concurrent use.
type Zlib struct {
	level int
}

// NewZlib returns the zlib codec at a level. Any level is accepted, since
// decoding does not use it; encoding needs -1 to 9, else CheckEncode and
// Encode return ErrInvalidConfig. The error is always nil.
func NewZlib(level int) (*Zlib, error) {
	return &Zlib{level: level}, nil
}

func init() {
	codecs.Register(prefix+"zlib", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Level *int `json:"level"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		level := DefaultZlibLevel
		if cfg.Level != nil {
			level = *cfg.Level
		}
		return NewZlib(level)
	})
}

// Name returns "numcodecs.zlib".
func (z *Zlib) Name() string { return prefix + "zlib" }

// Level returns the compression level.
func (z *Zlib) Level() int { return z.level }

// Configuration returns {"level": n}.
func (z *Zlib) Configuration() any {
	return struct {
		Level int `json:"level"`
	}{z.level}
}

// MaxEncodedSize bounds the zlib stream of n bytes: deflate stored blocks
// (5 bytes per block of at least 16 KiB), the 2-byte header, the 4-byte
// trailer and some slack.
func (z *Zlib) MaxEncodedSize(n int) int { return n + 5*(n/16383+1) + 6 + 64 }

var zlibWriters [11]codecs.WriterPool[*zlib.Writer] // index level+1

// CheckEncode reports whether the codec can encode: a level outside -1..9
// is ErrInvalidConfig.
func (z *Zlib) CheckEncode() error { return codecs.CheckLevel(prefix+"zlib", "level", z.level, -1, 9) }

// Encode appends the zlib stream of src to dst. A level outside -1..9 is
// ErrInvalidConfig.
func (z *Zlib) Encode(dst, src []byte) ([]byte, error) {
	if err := z.CheckEncode(); err != nil {
		return dst, err
	}
	out, err := zlibWriters[z.level+1].Append(dst, src, func(w io.Writer) (*zlib.Writer, error) {
		zw, err := zlib.NewWriterLevel(w, z.level)
		if err != nil {
			err = fmt.Errorf("%w: %v", codecs.ErrInvalidConfig, err)
		}
		return zw, err
	})
	if err != nil {
		return dst, fmt.Errorf("numcodecs.zlib: %w", err)
	}
	return out, nil
}

// Decode appends the decompression of the zlib stream src to dst, writing
// into dst's free capacity when it has room (internal/inflate decodes the
// whole buffer at once). A malformed or truncated stream is ErrCorrupt,
// an Adler-32 mismatch ErrChecksum, and output beyond limit bytes
// ErrCorrupt, found before more than limit bytes are allocated (deflate
// expands at most 1032 times, which also bounds the first allocation).
func (z *Zlib) Decode(dst, src []byte, limit int) ([]byte, error) {
	out, err := inflate.Zlib(dst, src, limit)
	if err != nil {
		return dst, zlibError(err)
	}
	return out, nil
}

// zlibError maps a decoder error to the codec sentinels: ErrChecksum for
// an Adler-32 mismatch, else ErrCorrupt.
func zlibError(err error) error {
	if errors.Is(err, inflate.ErrChecksum) {
		return fmt.Errorf("%w: numcodecs.zlib: %v", codecs.ErrChecksum, err)
	}
	return fmt.Errorf("%w: numcodecs.zlib: %v", codecs.ErrCorrupt, err)
}
