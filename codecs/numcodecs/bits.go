package numcodecs

// The numcodecs filters bitround, packbits and categorize (bytes -> bytes).
//
// Formats: https://numcodecs.readthedocs.io/en/stable/filter/bitround.html,
// .../packbits.html, .../categorize.html
// JSON names: "numcodecs.bitround", "numcodecs.packbits",
// "numcodecs.categorize"
// Configuration examples (Zarr v2: {"id": "bitround", "keepbits": 10}):
//
//	{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}
//	{"name": "numcodecs.packbits", "configuration": {}}
//	{"name": "numcodecs.categorize", "configuration": {"labels": ["a", "b"], "dtype": "<U1", "astype": "|u1"}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// BitRound is the "numcodecs.bitround" filter: encoding keeps the
// keepbits most significant mantissa bits of each float, rounding to
// nearest (ties to even, as numcodecs: add half a quantum minus one and the
// lowest kept bit, then mask); decoding is the identity. Encoding needs the
// element size, which the chain tells it (codecs.TypeSizer): 2, 4 or 8
// bytes, read as little-endian floats (gozarr's memory representation, and
// the v2 chunks of little-endian arrays). A BitRound is immutable and safe
// for concurrent use.
type BitRound struct {
	keepbits int
	size     int // element size in bytes; 0 until the chain sets it
}

// NewBitRound returns bitround keeping keepbits mantissa bits (0..52).
func NewBitRound(keepbits int) (*BitRound, error) {
	if keepbits < 0 || keepbits > 52 {
		return nil, fmt.Errorf("%w: numcodecs.bitround: keepbits %d, want 0..52", codecs.ErrInvalidConfig, keepbits)
	}
	return &BitRound{keepbits: keepbits}, nil
}

func init() {
	codecs.Register(prefix+"bitround", func(configuration json.RawMessage) (codecs.Codec, error) {
		k, err := keepbitsOf(configuration, prefix+"bitround")
		if err != nil {
			return nil, err
		}
		return NewBitRound(k)
	})
	codecs.Register(prefix+"packbits", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return PackBits{}, nil
	})
	codecs.Register(prefix+"categorize", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Labels *[]string `json:"labels"`
			DType  *string   `json:"dtype"`
			AsType *string   `json:"astype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Labels == nil || cfg.DType == nil {
			return nil, fmt.Errorf("%w: numcodecs.categorize: configuration needs \"labels\" and \"dtype\"", codecs.ErrInvalidConfig)
		}
		as := "|u1"
		if cfg.AsType != nil {
			as = *cfg.AsType
		}
		if *cfg.DType == "|O" || *cfg.DType == "O" {
			// Over object arrays: the array's object codec (object.go).
			return newObjectCategorize(*cfg.Labels, as)
		}
		return NewCategorize(*cfg.Labels, *cfg.DType, as)
	})
}

// Name returns "numcodecs.bitround".
func (b *BitRound) Name() string { return prefix + "bitround" }

// Configuration returns {"keepbits": n}.
func (b *BitRound) Configuration() any {
	return struct {
		Keepbits int `json:"keepbits"`
	}{b.keepbits}
}

// WithTypeSize returns the filter for elements of size bytes.
func (b *BitRound) WithTypeSize(size int) codecs.BytesToBytes {
	c := *b
	c.size = size
	return &c
}

// MaxEncodedSize returns n.
func (b *BitRound) MaxEncodedSize(n int) int { return n }

// Encode appends src with its floats rounded to dst. An element size other
// than 2, 4 or 8, keepbits beyond the type's mantissa or input that is not
// whole elements is ErrInvalidConfig.
func (b *BitRound) Encode(dst, src []byte) ([]byte, error) {
	maxbits := mantissaBits[b.size]
	if maxbits == 0 {
		return dst, fmt.Errorf("%w: numcodecs.bitround: elements of %d bytes (floats of 2, 4 or 8 only)", codecs.ErrInvalidConfig, b.size)
	}
	if b.keepbits > maxbits {
		return dst, fmt.Errorf("%w: numcodecs.bitround: keepbits %d, more than the %d of %d-byte floats", codecs.ErrInvalidConfig, b.keepbits, maxbits, b.size)
	}
	if len(src)%b.size != 0 {
		return dst, fmt.Errorf("%w: numcodecs.bitround: %d bytes are not whole %d-byte floats", codecs.ErrInvalidConfig, len(src), b.size)
	}
	start := len(dst)
	dst = append(dst, src...)
	roundMantissas(dst[start:], b.size, b.keepbits)
	return dst, nil
}

// Decode appends src to dst (bit rounding is not reversed). More than
// limit bytes, or (when the element size is known) bytes that are not
// whole elements, is ErrCorrupt.
func (b *BitRound) Decode(dst, src []byte, limit int) ([]byte, error) {
	if b.size > 0 && len(src)%b.size != 0 {
		return dst, fmt.Errorf("%w: numcodecs.bitround: %d bytes are not whole %d-byte elements", codecs.ErrCorrupt, len(src), b.size)
	}
	if len(src) > limit {
		return dst, fmt.Errorf("%w: numcodecs.bitround: %d bytes, at most %d expected", codecs.ErrCorrupt, len(src), max(limit, 0))
	}
	return append(dst, src...), nil
}

// PackBits is the "numcodecs.packbits" filter for bool elements: encoding
// writes the number of padding bits (0..7) in one byte, then eight
// elements per byte, the first in the most significant bit (NumPy's
// packbits); any non-zero byte is true. Decoding writes one byte, 0 or 1,
// per element. PackBits is a value type, safe for concurrent use.
type PackBits struct{}

// Name returns "numcodecs.packbits".
func (PackBits) Name() string { return prefix + "packbits" }

// Configuration returns {}.
func (PackBits) Configuration() any { return struct{}{} }

// MaxEncodedSize returns 1 + ceil(n/8).
func (PackBits) MaxEncodedSize(n int) int { return 1 + (max(n, 0)+7)/8 }

// Encode appends the packed bits of src to dst.
func (PackBits) Encode(dst, src []byte) ([]byte, error) {
	n := len(src)
	pad := (8 - n%8) % 8
	dst = append(dst, byte(pad))
	for i := 0; i < n; i += 8 {
		var b byte
		for j := 0; j < 8 && i+j < n; j++ {
			if src[i+j] != 0 {
				b |= 0x80 >> j
			}
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// Decode appends the unpacked elements of src to dst. An empty input, a
// padding count over 7 (or over the bits there are), or more than limit
// elements (checked before allocating) is ErrCorrupt.
func (PackBits) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		return dst, fmt.Errorf("%w: numcodecs.packbits: empty input (no padding byte)", codecs.ErrCorrupt)
	}
	pad := int(src[0])
	bits := src[1:]
	if pad > 7 || (len(bits) == 0 && pad != 0) {
		return dst, fmt.Errorf("%w: numcodecs.packbits: %d padding bits for %d bytes", codecs.ErrCorrupt, pad, len(bits))
	}
	n := len(bits)*8 - pad
	if n > limit {
		return dst, fmt.Errorf("%w: numcodecs.packbits: %d elements, at most %d expected", codecs.ErrCorrupt, n, max(limit, 0))
	}
	start := len(dst)
	out := ensure(dst, n)
	o := out[start:]
	for i := range n {
		o[i] = bits[i/8] >> (7 - i%8) & 1
	}
	return out, nil
}

// Categorize is the "numcodecs.categorize" filter over fixed-width string
// elements (NumPy "<U", ">U" or "|S" dtypes): encoding replaces each
// element by 1 + the index of the label it equals (the last such label, as
// numcodecs assigns in order), 0 when none, as integers of "astype"
// (default "|u1"); decoding writes each code's label (cut to the element
// width, as NumPy assigns), or the empty string for 0 and unknown codes.
// Object ("|O") arrays need variable-length strings and are refused. A
// Categorize is immutable and safe for concurrent use.
type Categorize struct {
	labels  []string
	descr   string
	dt      dtype.DataType
	big     bool
	as      elemType
	encoded [][]byte       // each label as one element of dt (cut to width)
	index   map[string]int // element text -> code
}

// NewCategorize returns categorize for labels, the string dtype dtypeStr
// and the integer type astype. Errors wrap ErrInvalidConfig.
func NewCategorize(labels []string, dtypeStr, astype string) (*Categorize, error) {
	dt, big, err := dtype.ParseNumpy(dtypeStr)
	if err != nil || (dt.Kind() != dtype.String && dt.Kind() != dtype.Bytes) {
		return nil, fmt.Errorf("%w: numcodecs.categorize: dtype %q: only fixed-width strings (<U, |S) are supported here (object arrays need variable-length strings)", codecs.ErrInvalidConfig, dtypeStr)
	}
	as, err := parseElem("numcodecs.categorize", "astype", astype)
	if err != nil {
		return nil, err
	}
	if !as.integer() {
		return nil, fmt.Errorf("%w: numcodecs.categorize: astype %q is not an integer type", codecs.ErrInvalidConfig, astype)
	}
	if len(labels) > 1<<20 {
		return nil, fmt.Errorf("%w: numcodecs.categorize: %d labels", codecs.ErrInvalidConfig, len(labels))
	}
	c := &Categorize{labels: labels, descr: dtypeStr, dt: dt, big: big, as: as, index: map[string]int{}}
	for i, l := range labels {
		if !utf8.ValidString(l) {
			return nil, fmt.Errorf("%w: numcodecs.categorize: label %d is not valid UTF-8", codecs.ErrInvalidConfig, i)
		}
		e := make([]byte, dt.Size())
		text := cutToWidth(dt, l)
		if err := dtype.EncodeString(dt, text, e); err != nil {
			return nil, fmt.Errorf("%w: numcodecs.categorize: label %d: %v", codecs.ErrInvalidConfig, i, err)
		}
		c.encoded = append(c.encoded, e)
		if text == l { // a longer label equals no element
			c.index[l] = i + 1
		}
	}
	return c, nil
}

// cutToWidth cuts s to what one element of d holds.
func cutToWidth(d dtype.DataType, s string) string {
	if d.Kind() == dtype.Bytes {
		if len(s) > d.Size() {
			return s[:d.Size()]
		}
		return s
	}
	n := 0
	for i := range s {
		if n == d.Chars() {
			return s[:i]
		}
		n++
	}
	return s
}

// Name returns "numcodecs.categorize".
func (c *Categorize) Name() string { return prefix + "categorize" }

// Configuration returns {"labels", "dtype", "astype"}.
func (c *Categorize) Configuration() any {
	return struct {
		Labels []string `json:"labels"`
		DType  string   `json:"dtype"`
		AsType string   `json:"astype"`
	}{c.labels, c.descr, c.as.descr}
}

// MaxEncodedSize returns the size of the codes of n bytes of elements.
func (c *Categorize) MaxEncodedSize(n int) int {
	return (max(n, 0) + c.dt.Size() - 1) / c.dt.Size() * c.as.size
}

// swapped returns elem in little-endian code units (a copy when the dtype
// is big-endian).
func (c *Categorize) swapped(elem []byte) []byte {
	if !c.big {
		return elem
	}
	out := make([]byte, len(elem))
	for i := 0; i+4 <= len(elem); i += 4 {
		binary.LittleEndian.PutUint32(out[i:], binary.BigEndian.Uint32(elem[i:]))
	}
	return out
}

// Encode appends the codes of src's elements to dst. Input that is not
// whole elements is ErrInvalidConfig.
func (c *Categorize) Encode(dst, src []byte) ([]byte, error) {
	w := c.dt.Size()
	if len(src)%w != 0 {
		return dst, fmt.Errorf("%w: numcodecs.categorize: %d bytes are not whole %q elements", codecs.ErrInvalidConfig, len(src), c.descr)
	}
	start := len(dst)
	out := ensure(dst, len(src)/w*c.as.size)
	o := out[start:]
	for i := 0; i < len(src)/w; i++ {
		code := 0
		if s, err := dtype.DecodeString(c.dt, c.swapped(src[i*w:(i+1)*w])); err == nil {
			code = c.index[s]
		}
		c.as.store(o[i*c.as.size:], uint64(code))
	}
	return out, nil
}

// Decode appends the labels of src's codes to dst. Input that is not
// whole codes, or more than limit bytes of elements (checked before
// allocating), is ErrCorrupt.
func (c *Categorize) Decode(dst, src []byte, limit int) ([]byte, error) {
	w, cs := c.dt.Size(), c.as.size
	if len(src)%cs != 0 {
		return dst, fmt.Errorf("%w: numcodecs.categorize: %d bytes are not whole %q codes", codecs.ErrCorrupt, len(src), c.as.descr)
	}
	n := len(src) / cs
	if n > max(limit, 0)/w {
		return dst, fmt.Errorf("%w: numcodecs.categorize: %d elements decode to %d bytes, at most %d expected", codecs.ErrCorrupt, n, n*w, max(limit, 0))
	}
	start := len(dst)
	out := ensure(dst, n*w)
	o := out[start:]
	clear(o)
	for i := range n {
		code := c.as.extend(c.as.load(src[i*cs:]))
		if code < 1 || code > uint64(len(c.encoded)) {
			continue
		}
		e := o[i*w : (i+1)*w]
		copy(e, c.encoded[code-1])
		if c.big {
			for j := 0; j+4 <= w; j += 4 {
				binary.BigEndian.PutUint32(e[j:], binary.LittleEndian.Uint32(e[j:]))
			}
		}
	}
	return out, nil
}
