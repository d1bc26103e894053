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

// unshuffleGo unshuffles elements i0..n-1 with the pure-Go kernels.
func unshuffleGo(dst, src []byte, ts, n, i0 int) {
	nv := n &^ 7
	switch {
	case i0 >= nv:
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

// unshuffle8 places streams g..g+7 for elements i0..nv-1 (multiples of 8).
func unshuffle8(dst, src []byte, ts, n, i0, nv, g int) {
	s := src[g*n : (g+8)*n]
	var r [8]uint64
	for i := i0; i < nv; i += 8 {
		for k := range r {
			r[k] = le.Uint64(s[k*n+i:])
		}
		transpose8(&r)
		o := dst[i*ts+g : (i+7)*ts+g+8]
		for k := range r {
			le.PutUint64(o[k*ts:], r[k])
		}
	}
}

func unshuffle4(dst, src []byte, ts, n, i0, nv, g int) {
	if ts == 4 {
		unshuffle4x4(dst, src, n, i0, nv)
		return
	}
	s := src[g*n : (g+4)*n]
	for i := i0; i < nv; i += 8 {
		a, b, c, d := transpose4x2(le.Uint64(s[i:]), le.Uint64(s[n+i:]), le.Uint64(s[2*n+i:]), le.Uint64(s[3*n+i:]))
		if ts == 4 {
			o := dst[i*4 : i*4+32]
			le.PutUint64(o[0:], a&m32|b<<32)
			le.PutUint64(o[8:], c&m32|d<<32)
			le.PutUint64(o[16:], a>>32|b&^m32)
			le.PutUint64(o[24:], c>>32|d&^m32)
			continue
		}
		o := dst[i*ts+g : (i+7)*ts+g+4]
		le.PutUint32(o[0:], uint32(a))
		le.PutUint32(o[ts:], uint32(b))
		le.PutUint32(o[2*ts:], uint32(c))
		le.PutUint32(o[3*ts:], uint32(d))
		le.PutUint32(o[4*ts:], uint32(a>>32))
		le.PutUint32(o[5*ts:], uint32(b>>32))
		le.PutUint32(o[6*ts:], uint32(c>>32))
		le.PutUint32(o[7*ts:], uint32(d>>32))
	}
}

// unshuffle4x4 is unshuffle4 for type size 4, written so that the
// compiler can drop most bounds checks.
func unshuffle4x4(dst, src []byte, n, i0, nv int) {
	s0 := src[:nv]
	s1 := src[n : n+nv]
	s2 := src[2*n : 2*n+nv]
	s3 := src[3*n : 3*n+nv]
	d := dst[:4*nv]
	for i := i0; i+8 <= len(s0) && i+8 <= len(s1) && i+8 <= len(s2) && i+8 <= len(s3); i += 8 {
		a, b, c, e := transpose4x2(le.Uint64(s0[i:i+8]), le.Uint64(s1[i:i+8]), le.Uint64(s2[i:i+8]), le.Uint64(s3[i:i+8]))
		o := d[4*i : 4*i+32]
		le.PutUint64(o[0:8], a&m32|b<<32)
		le.PutUint64(o[8:16], c&m32|e<<32)
		le.PutUint64(o[16:24], a>>32|b&^m32)
		le.PutUint64(o[24:32], c>>32|e&^m32)
	}
}

func unshuffle2(dst, src []byte, ts, n, i0, nv, g int) {
	s := src[g*n : (g+2)*n]
	for i := i0; i < nv; i += 8 {
		a, b := le.Uint64(s[i:]), le.Uint64(s[n+i:])
		lo := spread(a) | spread(b)<<8
		hi := spread(a>>32) | spread(b>>32)<<8
		if ts == 2 {
			o := dst[i*2 : i*2+16]
			le.PutUint64(o[0:], lo)
			le.PutUint64(o[8:], hi)
			continue
		}
		o := dst[i*ts+g : (i+7)*ts+g+2]
		for k := range 4 {
			le.PutUint16(o[k*ts:], uint16(lo>>(16*k)))
			le.PutUint16(o[(k+4)*ts:], uint16(hi>>(16*k)))
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
