package pcodec

import (
	"encoding/binary"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
)

// NumberType is pcodec's one-byte code for a number type, as the standalone
// format writes it before every chunk.
type NumberType byte

// The number types of the standalone format.
const (
	U32 NumberType = 1
	U64 NumberType = 2
	I32 NumberType = 3
	I64 NumberType = 4
	F32 NumberType = 5
	F64 NumberType = 6
	U16 NumberType = 7
	I16 NumberType = 8
	F16 NumberType = 9
	U8  NumberType = 10
	I8  NumberType = 11
)

// Bits returns the width of the type in bits (0 for an unknown type).
func (t NumberType) Bits() uint {
	switch t {
	case U8, I8:
		return 8
	case U16, I16, F16:
		return 16
	case U32, I32, F32:
		return 32
	case U64, I64, F64:
		return 64
	}
	return 0
}

// IsFloat reports whether t is a floating-point type.
func (t NumberType) IsFloat() bool { return t == F16 || t == F32 || t == F64 }

// IsSigned reports whether t is a signed integer type.
func (t NumberType) IsSigned() bool { return t == I8 || t == I16 || t == I32 || t == I64 }

// String returns the type's Rust-style name (u32, f64, ...).
func (t NumberType) String() string {
	names := map[NumberType]string{U8: "u8", U16: "u16", U32: "u32", U64: "u64",
		I8: "i8", I16: "i16", I32: "i32", I64: "i64", F16: "f16", F32: "f32", F64: "f64"}
	if s, ok := names[t]; ok {
		return s
	}
	return fmt.Sprintf("numbertype(%d)", byte(t))
}

// Format constants (docs/format.md of the pcodec repository).
const (
	magic              = "pco!"
	standaloneVersion  = 3 // the standalone version the encoder writes
	maxStandaloneVer   = 3
	formatMajor        = 4 // the wrapped format version the encoder writes
	formatMinor        = 1
	maxFormatMajor     = 4
	batchN             = 256
	ansInterleave      = 4
	maxANSBits         = 14
	bitsNBins          = 15
	bitsChunkN         = 24
	maxChunkN          = 1 << bitsChunkN
	bitsDictLen        = 25
	maxConsecutive     = 7
	maxLookbackWinLog  = 24
	maxConv1Quant      = 31
	maxConv1Order      = 32
	modeClassic        = 0
	modeIntMult        = 1
	modeFloatMult      = 2
	modeFloatQuant     = 3
	modeDict           = 4
	deltaNone          = 0
	deltaConsecutive   = 1
	deltaLookback      = 2
	deltaConv1         = 3
	readPadding        = 4096 // zero bytes after the input: a batch reads at most ~2.6 KB unchecked
	terminationByte    = 0
	defaultPageN       = 1 << 18
	defaultLevel       = 8
	maxLevel           = 12
	maxEqualPagesUpTo  = maxChunkN
	bitsVarintPower    = 6
	bitsStandaloneVers = 8
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: pcodec: %s", codecs.ErrCorrupt, fmt.Sprintf(format, args...))
}

// bitReader reads little-endian bit-packed values from buf, which holds the
// input followed by readPadding zero bytes, so reads past the end of the
// data stay in memory; callers check pos against end at each step that
// could have crossed it.
type bitReader struct {
	buf []byte
	pos uint // bit position
	end uint // bit length of the real data
}

// word returns 64 bits starting at byte pos/8, shifted so bit pos is bit 0.
func (r *bitReader) word() uint64 {
	return binary.LittleEndian.Uint64(r.buf[r.pos>>3:]) >> (r.pos & 7)
}

// read returns the next n bits (n <= 56).
func (r *bitReader) read(n uint) uint64 {
	v := r.word() & (1<<n - 1)
	r.pos += n
	return v
}

// read64 returns the next n bits (n <= 64).
func (r *bitReader) read64(n uint) uint64 {
	if n <= 56 {
		return r.read(n)
	}
	lo := r.read(32)
	return lo | r.read(n-32)<<32
}

// check reports reading past the end of the data.
func (r *bitReader) check(what string) error {
	if r.pos > r.end {
		return corrupt("truncated in %s (bit %d of %d)", what, r.pos, r.end)
	}
	return nil
}

// align skips to the next byte boundary; the skipped bits must be zero.
func (r *bitReader) align(what string) error {
	if err := r.check(what); err != nil {
		return err
	}
	if k := r.pos & 7; k != 0 {
		if r.buf[r.pos>>3]>>k != 0 {
			return corrupt("nonzero padding bits after %s", what)
		}
		r.pos += 8 - k
	}
	return nil
}

// bytePos returns the current byte offset; the reader must be aligned.
func (r *bitReader) bytePos() uint { return r.pos >> 3 }

// remaining returns how many bits of real data are left.
func (r *bitReader) remaining() uint {
	if r.pos >= r.end {
		return 0
	}
	return r.end - r.pos
}
