// Package zstdc makes gozarr decode and encode zstd with libzstd, the C
// library zarr-python, zarrs and tensorstore use, instead of the pure-Go
// klauspost/compress. Import it for its side effect:
//
//	import _ "github.com/gozarr/gozarr/codecs/zstdc"
//
// Its init function registers a "zstd" codec that decodes and encodes
// with libzstd (through github.com/DataDog/zstd, which carries libzstd's
// source: no system library, but a C compiler and cgo) and hands Blosc's
// zstd streams to libzstd too (blosc.SetZstdBlockDecoder). It is a module
// of its own so that gozarr itself stays pure Go.
//
// Decoding gives the same bytes and the same errors as the pure-Go codec:
// malformed frames are codecs.ErrCorrupt, a content checksum mismatch
// codecs.ErrChecksum, and the size limit holds the same way — a frame
// declaring more than the limit is refused before anything is allocated,
// and libzstd is never given more room than the limit, so output past it
// is refused, not written. It decodes straight into the caller's buffer
// when it has room. (libzstd also reads the legacy frame formats of zstd
// 0.4-0.7, which the pure-Go decoder refuses.) Encoding uses libzstd's own
// levels, so frames are byte for byte what zarr-python writes at the same
// level; frames with a content checksum are encoded by the pure-Go codec.
package zstdc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/DataDog/zstd"
	kzstd "github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/blosc"
)

func init() {
	pure, ok := codecs.Lookup("zstd")
	if !ok {
		panic("zstdc: the core zstd codec is not registered")
	}
	codecs.Replace("zstd", func(configuration json.RawMessage) (codecs.Codec, error) {
		c, err := pure(configuration)
		if err != nil {
			return nil, err
		}
		z, ok := c.(*codecs.Zstd)
		if !ok {
			return nil, fmt.Errorf("zstdc: the core zstd codec is a %T", c)
		}
		return &Zstd{Zstd: z}, nil
	})
	blosc.SetZstdBlockDecoder(DecodeInto)
}

// Zstd is the "zstd" codec with libzstd doing the work: the pure-Go
// codec's configuration, size bound and checks, with Decode and Encode
// replaced. It is immutable and safe for concurrent use.
type Zstd struct {
	*codecs.Zstd
}

// New returns the libzstd codec of a libzstd level and checksum flag (see
// codecs.NewZstd).
func New(level int, checksum bool) (*Zstd, error) {
	z, err := codecs.NewZstd(level, checksum)
	if err != nil {
		return nil, err
	}
	return &Zstd{Zstd: z}, nil
}

// ctxs pools libzstd contexts: one holds a decompression and a compression
// context (about 100 KiB and more), which libzstd would otherwise allocate
// and free on every call.
var ctxs = sync.Pool{New: func() any { return zstd.NewCtx() }}

// DecodeInto decodes the zstd frames src into dst, writing at most
// len(dst) bytes, and returns how many it wrote; output that does not fit
// is an error (libzstd's "Destination buffer is too small").
func DecodeInto(dst, src []byte) (int, error) {
	if len(src) == 0 {
		return 0, fmt.Errorf("%w: zstd: empty input", codecs.ErrCorrupt)
	}
	if len(dst) == 0 {
		// libzstd needs somewhere to point even for no output: one byte,
		// which any output at all overflows.
		var one [1]byte
		n, err := decodeCtx(one[:], src)
		if err == nil && n > 0 {
			return 0, errTooSmall
		}
		return n, err
	}
	return decodeCtx(dst, src)
}

// errTooSmall is libzstd's error for output that does not fit.
var errTooSmall = errors.New("zstd: destination buffer is too small")

func decodeCtx(dst, src []byte) (int, error) {
	c := ctxs.Get().(zstd.Ctx)
	n, err := c.DecompressInto(dst, src)
	ctxs.Put(c)
	if err != nil {
		if zstd.IsDstSizeTooSmallError(err) {
			return 0, errTooSmall
		}
		return 0, err
	}
	return n, nil
}

// Decode appends the decompression of the zstd frames src to dst, in
// dst's free capacity when it has room for the frame's declared size (or,
// undeclared, for limit bytes), else in a new buffer. Output longer than
// limit is codecs.ErrCorrupt: a frame declaring more is refused before
// anything is allocated, and libzstd is given room for limit bytes at
// most.
func (z *Zstd) Decode(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	var h kzstd.Header
	if err := h.Decode(src); err != nil {
		return dst, fmt.Errorf("%w: zstd: %v", codecs.ErrCorrupt, err)
	}
	size := limit
	if h.HasFCS && !h.Skippable {
		if h.FrameContentSize > uint64(limit) {
			return dst, fmt.Errorf("%w: zstd: frame declares %d bytes: %w",
				codecs.ErrCorrupt, h.FrameContentSize, &codecs.LimitError{What: "decoded size", Limit: limit})
		}
		size = int(h.FrameContentSize)
	}
	start := len(dst)
	for {
		room := cap(dst) - start
		inPlace := room >= size
		var buf []byte
		if inPlace {
			buf = dst[start : start+min(room, limit)]
		} else {
			buf = make([]byte, size)
		}
		n, err := DecodeInto(buf, src)
		switch {
		case err == nil && inPlace:
			return dst[:start+n], nil
		case err == nil:
			return append(dst, buf[:n]...), nil
		case errors.Is(err, errTooSmall) && len(buf) < limit:
			size = limit // more frames than the first declared: room for all that is allowed
			continue
		case errors.Is(err, errTooSmall):
			return dst, fmt.Errorf("%w: %w", codecs.ErrCorrupt, &codecs.LimitError{Codec: "zstd", Limit: limit})
		case strings.Contains(err.Error(), "checksum"):
			return dst, fmt.Errorf("%w: zstd: %v", codecs.ErrChecksum, err)
		}
		return dst, fmt.Errorf("%w: zstd: %v", codecs.ErrCorrupt, err)
	}
}

// Encode appends one zstd frame holding src (with its content size) to
// dst, compressed by libzstd at the codec's level; with a content
// checksum, by the pure-Go codec. A level out of range is
// codecs.ErrInvalidConfig.
func (z *Zstd) Encode(dst, src []byte) ([]byte, error) {
	if err := z.CheckEncode(); err != nil {
		return dst, err
	}
	if z.Checksum() {
		return z.Zstd.Encode(dst, src)
	}
	bound := zstd.CompressBound(len(src))
	start := len(dst)
	if cap(dst)-start < bound {
		grown := make([]byte, start, start+bound)
		copy(grown, dst)
		dst = grown
	}
	c := ctxs.Get().(zstd.Ctx)
	out, err := c.CompressLevel(dst[start:start+bound], src, z.Level())
	ctxs.Put(c)
	if err != nil {
		return dst[:start], fmt.Errorf("zstd: %w", err)
	}
	return dst[:start+len(out)], nil
}
