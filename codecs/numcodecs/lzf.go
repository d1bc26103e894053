package numcodecs

// The imagecodecs_lzf codec (bytes -> bytes): LZF, the compressor of
// h5py's HDF5 "lzf" filter (32000), under the id kerchunk and VirtualiZarr
// give it.
//
// Format: liblzf's (http://oldhome.schmorp.de/marc/liblzf.html): a control
// byte c < 32 starts a run of c+1 literal bytes; otherwise c>>5 is a match
// length (7: add the next byte) of length+2 bytes copied from distance
// ((c&31)<<8 | next byte) + 1 back. imagecodecs' numcodecs codec
// (https://github.com/cgohlke/imagecodecs, numcodecs.py Lzf) may prefix
// the stream with the decoded size as a 4-byte little-endian integer
// ("header": true, its default); HDF5's filter writes no header, so
// references to h5py's chunks should say "header": false. kerchunk and
// VirtualiZarr write {"id": "imagecodecs_lzf"} for those chunks all the
// same: with "header" absent, a stream whose first 4 bytes are not the size
// the rest decodes to is read as a stream without a header.
// JSON name: "numcodecs.imagecodecs_lzf"
// Configuration example (Zarr v2: {"id": "imagecodecs_lzf", "header": false}):
//
//	{"name": "numcodecs.imagecodecs_lzf", "configuration": {"header": false}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs"
)

// LZF is the "numcodecs.imagecodecs_lzf" codec. Decoding writes at most
// the chain's limit (a stream that would write more is ErrCorrupt, before
// more is allocated) and requires every match to point inside the output.
// Encoding is a greedy LZF compressor (any LZF decoder, liblzf's included,
// reads it). An LZF is immutable and safe for concurrent use.
type LZF struct {
	header bool
	auto   bool // header not configured: either form
}

// NewLZF returns the LZF codec, with imagecodecs' 4-byte size header or
// without it (HDF5's form).
func NewLZF(header bool) *LZF { return &LZF{header: header} }

func init() {
	codecs.Register(prefix+"imagecodecs_lzf", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Header *bool `json:"header"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Header == nil {
			return &LZF{header: true, auto: true}, nil
		}
		return NewLZF(*cfg.Header), nil
	})
}

// Name returns "numcodecs.imagecodecs_lzf".
func (c *LZF) Name() string { return prefix + "imagecodecs_lzf" }

// Configuration returns {"header": bool}, or {} when the header was not
// configured (either form is read).
func (c *LZF) Configuration() any {
	if c.auto {
		return struct{}{}
	}
	return struct {
		Header bool `json:"header"`
	}{c.header}
}

// MaxEncodedSize returns the header and n bytes as literals: n plus one
// control byte per 32.
func (c *LZF) MaxEncodedSize(n int) int {
	n = max(n, 0)
	return 4 + n + (n+31)/32
}

// lzf limits: literal runs, match lengths and distances.
const (
	lzfMaxLit = 32
	lzfMaxLen = 264
	lzfMaxOff = 8192
	lzfHash   = 14
)

// Encode appends the LZF stream of src (with the size header when the
// codec has one) to dst. Input of 2 GiB or more with a header is
// ErrInvalidConfig.
func (c *LZF) Encode(dst, src []byte) ([]byte, error) {
	if c.header {
		if len(src) > math.MaxInt32 {
			return dst, fmt.Errorf("%w: %s: %d bytes do not fit the size header", codecs.ErrInvalidConfig, c.Name(), len(src))
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
	}
	var table [1 << lzfHash]int32 // position+1 of the last 3 bytes with each hash
	lit := 0
	flush := func(end int) {
		for lit < end {
			n := min(end-lit, lzfMaxLit)
			dst = append(dst, byte(n-1))
			dst = append(dst, src[lit:lit+n]...)
			lit += n
		}
	}
	i := 0
	for i+2 < len(src) {
		v := uint32(src[i])<<16 | uint32(src[i+1])<<8 | uint32(src[i+2])
		h := (v * 2654435761) >> (32 - lzfHash)
		ref := int(table[h]) - 1
		table[h] = int32(i + 1)
		if ref < 0 || i-ref > lzfMaxOff || src[ref] != src[i] || src[ref+1] != src[i+1] || src[ref+2] != src[i+2] {
			i++
			continue
		}
		flush(i)
		l := 3
		for i+l < len(src) && l < lzfMaxLen && src[ref+l] == src[i+l] {
			l++
		}
		off := i - ref - 1
		if m := l - 2; m < 7 {
			dst = append(dst, byte(m<<5|off>>8), byte(off))
		} else {
			dst = append(dst, byte(7<<5|off>>8), byte(m-7), byte(off))
		}
		i += l
		lit = i
	}
	flush(len(src))
	return dst, nil
}

// Decode appends the decoding of src to dst. A stream that writes more
// than limit bytes (or than its header says), a match before the start of
// the output, a truncated run and, with a header, output of another size
// are ErrCorrupt.
func (c *LZF) Decode(dst, src []byte, limit int) ([]byte, error) {
	if c.auto {
		out, err := c.decode(dst, src, limit, true)
		if err == nil {
			return out, nil
		}
		return c.decode(dst, src, limit, false)
	}
	return c.decode(dst, src, limit, c.header)
}

func (c *LZF) decode(dst, src []byte, limit int, header bool) ([]byte, error) {
	limit = max(limit, 0)
	want := -1
	if header {
		if len(src) < 4 {
			return dst, fmt.Errorf("%w: %s: %d bytes, too short for the size header", codecs.ErrCorrupt, c.Name(), len(src))
		}
		size := binary.LittleEndian.Uint32(src)
		if int64(size) > int64(limit) {
			return dst, fmt.Errorf("%w: %s: header says %d bytes, at most %d expected", codecs.ErrCorrupt, c.Name(), size, limit)
		}
		want, limit, src = int(size), int(size), src[4:]
	}
	start := len(dst)
	// A 3-byte match writes at most 264 bytes: no valid stream decodes to
	// more than 88 times its length, so reserve no more than that.
	if grow := min(limit, 88*len(src)+lzfMaxLit); cap(dst)-start < grow {
		nd := make([]byte, start, start+grow)
		copy(nd, dst)
		dst = nd
	}
	for i := 0; i < len(src); {
		ctrl := int(src[i])
		i++
		if ctrl < 32 {
			n := ctrl + 1
			if i+n > len(src) {
				return dst[:start], fmt.Errorf("%w: %s: literal run of %d bytes past the end of the input", codecs.ErrCorrupt, c.Name(), n)
			}
			if len(dst)-start+n > limit {
				return dst[:start], fmt.Errorf("%w: %s: decodes to more than %d bytes", codecs.ErrCorrupt, c.Name(), limit)
			}
			dst = append(dst, src[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(src) {
				return dst[:start], fmt.Errorf("%w: %s: truncated match", codecs.ErrCorrupt, c.Name())
			}
			n += int(src[i])
			i++
		}
		if i >= len(src) {
			return dst[:start], fmt.Errorf("%w: %s: truncated match", codecs.ErrCorrupt, c.Name())
		}
		off := (ctrl&31)<<8 | int(src[i]) + 1
		i++
		n += 2
		pos := len(dst)
		if off > pos-start {
			return dst[:start], fmt.Errorf("%w: %s: a match %d bytes back, %d bytes written", codecs.ErrCorrupt, c.Name(), off, pos-start)
		}
		if pos-start+n > limit {
			return dst[:start], fmt.Errorf("%w: %s: decodes to more than %d bytes", codecs.ErrCorrupt, c.Name(), limit)
		}
		for k := range n { // overlapping copies repeat the pattern
			dst = append(dst, dst[pos-off+k])
		}
	}
	if want >= 0 && len(dst)-start != want {
		return dst[:start], fmt.Errorf("%w: %s: decodes to %d bytes, header says %d", codecs.ErrCorrupt, c.Name(), len(dst)-start, want)
	}
	return dst, nil
}
