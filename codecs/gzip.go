package codecs

// The gzip codec (bytes -> bytes).
//
// Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html
// JSON name: "gzip"
// Configuration example:
//
//	{"name": "gzip", "configuration": {"level": 5}}
//
// "level" is 0 (stored) to 9 (best compression); any integer is read, only
// encoding needs one in range.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gozarr/gozarr/internal/inflate"
	"github.com/klauspost/compress/gzip"
)

// DefaultGzipLevel is the level used when a gzip configuration has none
// (zarr-python's default).
const DefaultGzipLevel = 5

// Gzip is the "gzip" codec
// (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html),
// configured as {"name": "gzip", "configuration": {"level": 5}}: RFC 1952
// streams, levels 0 to 9 (others decode but do not encode). Encoding writes one member
// with a zero modification time, so equal input gives equal output.
// Decoding reads every member of a multi-member stream, as gzip does.
// Writers are pooled; decoding is whole-buffer. A Gzip is immutable and safe for
// concurrent use.
type Gzip struct {
	level int
}

// NewGzip returns the gzip codec at the given level. Any level is
// accepted, since decoding does not use it (numcodecs writes -1); encoding
// needs 0 to 9, else CheckEncode and Encode return ErrInvalidConfig. The
// error is always nil.
func NewGzip(level int) (*Gzip, error) {
	return &Gzip{level: level}, nil
}

func init() {
	// numcodecs' GZip: the core codec, with the same stream.
	RegisterV2("gzip", func(object json.RawMessage, _ int) (Spec, bool, error) {
		g := struct {
			ID    string `json:"id"`
			Level int    `json:"level"`
		}{Level: 1}
		if DecodeConfig(object, &g) != nil {
			return Spec{}, false, nil
		}
		return specOf("gzip", map[string]any{"level": g.Level})
	})
	Register("gzip", func(configuration json.RawMessage) (Codec, error) {
		cfg := struct {
			Level *int `json:"level"`
		}{}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		level := DefaultGzipLevel
		if cfg.Level != nil {
			level = *cfg.Level
		}
		return NewGzip(level)
	})
}

// Name returns "gzip".
func (g *Gzip) Name() string { return "gzip" }

// Level returns the compression level.
func (g *Gzip) Level() int { return g.level }

// Configuration returns {"level": n}.
func (g *Gzip) Configuration() any {
	return struct {
		Level int `json:"level"`
	}{g.level}
}

// MaxEncodedSize bounds the encoded size of n bytes: the data in deflate
// stored blocks (5 bytes of overhead per block of at least 16 KiB), the
// gzip header and trailer, and some slack.
func (g *Gzip) MaxEncodedSize(n int) int {
	return n + 5*(n/16383+1) + 18 + 64
}

// gzipWriters pools the writers of each level.
var gzipWriters [10]WriterPool[*gzip.Writer]

// CheckEncode reports whether the codec can encode: a level outside 0..9
// is ErrInvalidConfig.
func (g *Gzip) CheckEncode() error { return CheckLevel("gzip", "level", g.level, 0, 9) }

// Encode appends the gzip stream of src to dst. A level outside 0..9 is
// ErrInvalidConfig.
func (g *Gzip) Encode(dst, src []byte) ([]byte, error) {
	if err := g.CheckEncode(); err != nil {
		return dst, err
	}
	out, err := gzipWriters[g.level].Append(dst, src, func(w io.Writer) (*gzip.Writer, error) {
		zw, err := gzip.NewWriterLevel(w, g.level)
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		return zw, err
	})
	if err != nil {
		return dst, fmt.Errorf("gzip: %w", err)
	}
	return out, nil
}

// Decode appends the decompression of the gzip data src, every member of
// a multi-member stream, to dst, writing into dst's free capacity when it
// has room (internal/inflate decodes the whole buffer at once). A malformed
// or truncated stream is ErrCorrupt, a CRC-32 or size mismatch
// ErrChecksum, and output beyond limit bytes ErrCorrupt, found before more
// than limit bytes are allocated.
func (g *Gzip) Decode(dst, src []byte, limit int) ([]byte, error) {
	out, err := inflate.Gzip(dst, src, limit)
	if err != nil {
		return dst, gzipError(err)
	}
	return out, nil
}

// gzipError maps a decoder error to the codec sentinels: ErrChecksum for
// a checksum mismatch, else ErrCorrupt.
func gzipError(err error) error {
	if errors.Is(err, inflate.ErrChecksum) {
		return fmt.Errorf("%w: gzip: %v", ErrChecksum, err)
	}
	return fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
}
