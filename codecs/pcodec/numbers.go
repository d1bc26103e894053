package pcodec

import (
	"math"

	"github.com/gozarr/gozarr/dtype"
)

// latent is an unsigned latent type.
type latent interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// mid returns the middle value of L (its top bit).
func mid[L latent]() L {
	var z L
	return ^(^z >> 1)
}

// fromOrdered turns an order-preserving latent into the number's bits:
// identity for unsigned ints, the top bit toggled for signed ints, and for
// floats the top bit toggled (positive) or all bits (negative).
func fromOrdered[L latent](t NumberType, xs []L) {
	m := mid[L]()
	switch {
	case t.IsSigned():
		for i := range xs {
			xs[i] ^= m
		}
	case t.IsFloat():
		for i, x := range xs {
			if x&m != 0 {
				xs[i] = x ^ m
			} else {
				xs[i] = ^x
			}
		}
	}
}

// toOrdered is fromOrdered's inverse.
func toOrdered[L latent](t NumberType, xs []L) {
	m := mid[L]()
	switch {
	case t.IsSigned():
		for i := range xs {
			xs[i] ^= m
		}
	case t.IsFloat():
		for i, x := range xs {
			if x&m != 0 {
				xs[i] = ^x
			} else {
				xs[i] = x ^ m
			}
		}
	}
}

func orderedBits[L latent](t NumberType, x L) L {
	m := mid[L]()
	switch {
	case t.IsSigned():
		return x ^ m
	case t.IsFloat():
		if x&m != 0 {
			return x ^ m
		}
		return ^x
	}
	return x
}

func bitsOrdered[L latent](t NumberType, x L) L {
	m := mid[L]()
	switch {
	case t.IsSigned():
		return x ^ m
	case t.IsFloat():
		if x&m != 0 {
			return ^x
		}
		return x ^ m
	}
	return x
}

// latentToFloat64 returns the float an ordered latent of float type t is.
func latentToFloat64(t NumberType, l uint64) float64 {
	switch t {
	case F16:
		return dtype.Float16(orderedBits(t, uint16(l))).Float64()
	case F32:
		return float64(math.Float32frombits(orderedBits(t, uint32(l))))
	case F64:
		return math.Float64frombits(orderedBits(t, l))
	}
	return 0
}

// intFloatFromLatent64 is pcodec's int_float_from_latent for f64: latents
// around MID map to integers, and past 2^53 to consecutive floats.
func intFloatFromLatent64(l uint64) float64 {
	const m = 1 << 63
	const gpi = 1 << 53
	neg, abs := false, l-m
	if l < m {
		neg, abs = true, m-1-l
	}
	var f float64
	if abs < gpi {
		f = float64(abs)
	} else {
		f = math.Float64frombits(math.Float64bits(gpi) + (abs - gpi))
	}
	if neg {
		f = -f
	}
	return f
}

func intFloatToLatent64(f float64) uint64 {
	const m = 1 << 63
	const gpi = 1 << 53
	a := math.Abs(f)
	var abs uint64
	if a < gpi {
		abs = uint64(a)
	} else {
		abs = gpi + (math.Float64bits(a) - math.Float64bits(gpi))
	}
	if !math.Signbit(f) {
		return m + abs
	}
	return m - 1 - abs
}

func intFloatFromLatent32(l uint32) float32 {
	const m = 1 << 31
	const gpi = 1 << 24
	neg, abs := false, l-m
	if l < m {
		neg, abs = true, m-1-l
	}
	var f float32
	if abs < gpi {
		f = float32(abs)
	} else {
		f = math.Float32frombits(math.Float32bits(gpi) + (abs - gpi))
	}
	if neg {
		f = -f
	}
	return f
}

func intFloatToLatent32(f float32) uint32 {
	const m = 1 << 31
	const gpi = 1 << 24
	a := float32(math.Abs(float64(f)))
	var abs uint32
	if a < gpi {
		abs = uint32(a)
	} else {
		abs = gpi + (math.Float32bits(a) - math.Float32bits(gpi))
	}
	if !math.Signbit(float64(f)) {
		return m + abs
	}
	return m - 1 - abs
}

func intFloatFromLatent16(l uint16) dtype.Float16 {
	const m = 1 << 15
	const gpi = 1 << 11
	neg, abs := false, l-m
	if l < m {
		neg, abs = true, m-1-l
	}
	var h dtype.Float16
	if abs < gpi {
		h = dtype.Float16FromFloat32(float32(abs))
	} else {
		h = dtype.Float16(uint16(dtype.Float16FromFloat32(gpi)) + (abs - gpi))
	}
	if neg {
		h ^= 0x8000
	}
	return h
}

// joinFloatMult computes x = int_float(p) * base + (s + MID) ULPs, in the
// precision of the float type, for every element; p holds the result.
func joinFloatMult[L latent](t NumberType, base uint64, p, s []L) {
	switch t {
	case F64:
		b := math.Float64frombits(orderedBits(t, base))
		pp, ss := any(p).([]uint64), any(s).([]uint64)
		for i := range pp {
			u := math.Float64bits(intFloatFromLatent64(pp[i]) * b)
			pp[i] = bitsOrdered(t, u) + ss[i] + 1<<63
		}
	case F32:
		b := math.Float32frombits(orderedBits(t, uint32(base)))
		pp, ss := any(p).([]uint32), any(s).([]uint32)
		for i := range pp {
			u := math.Float32bits(intFloatFromLatent32(pp[i]) * b)
			pp[i] = bitsOrdered(t, u) + ss[i] + 1<<31
		}
	case F16:
		b := dtype.Float16(orderedBits(t, uint16(base))).Float32()
		pp, ss := any(p).([]uint16), any(s).([]uint16)
		for i := range pp {
			// the product of two halves is exact in float32: one rounding
			u := uint16(dtype.Float16FromFloat32(intFloatFromLatent16(pp[i]).Float32() * b))
			pp[i] = bitsOrdered(t, u) + ss[i] + 1<<15
		}
	}
}
