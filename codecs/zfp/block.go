package zfp

import (
	"math/bits"
	"strings"
	"unsafe"
)

// The integer core of ZFP (docs/source/algorithm.rst of github.com/LLNL/zfp,
// steps 3 to 8): a block of 4^d signed integers is decorrelated by a
// separable lifting transform, its coefficients are put in order of
// increasing frequency and mapped to negabinary, and the bit planes are
// coded from the most significant down with a group-testing run-length
// code, until the bit budget or the precision runs out.

type signed interface{ ~int32 | ~int64 }
type unsigned interface{ ~uint32 | ~uint64 }

// perm[d] lists, for d dimensions, the block index (x + 4y + 16z + 64w) of
// each coefficient in coding order: by total frequency i+j+k+l, then by
// i²+j²+k²+l², ties in the order the format fixes. The tables are written
// as one coordinate tuple per coefficient.
var perm [5][]uint8

const (
	perm2 = "00 10 01 11 20 02 21 12 30 03 22 31 13 32 23 33"
	perm3 = "000 100 010 001 011 101 110 200 020 002 111 210 201 021 120 102 012 300 030 003 " +
		"211 121 112 022 202 220 310 301 031 130 103 013 122 212 221 311 131 113 320 302 032 230 203 023 " +
		"222 321 312 132 231 213 123 033 303 330 322 232 223 133 313 331 233 323 332 333"
	perm4 = "0000 1000 0100 0010 0001 1100 0011 1010 0101 1001 0110 2000 0200 0020 0002 " +
		"0111 1011 1101 1110 2100 2010 2001 0210 0201 1200 0021 1020 0120 1002 0102 0012 3000 0300 0030 0003 " +
		"1111 2011 2101 2110 1201 1210 0211 1120 0121 1021 0112 1012 1102 2200 0022 2020 0202 2002 0220 " +
		"3100 3010 3001 0310 0301 1300 0031 1030 0130 1003 0103 0013 " +
		"2111 1211 1121 1112 1022 1202 1220 2102 2120 0122 2210 0212 2012 0221 2021 2201 " +
		"3011 3101 3110 1301 1310 0311 1130 0131 1031 0113 1013 1103 " +
		"3200 3020 3002 0320 0302 2300 0032 2030 0230 2003 0203 0023 " +
		"2211 1122 2121 1212 2112 1221 0222 2022 2202 2220 3111 1311 1131 1113 " +
		"3210 3201 3021 3120 3102 3012 0321 1320 1302 0312 2310 2301 1032 0132 2130 2031 0231 1230 " +
		"2103 2013 0213 1203 1023 0123 3300 0033 3030 0303 3003 0330 " +
		"1222 2122 2212 2221 3211 3121 3112 1321 1312 2311 1132 2131 1231 2113 1213 1123 " +
		"3022 3202 3220 2302 2320 0322 2230 0232 2032 0223 2023 2203 " +
		"1033 1303 1330 3103 3130 0133 3310 0313 3013 0331 3031 3301 " +
		"2222 3122 3212 3221 2312 2321 1322 2231 1232 2132 1223 2123 2213 3311 1133 3131 1313 3113 1331 " +
		"2033 2303 2330 3203 3230 0233 3320 0323 3023 0332 3032 3302 " +
		"3222 2322 2232 2223 2133 2313 2331 3213 3231 1233 3321 1323 3123 1332 3132 3312 " +
		"0333 3033 3303 3330 3322 2233 3232 2323 3223 2332 1333 3133 3313 3331 2333 3233 3323 3332 3333"
)

func init() {
	perm[1] = []uint8{0, 1, 2, 3}
	for d, s := range []string{2: perm2, 3: perm3, 4: perm4} {
		if s == "" {
			continue
		}
		for _, t := range strings.Fields(s) {
			idx, mul := 0, 1
			for _, c := range t {
				idx += int(c-'0') * mul
				mul *= 4
			}
			perm[d] = append(perm[d], uint8(idx))
		}
	}
}

// lines[d][a] lists the first index of every line of 4 values along axis
// a of a block of d dimensions; the line's stride is 4^a.
var lines [5][4][]int

func init() {
	for d := 1; d <= 4; d++ {
		n := 1 << (2 * d)
		for a := 0; a < d; a++ {
			s := 1 << (2 * a)
			for i := 0; i < n; i++ {
				if (i/s)%4 == 0 {
					lines[d][a] = append(lines[d][a], i)
				}
			}
		}
	}
}

// fwdLift is the forward decorrelating transform of the 4-vector at p[i],
// p[i+s], p[i+2s], p[i+3s].
func fwdLift[I signed](p []I, i, s int) {
	p = p[i : i+3*s+1]
	x, y, z, w := p[0], p[s], p[2*s], p[3*s]
	x += w
	x >>= 1
	w -= x
	z += y
	z >>= 1
	y -= z
	x += z
	x >>= 1
	z -= x
	w += y
	w >>= 1
	y -= w
	w += y >> 1
	y -= w >> 1
	p[0], p[s], p[2*s], p[3*s] = x, y, z, w
}

// invLift inverts fwdLift (up to the bits the forward shifts dropped).
func invLift[I signed](p []I, i, s int) {
	p = p[i : i+3*s+1]
	x, y, z, w := p[0], p[s], p[2*s], p[3*s]
	y += w >> 1
	w -= y >> 1
	y += w
	w <<= 1
	w -= y
	z += x
	x <<= 1
	x -= z
	y += z
	z <<= 1
	z -= y
	w += x
	x <<= 1
	x -= w
	p[0], p[s], p[2*s], p[3*s] = x, y, z, w
}

// revFwdLift is the reversible transform (a high-order Lorenzo predictor).
func revFwdLift[I signed](p []I, i, s int) {
	p = p[i : i+3*s+1]
	x, y, z, w := p[0], p[s], p[2*s], p[3*s]
	w -= z
	z -= y
	y -= x
	w -= z
	z -= y
	w -= z
	p[0], p[s], p[2*s], p[3*s] = x, y, z, w
}

// revInvLift inverts revFwdLift exactly.
func revInvLift[I signed](p []I, i, s int) {
	p = p[i : i+3*s+1]
	x, y, z, w := p[0], p[s], p[2*s], p[3*s]
	w += z
	z += y
	w += z
	y += x
	z += y
	w += z
	p[0], p[s], p[2*s], p[3*s] = x, y, z, w
}

// fwdXform transforms along x, then y, z and w.
func fwdXform[I signed](p []I, d int, rev bool) {
	for a := 0; a < d; a++ {
		s := 1 << (2 * a)
		for _, i := range lines[d][a] {
			if rev {
				revFwdLift(p, i, s)
			} else {
				fwdLift(p, i, s)
			}
		}
	}
}

// invXform transforms along w, z, y, then x.
func invXform[I signed](p []I, d int, rev bool) {
	for a := d - 1; a >= 0; a-- {
		s := 1 << (2 * a)
		for _, i := range lines[d][a] {
			if rev {
				revInvLift(p, i, s)
			} else {
				invLift(p, i, s)
			}
		}
	}
}

// nbmask is the negabinary mask 0xaaaa... of U.
func nbmask[U unsigned]() U { return ^U(0) / 3 * 2 }

func intPrec[U unsigned]() uint32 { return uint32(unsafe.Sizeof(U(0))) * 8 }

// fwdOrder reorders the coefficients iblock into ublock as negabinary.
func fwdOrder[I signed, U unsigned](ublock []U, iblock []I, d int) {
	nb := nbmask[U]()
	for j, i := range perm[d] {
		ublock[j] = (U(iblock[i]) + nb) ^ nb
	}
}

// invOrder is the inverse of fwdOrder.
func invOrder[I signed, U unsigned](iblock []I, ublock []U, d int) {
	nb := nbmask[U]()
	for j, i := range perm[d] {
		iblock[i] = I((ublock[j] ^ nb) - nb)
	}
}

// withMaxBits reports whether the bit budget may cut a block short, as
// the C library decides it (in 32-bit unsigned arithmetic).
func withMaxBits(maxbits, maxprec, size uint32) bool {
	return (maxprec+1)*size-1 > maxbits
}

// encodeInts codes the bit planes of data (at most maxprec of them, at
// most maxbits bits) and returns the number of bits written.
func encodeInts[U unsigned](w *bitWriter, maxbits, maxprec uint32, data []U) uint32 {
	if len(data) > 64 {
		return encodeMany(w, maxbits, maxprec, data)
	}
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	size := uint32(len(data))
	b := maxbits
	n := uint32(0)
	s := *w
	for k := intprec; b != 0 && k > kmin; {
		k--
		// Bit plane k of all coefficients.
		var x uint64
		for i, v := range data {
			x += uint64((v>>k)&1) << i
		}
		m := min(n, b)
		b -= m
		x = s.writeBits(x, uint(m))
		for ; b != 0 && n < size; x, n = x>>1, n+1 {
			b--
			if s.writeBit(b2u(x != 0)) == 0 {
				break
			}
			for ; b != 0 && n < size-1; x, n = x>>1, n+1 {
				b--
				if s.writeBit(x) != 0 {
					break
				}
			}
		}
	}
	*w = s
	return maxbits - b
}

// encodeMany is encodeInts for blocks of more than 64 values (4-D).
func encodeMany[U unsigned](w *bitWriter, maxbits, maxprec uint32, data []U) uint32 {
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	size := uint32(len(data))
	b := maxbits
	n := uint32(0)
	s := *w
	for k := intprec; b != 0 && k > kmin; {
		k--
		m := min(n, b)
		b -= m
		for i := uint32(0); i < m; i++ {
			s.writeBit(uint64(data[i] >> k))
		}
		c := 0
		for _, v := range data[m:] {
			c += int((v >> k) & 1)
		}
		for ; b != 0 && n < size; n++ {
			b--
			if s.writeBit(b2u(c != 0)) == 0 {
				break
			}
			for c--; b != 0 && n < size-1; n++ {
				b--
				if s.writeBit(uint64(data[n]>>k)) != 0 {
					break
				}
			}
		}
	}
	*w = s
	return maxbits - b
}

// decodeInts reads what encodeInts wrote into data and returns the number
// of bits read.
func decodeInts[U unsigned](r *bitReader, maxbits, maxprec uint32, data []U) uint32 {
	if len(data) > 64 {
		return decodeMany(r, maxbits, maxprec, data)
	}
	clear(data)
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	size := uint32(len(data))
	b := maxbits
	n := uint32(0)
	s := *r
	for k := intprec; b != 0 && k > kmin; {
		k--
		m := min(n, b)
		b -= m
		x := s.readBits(uint(m))
		for ; b != 0 && n < size; n++ {
			b--
			if s.readBit() == 0 {
				break
			}
			for ; b != 0 && n < size-1; n++ {
				b--
				if s.readBit() != 0 {
					break
				}
			}
			x += 1 << n
		}
		for x != 0 {
			data[bits.TrailingZeros64(x)] += 1 << k
			x &= x - 1
		}
	}
	*r = s
	return maxbits - b
}

// decodeMany is decodeInts for blocks of more than 64 values (4-D).
func decodeMany[U unsigned](r *bitReader, maxbits, maxprec uint32, data []U) uint32 {
	clear(data)
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	size := uint32(len(data))
	b := maxbits
	n := uint32(0)
	s := *r
	for k := intprec; b != 0 && k > kmin; {
		k--
		m := min(n, b)
		b -= m
		for i := uint32(0); i < m; i++ {
			data[i] += U(s.readBit()) << k
		}
		for ; b != 0 && n < size; n++ {
			b--
			if s.readBit() == 0 {
				break
			}
			for ; b != 0 && n < size-1; n++ {
				b--
				if s.readBit() != 0 {
					break
				}
			}
			data[n] += 1 << k
		}
	}
	*r = s
	return maxbits - b
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// encodeIntBlock codes a block of integers with the lossy algorithm; it
// transforms iblock in place.
func encodeIntBlock[I signed, U unsigned](w *bitWriter, minbits, maxbits, maxprec uint32, iblock []I, d int) uint32 {
	var ub [256]U
	ublock := ub[:len(iblock)]
	fwdXform(iblock, d, false)
	fwdOrder(ublock, iblock, d)
	n := encodeInts(w, maxbits, maxprec, ublock)
	if n < minbits {
		w.pad(minbits - n)
		n = minbits
	}
	return n
}

// decodeIntBlock reads a block encodeIntBlock wrote.
func decodeIntBlock[I signed, U unsigned](r *bitReader, minbits, maxbits, maxprec uint32, iblock []I, d int) uint32 {
	var ub [256]U
	ublock := ub[:len(iblock)]
	n := decodeInts(r, maxbits, maxprec, ublock)
	if n < minbits {
		r.skip(minbits - n)
		n = minbits
	}
	invOrder(iblock, ublock, d)
	invXform(iblock, d, false)
	return n
}

// pbits is the width of the precision field of reversible blocks.
func pbits[U unsigned]() uint32 {
	if intPrec[U]() == 32 {
		return 5
	}
	return 6
}

// revEncodeIntBlock codes a block of integers losslessly.
func revEncodeIntBlock[I signed, U unsigned](w *bitWriter, minbits, maxbits, maxprec uint32, iblock []I, d int) uint32 {
	var ub [256]U
	ublock := ub[:len(iblock)]
	fwdXform(iblock, d, true)
	fwdOrder(ublock, iblock, d)
	var m U
	for _, v := range ublock {
		m |= v
	}
	prec := uint32(0)
	if m != 0 {
		prec = intPrec[U]() - uint32(bits.TrailingZeros64(uint64(m)))
	}
	prec = max(min(prec, maxprec), 1)
	pb := pbits[U]()
	w.writeBits(uint64(prec-1), uint(pb))
	n := pb + encodeInts(w, maxbits-pb, prec, ublock)
	if n < minbits {
		w.pad(minbits - n)
		n = minbits
	}
	return n
}

// revDecodeIntBlock reads a block revEncodeIntBlock wrote.
func revDecodeIntBlock[I signed, U unsigned](r *bitReader, minbits, maxbits uint32, iblock []I, d int) uint32 {
	var ub [256]U
	ublock := ub[:len(iblock)]
	pb := pbits[U]()
	prec := uint32(r.readBits(uint(pb))) + 1
	n := pb + decodeInts(r, maxbits-pb, prec, ublock)
	if n < minbits {
		r.skip(minbits - n)
		n = minbits
	}
	invOrder(iblock, ublock, d)
	invXform(iblock, d, true)
	return n
}
