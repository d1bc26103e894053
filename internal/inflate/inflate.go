// Package inflate decodes whole DEFLATE buffers (RFC 1951) in their raw,
// zlib (RFC 1950) and gzip (RFC 1952) framings, into output of a known
// bound: the decoding behind gozarr's gzip, numcodecs zlib and gzip, and
// Blosc zlib codecs.
//
// Unlike a stream reader (compress/flate), it sees the whole input and the
// whole output at once, as libdeflate does: the bit buffer is refilled
// from 8-byte loads without branches, table entries carry a symbol's
// length and extra bits together, and a fast loop copies matches in
// 8-byte words while both buffers have slack, leaving a checked loop for
// their last bytes. It accepts and rejects what compress/flate,
// compress/zlib and compress/gzip do (a differential fuzz target checks
// it), and never reads or writes out of bounds or allocates beyond the
// limit on any input.
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
)

// Errors. Every error wraps one of these.
var (
	// ErrCorrupt is a malformed or truncated stream.
	ErrCorrupt = errors.New("inflate: corrupt stream")
	// ErrChecksum is a stream whose Adler-32, CRC-32 or size trailer does
	// not match its data.
	ErrChecksum = errors.New("inflate: checksum mismatch")
	// ErrTooLarge is a stream that decodes to more than the limit.
	ErrTooLarge = errors.New("inflate: output exceeds the limit")
)

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// begin readies a pooled decoder to append at most limit bytes to dst,
// allocating room for guess bytes when dst's spare capacity is smaller.
func begin(dst, src []byte, limit, guess int) *decoder {
	d := decoders.Get().(*decoder)
	limit = min(max(limit, 0), math.MaxInt-len(dst))
	guess = min(max(guess, 0), limit)
	out := dst[:cap(dst)]
	if cap(dst)-len(dst) < guess {
		out = make([]byte, len(dst)+guess)
		copy(out, dst)
	}
	d.in, d.pos = src, 0
	d.bitbuf, d.bitsleft = 0, 0
	d.out = out[:min(len(out), len(dst)+limit)]
	d.op, d.start = len(dst), len(dst)
	d.end, d.limit = len(dst)+limit, limit
	return d
}

// finish returns the decoder to the pool and the output (dst on error).
func (d *decoder) finish(dst []byte, err error) ([]byte, error) {
	out := d.out[:d.op]
	d.in, d.out = nil, nil
	decoders.Put(d)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// rawGuess is a first output size for n input bytes (DEFLATE expands at
// most 1032 times).
func rawGuess(n int) int {
	if n >= math.MaxInt/2048 {
		return math.MaxInt
	}
	return 1032*n + 64
}

// Raw appends the decoding of the raw DEFLATE stream at the start of src
// to dst, at most limit bytes (else ErrTooLarge), and returns it with the
// number of bytes of src the stream took (bytes after it are not read).
// It writes into dst's spare capacity when it is large enough. On error
// it returns dst.
func Raw(dst, src []byte, limit int) ([]byte, int, error) {
	d := begin(dst, src, limit, rawGuess(len(src)))
	err := d.inflate()
	n := d.pos
	out, err := d.finish(dst, err)
	if err != nil {
		return dst, 0, err
	}
	return out, n, nil
}

// Zlib appends the decoding of the zlib stream src to dst, at most limit
// bytes (else ErrTooLarge), checking its Adler-32. Bytes after the stream
// are ignored, as by compress/zlib and Python's zlib.decompress. A preset
// dictionary is an error unless its Adler-32 is that of no bytes (as
// compress/zlib with a nil dictionary). It writes into dst's spare
// capacity when it is large enough. On error it returns dst.
func Zlib(dst, src []byte, limit int) ([]byte, error) {
	d := begin(dst, src, limit, rawGuess(len(src)))
	return d.finish(dst, d.zlib())
}

func (d *decoder) zlib() error {
	src := d.in
	if len(src) < 2 {
		return fmt.Errorf("%w: zlib header truncated (%d bytes)", ErrCorrupt, len(src))
	}
	if src[0]&0x0f != 8 || src[0]>>4 > 7 || binary.BigEndian.Uint16(src)%31 != 0 {
		return fmt.Errorf("%w: invalid zlib header %#02x %#02x", ErrCorrupt, src[0], src[1])
	}
	d.pos = 2
	if src[1]&0x20 != 0 {
		if len(src) < 6 {
			return fmt.Errorf("%w: zlib dictionary id truncated", ErrCorrupt)
		}
		if id := binary.BigEndian.Uint32(src[2:]); id != 1 {
			return fmt.Errorf("%w: zlib stream needs preset dictionary %#08x", ErrCorrupt, id)
		}
		d.pos = 6
	}
	if err := d.inflate(); err != nil {
		return err
	}
	if d.pos+4 > len(src) {
		return fmt.Errorf("%w: zlib Adler-32 truncated", ErrCorrupt)
	}
	want := binary.BigEndian.Uint32(src[d.pos:])
	if got := adler32(d.out[d.start:d.op]); got != want {
		return fmt.Errorf("%w: zlib Adler-32 is %#08x, stream says %#08x", ErrChecksum, got, want)
	}
	return nil
}

// Gzip appends the decoding of the gzip data src, one or more members,
// to dst, at most limit bytes in all (else ErrTooLarge), checking each
// member's CRC-32 and size. As with compress/gzip, anything after a
// member must be another member, a header CRC must match, and a file
// name or comment is at most 511 bytes. It writes into dst's spare
// capacity when it is large enough. On error it returns dst.
func Gzip(dst, src []byte, limit int) ([]byte, error) {
	// The last member's size (mod 2^32) is a first guess of the whole.
	guess := rawGuess(len(src))
	if len(src) >= 4 {
		guess = min(guess, int(binary.LittleEndian.Uint32(src[len(src)-4:])))
	}
	d := begin(dst, src, limit, guess)
	return d.finish(dst, d.gzip())
}

// gzip header flags.
const (
	gzipHCRC    = 1 << 1
	gzipExtra   = 1 << 2
	gzipName    = 1 << 3
	gzipComment = 1 << 4
)

func (d *decoder) gzip() error {
	src := d.in
	if len(src) == 0 {
		return fmt.Errorf("%w: empty gzip data", ErrCorrupt)
	}
	for member := 0; d.pos < len(src); member++ {
		p := d.pos
		if len(src)-p < 10 {
			return fmt.Errorf("%w: gzip member %d header truncated", ErrCorrupt, member)
		}
		h := src[p:]
		if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
			return fmt.Errorf("%w: gzip member %d at byte %d has an invalid header", ErrCorrupt, member, p)
		}
		flags := h[3]
		q := p + 10
		if flags&gzipExtra != 0 {
			if len(src)-q < 2 {
				return fmt.Errorf("%w: gzip member %d header truncated", ErrCorrupt, member)
			}
			q += 2 + int(binary.LittleEndian.Uint16(src[q:]))
			if q > len(src) {
				return fmt.Errorf("%w: gzip member %d header truncated", ErrCorrupt, member)
			}
		}
		for _, f := range [2]byte{gzipName, gzipComment} {
			if flags&f == 0 {
				continue
			}
			// compress/gzip reads at most 512 bytes, the NUL included.
			i := 0
			for ; q+i < len(src) && i < 512 && src[q+i] != 0; i++ {
			}
			switch {
			case i == 512:
				return fmt.Errorf("%w: gzip member %d has a name or comment longer than 511 bytes", ErrCorrupt, member)
			case q+i == len(src):
				return fmt.Errorf("%w: gzip member %d header truncated", ErrCorrupt, member)
			}
			q += i + 1
		}
		if flags&gzipHCRC != 0 {
			if len(src)-q < 2 {
				return fmt.Errorf("%w: gzip member %d header truncated", ErrCorrupt, member)
			}
			if got, want := uint16(crc32.ChecksumIEEE(src[p:q])), binary.LittleEndian.Uint16(src[q:]); got != want {
				return fmt.Errorf("%w: gzip member %d header CRC is %#04x, header says %#04x", ErrCorrupt, member, got, want)
			}
			q += 2
		}
		d.pos = q
		d.start = d.op
		if err := d.inflate(); err != nil {
			return err
		}
		if len(src)-d.pos < 8 {
			return fmt.Errorf("%w: gzip member %d trailer truncated", ErrCorrupt, member)
		}
		data := d.out[d.start:d.op]
		t := src[d.pos:]
		if got, want := crc32.ChecksumIEEE(data), binary.LittleEndian.Uint32(t); got != want {
			return fmt.Errorf("%w: gzip member %d CRC-32 is %#08x, trailer says %#08x", ErrChecksum, member, got, want)
		}
		if got, want := uint32(len(data)), binary.LittleEndian.Uint32(t[4:]); got != want {
			return fmt.Errorf("%w: gzip member %d size is %d mod 2^32, trailer says %d", ErrChecksum, member, got, want)
		}
		d.pos += 8
	}
	return nil
}
