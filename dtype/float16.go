package dtype

import "math"

// Float16 is an IEEE 754 half-precision (binary16) number held as its bit
// pattern: 1 sign bit, 5 exponent bits, 10 mantissa bits. It is a plain
// value type, safe for concurrent use. Conversions round to nearest, ties
// to even; they handle subnormals, infinities and NaN (NaN payloads keep
// their most significant bits).
type Float16 uint16

// Float16 bit patterns of note.
const (
	// Float16NaN is the canonical quiet NaN, what the fill value "NaN" means.
	Float16NaN Float16 = 0x7e00
	// Float16Inf is positive infinity.
	Float16Inf Float16 = 0x7c00
	// Float16NegInf is negative infinity.
	Float16NegInf Float16 = 0xfc00
)

// Bits returns the bit pattern.
func (h Float16) Bits() uint16 { return uint16(h) }

// IsNaN reports whether h is a NaN.
func (h Float16) IsNaN() bool { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }

// Float64 returns h as a float64; the conversion is exact.
func (h Float16) Float64() float64 {
	sign := uint64(h>>15) << 63
	exp := int(h>>10) & 0x1f
	mant := uint64(h & 0x3ff)
	switch exp {
	case 0x1f:
		// Infinity or NaN: keep the payload in the top mantissa bits.
		return math.Float64frombits(sign | 0x7ff<<52 | mant<<42)
	case 0:
		// Zero or subnormal: mant * 2^-24, exact in float64.
		v := math.Ldexp(float64(mant), -24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float64frombits(sign | uint64(exp-15+1023)<<52 | mant<<42)
}

// Float32 returns h as a float32; the conversion is exact.
func (h Float16) Float32() float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case 0:
		return float32(h.Float64()) // exact: subnormal halves are normal float32s
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}

// Float16FromFloat32 rounds f to the nearest Float16 (ties to even).
// Values too large for float16 become infinities; NaN stays NaN with the
// top 10 bits of its payload (a payload that would vanish becomes quiet).
func Float16FromFloat32(f float32) Float16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return nanFloat16(uint16(b>>16)&0x8000, uint64(b&0x7fffff)>>13)
	}
	// float32 -> float64 is exact, so rounding once from float64 is exact too.
	h, _ := float16Round(float64(f))
	return h
}

// Float16FromFloat64 rounds f to the nearest Float16 (ties to even).
// Values too large for float16 become infinities; NaN stays NaN with the
// top 10 bits of its payload (a payload that would vanish becomes quiet).
func Float16FromFloat64(f float64) Float16 {
	h, _ := float16Round(f)
	return h
}

func nanFloat16(sign uint16, top10 uint64) Float16 {
	m := uint16(top10) & 0x3ff
	if m == 0 {
		m = 0x200
	}
	return Float16(sign | 0x7c00 | m)
}

// float16Round converts f to float16 rounding to nearest even, and reports
// whether f lay exactly half-way between two float16 values (callers that
// got f by rounding a decimal use this to avoid double rounding).
func float16Round(f float64) (Float16, bool) {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0x7ff {
		if mant != 0 {
			return nanFloat16(sign, mant>>42), false
		}
		return Float16(sign | 0x7c00), false
	}
	if exp == 0 {
		// float64 zero or subnormal: far below half the smallest float16.
		return Float16(sign), false
	}
	m := mant | 1<<52 // 53-bit significand, value m * 2^(e-52)
	e := exp - 1023
	if e >= -14 {
		// Normal range (or overflow).
		const shift = 52 - 10
		hm := m >> shift
		rem := m & (1<<shift - 1)
		const half = 1 << (shift - 1)
		tie := rem == half
		if rem > half || (tie && hm&1 == 1) {
			hm++
			if hm == 1<<11 {
				hm >>= 1
				e++
			}
		}
		if e > 15 {
			return Float16(sign | 0x7c00), false
		}
		return Float16(sign | uint16(e+15)<<10 | uint16(hm&0x3ff)), tie
	}
	// Subnormal float16: count of 2^-24 units is m * 2^(e-52+24).
	shift := uint(28 - e) // >= 43
	if shift >= 54 {
		// Below a quarter of the smallest subnormal... at most m/2^54 < 0.5.
		return Float16(sign), false
	}
	hm := m >> shift
	rem := m & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	tie := rem == half
	if rem > half || (tie && hm&1 == 1) {
		hm++ // may carry into the smallest normal, 0x0400: still right
	}
	return Float16(sign | uint16(hm)), tie
}
