package blosc

import "encoding/binary"

// Byte shuffle: a block of n = len/ts elements of ts bytes is stored as ts
// streams of n bytes, stream j holding byte j of every element; the
// len%ts bytes past the last whole element are stored as they are.
//
// The pure-Go kernels below move whole 64-bit words: they load 8 bytes from
// each of 2, 4 or 8 streams and transpose the byte matrix in registers
// (log2 steps of masked swaps), so every load and store is a full word.
// Type sizes that are multiples of 8, 4 or 2 are handled as groups of 8, 4
// or 2 streams; odd type sizes take the byte loop.

const (
	m32 = 0x00000000FFFFFFFF
	m16 = 0x0000FFFF0000FFFF
	m8  = 0x00FF00FF00FF00FF
)

// swap exchanges the mask-selected low parts of b with the parts of a that
// sit s bits higher: the step of a recursive block transpose.
func swap(a, b uint64, s uint, mask uint64) (uint64, uint64) {
	t := ((a >> s) ^ b) & mask
	return a ^ t<<s, b ^ t
}

// transpose8 transposes the 8x8 byte matrix whose row i is the little-endian
// word r[i].
func transpose8(r *[8]uint64) {
	r0, r1, r2, r3, r4, r5, r6, r7 := r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
	r0, r4 = swap(r0, r4, 32, m32)
	r1, r5 = swap(r1, r5, 32, m32)
	r2, r6 = swap(r2, r6, 32, m32)
	r3, r7 = swap(r3, r7, 32, m32)
	r0, r2 = swap(r0, r2, 16, m16)
	r1, r3 = swap(r1, r3, 16, m16)
	r4, r6 = swap(r4, r6, 16, m16)
	r5, r7 = swap(r5, r7, 16, m16)
	r0, r1 = swap(r0, r1, 8, m8)
	r2, r3 = swap(r2, r3, 8, m8)
	r4, r5 = swap(r4, r5, 8, m8)
	r6, r7 = swap(r6, r7, 8, m8)
	r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = r0, r1, r2, r3, r4, r5, r6, r7
}

// transpose4x2 transposes the two 4x4 byte matrices held in the low and
// high halves of the words a, b, c, d.
func transpose4x2(a, b, c, d uint64) (uint64, uint64, uint64, uint64) {
	a, c = swap(a, c, 16, m16)
	b, d = swap(b, d, 16, m16)
	a, b = swap(a, b, 8, m8)
	c, d = swap(c, d, 8, m8)
	return a, b, c, d
}

// spread moves byte i of the low 32 bits of x to byte 2i.
func spread(x uint64) uint64 {
	x &= m32
	x = (x | x<<16) & m16
	return (x | x<<8) & m8
}

// compact moves byte 2i of x to byte i (the inverse of spread).
func compact(x uint64) uint64 {
	x &= m8
	x = (x | x>>8) & m16
	return (x | x>>16) & m32
}

var le = binary.LittleEndian

// unshuffle undoes the byte shuffle of src into dst (same length).
func unshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if ts == 1 {
		copy(dst, src)
		return
	}
	i0 := unshuffleAsm(dst, src, ts, n) // elements done by assembly
	unshuffleGo(dst, src, ts, n, i0)
	copy(dst[n*ts:], src[n*ts:])
}

// unshuffleGo unshuffles elements i0..n-1 without assembly: the word
// kernels of swar_unsafe.go where they are built, then unshuffleSafe.
func unshuffleGo(dst, src []byte, ts, n, i0 int) {
	if nv := n &^ 7; i0 < nv {
		i0 = unshuffleWords(dst, src, ts, n, i0, nv)
	}
	unshuffleSafe(dst, src, ts, n, i0)
}

// unshuffleSafe unshuffles elements i0..n-1 with kernels in safe Go.
//
// They are written for the compiler: the transposes are spelled out (swap
// inlines, a transpose helper would not), the stream slices share one
// length so that a single loop condition proves every load in bounds, and
// the output index advances on its own, so the type size 2, 4 and 8 loops
// carry no bounds check but the one on the output window (checked with
// go build -gcflags=-d=ssa/check_bce/debug=1).
func unshuffleSafe(dst, src []byte, ts, n, i0 int) {
	nv := n &^ 7
	switch {
	case i0 >= nv:
	case ts == 2:
		unshuffle2x2(dst, src, n, i0, nv)
		i0 = nv
	case ts == 4:
		unshuffle4x4(dst, src, n, i0, nv)
		i0 = nv
	case ts == 8:
		unshuffle8x8(dst, src, n, i0, nv)
		i0 = nv
	case ts%8 == 0:
		for g := 0; g < ts; g += 8 {
			unshuffle8(dst, src, ts, n, i0, nv, g)
		}
		i0 = nv
	case ts%4 == 0:
		for g := 0; g < ts; g += 4 {
			unshuffle4(dst, src, ts, n, i0, nv, g)
		}
		i0 = nv
	case ts%2 == 0:
		for g := 0; g < ts; g += 2 {
			unshuffle2(dst, src, ts, n, i0, nv, g)
		}
		i0 = nv
	}
	for i := i0; i < n; i++ {
		for j := range ts {
			dst[i*ts+j] = src[j*n+i]
		}
	}
}

// streams4 returns the 4 streams of n bytes at src[g*n:], each cut to
// elements i0..nv-1, all of one length (the first's).
func streams4(src []byte, n, i0, nv, g int) (s0, s1, s2, s3 []byte) {
	s0 = src[g*n+i0 : g*n+nv]
	s1 = src[(g+1)*n+i0:][:len(s0)]
	s2 = src[(g+2)*n+i0:][:len(s0)]
	s3 = src[(g+3)*n+i0:][:len(s0)]
	return
}

// unshuffle8x8 is the type size 8 kernel: 8 words in (one per stream),
// an 8x8 byte transpose, 8 words out.
func unshuffle8x8(dst, src []byte, n, i0, nv int) {
	s0, s1, s2, s3 := streams4(src, n, i0, nv, 0)
	s4 := src[4*n+i0:][:len(s0)]
	s5 := src[5*n+i0:][:len(s0)]
	s6 := src[6*n+i0:][:len(s0)]
	s7 := src[7*n+i0:][:len(s0)]
	d := dst[8*i0 : 8*nv]
	for i, j := 0, 0; i <= len(s0)-8 && j <= len(d)-64; i, j = i+8, j+64 {
		r0, r1, r2, r3 := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
		r4, r5, r6, r7 := le.Uint64(s4[i:]), le.Uint64(s5[i:]), le.Uint64(s6[i:]), le.Uint64(s7[i:])
		r0, r4 = swap(r0, r4, 32, m32)
		r1, r5 = swap(r1, r5, 32, m32)
		r2, r6 = swap(r2, r6, 32, m32)
		r3, r7 = swap(r3, r7, 32, m32)
		r0, r2 = swap(r0, r2, 16, m16)
		r1, r3 = swap(r1, r3, 16, m16)
		r4, r6 = swap(r4, r6, 16, m16)
		r5, r7 = swap(r5, r7, 16, m16)
		r0, r1 = swap(r0, r1, 8, m8)
		r2, r3 = swap(r2, r3, 8, m8)
		r4, r5 = swap(r4, r5, 8, m8)
		r6, r7 = swap(r6, r7, 8, m8)
		o := (*[64]byte)(d[j:])
		le.PutUint64(o[0:], r0)
		le.PutUint64(o[8:], r1)
		le.PutUint64(o[16:], r2)
		le.PutUint64(o[24:], r3)
		le.PutUint64(o[32:], r4)
		le.PutUint64(o[40:], r5)
		le.PutUint64(o[48:], r6)
		le.PutUint64(o[56:], r7)
	}
}

// unshuffle8 places streams g..g+7 for elements i0..nv-1 (multiples of 8)
// of a type size that is a multiple of 8.
func unshuffle8(dst, src []byte, ts, n, i0, nv, g int) {
	s0, s1, s2, s3 := streams4(src, n, i0, nv, g)
	s4 := src[(g+4)*n+i0:][:len(s0)]
	s5 := src[(g+5)*n+i0:][:len(s0)]
	s6 := src[(g+6)*n+i0:][:len(s0)]
	s7 := src[(g+7)*n+i0:][:len(s0)]
	for i := 0; i <= len(s0)-8; i += 8 {
		r0, r1, r2, r3 := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
		r4, r5, r6, r7 := le.Uint64(s4[i:]), le.Uint64(s5[i:]), le.Uint64(s6[i:]), le.Uint64(s7[i:])
		r0, r4 = swap(r0, r4, 32, m32)
		r1, r5 = swap(r1, r5, 32, m32)
		r2, r6 = swap(r2, r6, 32, m32)
		r3, r7 = swap(r3, r7, 32, m32)
		r0, r2 = swap(r0, r2, 16, m16)
		r1, r3 = swap(r1, r3, 16, m16)
		r4, r6 = swap(r4, r6, 16, m16)
		r5, r7 = swap(r5, r7, 16, m16)
		r0, r1 = swap(r0, r1, 8, m8)
		r2, r3 = swap(r2, r3, 8, m8)
		r4, r5 = swap(r4, r5, 8, m8)
		r6, r7 = swap(r6, r7, 8, m8)
		o := dst[(i0+i)*ts+g:]
		o = o[:7*ts+8]
		le.PutUint64(o[0:], r0)
		le.PutUint64(o[ts:], r1)
		le.PutUint64(o[2*ts:], r2)
		le.PutUint64(o[3*ts:], r3)
		le.PutUint64(o[4*ts:], r4)
		le.PutUint64(o[5*ts:], r5)
		le.PutUint64(o[6*ts:], r6)
		le.PutUint64(o[7*ts:], r7)
	}
}

// unshuffle4x4 is the type size 4 kernel: 4 words in (8 elements), two
// 4x4 byte transposes side by side, 8 half-words out.
func unshuffle4x4(dst, src []byte, n, i0, nv int) {
	s0, s1, s2, s3 := streams4(src, n, i0, nv, 0)
	d := dst[4*i0 : 4*nv]
	for i, j := 0, 0; i <= len(s0)-8 && j <= len(d)-32; i, j = i+8, j+32 {
		a, b, c, e := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
		a, b = swap(a, b, 8, m8)
		c, e = swap(c, e, 8, m8)
		a, c = swap(a, c, 16, m16)
		b, e = swap(b, e, 16, m16)
		// a, b, c, e hold elements (0, 4), (1, 5), (2, 6), (3, 7).
		o := (*[32]byte)(d[j:])
		le.PutUint32(o[0:], uint32(a))
		le.PutUint32(o[4:], uint32(b))
		le.PutUint32(o[8:], uint32(c))
		le.PutUint32(o[12:], uint32(e))
		le.PutUint32(o[16:], uint32(a>>32))
		le.PutUint32(o[20:], uint32(b>>32))
		le.PutUint32(o[24:], uint32(c>>32))
		le.PutUint32(o[28:], uint32(e>>32))
	}
}

// unshuffle4 places streams g..g+3 for elements i0..nv-1 of a type size
// that is a multiple of 4 (not 4 itself).
func unshuffle4(dst, src []byte, ts, n, i0, nv, g int) {
	s0, s1, s2, s3 := streams4(src, n, i0, nv, g)
	for i := 0; i <= len(s0)-8; i += 8 {
		a, b, c, e := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
		a, b = swap(a, b, 8, m8)
		c, e = swap(c, e, 8, m8)
		a, c = swap(a, c, 16, m16)
		b, e = swap(b, e, 16, m16)
		o := dst[(i0+i)*ts+g:]
		o = o[:7*ts+4]
		le.PutUint32(o[0:], uint32(a))
		le.PutUint32(o[ts:], uint32(b))
		le.PutUint32(o[2*ts:], uint32(c))
		le.PutUint32(o[3*ts:], uint32(e))
		le.PutUint32(o[4*ts:], uint32(a>>32))
		le.PutUint32(o[5*ts:], uint32(b>>32))
		le.PutUint32(o[6*ts:], uint32(c>>32))
		le.PutUint32(o[7*ts:], uint32(e>>32))
	}
}

// unshuffle2x2 is the type size 2 kernel: 2 words in (8 elements), three
// swaps (bytes, half-words, words), 2 words out.
func unshuffle2x2(dst, src []byte, n, i0, nv int) {
	s0 := src[i0:nv]
	s1 := src[n+i0:][:len(s0)]
	d := dst[2*i0 : 2*nv]
	for i, j := 0, 0; i <= len(s0)-8 && j <= len(d)-16; i, j = i+8, j+16 {
		a, b := swap(le.Uint64(s0[i:]), le.Uint64(s1[i:]), 8, m8)
		// a holds elements 0, 2, 4, 6 and b 1, 3, 5, 7.
		a, b = swap(a, b, 16, m16)
		a, b = swap(a, b, 32, m32)
		o := (*[16]byte)(d[j:])
		le.PutUint64(o[0:], a)
		le.PutUint64(o[8:], b)
	}
}

// unshuffle2 places streams g, g+1 for elements i0..nv-1 of an even type
// size (not 2 itself).
func unshuffle2(dst, src []byte, ts, n, i0, nv, g int) {
	s0 := src[g*n+i0 : g*n+nv]
	s1 := src[(g+1)*n+i0:][:len(s0)]
	for i := 0; i <= len(s0)-8; i += 8 {
		a, b := swap(le.Uint64(s0[i:]), le.Uint64(s1[i:]), 8, m8)
		o := dst[(i0+i)*ts+g:]
		o = o[:7*ts+2]
		for k := range 4 {
			le.PutUint16(o[2*k*ts:], uint16(a>>(16*k)))
			le.PutUint16(o[(2*k+1)*ts:], uint16(b>>(16*k)))
		}
	}
}

// shuffle applies the byte shuffle of src into dst (same length).
func shuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	nv := n &^ 7
	switch {
	case ts == 1:
		copy(dst, src)
		return
	case ts%8 == 0:
		for g := 0; g < ts; g += 8 {
			shuffle8(dst, src, ts, n, nv, g)
		}
	case ts%4 == 0:
		for g := 0; g < ts; g += 4 {
			shuffle4(dst, src, ts, n, nv, g)
		}
	case ts%2 == 0:
		for g := 0; g < ts; g += 2 {
			shuffle2(dst, src, ts, n, nv, g)
		}
	default:
		nv = 0
	}
	for j := range ts {
		for i := nv; i < n; i++ {
			dst[j*n+i] = src[i*ts+j]
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

func shuffle8(dst, src []byte, ts, n, nv, g int) {
	d := dst[g*n : (g+8)*n]
	var r [8]uint64
	for i := 0; i < nv; i += 8 {
		s := src[i*ts+g : (i+7)*ts+g+8]
		for k := range r {
			r[k] = le.Uint64(s[k*ts:])
		}
		transpose8(&r)
		for k := range r {
			le.PutUint64(d[k*n+i:], r[k])
		}
	}
}

func shuffle4(dst, src []byte, ts, n, nv, g int) {
	d := dst[g*n : (g+4)*n]
	for i := 0; i < nv; i += 8 {
		var a, b, c, dd uint64
		if ts == 4 {
			s := src[i*4 : i*4+32]
			w0, w1, w2, w3 := le.Uint64(s[0:]), le.Uint64(s[8:]), le.Uint64(s[16:]), le.Uint64(s[24:])
			a, b = w0&m32|w2<<32, w0>>32|w2&^m32
			c, dd = w1&m32|w3<<32, w1>>32|w3&^m32
		} else {
			s := src[i*ts+g : (i+7)*ts+g+4]
			a = uint64(le.Uint32(s[0:])) | uint64(le.Uint32(s[4*ts:]))<<32
			b = uint64(le.Uint32(s[ts:])) | uint64(le.Uint32(s[5*ts:]))<<32
			c = uint64(le.Uint32(s[2*ts:])) | uint64(le.Uint32(s[6*ts:]))<<32
			dd = uint64(le.Uint32(s[3*ts:])) | uint64(le.Uint32(s[7*ts:]))<<32
		}
		a, b, c, dd = transpose4x2(a, b, c, dd)
		le.PutUint64(d[i:], a)
		le.PutUint64(d[n+i:], b)
		le.PutUint64(d[2*n+i:], c)
		le.PutUint64(d[3*n+i:], dd)
	}
}

func shuffle2(dst, src []byte, ts, n, nv, g int) {
	d := dst[g*n : (g+2)*n]
	for i := 0; i < nv; i += 8 {
		var lo, hi uint64
		if ts == 2 {
			s := src[i*2 : i*2+16]
			lo, hi = le.Uint64(s[0:]), le.Uint64(s[8:])
		} else {
			s := src[i*ts+g : (i+7)*ts+g+2]
			for k := range 4 {
				lo |= uint64(le.Uint16(s[k*ts:])) << (16 * k)
				hi |= uint64(le.Uint16(s[(k+4)*ts:])) << (16 * k)
			}
		}
		le.PutUint64(d[i:], compact(lo)|compact(hi)<<32)
		le.PutUint64(d[n+i:], compact(lo>>8)|compact(hi>>8)<<32)
	}
}
