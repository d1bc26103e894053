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

// The lossy transforms are in xform.go; the reversible ones act on every
// line of 4 values along each axis in turn, through the lines tables.

// revFwdXform is the reversible transform (a high-order Lorenzo
// predictor along each axis).
func revFwdXform[I signed](p *[256]I, d int) {
	for a := 0; a < d; a++ {
		s := 1 << (2 * a)
		for _, i := range lines[d][a] {
			i0, i1, i2, i3 := i&255, (i+s)&255, (i+2*s)&255, (i+3*s)&255
			x, y, z, w := p[i0], p[i1], p[i2], p[i3]
			w -= z
			z -= y
			y -= x
			w -= z
			z -= y
			w -= z
			p[i1], p[i2], p[i3] = y, z, w
		}
	}
}

// revInvXform inverts revFwdXform exactly.
func revInvXform[I signed](p *[256]I, d int) {
	for a := d - 1; a >= 0; a-- {
		s := 1 << (2 * a)
		for _, i := range lines[d][a] {
			i0, i1, i2, i3 := i&255, (i+s)&255, (i+2*s)&255, (i+3*s)&255
			x, y, z, w := p[i0], p[i1], p[i2], p[i3]
			w += z
			z += y
			w += z
			y += x
			z += y
			w += z
			p[i1], p[i2], p[i3] = y, z, w
		}
	}
}

// full returns the 256-value array behind a block (blocks are slices of
// [256] arrays; a 4^d block uses its first values).
func full[I signed](b []I) *[256]I { return (*[256]I)(b[:256]) }

// nbmask is the negabinary mask 0xaaaa... of U.
func nbmask[U unsigned]() U { return ^U(0) / 3 * 2 }

func intPrec[U unsigned]() uint32 { return uint32(unsafe.Sizeof(U(0))) * 8 }

// fwdOrder reorders the coefficients iblock into ublock as negabinary.
func fwdOrder[I signed, U unsigned](ublock []U, iblock []I, d int) {
	nb := nbmask[U]()
	pm := perm[d]
	ib, ub := full(iblock), ublock[:len(pm)]
	for j, i := range pm {
		ub[j] = (U(ib[i]) + nb) ^ nb
	}
}

// invOrder is the inverse of fwdOrder.
func invOrder[I signed, U unsigned](iblock []I, ublock []U, d int) {
	nb := nbmask[U]()
	pm := perm[d]
	ib, ub := full(iblock), ublock[:len(pm)]
	for j, i := range pm {
		ib[i] = I((ub[j] ^ nb) - nb)
	}
}

// withMaxBits reports whether the bit budget may cut a block short, as
// the C library decides it (in 32-bit unsigned arithmetic).
func withMaxBits(maxbits, maxprec, size uint32) bool {
	return (maxprec+1)*size-1 > maxbits
}

// transpose64 transposes the 64x64 bit matrix a: bit j of a[i] becomes
// bit i of a[j].
func transpose64(a *[64]uint64) {
	masks := [6]uint64{0x5555555555555555, 0x3333333333333333, 0x0f0f0f0f0f0f0f0f,
		0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff}
	for e := 5; e >= 0; e-- {
		j := 1 << e
		m := masks[e]
		for base := 0; base < 64; base += 2 * j {
			for k := base; k < base+j; k++ {
				x, y := a[k&63], a[(k+j)&63]
				t := (x>>j ^ y) & m
				a[k&63] = x ^ t<<j
				a[(k+j)&63] = y ^ t
			}
		}
	}
}

// transpose32x2 transposes the two 32x32 bit matrices held in the low and
// high halves of a[0:32] at once: bit j of a[i]'s half becomes bit i of
// a[j]'s same half. With a[i] = data[i] | data[i+32]<<32 for 32-bit data,
// a[k] becomes bit plane k of the 64 values (bit i = bit k of data[i]).
func transpose32x2(a *[64]uint64) {
	masks := [5]uint64{0x5555555555555555, 0x3333333333333333, 0x0f0f0f0f0f0f0f0f,
		0x00ff00ff00ff00ff, 0x0000ffff0000ffff}
	for e := 4; e >= 0; e-- {
		j := 1 << e
		m := masks[e]
		for base := 0; base < 32; base += 2 * j {
			for k := base; k < base+j; k++ {
				x, y := a[k&31], a[(k+j)&31]
				t := (x>>j ^ y) & m
				a[k&31] = x ^ t<<j
				a[(k+j)&31] = y ^ t
			}
		}
	}
}

// planes returns bit plane k of data (bit i = bit k of data[i]) for the k
// in kmin..intprec-1.
func planes[U unsigned](p *[64]uint64, data []U, kmin, intprec uint32) {
	if len(data) == 64 {
		if intPrec[U]() == 32 {
			d := data[:64]
			for i := range 32 {
				p[i] = uint64(d[i]) | uint64(d[i+32])<<32
			}
			transpose32x2(p)
			return
		}
		for i, v := range data {
			p[i] = uint64(v)
		}
		transpose64(p)
		return
	}
	// Blocks of 4 or 16 values (b of them): a b×b bit transpose in each
	// b-bit lane of b words takes value i (p[i]) to planes: lane q of
	// p[t] becomes plane b·q+t (see plane).
	for i, v := range data {
		p[i&15] = uint64(v)
	}
	transposeSmall((*[16]uint64)(p[:16]), len(data))
}

// plane returns bit plane k of a block of size values (lg = log2 size)
// from what planes left in p: p[k] itself for 64 values; for 4 or 16,
// lane k/size of p[k%size].
func plane(p *[64]uint64, k, size, lg uint32) uint64 {
	return p[k&(size-1)&63] >> (k >> lg << lg) & (1<<size - 1)
}

// transposeSmall transposes the b×b bit matrices (b = 4 or 16) held in
// every b-bit lane of a[0:b] at once: bit j of a[i]'s lane becomes bit i
// of a[j]'s same lane.
func transposeSmall(a *[16]uint64, b int) {
	if b == 4 {
		transpose4((*[4]uint64)(a[:4]))
		return
	}
	var t uint64
	t = (a[0]>>8 ^ a[8]) & 0x00ff00ff00ff00ff
	a[0] ^= t << 8
	a[8] ^= t
	t = (a[1]>>8 ^ a[9]) & 0x00ff00ff00ff00ff
	a[1] ^= t << 8
	a[9] ^= t
	t = (a[2]>>8 ^ a[10]) & 0x00ff00ff00ff00ff
	a[2] ^= t << 8
	a[10] ^= t
	t = (a[3]>>8 ^ a[11]) & 0x00ff00ff00ff00ff
	a[3] ^= t << 8
	a[11] ^= t
	t = (a[4]>>8 ^ a[12]) & 0x00ff00ff00ff00ff
	a[4] ^= t << 8
	a[12] ^= t
	t = (a[5]>>8 ^ a[13]) & 0x00ff00ff00ff00ff
	a[5] ^= t << 8
	a[13] ^= t
	t = (a[6]>>8 ^ a[14]) & 0x00ff00ff00ff00ff
	a[6] ^= t << 8
	a[14] ^= t
	t = (a[7]>>8 ^ a[15]) & 0x00ff00ff00ff00ff
	a[7] ^= t << 8
	a[15] ^= t
	t = (a[0]>>4 ^ a[4]) & 0x0f0f0f0f0f0f0f0f
	a[0] ^= t << 4
	a[4] ^= t
	t = (a[1]>>4 ^ a[5]) & 0x0f0f0f0f0f0f0f0f
	a[1] ^= t << 4
	a[5] ^= t
	t = (a[2]>>4 ^ a[6]) & 0x0f0f0f0f0f0f0f0f
	a[2] ^= t << 4
	a[6] ^= t
	t = (a[3]>>4 ^ a[7]) & 0x0f0f0f0f0f0f0f0f
	a[3] ^= t << 4
	a[7] ^= t
	t = (a[8]>>4 ^ a[12]) & 0x0f0f0f0f0f0f0f0f
	a[8] ^= t << 4
	a[12] ^= t
	t = (a[9]>>4 ^ a[13]) & 0x0f0f0f0f0f0f0f0f
	a[9] ^= t << 4
	a[13] ^= t
	t = (a[10]>>4 ^ a[14]) & 0x0f0f0f0f0f0f0f0f
	a[10] ^= t << 4
	a[14] ^= t
	t = (a[11]>>4 ^ a[15]) & 0x0f0f0f0f0f0f0f0f
	a[11] ^= t << 4
	a[15] ^= t
	t = (a[0]>>2 ^ a[2]) & 0x3333333333333333
	a[0] ^= t << 2
	a[2] ^= t
	t = (a[1]>>2 ^ a[3]) & 0x3333333333333333
	a[1] ^= t << 2
	a[3] ^= t
	t = (a[4]>>2 ^ a[6]) & 0x3333333333333333
	a[4] ^= t << 2
	a[6] ^= t
	t = (a[5]>>2 ^ a[7]) & 0x3333333333333333
	a[5] ^= t << 2
	a[7] ^= t
	t = (a[8]>>2 ^ a[10]) & 0x3333333333333333
	a[8] ^= t << 2
	a[10] ^= t
	t = (a[9]>>2 ^ a[11]) & 0x3333333333333333
	a[9] ^= t << 2
	a[11] ^= t
	t = (a[12]>>2 ^ a[14]) & 0x3333333333333333
	a[12] ^= t << 2
	a[14] ^= t
	t = (a[13]>>2 ^ a[15]) & 0x3333333333333333
	a[13] ^= t << 2
	a[15] ^= t
	t = (a[0]>>1 ^ a[1]) & 0x5555555555555555
	a[0] ^= t << 1
	a[1] ^= t
	t = (a[2]>>1 ^ a[3]) & 0x5555555555555555
	a[2] ^= t << 1
	a[3] ^= t
	t = (a[4]>>1 ^ a[5]) & 0x5555555555555555
	a[4] ^= t << 1
	a[5] ^= t
	t = (a[6]>>1 ^ a[7]) & 0x5555555555555555
	a[6] ^= t << 1
	a[7] ^= t
	t = (a[8]>>1 ^ a[9]) & 0x5555555555555555
	a[8] ^= t << 1
	a[9] ^= t
	t = (a[10]>>1 ^ a[11]) & 0x5555555555555555
	a[10] ^= t << 1
	a[11] ^= t
	t = (a[12]>>1 ^ a[13]) & 0x5555555555555555
	a[12] ^= t << 1
	a[13] ^= t
	t = (a[14]>>1 ^ a[15]) & 0x5555555555555555
	a[14] ^= t << 1
	a[15] ^= t
}

// encodeInts codes the bit planes of data (at most maxprec of them, at
// most maxbits bits) and returns the number of bits written. Each plane
// is coded as zfp's embedded coder does: its first n bits (those of the
// coefficients already found significant) verbatim, then group tests
// ("any one-bit left?") each followed by the run of zeros up to the next
// one-bit, the runs written at once.
func encodeInts[U unsigned](w *bitWriter, maxbits, maxprec uint32, data []U, pl *[64]uint64, pl4 *[64][4]uint64) uint32 {
	if len(data) > 64 {
		return encodeMany(w, maxbits, maxprec, data, pl4)
	}
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	planes(pl, data, kmin, intprec)
	size := uint32(len(data))
	lg := uint32(bits.TrailingZeros32(size))
	var or U
	for _, v := range data {
		or |= v
	}
	top := max(uint32(bits.Len64(uint64(or))), kmin) // planes top.. are empty
	b := maxbits
	n := uint32(0)
	s := *w
	for k := intprec; b != 0 && k > kmin; {
		if n == 0 && k > top {
			// No coefficient is significant yet: each empty plane is one
			// zero bit (its group test); write a run of them at once.
			z := min(k-top, b)
			s.pad(z)
			k -= z
			b -= z
			continue
		}
		if n == size && size < 64 {
			// Every coefficient is significant: the remaining planes are
			// size bits each, verbatim; write several at once.
			per := 64 / size
			for total := min(b, (k-kmin)*size); total > 0; {
				c := min(per, k-kmin)
				nb := min(total, c*size)
				var v uint64
				for j := uint32(0); j < c; j++ {
					v |= plane(pl, k-1-j, size, lg) << (j * size)
				}
				s.writeBits(v, uint(nb))
				k -= c
				total -= nb
				b -= nb
			}
			break
		}
		k--
		x := plane(pl, k, size, lg)
		m := min(n, b)
		b -= m
		x = s.writeBits(x, uint(m))
		for ; b != 0 && n < size; x, n = x>>1, n+1 {
			b--
			if x == 0 {
				s.writeBit(0)
				break
			}
			// The group test's one-bit, then positions n.. up to the
			// one-bit at n+t; the last position (size-1) is implied, never
			// written.
			t := uint32(bits.TrailingZeros64(x))
			lim := size - 1 - n
			if t < lim {
				if b > t {
					s.writeBits(1|1<<(t+1), uint(t+2)) // t+2 <= 64
					b -= t + 1
					x >>= t
					n += t
					continue
				}
			} else if b >= lim {
				s.writeBit(1)
				s.pad(lim)
				b -= lim
				x >>= lim
				n += lim
				continue
			}
			// The budget ends inside the run of zeros.
			s.writeBit(1)
			s.pad(b)
			x >>= b
			n += b
			b = 0
		}
	}
	*w = s
	return maxbits - b
}

// encodeMany is encodeInts for blocks of more than 64 values (4-D): the
// same code over planes of four words (from four 64-value transposes).
func encodeMany[U unsigned](w *bitWriter, maxbits, maxprec uint32, data []U, pl4 *[64][4]uint64) uint32 {
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	var p [64]uint64
	for g := range 4 {
		planes(&p, data[64*g:64*g+64], kmin, intprec)
		for k := kmin; k < intprec; k++ {
			pl4[k][g] = p[k]
		}
	}
	var or U
	for _, v := range data {
		or |= v
	}
	top := max(uint32(bits.Len64(uint64(or))), kmin) // planes top.. are empty
	const size = 256
	b := maxbits
	n := uint32(0)
	s := *w
	for k := intprec; b != 0 && k > kmin; {
		if n == 0 && k > top {
			z := min(k-top, b) // a run of empty planes (see encodeInts)
			s.pad(z)
			k -= z
			b -= z
			continue
		}
		k--
		pk := &pl4[k]
		m := min(n, b)
		b -= m
		for off := uint32(0); off < m; off += 64 {
			s.writeBits(pk[off>>6], uint(min(64, m-off)))
		}
		for b != 0 && n < size {
			b--
			nx := nextOne(pk, n)
			if nx == size {
				s.writeBit(0)
				break
			}
			s.writeBit(1)
			// Positions n.. up to the one-bit at nx; the last position
			// (size-1) is implied, never written.
			t, lim := nx-n, size-1-n
			if t < lim {
				if b > t {
					s.pad(t)
					s.writeBit(1)
					b -= t + 1
					n = nx + 1
					continue
				}
			} else if b >= lim {
				s.pad(lim)
				b -= lim
				n = size
				continue
			}
			// The budget ends inside the run of zeros.
			s.pad(b)
			n += b + 1
			b = 0
		}
	}
	*w = s
	return maxbits - b
}

// nextOne returns the position of the first one-bit at or after n (< 256)
// in the 256-bit plane p, or 256.
func nextOne(p *[4]uint64, n uint32) uint32 {
	w := n >> 6
	if x := p[w&3] >> (n & 63); x != 0 {
		return n + uint32(bits.TrailingZeros64(x))
	}
	for w++; w < 4; w++ {
		if p[w] != 0 {
			return w<<6 + uint32(bits.TrailingZeros64(p[w]))
		}
	}
	return 256
}

// decodeInts reads what encodeInts wrote into data and returns the number
// of bits read.
func decodeInts[U unsigned](r *bitReader, maxbits, maxprec uint32, data []U, pl *[64]uint64) uint32 {
	if len(data) > 64 {
		return decodeMany(r, maxbits, maxprec, data)
	}
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	size := uint32(len(data))
	lg := uint32(bits.TrailingZeros32(size))
	if size < 64 {
		clear(pl[:16]) // planes go into lanes (see plane)
	}
	b := maxbits
	n := uint32(0)
	ones := 0 // one-bits of small blocks' planes, but the bulk verbatim ones
	// The reader's state in locals, so that it lives in registers (a
	// struct holding a slice stays in memory).
	src, off, acc, avail := r.data, r.off, r.acc, uint32(r.n)
	k := intprec // planes k.. are read
	for b != 0 && k > kmin {
		if n == size && size < 64 {
			// Every coefficient is significant: the remaining planes are
			// size bits each, verbatim; read several at once.
			per := 64 / size
			mask := uint64(1)<<size - 1
			for total := min(b, (k-kmin)*size); total > 0; {
				c := min(per, k-kmin)
				nb := min(total, c*size)
				var v uint64
				if nb <= avail {
					v = acc & (1<<nb - 1)
					acc >>= nb
					avail -= nb
				} else {
					v, off, acc, avail = readRefill(src, off, acc, avail, nb)
				}
				for j := uint32(0); j < c; j++ {
					q := k - 1 - j
					pl[q&(size-1)] |= v >> (j * size) & mask << (q >> lg << lg)
				}
				k -= c
				total -= nb
				b -= nb
			}
			break
		}
		if n == 0 {
			// No coefficient is significant yet: each empty plane is one
			// zero bit (its group test); skip a run of them at once.
			if avail == 0 {
				acc = load64(src, off)
				off += 8
				avail = 64
			}
			if z := min(uint32(bits.TrailingZeros64(acc)), avail, k-kmin, b); z > 0 {
				if size == 64 {
					clear(pl[k-z : k])
				}
				k -= z
				b -= z
				acc >>= z
				avail -= z
				continue
			}
		}
		k--
		m := min(n, b)
		b -= m
		var x uint64
		if m <= avail {
			x = acc & (1<<m - 1)
			acc >>= m
			avail -= m
		} else {
			x, off, acc, avail = readRefill(src, off, acc, avail, m)
		}
		for ; b != 0 && n < size; n++ {
			b--
			if avail == 0 {
				acc = load64(src, off)
				off += 8
				avail = 64
			}
			bit := acc & 1
			acc >>= 1
			avail--
			if bit == 0 {
				break
			}
			// Skip the run of zeros up to the next one-bit (consumed), or
			// to the implied last position, or to the end of the budget.
			lim := min(size-1-n, b)
			var z uint32
			var one bool
			if t := uint32(bits.TrailingZeros64(acc)); t < lim && t < avail {
				acc >>= t + 1
				avail -= t + 1
				z, one = t, true
			} else {
				z, one, off, acc, avail = scanRefill(src, off, acc, avail, lim)
			}
			n += z
			b -= z
			if one {
				b--
			}
			x += 1 << n
		}
		if size == 64 {
			pl[k] = x
		} else {
			pl[k&(size-1)] |= x << (k >> lg << lg)
			if intprec == 32 {
				ones += bits.OnesCount64(x)
			}
		}
	}
	r.off, r.acc, r.n = off, acc, uint(avail)
	if size == 64 {
		clear(pl[:k]) // the transpose reads every plane
		// Transposing costs about as much as depositing 300 bits one by
		// one (32-bit values: 100, the transpose is of half the size).
		ones := 0
		for _, x := range pl[k:intprec] {
			ones += bits.OnesCount64(x)
		}
		if intprec == 32 && ones > 100 {
			transpose32x2(pl)
			d := data[:64]
			for i := range 32 {
				d[i], d[i+32] = U(uint32(pl[i])), U(pl[i]>>32)
			}
			return maxbits - b
		}
		if ones > 300 {
			transpose64(pl)
			for i := range data {
				data[i] = U(pl[i])
			}
			return maxbits - b
		}
	}
	if size == 64 {
		clear(data)
		for ; k < intprec; k++ {
			for x := pl[k]; x != 0; x &= x - 1 {
				data[bits.TrailingZeros64(x)] += 1 << k
			}
		}
		return maxbits - b
	}
	if size == 16 && intprec == 32 && ones <= 16 {
		// A few one-bits of 32-bit values (integers at a fixed precision,
		// mostly): deposited one by one, which costs less than the
		// transpose (64-bit values gain nothing).
		clear(data)
		for ; k < intprec; k++ {
			for x := plane(pl, k, size, lg); x != 0; x &= x - 1 {
				data[bits.TrailingZeros64(x)&15] += 1 << k
			}
		}
		return maxbits - b
	}
	// Blocks of 4 or 16 values: the lanes transposed (see planes).
	a := (*[16]uint64)(pl[:16])
	transposeSmall(a, int(size))
	for i := range data {
		data[i] = U(a[i&15])
	}
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
		if n == 0 {
			// A run of empty planes (see decodeInts).
			if s.n == 0 {
				s.fill()
			}
			if z := min(uint32(bits.TrailingZeros64(s.acc)), uint32(s.n), k-kmin, b); z > 0 {
				k -= z
				b -= z
				s.acc >>= z
				s.n -= uint(z)
				continue
			}
		}
		k--
		m := min(n, b)
		b -= m
		// The first m bits verbatim, 64 at a time, deposited by one-bit.
		for o := uint32(0); o < m; o += 64 {
			for x := s.readBits(uint(min(64, m-o))); x != 0; x &= x - 1 {
				data[(o+uint32(bits.TrailingZeros64(x)))&255] += 1 << k
			}
		}
		for ; b != 0 && n < size; n++ {
			b--
			if s.readBit() == 0 {
				break
			}
			// Zeros up to the next one-bit (consumed), or to the implied
			// last position, or to the end of the budget.
			z, one := s.scanZeros(min(size-1-n, b))
			n += z
			b -= z
			if one {
				b--
			}
			data[n&255] += 1 << k
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

// work is the scratch space of a block coder, allocated once per array.
type work[I signed, U unsigned] struct {
	ib  [256]I
	ub  [256]U
	pl  [64]uint64
	pl4 [64][4]uint64 // planes of 4-D blocks
}

// fwork adds the scratch space of the float block coders.
type fwork[F float, I signed, U unsigned] struct {
	work[I, U]
	gb [256]F
}

// encodeIntBlock codes a block of integers with the lossy algorithm; it
// transforms iblock in place.
func encodeIntBlock[I signed, U unsigned](w *bitWriter, minbits, maxbits, maxprec uint32, iblock []I, d int, wk *work[I, U]) uint32 {
	ublock := wk.ub[:len(iblock)]
	fwdXform(full(iblock), d)
	fwdOrder(ublock, iblock, d)
	n := encodeInts(w, maxbits, maxprec, ublock, &wk.pl, &wk.pl4)
	if n < minbits {
		w.pad(minbits - n)
		n = minbits
	}
	return n
}

// decodeIntBlock reads a block encodeIntBlock wrote.
func decodeIntBlock[I signed, U unsigned](r *bitReader, minbits, maxbits, maxprec uint32, iblock []I, d int, wk *work[I, U]) uint32 {
	ublock := wk.ub[:len(iblock)]
	n := decodeInts(r, maxbits, maxprec, ublock, &wk.pl)
	if n < minbits {
		r.skip(minbits - n)
		n = minbits
	}
	invOrder(iblock, ublock, d)
	invXform(full(iblock), d)
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
func revEncodeIntBlock[I signed, U unsigned](w *bitWriter, minbits, maxbits, maxprec uint32, iblock []I, d int, wk *work[I, U]) uint32 {
	ublock := wk.ub[:len(iblock)]
	revFwdXform(full(iblock), d)
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
	n := pb + encodeInts(w, maxbits-pb, prec, ublock, &wk.pl, &wk.pl4)
	if n < minbits {
		w.pad(minbits - n)
		n = minbits
	}
	return n
}

// revDecodeIntBlock reads a block revEncodeIntBlock wrote.
func revDecodeIntBlock[I signed, U unsigned](r *bitReader, minbits, maxbits uint32, iblock []I, d int, wk *work[I, U]) uint32 {
	ublock := wk.ub[:len(iblock)]
	pb := pbits[U]()
	prec := uint32(r.readBits(uint(pb))) + 1
	n := pb + decodeInts(r, maxbits-pb, prec, ublock, &wk.pl)
	if n < minbits {
		r.skip(minbits - n)
		n = minbits
	}
	invOrder(iblock, ublock, d)
	revInvXform(full(iblock), d)
	return n
}
