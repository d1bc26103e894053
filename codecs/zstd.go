package codecs

// The zstd codec (bytes -> bytes).
//
// Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd
// JSON name: "zstd"
// Configuration example:
//
//	{"name": "zstd", "configuration": {"level": 3, "checksum": true}}
//
// "level" is a libzstd level (negative for the fast modes, 0 for libzstd's
// default 3, up to 22; any integer is read, only encoding needs one in
// range); "checksum" asks for a content checksum in every frame.

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Zstd is the "zstd" codec
// (https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd),
// configured as {"name": "zstd", "configuration": {"level": 3, "checksum":
// true}}: Zstandard frames (RFC 8878).
//
// Levels: klauspost/compress has four encoder levels, so libzstd levels map
// to the nearest in ratio and speed: below 0 and 1..2 → SpeedFastest; 0 (the
// libzstd default, 3) and 3..5 → SpeedDefault; 6..9 → SpeedBetterCompression;
// 10 and above → SpeedBestCompression. The configured level is kept as
// written in metadata. Output decodes with any zstd decoder but is not byte
// for byte what libzstd writes.
//
// Decoding accepts any valid frames (several concatenated frames and
// skippable frames included), such as those libzstd writes for zarr-python,
// through one shared decoder. Content checksums, when present, are always
// verified (mismatch: ErrChecksum).
//
// A Zstd is immutable and safe for concurrent use; encoders are shared per
// (level, checksum) and created on first use.
type Zstd struct {
	level    int
	checksum bool
}

// NewZstd returns the zstd codec with a libzstd level (-131072..22, 0 for
// the default) and whether frames carry a content checksum. Any level is
// accepted, since decoding does not use it (numcodecs writes 100, which
// libzstd clamps); one out of range makes CheckEncode and Encode return
// ErrInvalidConfig. The error is always nil.
func NewZstd(level int, checksum bool) (*Zstd, error) {
	return &Zstd{level: level, checksum: checksum}, nil
}

func init() {
	// numcodecs' Zstd: the core codec, with the same stream.
	RegisterV2("zstd", func(object json.RawMessage, _ int) (Spec, bool, error) {
		var z struct {
			ID       string `json:"id"`
			Level    int    `json:"level"`
			Checksum bool   `json:"checksum"`
		}
		if DecodeConfig(object, &z) != nil {
			return Spec{}, false, nil
		}
		return specOf("zstd", map[string]any{"level": z.Level, "checksum": z.Checksum})
	})
	Register("zstd", func(configuration json.RawMessage) (Codec, error) {
		var cfg struct {
			Level    int  `json:"level"`
			Checksum bool `json:"checksum"`
		}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return NewZstd(cfg.Level, cfg.Checksum)
	})
}

// Name returns "zstd".
func (z *Zstd) Name() string { return "zstd" }

// Level returns the configured libzstd level.
func (z *Zstd) Level() int { return z.level }

// Checksum reports whether encoded frames carry a content checksum.
func (z *Zstd) Checksum() bool { return z.checksum }

// Configuration returns {"level": n, "checksum": b}.
func (z *Zstd) Configuration() any {
	return struct {
		Level    int  `json:"level"`
		Checksum bool `json:"checksum"`
	}{z.level, z.checksum}
}

// zstdEncoderLevel returns the klauspost/compress encoder level a libzstd level
// maps to (see Zstd).
func zstdEncoderLevel(level int) zstd.EncoderLevel {
	switch {
	case level == 0:
		return zstd.SpeedDefault
	case level < 3:
		return zstd.SpeedFastest
	case level < 6:
		return zstd.SpeedDefault
	case level < 10:
		return zstd.SpeedBetterCompression
	}
	return zstd.SpeedBestCompression
}

// MaxEncodedSize bounds the encoded size of n bytes: libzstd's
// ZSTD_compressBound plus room for the frame header and checksum.
func (z *Zstd) MaxEncodedSize(n int) int {
	b := n + n>>8
	if n < 128<<10 {
		b += ((128 << 10) - n) >> 11
	}
	return b + 32
}

type zstdEncKey struct {
	level    zstd.EncoderLevel
	checksum bool
}

var zstdEncoders = struct {
	sync.Mutex
	m map[zstdEncKey]*zstd.Encoder
}{m: map[zstdEncKey]*zstd.Encoder{}}

func (z *Zstd) encoder() (*zstd.Encoder, error) {
	k := zstdEncKey{zstdEncoderLevel(z.level), z.checksum}
	zstdEncoders.Lock()
	defer zstdEncoders.Unlock()
	if e := zstdEncoders.m[k]; e != nil {
		return e, nil
	}
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(k.level),
		zstd.WithEncoderCRC(k.checksum),
		zstd.WithZeroFrames(true), // a frame even for empty input, as libzstd
		zstd.WithEncoderConcurrency(0),
	)
	if err != nil {
		return nil, err
	}
	zstdEncoders.m[k] = e
	return e, nil
}

// CheckEncode reports whether the codec can encode: a level outside
// -131072..22 is ErrInvalidConfig.
func (z *Zstd) CheckEncode() error { return CheckLevel("zstd", "level", z.level, -(1 << 17), 22) }

// Encode appends one zstd frame holding src (with its content size) to dst.
// A level out of range is ErrInvalidConfig.
func (z *Zstd) Encode(dst, src []byte) ([]byte, error) {
	if err := z.CheckEncode(); err != nil {
		return dst, err
	}
	e, err := z.encoder()
	if err != nil {
		return dst, fmt.Errorf("%w: zstd: %v", ErrInvalidConfig, err)
	}
	return e.EncodeAll(src, dst), nil
}

// zstdDecoder is shared by every Zstd: DecodeAll is safe for concurrent use
// and runs at most GOMAXPROCS decodes at once. With the cap limit on,
// DecodeAll never writes more than the capacity it is given, which is how
// Decode enforces its limit.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecodeAllCapLimit(true),
	)
})

// Decode appends the decompression of the zstd frames src to dst, writing
// into dst's free capacity when it has room. Malformed input is ErrCorrupt,
// a content checksum mismatch ErrChecksum. Output longer than limit is
// ErrCorrupt: a frame declaring more is refused before anything is
// allocated, and frames without a declared size are decoded into a buffer of
// limit bytes and stopped at the first block past it (the block that
// crosses the limit may make the decoder grow that buffer once: at worst
// about twice the limit plus the decoder's block buffers; see TestZstdBombs).
func (z *Zstd) Decode(dst, src []byte, limit int) ([]byte, error) {
	d, err := zstdDecoder()
	if err != nil {
		return dst, fmt.Errorf("zstd: %w", err)
	}
	limit = max(limit, 0)
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return dst, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	guess := limit
	if h.HasFCS && !h.Skippable {
		if h.FrameContentSize > uint64(limit) {
			return dst, fmt.Errorf("%w: zstd: frame declares %d bytes: %w",
				ErrCorrupt, h.FrameContentSize, &LimitError{Codec: "zstd", Limit: limit})
		}
		guess = int(h.FrameContentSize)
	}
	start := len(dst)
	size := min(max(cap(dst)-start, guess), limit)
	for {
		var buf []byte
		if cap(dst)-start >= size {
			end := start + size
			if cap(dst)-end >= DecodeSlack {
				// Room to spare: the decoder's fast loops may use it.
				end += DecodeSlack
			}
			buf = dst[:start:end]
		} else {
			buf = make([]byte, start, start+size+DecodeSlack)
			copy(buf, dst)
		}
		out, err := d.DecodeAll(src, buf)
		if err == nil {
			if len(out)-start > limit {
				return dst, overLimit("zstd", limit)
			}
			return out, nil
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			if size < limit {
				// More frames than the first declared: try again with room
				// for all that is allowed.
				size = min(limit, max(2*size, 64<<10))
				continue
			}
			return dst, overLimit("zstd", limit)
		}
		if errors.Is(err, zstd.ErrCRCMismatch) {
			return dst, fmt.Errorf("%w: zstd: %v", ErrChecksum, err)
		}
		return dst, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
}
