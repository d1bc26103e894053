package codecs

// The bytes codec (array -> bytes).
//
// Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html
// JSON name: "bytes"
// Configuration example:
//
//	{"name": "bytes", "configuration": {"endian": "little"}}
//
// "endian" is "little" or "big"; it may be left out (no configuration at
// all, as zarr-python writes it) only for data types of one byte.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
)

// Endian is the byte order the bytes codec stores elements in.
type Endian string

// The byte orders of the bytes codec. EndianUnset is only valid for data
// types whose elements are one byte.
const (
	EndianUnset  Endian = ""
	LittleEndian Endian = "little"
	BigEndian    Endian = "big"
)

// Bytes is the "bytes" codec
// (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html),
// configured as {"name": "bytes", "configuration": {"endian": "little"}}: it stores a chunk's elements in C order with
// the configured byte order. Since gozarr holds chunks little-endian in
// memory, little-endian encoding and decoding are copies and big-endian ones
// reverse the bytes of every element (each component of a complex number on
// its own; bool and raw-bits elements are never swapped).
//
// A Bytes is immutable and safe for concurrent use.
type Bytes struct {
	endian Endian
}

// NewBytes returns the bytes codec with the given byte order
// (EndianUnset, LittleEndian or BigEndian).
func NewBytes(e Endian) (*Bytes, error) {
	switch e {
	case EndianUnset, LittleEndian, BigEndian:
		return &Bytes{endian: e}, nil
	}
	return nil, fmt.Errorf("%w: bytes: endian %q is not \"little\" or \"big\"", ErrInvalidConfig, string(e))
}

func init() {
	Register("bytes", func(configuration json.RawMessage) (Codec, error) {
		var cfg struct {
			Endian *string `json:"endian"`
		}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Endian == nil {
			return NewBytes(EndianUnset)
		}
		if *cfg.Endian == "" {
			return nil, fmt.Errorf("%w: bytes: empty endian", ErrInvalidConfig)
		}
		return NewBytes(Endian(*cfg.Endian))
	})
}

// Name returns "bytes".
func (b *Bytes) Name() string { return "bytes" }

// Endian returns the configured byte order (EndianUnset when none).
func (b *Bytes) Endian() Endian { return b.endian }

// bytesConfig is the JSON configuration of the bytes codec.
type bytesConfig struct {
	Endian Endian `json:"endian"`
}

// Configuration returns {"endian": ...}, or nil when no byte order was
// configured (single-byte data types), as zarr-python writes it.
func (b *Bytes) Configuration() any {
	if b.endian == EndianUnset {
		return nil
	}
	return bytesConfig{Endian: b.endian}
}

// ValidateRepr reports whether the codec can encode chunks of repr: a
// multi-byte data type needs an explicit byte order (ErrInvalidConfig).
// Prepare calls it, so a prepared Chain never fails this way.
func (b *Bytes) ValidateRepr(repr ChunkRepr) error {
	if !repr.DType.Valid() {
		return fmt.Errorf("%w: bytes: invalid data type", ErrInvalidConfig)
	}
	if repr.DType.VarLen() {
		return fmt.Errorf("%w: bytes: %s is variable-length (its codec is %s)", ErrInvalidConfig, repr.DType, repr.DType.VarCodec())
	}
	// Endianness matters only where elements have bytes to swap: raw
	// bits and booleans of any width have none (zarr-python 3 writes raw
	// arrays with a bare {"name": "bytes"}).
	if b.endian == EndianUnset && repr.DType.SwapUnit() > 1 {
		return fmt.Errorf("%w: bytes: endian is required for data type %s (%d bytes per element)",
			ErrInvalidConfig, repr.DType, repr.DType.Size())
	}
	return nil
}

// swapUnit returns the unit to reverse for repr (1: nothing to swap).
func (b *Bytes) swapUnit(repr ChunkRepr) int {
	if b.endian != BigEndian {
		return 1
	}
	return repr.DType.SwapUnit()
}

// IsIdentity reports whether encoded chunks of repr are byte for byte their
// decoded form: little-endian, or elements with nothing to swap.
func (b *Bytes) IsIdentity(repr ChunkRepr) bool {
	return b.ValidateRepr(repr) == nil && b.swapUnit(repr) == 1
}

// MaxEncodedSize returns repr.NumBytes(): the encoding has exactly the
// decoded size.
func (b *Bytes) MaxEncodedSize(repr ChunkRepr) int { return repr.NumBytes() }

// Encode appends the encoding of src, which must hold repr.NumBytes()
// bytes, to dst.
func (b *Bytes) Encode(dst, src []byte, repr ChunkRepr) ([]byte, error) {
	if err := b.ValidateRepr(repr); err != nil {
		return dst, err
	}
	if len(src) != repr.NumBytes() {
		return dst, fmt.Errorf("%w: bytes: encode of %d bytes, chunk of %v %s has %d",
			ErrCorrupt, len(src), repr.Shape, repr.DType, repr.NumBytes())
	}
	n := len(dst)
	dst = append(dst, src...)
	swapBytes(dst[n:], dst[n:], b.swapUnit(repr))
	return dst, nil
}

// Decode decodes src into dst; both must hold exactly repr.NumBytes()
// bytes (otherwise ErrCorrupt).
func (b *Bytes) Decode(dst, src []byte, repr ChunkRepr) error {
	if err := b.ValidateRepr(repr); err != nil {
		return err
	}
	n := repr.NumBytes()
	if len(src) != n {
		return fmt.Errorf("%w: bytes: %d encoded bytes, chunk of %v %s has %d",
			ErrCorrupt, len(src), repr.Shape, repr.DType, n)
	}
	if len(dst) != n {
		return fmt.Errorf("%w: bytes: decode into %d bytes, chunk has %d", ErrCorrupt, len(dst), n)
	}
	swapBytes(dst, src, b.swapUnit(repr))
	return nil
}

// DecodeInPlace turns buf, holding an encoded chunk of repr, into the
// decoded chunk.
func (b *Bytes) DecodeInPlace(buf []byte, repr ChunkRepr) error {
	if err := b.ValidateRepr(repr); err != nil {
		return err
	}
	if n := repr.NumBytes(); len(buf) != n {
		return fmt.Errorf("%w: bytes: %d encoded bytes, chunk of %v %s has %d",
			ErrCorrupt, len(buf), repr.Shape, repr.DType, n)
	}
	if u := b.swapUnit(repr); u != 1 {
		swapBytes(buf, buf, u)
	}
	return nil
}

// swapBytes writes src into dst (of the same length) reversing the byte
// order of every unit-byte group. dst and src may be the same slice (but
// must not otherwise overlap). A unit of 1 is a copy.
func swapBytes(dst, src []byte, unit int) {
	dst = dst[:len(src)]
	i := 0
	if unit == 1 {
		copy(dst, src)
		return
	}
	if unit == 2 || unit == 4 || unit == 8 {
		// Whole 64-bit words when both buffers are aligned for them. The
		// lane operations below are the same whatever the host byte order.
		if d, s, ok := words[uint64](dst, src); ok {
			s = s[:len(d)]
			switch unit {
			case 2:
				for k, v := range s {
					d[k] = (v&0x00ff00ff00ff00ff)<<8 | (v>>8)&0x00ff00ff00ff00ff
				}
			case 4:
				for k, v := range s {
					d[k] = bits.RotateLeft64(bits.ReverseBytes64(v), 32)
				}
			case 8:
				for k, v := range s {
					d[k] = bits.ReverseBytes64(v)
				}
			}
			i = 8 * len(d)
		}
	}
	switch unit {
	case 2:
		for ; i+32 <= len(src); i += 32 {
			s, d := src[i:i+32], dst[i:i+32]
			for k := 0; k < 32; k += 8 {
				v := binary.LittleEndian.Uint64(s[k:])
				v = (v&0x00ff00ff00ff00ff)<<8 | (v>>8)&0x00ff00ff00ff00ff
				binary.LittleEndian.PutUint64(d[k:], v)
			}
		}
		for ; i+2 <= len(src); i += 2 {
			binary.LittleEndian.PutUint16(dst[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(src[i:])))
		}
	case 4:
		for ; i+32 <= len(src); i += 32 {
			s, d := src[i:i+32], dst[i:i+32]
			for k := 0; k < 32; k += 8 {
				v := bits.RotateLeft64(bits.ReverseBytes64(binary.LittleEndian.Uint64(s[k:])), 32)
				binary.LittleEndian.PutUint64(d[k:], v)
			}
		}
		for ; i+4 <= len(src); i += 4 {
			binary.LittleEndian.PutUint32(dst[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(src[i:])))
		}
	case 8:
		for ; i+32 <= len(src); i += 32 {
			s, d := src[i:i+32], dst[i:i+32]
			a, b := binary.BigEndian.Uint64(s[0:]), binary.BigEndian.Uint64(s[8:])
			c, e := binary.BigEndian.Uint64(s[16:]), binary.BigEndian.Uint64(s[24:])
			binary.LittleEndian.PutUint64(d[0:], a)
			binary.LittleEndian.PutUint64(d[8:], b)
			binary.LittleEndian.PutUint64(d[16:], c)
			binary.LittleEndian.PutUint64(d[24:], e)
		}
		for ; i+8 <= len(src); i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], binary.BigEndian.Uint64(src[i:]))
		}
	default:
		for ; i+unit <= len(src); i += unit {
			s, d := src[i:i+unit], dst[i:i+unit]
			for l, r := 0, unit-1; l <= r; l, r = l+1, r-1 {
				d[l], d[r] = s[r], s[l]
			}
		}
	}
	// A trailing partial unit cannot occur for whole chunks; copy it as is.
	if i < len(src) {
		copy(dst[i:], src[i:])
	}
}
