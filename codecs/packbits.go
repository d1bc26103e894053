package codecs

// The packbits codec (array -> bytes) of zarr-extensions: elements stored in
// their own width in bits, for bool, the narrow types (int2, int4, uint2,
// uint4, float4_e2m1fn, float6_*) and any fixed-size number, optionally
// keeping only a range of each component's bits.
//
// Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits
// JSON name: "packbits" (numcodecs' Zarr v2 packbits filter for bools is
// "numcodecs.packbits", a different codec)
// Configuration example (every member optional):
//
//	{"name": "packbits", "configuration": {"padding_encoding": "first_byte", "first_bit": 0, "last_bit": 3}}
//
// padding_encoding is "none" (the default), "first_byte" or "last_byte"
// (the schema's "start_byte" and "end_byte" are read too, as are
// "start_bit" and "end_bit" for first_bit and last_bit). The bit sequence
// is little-endian: bit j of the sequence is bit j%8 of byte j/8, and
// component i of the chunk holds bits [i·b, (i+1)·b) with its lowest bit
// first, b = last_bit - first_bit + 1.

import (
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/dtype"
)

// PackBitsPadding is how a packbits encoding records its padding bits.
type PackBitsPadding string

// The padding encodings of the packbits codec.
const (
	PaddingNone      PackBitsPadding = "none"
	PaddingFirstByte PackBitsPadding = "first_byte"
	PaddingLastByte  PackBitsPadding = "last_byte"
)

// PackBits is the "packbits" codec. It is immutable and safe for
// concurrent use.
type PackBits struct {
	padding PackBitsPadding
	// first and last are the configured bit range of each component; -1
	// when not given (0 and the component's width minus one).
	first, last int
}

// NewPackBits returns the packbits codec with the given padding encoding
// and bit range; first or last < 0 take the defaults (0, and the
// component's last bit).
func NewPackBits(padding PackBitsPadding, first, last int) (*PackBits, error) {
	switch padding {
	case "", PaddingNone:
		padding = PaddingNone
	case PaddingFirstByte, PaddingLastByte:
	default:
		return nil, fmt.Errorf("%w: packbits: padding_encoding %q is not \"none\", \"first_byte\" or \"last_byte\"", ErrInvalidConfig, string(padding))
	}
	if first >= 0 && last >= 0 && last < first {
		return nil, fmt.Errorf("%w: packbits: last_bit %d is before first_bit %d", ErrInvalidConfig, last, first)
	}
	if first > 63 || last > 63 {
		return nil, fmt.Errorf("%w: packbits: bit %d past 63", ErrInvalidConfig, max(first, last))
	}
	return &PackBits{padding: padding, first: max(first, -1), last: max(last, -1)}, nil
}

func init() {
	Register("packbits", func(configuration json.RawMessage) (Codec, error) {
		var cfg struct {
			Padding *string `json:"padding_encoding"`
			First   *int    `json:"first_bit"`
			Last    *int    `json:"last_bit"`
			Start   *int    `json:"start_bit"`
			End     *int    `json:"end_bit"`
		}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		padding := PaddingNone
		if cfg.Padding != nil {
			switch *cfg.Padding {
			case "start_byte":
				padding = PaddingFirstByte
			case "end_byte":
				padding = PaddingLastByte
			default:
				padding = PackBitsPadding(*cfg.Padding)
			}
		}
		bit := func(a, b *int, name string) (int, error) {
			if a != nil && b != nil {
				return 0, fmt.Errorf("%w: packbits: %s given twice", ErrInvalidConfig, name)
			}
			if a == nil {
				a = b
			}
			if a == nil {
				return -1, nil
			}
			if *a < 0 {
				return 0, fmt.Errorf("%w: packbits: %s %d is negative", ErrInvalidConfig, name, *a)
			}
			return *a, nil
		}
		first, err := bit(cfg.First, cfg.Start, "first_bit")
		if err != nil {
			return nil, err
		}
		last, err := bit(cfg.Last, cfg.End, "last_bit")
		if err != nil {
			return nil, err
		}
		return NewPackBits(padding, first, last)
	})
}

// Name returns "packbits".
func (p *PackBits) Name() string { return "packbits" }

// packBitsConfig is the configuration as written, zarrs' spelling.
type packBitsConfig struct {
	Padding PackBitsPadding `json:"padding_encoding"`
	First   *int            `json:"first_bit,omitempty"`
	Last    *int            `json:"last_bit,omitempty"`
}

// Configuration returns the codec's configuration.
func (p *PackBits) Configuration() any {
	c := packBitsConfig{Padding: p.padding}
	if p.first >= 0 {
		c.First = &p.first
	}
	if p.last >= 0 {
		c.Last = &p.last
	}
	return c
}

// packLayout is how the elements of one data type pack.
type packLayout struct {
	comps     int  // components per element (2 for complex numbers)
	compBytes int  // bytes per component in memory
	width     int  // bits per component (N)
	first     int  // first bit kept
	bits      int  // bits kept per component (b)
	signed    bool // sign-extend on decoding
}

// layout returns the packing of repr's elements, or ErrInvalidConfig for a
// data type packbits does not take.
func (p *PackBits) layout(d dtype.DataType) (packLayout, error) {
	l := packLayout{comps: 1}
	switch d.Kind() {
	case dtype.Bool:
		l.width, l.compBytes = 1, 1
	case dtype.NarrowInt, dtype.NarrowUint, dtype.NarrowFloat:
		l.width, l.compBytes = d.Bits(), 1
		l.signed = d.Kind() == dtype.NarrowInt
	case dtype.Int, dtype.Uint, dtype.Float, dtype.BFloat:
		l.width, l.compBytes = 8*d.Size(), d.Size()
		l.signed = d.Kind() == dtype.Int
	case dtype.Complex:
		l.comps, l.compBytes = 2, d.Size()/2
		l.width = 8 * l.compBytes
	default:
		return l, fmt.Errorf("%w: packbits: data type %s cannot be bit-packed", ErrInvalidConfig, d)
	}
	l.first, l.bits = 0, l.width
	last := l.width - 1
	if p.first >= 0 {
		l.first = p.first
	}
	if p.last >= 0 {
		last = p.last
	}
	if last >= l.width || l.first > last {
		return l, fmt.Errorf("%w: packbits: bits %d..%d outside the %d bits of %s", ErrInvalidConfig, l.first, last, l.width, d)
	}
	l.bits = last - l.first + 1
	return l, nil
}

// ValidateRepr reports whether the codec takes chunks of repr.
func (p *PackBits) ValidateRepr(repr ChunkRepr) error {
	_, err := p.layout(repr.DType)
	return err
}

// packedBytes returns the encoded size of n elements, padding byte
// included, and the number of padding bits.
func (p *PackBits) packedBytes(l packLayout, n int) (size, pad int) {
	total := n * l.comps * l.bits
	size = (total + 7) / 8
	pad = size*8 - total
	if p.padding != PaddingNone {
		size++
	}
	return size, pad
}

// MaxEncodedSize returns the exact encoded size of a chunk of repr.
func (p *PackBits) MaxEncodedSize(repr ChunkRepr) int {
	l, err := p.layout(repr.DType)
	if err != nil {
		return 0
	}
	n, _ := p.packedBytes(l, repr.NumElements())
	return n
}

// Encode appends the packed bits of src to dst.
func (p *PackBits) Encode(dst, src []byte, repr ChunkRepr) ([]byte, error) {
	l, err := p.layout(repr.DType)
	if err != nil {
		return dst, err
	}
	if len(src) != repr.NumBytes() {
		return dst, fmt.Errorf("%w: packbits: encode of %d bytes, chunk has %d", ErrCorrupt, len(src), repr.NumBytes())
	}
	size, pad := p.packedBytes(l, repr.NumElements())
	start := len(dst)
	dst = append(dst, make([]byte, size)...)
	out := dst[start:]
	if p.padding == PaddingFirstByte {
		out[0] = byte(pad)
		out = out[1:]
	} else if p.padding == PaddingLastByte {
		out[len(out)-1] = byte(pad)
		out = out[:len(out)-1]
	}
	var acc uint64 // bits not yet flushed, lowest first
	nacc, o := 0, 0
	mask := uint64(1)<<l.bits - 1
	if l.bits == 64 {
		mask = ^uint64(0)
	}
	for c := 0; c < len(src); c += l.compBytes {
		var v uint64
		for i := l.compBytes - 1; i >= 0; i-- {
			v = v<<8 | uint64(src[c+i])
		}
		v = v >> l.first & mask
		// Append b bits; flush whole bytes (a 64-bit value is split so
		// the accumulator never overflows).
		for k := 0; k < l.bits; {
			take := min(l.bits-k, 64-nacc, 56)
			acc |= (v >> k & (uint64(1)<<take - 1)) << nacc
			nacc += take
			k += take
			for nacc >= 8 {
				out[o] = byte(acc)
				o++
				acc >>= 8
				nacc -= 8
			}
		}
	}
	if nacc > 0 {
		out[o] = byte(acc)
	}
	return dst, nil
}

// Decode unpacks src into dst (repr.NumBytes() bytes): each component's
// bits go back to first_bit, sign-extended for signed integers (int2 and
// int4 through their whole byte), the other bits zero.
func (p *PackBits) Decode(dst, src []byte, repr ChunkRepr) error {
	l, err := p.layout(repr.DType)
	if err != nil {
		return err
	}
	if len(dst) != repr.NumBytes() {
		return fmt.Errorf("%w: packbits: %d bytes to decode into, chunk has %d", ErrCorrupt, len(dst), repr.NumBytes())
	}
	size, pad := p.packedBytes(l, repr.NumElements())
	if len(src) != size {
		return fmt.Errorf("%w: packbits: %d bytes, a chunk of %v %s packs into %d", ErrCorrupt, len(src), repr.Shape, repr.DType, size)
	}
	switch p.padding {
	case PaddingFirstByte:
		if int(src[0]) != pad {
			return fmt.Errorf("%w: packbits: first byte says %d padding bits, the chunk has %d", ErrCorrupt, src[0], pad)
		}
		src = src[1:]
	case PaddingLastByte:
		if int(src[len(src)-1]) != pad {
			return fmt.Errorf("%w: packbits: last byte says %d padding bits, the chunk has %d", ErrCorrupt, src[len(src)-1], pad)
		}
		src = src[:len(src)-1]
	}
	var acc uint64
	nacc, o := 0, 0
	for c := 0; c < len(dst); c += l.compBytes {
		var v uint64
		for k := 0; k < l.bits; {
			for nacc < 56 && o < len(src) {
				acc |= uint64(src[o]) << nacc
				o++
				nacc += 8
			}
			take := min(l.bits-k, nacc)
			if take == 0 { // cannot happen: the size was checked
				return fmt.Errorf("%w: packbits: ran out of bits", ErrCorrupt)
			}
			v |= (acc & (uint64(1)<<take - 1)) << k
			acc >>= take
			nacc -= take
			k += take
		}
		v <<= l.first
		if l.signed && v>>(l.first+l.bits-1)&1 == 1 {
			v |= ^uint64(0) << (l.first + l.bits)
		}
		for i := range l.compBytes {
			dst[c+i] = byte(v >> (8 * i))
		}
	}
	return nil
}
