package zfp

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// One-dimensional arrays have blocks of 4 values, and there the cost is in
// the per-block work rather than in the values: these are the lossy 1-D
// coders written out for that size. The whole array is coded in one loop
// (no block closure, no scratch blocks), the reader is a bit position with
// 8-byte loads (no buffer refills), and each bit plane's group-test code is
// read or written by one table lookup: for 4 values it is at most 7 bits.
// The output is the same as the generic coders' (blocks of any size) and
// the C library's.

// Group-test codes of one bit plane of a block of 4 values with n (0..3)
// coefficients already significant, the bits of the first n coefficients
// excluded (they are verbatim): decTab[n][next 7 stream bits] and
// encTab[n][plane] hold the code's length L (1..7), the n after the plane,
// and the plane's new bits (decTab) or the code (encTab), as
// bits | n<<7 | L<<10.
var decTab [4][128]uint16
var encTab [4][16]uint16

func init() {
	for n0 := uint32(0); n0 < 4; n0++ {
		// Decoding, as the C library's decode_ints reads a plane with an
		// unlimited budget.
		for p := uint32(0); p < 128; p++ {
			n, l, x := n0, uint32(0), uint32(0)
			next := func() uint32 { b := p >> l & 1; l++; return b }
			for n < 4 && next() == 1 {
				for n < 3 && next() == 0 {
					n++
				}
				x |= 1 << n
				n++
			}
			decTab[n0][p] = uint16(x | n<<7 | l<<10)
		}
		// Encoding, as encode_ints writes a plane.
		for pl := uint32(0); pl < 16; pl++ {
			n, l, code := n0, uint32(0), uint32(0)
			put := func(b uint32) uint32 { code |= b << l; l++; return b }
			for x := pl >> n0; n < 4 && put(b2u32(x != 0)) == 1; x, n = x>>1, n+1 {
				for n < 3 && put(x&1) == 0 {
					x >>= 1
					n++
				}
			}
			encTab[n0][pl] = uint16(code | n<<7 | l<<10)
		}
	}
}

func b2u32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// peek returns the stream bits from bit pos on, at least 56 of them valid
// (zeros past the end of data).
func peek(data []byte, pos uint64) uint64 {
	off := pos >> 3
	if off+8 <= uint64(len(data)) {
		return binary.LittleEndian.Uint64(data[off:]) >> (pos & 7)
	}
	return load64Tail(data, int(min(off, uint64(len(data))))) >> (pos & 7)
}

// transpose4 transposes the 4×4 bit matrices in every 4-bit lane of a: with
// a[i] = value i, lane q of a[t] becomes bit plane 4q+t; and back.
func transpose4(a *[4]uint64) {
	const m2, m1 = 0x3333333333333333, 0x5555555555555555
	t := (a[0]>>2 ^ a[2]) & m2
	a[0] ^= t << 2
	a[2] ^= t
	t = (a[1]>>2 ^ a[3]) & m2
	a[1] ^= t << 2
	a[3] ^= t
	t = (a[0]>>1 ^ a[1]) & m1
	a[0] ^= t << 1
	a[1] ^= t
	t = (a[2]>>1 ^ a[3]) & m1
	a[2] ^= t << 1
	a[3] ^= t
}

// decodeInts4 reads the bit planes of a block of 4 values from bit pos (at
// most maxprec planes, at most maxbits bits; as decodeInts) and returns the
// values and the position after them.
func decodeInts4[U unsigned](data []byte, pos uint64, maxbits, maxprec uint32) ([4]U, uint64) {
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	var pl [4]uint64 // plane k in lane k/4 of pl[k%4]
	b, n, k := maxbits, uint32(0), intprec
	for b != 0 && k > kmin {
		w := peek(data, pos)
		if n == 0 {
			// A run of empty planes: one zero bit each.
			if z := min(uint32(bits.TrailingZeros64(w)), 56, k-kmin, b); z > 0 {
				k -= z
				b -= z
				pos += uint64(z)
				continue
			}
		}
		if n == 4 {
			// Every coefficient is significant: the remaining planes are
			// 4 bits each, verbatim; 14 planes per load.
			for total := min(b, (k-kmin)*4); total > 0; {
				nb := min(total, 56)
				v := peek(data, pos) & (1<<nb - 1)
				pos += uint64(nb)
				total -= nb
				b -= nb
				for ; nb > 0; nb -= min(nb, 4) {
					k--
					pl[k&3] |= v & 15 << (k >> 2 << 2)
					v >>= 4
				}
			}
			break
		}
		k--
		m := min(n, b)
		x := w & (1<<m - 1)
		w >>= m
		pos += uint64(m)
		b -= m
		if b != 0 {
			e := uint32(decTab[n&3][w&127])
			if l := e >> 10; l <= b {
				x |= uint64(e & 15)
				n = e >> 7 & 7
				pos += uint64(l)
				b -= l
			} else {
				// The budget ends inside the code: decode_ints's loop.
				for n < 4 && b != 0 {
					b--
					bit := w & 1
					w >>= 1
					pos++
					if bit == 0 {
						break
					}
					for n < 3 && b != 0 {
						b--
						bit := w & 1
						w >>= 1
						pos++
						if bit != 0 {
							break
						}
						n++
					}
					x |= 1 << n
					n++
				}
			}
		}
		pl[k&3] |= x << (k >> 2 << 2)
	}
	transpose4(&pl)
	return [4]U{U(pl[0]), U(pl[1]), U(pl[2]), U(pl[3])}, pos
}

// encodeInts4 writes the bit planes of a block of 4 values (as encodeInts)
// and returns the number of bits written.
func encodeInts4[U unsigned](w *bitWriter, maxbits, maxprec uint32, v *[4]U) uint32 {
	intprec := intPrec[U]()
	kmin := uint32(0)
	if intprec > maxprec {
		kmin = intprec - maxprec
	}
	pl := [4]uint64{uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3])}
	top := max(uint32(bits.Len64(pl[0]|pl[1]|pl[2]|pl[3])), kmin) // planes top.. are empty
	transpose4(&pl)
	b, n := maxbits, uint32(0)
	s := *w
	for k := intprec; b != 0 && k > kmin; {
		if n == 0 && k > top {
			z := min(k-top, b) // a run of empty planes
			s.pad(z)
			k -= z
			b -= z
			continue
		}
		if n == 4 {
			// The remaining planes verbatim, 16 per write.
			for total := min(b, (k-kmin)*4); total > 0; {
				nb := min(total, 64)
				var x uint64
				for j := uint32(0); j < nb; j += 4 {
					k--
					x |= (pl[k&3] >> (k >> 2 << 2) & 15) << j
				}
				s.writeBits(x, uint(nb))
				total -= nb
				b -= nb
			}
			break
		}
		k--
		x := pl[k&3] >> (k >> 2 << 2) & 15
		m := min(n, b)
		s.writeBits(x, uint(m))
		b -= m
		if b == 0 {
			break
		}
		e := uint32(encTab[n&3][x])
		if l := e >> 10; l <= b {
			s.writeBits(uint64(e&127), uint(l))
			n = e >> 7 & 7
			b -= l
			continue
		}
		// The budget ends inside the code: encode_ints's loop.
		for x >>= n; n < 4 && b != 0; x, n = x>>1, n+1 {
			b--
			if s.writeBit(b2u(x != 0)) == 0 {
				break
			}
			for n < 3 && b != 0 {
				b--
				if s.writeBit(x&1) != 0 {
					break
				}
				x >>= 1
				n++
			}
		}
	}
	*w = s
	return maxbits - b
}

// lift4 and ilift4 are the forward and inverse decorrelating transforms
// of one line of 4 values (fwdXform, invXform).
func lift4[I signed](x, y, z, w I) (I, I, I, I) {
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
	return x, y, z, w
}

func ilift4[I signed](x, y, z, w I) (I, I, I, I) {
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
	return x, y, z, w
}

// loadRaw and storeRaw move one little-endian value of size bytes.
func loadRaw(src []byte, size int) uint64 {
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(src))
	}
	return binary.LittleEndian.Uint64(src)
}

func storeRaw(dst []byte, size int, v uint64) {
	if size == 4 {
		binary.LittleEndian.PutUint32(dst, uint32(v))
	} else {
		binary.LittleEndian.PutUint64(dst, v)
	}
}

// gather4 returns the block of 1-D values at src (n of them, 1..4),
// padded as the C library pads a partial block (grid.gather).
func gather4(src []byte, n, size int) [4]uint64 {
	if n == 4 {
		src = src[:4*size]
		return [4]uint64{loadRaw(src, size), loadRaw(src[size:], size), loadRaw(src[2*size:], size), loadRaw(src[3*size:], size)}
	}
	var v [4]uint64
	for i := range n {
		v[i] = loadRaw(src[i*size:], size)
	}
	switch n {
	case 1:
		v[1], v[2], v[3] = v[0], v[0], v[0]
	case 2:
		v[2], v[3] = v[1], v[0]
	case 3:
		v[3] = v[0]
	}
	return v
}

// scatter4 writes the first n values of a decoded 1-D block to dst.
func scatter4(dst []byte, n, size int, v *[4]uint64) {
	if n == 4 {
		dst = dst[:4*size]
		storeRaw(dst, size, v[0])
		storeRaw(dst[size:], size, v[1])
		storeRaw(dst[2*size:], size, v[2])
		storeRaw(dst[3*size:], size, v[3])
		return
	}
	for i := range n {
		storeRaw(dst[i*size:], size, v[i])
	}
}

// compress1D codes a 1-D array of nx values (lossy modes; I and U are the
// integer types of the values, F their float type when float is true).
func compress1D[F float, I signed, U unsigned](w *bitWriter, src []byte, nx int, p *Params, isFloat bool) {
	size := int(unsafe.Sizeof(I(0)))
	ebits, ebias := floatInfo[F]()
	nb := nbmask[U]()
	s := *w
	for x := 0; x < nx; x += 4 {
		raw := gather4(src[x*size:], min(4, nx-x), size)
		n := uint32(0)
		maxprec := p.MaxPrec
		var iv [4]I
		if isFloat {
			fv := [4]F{bitsFloat[F](I(raw[0])), bitsFloat[F](I(raw[1])), bitsFloat[F](I(raw[2])), bitsFloat[F](I(raw[3]))}
			emax := blockExponent(fv[:])
			maxprec = precision(emax, p.MaxPrec, int(p.MinExp), 1)
			e := uint32(0)
			if maxprec != 0 {
				e = uint32(emax + ebias)
			}
			if e == 0 {
				s.writeBit(0)
				if p.MinBits > 1 {
					s.pad(p.MinBits - 1)
				}
				continue
			}
			n = 1 + ebits
			s.writeBits(uint64(2*e+1), uint(n))
			sc := ldexp[F](size*8 - 2 - emax)
			lim := ldexp[F](size*8 - 1)
			for i, v := range fv {
				iv[i] = toInt[F, I](sc*v, lim)
			}
		} else {
			iv = [4]I{I(raw[0]), I(raw[1]), I(raw[2]), I(raw[3])}
		}
		a, b, c, d := lift4(iv[0], iv[1], iv[2], iv[3])
		u := [4]U{(U(a) + nb) ^ nb, (U(b) + nb) ^ nb, (U(c) + nb) ^ nb, (U(d) + nb) ^ nb}
		n += encodeInts4(&s, p.MaxBits-n, maxprec, &u)
		if n < p.MinBits {
			s.pad(p.MinBits - n)
		}
	}
	*w = s
}

// decompress1D decodes what compress1D wrote; it returns false when the
// stream ends inside the blocks.
func decompress1D[F float, I signed, U unsigned](r *bitReader, dst []byte, nx int, p *Params, isFloat bool) bool {
	size := int(unsafe.Sizeof(I(0)))
	ebits, ebias := floatInfo[F]()
	nb := nbmask[U]()
	data := r.data
	end := uint64(len(data)) * 8
	pos := r.consumed()
	for x := 0; x < nx; x += 4 {
		start := pos
		var raw [4]uint64
		maxprec := p.MaxPrec
		emax := 0
		decode := true
		if isFloat {
			h := peek(data, pos)
			if h&1 == 0 {
				pos++
				decode = false
			} else {
				emax = int(h>>1&(1<<ebits-1)) - ebias
				pos += uint64(1 + ebits)
				maxprec = precision(emax, p.MaxPrec, int(p.MinExp), 1)
			}
		}
		if decode {
			u, np := decodeInts4[U](data, pos, p.MaxBits-uint32(pos-start), maxprec)
			pos = np
			a, b, c, d := ilift4(I((u[0]^nb)-nb), I((u[1]^nb)-nb), I((u[2]^nb)-nb), I((u[3]^nb)-nb))
			if isFloat {
				sc := ldexp[F](emax - (size*8 - 2))
				raw = [4]uint64{uint64(floatBits[F, I](sc * F(a))), uint64(floatBits[F, I](sc * F(b))),
					uint64(floatBits[F, I](sc * F(c))), uint64(floatBits[F, I](sc * F(d)))}
			} else {
				raw = [4]uint64{uint64(a), uint64(b), uint64(c), uint64(d)}
			}
		}
		if used := uint32(pos - start); used < p.MinBits {
			pos += uint64(p.MinBits - used)
		}
		scatter4(dst[x*size:], min(4, nx-x), size, &raw)
		if pos > end {
			return false
		}
	}
	r.seek(pos)
	return true
}

// compress1DRev codes a 1-D array of nx values losslessly (as
// revEncodeFloatBlock and revEncodeIntBlock do, for blocks of 4).
func compress1DRev[F float, I signed, U unsigned](w *bitWriter, src []byte, nx int, p *Params, isFloat bool) {
	size := int(unsafe.Sizeof(I(0)))
	ebits, ebias := floatInfo[F]()
	tc := ^I(0) ^ I(-1)<<(size*8-1) // 0x7fff...
	s := *w
	for x := 0; x < nx; x += 4 {
		raw := gather4(src[x*size:], min(4, nx-x), size)
		iv := [4]I{I(raw[0]), I(raw[1]), I(raw[2]), I(raw[3])}
		n := uint32(0)
		if isFloat {
			fv := [4]F{bitsFloat[F](iv[0]), bitsFloat[F](iv[1]), bitsFloat[F](iv[2]), bitsFloat[F](iv[3])}
			emax := blockExponent(fv[:])
			exact := true
			var cv [4]I
			if emax != -ebias {
				sc := ldexp[F](size*8 - 2 - emax)
				lim := ldexp[F](size*8 - 1)
				back := ldexp[F](emax - (size*8 - 2))
				for i, v := range fv {
					cv[i] = toInt[F, I](sc*v, lim)
					exact = exact && floatBits[F, I](back*F(cv[i])) == iv[i]
				}
			} else {
				exact = iv == [4]I{}
			}
			if exact {
				e := uint32(emax + ebias)
				if e == 0 {
					s.writeBit(0)
					continue
				}
				s.writeBits(1, 2)
				s.writeBits(uint64(e), uint(ebits))
				n = 2 + ebits
				iv = cv
			} else {
				for i, v := range iv {
					if v < 0 {
						iv[i] = v ^ tc
					}
				}
				s.writeBits(3, 2)
				n = 2
			}
		}
		n += revEncodeInts4[I, U](&s, p.MinBits-min(n, p.MinBits), p.MaxBits-n, p.MaxPrec, iv)
	}
	*w = s
}

// revEncodeInts4 is revEncodeIntBlock for a block of 4 values.
func revEncodeInts4[I signed, U unsigned](w *bitWriter, minbits, maxbits, maxprec uint32, v [4]I) uint32 {
	x, y, z, t := v[0], v[1], v[2], v[3]
	t -= z
	z -= y
	y -= x
	t -= z
	z -= y
	t -= z
	nb := nbmask[U]()
	u := [4]U{(U(x) + nb) ^ nb, (U(y) + nb) ^ nb, (U(z) + nb) ^ nb, (U(t) + nb) ^ nb}
	m := u[0] | u[1] | u[2] | u[3]
	prec := uint32(0)
	if m != 0 {
		prec = intPrec[U]() - uint32(bits.TrailingZeros64(uint64(m)))
	}
	prec = max(min(prec, maxprec), 1)
	pb := pbits[U]()
	w.writeBits(uint64(prec-1), uint(pb))
	n := pb + encodeInts4(w, maxbits-pb, prec, &u)
	if n < minbits {
		w.pad(minbits - n)
		n = minbits
	}
	return n
}

// decompress1DRev decodes what compress1DRev wrote; it returns false when
// the stream ends inside the blocks.
func decompress1DRev[F float, I signed, U unsigned](r *bitReader, dst []byte, nx int, p *Params, isFloat bool) bool {
	size := int(unsafe.Sizeof(I(0)))
	ebits, ebias := floatInfo[F]()
	tc := ^I(0) ^ I(-1)<<(size*8-1)
	nb := nbmask[U]()
	pb := pbits[U]()
	data := r.data
	end := uint64(len(data)) * 8
	pos := r.consumed()
	for x := 0; x < nx; x += 4 {
		start := pos
		var raw [4]uint64
		n := uint32(0)
		mode := 0 // ints; floats: 1 cast from emax, 2 bit patterns, 3 zero block
		emax := 0
		if isFloat {
			h := peek(data, pos)
			switch {
			case h&1 == 0:
				mode = 3
				pos++
			case h&2 != 0:
				mode = 2
				pos += 2
			default:
				mode = 1
				emax = int(h>>2&(1<<ebits-1)) - ebias
				pos += uint64(2 + ebits)
			}
			n = uint32(pos - start)
		}
		if mode != 3 {
			minbits, maxbits := p.MinBits-min(n, p.MinBits), p.MaxBits-n
			bstart := pos
			prec := uint32(peek(data, pos)&(1<<pb-1)) + 1
			pos += uint64(pb)
			u, np := decodeInts4[U](data, pos, maxbits-pb, prec)
			pos = np
			if used := uint32(pos - bstart); used < minbits {
				pos += uint64(minbits - used)
			}
			a, b, c, d := I((u[0]^nb)-nb), I((u[1]^nb)-nb), I((u[2]^nb)-nb), I((u[3]^nb)-nb)
			d += c
			c += b
			d += c
			b += a
			c += b
			d += c
			iv := [4]I{a, b, c, d}
			switch mode {
			case 0:
			case 1:
				if emax != -ebias {
					sc := ldexp[F](emax - (size*8 - 2))
					for i, v := range iv {
						iv[i] = floatBits[F, I](sc * F(v))
					}
				} else {
					iv = [4]I{}
				}
			case 2:
				for i, v := range iv {
					if v < 0 {
						iv[i] = v ^ tc
					}
				}
			}
			raw = [4]uint64{uint64(iv[0]), uint64(iv[1]), uint64(iv[2]), uint64(iv[3])}
		} else if used := uint32(pos - start); used < p.MinBits {
			pos += uint64(p.MinBits - used)
		}
		scatter4(dst[x*size:], min(4, nx-x), size, &raw)
		if pos > end {
			return false
		}
	}
	r.seek(pos)
	return true
}
