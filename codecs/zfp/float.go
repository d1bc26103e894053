package zfp

import (
	"math"
	"unsafe"
)

// The floating-point front end (algorithm.rst step 2): a block is scaled
// by its largest power-of-two exponent into integers (block floating
// point) and coded with the integer core; reversible mode falls back to
// the values' bit patterns when that scaling would lose anything.

type float interface{ ~float32 | ~float64 }

// floatInfo returns the exponent width and bias of F.
func floatInfo[F float]() (ebits uint32, ebias int) {
	if unsafe.Sizeof(F(0)) == 4 {
		return 8, 127
	}
	return 11, 1023
}

// blockExponent returns the exponent e of the largest magnitude x in p
// (NaNs are passed over): x = f·2^e with 0.5 <= f < 1, clamped to the
// smallest normal exponent; -ebias for 0 and 0 for +Inf (as C's frexp
// gives them). It reads the values' bit patterns:
// the largest magnitude has the largest pattern less its sign, and its
// biased exponent field gives e.
func blockExponent[F float](p []F) int {
	if unsafe.Sizeof(F(0)) == 4 {
		var m uint32
		for _, v := range p {
			a := math.Float32bits(float32(v)) &^ (1 << 31)
			if a <= 0x7f800000 && a > m { // not NaN
				m = a
			}
		}
		switch {
		case m == 0:
			return -127
		case m == 0x7f800000:
			return 0 // frexp(+Inf)
		}
		return max(int(m>>23), 1) - 126
	}
	var m uint64
	for _, v := range p {
		a := math.Float64bits(float64(v)) &^ (1 << 63)
		if a <= 0x7ff0000000000000 && a > m {
			m = a
		}
	}
	switch {
	case m == 0:
		return -1023
	case m == 0x7ff0000000000000:
		return 0
	}
	return max(int(m>>52), 1) - 1022
}

// precision returns how many bit planes to code for a block of exponent
// maxexp.
func precision(maxexp int, maxprec uint32, minexp int, d int) uint32 {
	return min(maxprec, uint32(max(0, maxexp-minexp+2*d+2)))
}

// ldexp returns 2^e in F, overflowing to +Inf and underflowing to 0 (or a
// subnormal) as the C library's ldexpf/ldexp do: built from its bit
// pattern where that is a normal float64 (the conversion to float32
// rounds a power of two as ldexpf does), else through math.Ldexp.
func ldexp[F float](e int) F {
	if e >= -1022 && e <= 1023 {
		return F(math.Float64frombits(uint64(e+1023) << 52))
	}
	return F(math.Ldexp(1, e))
}

// toInt converts v to I truncating, with x86's result (the most negative
// I) for NaN and values out of range (|v| >= lim, lim = 2^(bits of I - 1)),
// as the C library's casts give on the platforms it is built for.
func toInt[F float, I signed](v, lim F) I {
	if !(v < lim && v >= -lim) {
		return I(-1) << (unsafe.Sizeof(I(0))*8 - 1)
	}
	return I(v)
}

// fwdCast maps fblock to integers relative to the exponent emax.
func fwdCast[F float, I signed](iblock []I, fblock []F, emax int) {
	s := ldexp[F](int(unsafe.Sizeof(F(0)))*8 - 2 - emax)
	lim := ldexp[F](int(unsafe.Sizeof(I(0)))*8 - 1)
	iblock = iblock[:len(fblock)]
	for i, v := range fblock {
		iblock[i] = toInt[F, I](s*v, lim)
	}
}

// invCast is the inverse of fwdCast.
func invCast[F float, I signed](fblock []F, iblock []I, emax int) {
	s := ldexp[F](emax - (int(unsafe.Sizeof(F(0)))*8 - 2))
	fblock = fblock[:len(iblock)]
	for i, v := range iblock {
		fblock[i] = s * F(v)
	}
}

// encodeFloatBlock codes a block of floats with the lossy algorithm.
func encodeFloatBlock[F float, I signed, U unsigned](w *bitWriter, p *Params, fblock []F, d int, wk *fwork[F, I, U]) uint32 {
	ebits, ebias := floatInfo[F]()
	n := uint32(1)
	emax := blockExponent(fblock)
	maxprec := precision(emax, p.MaxPrec, int(p.MinExp), d)
	e := uint32(0)
	if maxprec != 0 {
		e = uint32(emax + ebias)
	}
	if e == 0 {
		w.writeBit(0)
		if p.MinBits > n {
			w.pad(p.MinBits - n)
			n = p.MinBits
		}
		return n
	}
	n += ebits
	w.writeBits(uint64(2*e+1), uint(n))
	iblock := wk.ib[:len(fblock)]
	fwdCast(iblock, fblock, emax)
	return n + encodeIntBlock[I, U](w, p.MinBits-min(n, p.MinBits), p.MaxBits-n, maxprec, iblock, d, &wk.work)
}

// decodeFloatBlock reads a block encodeFloatBlock wrote.
func decodeFloatBlock[F float, I signed, U unsigned](r *bitReader, p *Params, fblock []F, d int, wk *fwork[F, I, U]) uint32 {
	ebits, ebias := floatInfo[F]()
	n := uint32(1)
	if r.readBit() == 0 {
		clear(fblock)
		if p.MinBits > n {
			r.skip(p.MinBits - n)
			n = p.MinBits
		}
		return n
	}
	n += ebits
	emax := int(r.readBits(uint(ebits))) - ebias
	maxprec := precision(emax, p.MaxPrec, int(p.MinExp), d)
	iblock := wk.ib[:len(fblock)]
	n += decodeIntBlock[I, U](r, p.MinBits-min(n, p.MinBits), p.MaxBits-n, maxprec, iblock, d, &wk.work)
	invCast(fblock, iblock, emax)
	return n
}

// floatBits returns the bit pattern of v as a signed integer.
func floatBits[F float, I signed](v F) I {
	if unsafe.Sizeof(v) == 4 {
		return I(int32(math.Float32bits(float32(v))))
	}
	return I(int64(math.Float64bits(float64(v))))
}

// bitsFloat is the inverse of floatBits.
func bitsFloat[F float, I signed](v I) F {
	if unsafe.Sizeof(v) == 4 {
		return F(math.Float32frombits(uint32(v)))
	}
	return F(math.Float64frombits(uint64(v)))
}

// revEncodeFloatBlock codes a block of floats losslessly.
func revEncodeFloatBlock[F float, I signed, U unsigned](w *bitWriter, p *Params, fblock []F, d int, wk *fwork[F, I, U]) uint32 {
	ebits, ebias := floatInfo[F]()
	iblock := wk.ib[:len(fblock)]
	emax := blockExponent(fblock)
	exact := true
	if emax != -ebias {
		fwdCast(iblock, fblock, emax)
		g := wk.gb[:len(fblock)]
		invCast(g, iblock, emax)
		for i, v := range fblock {
			if floatBits[F, I](v) != floatBits[F, I](g[i]) {
				exact = false
				break
			}
		}
	} else {
		// iblock is all zero; the block is exact when every value is +0.
		for _, v := range fblock {
			if floatBits[F, I](v) != 0 {
				exact = false
				break
			}
		}
	}
	n := uint32(0)
	if exact {
		e := uint32(emax + ebias)
		if e == 0 {
			w.writeBit(0)
			return 1
		}
		w.writeBits(1, 2)
		w.writeBits(uint64(e), uint(ebits))
		n = 2 + ebits
	} else {
		tc := ^I(0) ^ I(-1)<<(unsafe.Sizeof(I(0))*8-1) // 0x7fff...
		for i, v := range fblock {
			x := floatBits[F, I](v)
			if x < 0 {
				x ^= tc
			}
			iblock[i] = x
		}
		w.writeBits(3, 2)
		n = 2
	}
	return n + revEncodeIntBlock[I, U](w, p.MinBits-min(n, p.MinBits), p.MaxBits-n, p.MaxPrec, iblock, d, &wk.work)
}

// revDecodeFloatBlock reads a block revEncodeFloatBlock wrote.
func revDecodeFloatBlock[F float, I signed, U unsigned](r *bitReader, p *Params, fblock []F, d int, wk *fwork[F, I, U]) uint32 {
	ebits, ebias := floatInfo[F]()
	if r.readBit() == 0 {
		clear(fblock)
		n := uint32(1)
		if p.MinBits > n {
			r.skip(p.MinBits - n)
			n = p.MinBits
		}
		return n
	}
	iblock := wk.ib[:len(fblock)]
	n := uint32(2)
	if r.readBit() != 0 {
		n += revDecodeIntBlock[I, U](r, p.MinBits-min(n, p.MinBits), p.MaxBits-n, iblock, d, &wk.work)
		tc := ^I(0) ^ I(-1)<<(unsafe.Sizeof(I(0))*8-1)
		for i, x := range iblock {
			if x < 0 {
				x ^= tc
			}
			fblock[i] = bitsFloat[F](x)
		}
		return n
	}
	n += ebits
	emax := int(r.readBits(uint(ebits))) - ebias
	n += revDecodeIntBlock[I, U](r, p.MinBits-min(n, p.MinBits), p.MaxBits-n, iblock, d, &wk.work)
	if emax != -ebias {
		invCast(fblock, iblock, emax)
	} else {
		clear(fblock)
	}
	return n
}
