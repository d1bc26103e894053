//go:build amd64 || arm64 || ppc64le || loong64 || 386 || wasm

package blosc

import "unsafe"

// The word kernels below are the safe kernels of shuffle.go and
// bitshuffle.go with their loads and stores made through unsafe pointers:
// the safe versions spend about a third of their time on slice
// arithmetic (a bounds check and a pointer mask per access), and these
// pure-Go kernels are the decode path wherever there is no assembly. Every
// access stays inside the slices: each function checks, before its loop,
// that the last byte it reads and writes lies within them. They are built
// only for little-endian architectures with cheap unaligned loads. Steps
// is at least 1 in every loop, and the pointers advance only when another
// step follows, so that none points past its slice (checkptr, enabled by
// -race, checks this).

func ld64(p unsafe.Pointer, off int) uint64 { return *(*uint64)(unsafe.Add(p, off)) }

func st64(p unsafe.Pointer, off int, v uint64) { *(*uint64)(unsafe.Add(p, off)) = v }

func st32(p unsafe.Pointer, off int, v uint64) { *(*uint32)(unsafe.Add(p, off)) = uint32(v) }

// unshuffleWords unshuffles elements i0..nv-1 (nv-i0 a positive multiple
// of 8, nv <= n) of a block of n elements of type size ts, for type sizes
// 2 and multiples of 4, and returns the first element it did not do: nv,
// or i0 when it did nothing.
func unshuffleWords(dst, src []byte, ts, n, i0, nv int) int {
	if i0 < 0 || nv <= i0 || nv > n || (nv-i0)%8 != 0 || len(src) < ts*n || len(dst) < ts*n {
		return i0
	}
	steps := (nv - i0) / 8
	switch {
	case ts == 2:
		unshuffle2w(unsafe.Pointer(&dst[2*i0]), unsafe.Pointer(&src[i0]), n, steps, m8, m16)
	case ts == 4:
		unshuffle4w(unsafe.Pointer(&dst[4*i0]), unsafe.Pointer(&src[i0]), n, steps, m8, m16)
	case ts%4 == 0:
		// Streams g..g+3 are bytes g..g+3 of every element; the last
		// byte written is byte ts-1 of element nv-1, the last read is
		// src[(ts-1)*n+nv-1].
		for g := 0; g < ts; g += 4 {
			unshuffle4sw(unsafe.Pointer(&dst[i0*ts+g]), unsafe.Pointer(&src[g*n+i0]), n, ts, steps)
		}
	default:
		return i0
	}
	return nv
}

// unshuffle2w: 8 elements of 2 bytes per step, streams n bytes apart.
// k8 and k16 are m8 and m16, passed as variables so that they stay in
// registers (a constant is rematerialised at each use); after two swaps a
// holds elements 0, 1, 4, 5 and b 2, 3, 6, 7, and the overlapping stores
// put the high halves first, each then overwritten in its low half, which
// saves the third swap.
func unshuffle2w(d, s unsafe.Pointer, n, steps int, k8, k16 uint64) {
	for {
		a, b := swap(ld64(s, 0), ld64(s, n), 8, k8)
		a, b = swap(a, b, 16, k16)
		st64(d, 8, b)
		st64(d, 4, a)
		st32(d, 0, a)
		st32(d, 4, b)
		if steps--; steps == 0 {
			return
		}
		s = unsafe.Add(s, 8)
		d = unsafe.Add(d, 16)
	}
}

// unshuffle4w: 8 elements of 4 bytes per step, streams n bytes apart. k8
// and k16 are m8 and m16 (see unshuffle2w). After the swaps a, b, c, e
// hold elements (0, 4), (1, 5), (2, 6), (3, 7); the overlapping stores
// write elements 4..7 first, in descending order, each store's low half
// then overwritten, and elements 0..3 last.
func unshuffle4w(d, s unsafe.Pointer, n, steps int, k8, k16 uint64) {
	n2, n3 := 2*n, 3*n
	for {
		a, b, c, e := ld64(s, 0), ld64(s, n), ld64(s, n2), ld64(s, n3)
		a, b = swap(a, b, 8, k8)
		c, e = swap(c, e, 8, k8)
		a, c = swap(a, c, 16, k16)
		b, e = swap(b, e, 16, k16)
		st64(d, 24, e)
		st64(d, 20, c)
		st64(d, 16, b)
		st64(d, 12, a)
		st32(d, 0, a)
		st32(d, 4, b)
		st32(d, 8, c)
		st32(d, 12, e)
		if steps--; steps == 0 {
			return
		}
		s = unsafe.Add(s, 8)
		d = unsafe.Add(d, 32)
	}
}

// unshuffle4sw: 4 bytes of 8 elements of ts bytes per step, streams n
// bytes apart.
func unshuffle4sw(d, s unsafe.Pointer, n, ts, steps int) {
	n2, n3 := 2*n, 3*n
	for {
		a, b, c, e := ld64(s, 0), ld64(s, n), ld64(s, n2), ld64(s, n3)
		a, b = swap(a, b, 8, m8)
		c, e = swap(c, e, 8, m8)
		a, c = swap(a, c, 16, m16)
		b, e = swap(b, e, 16, m16)
		st32(d, 0, a)
		st32(d, ts, b)
		st32(d, 2*ts, c)
		st32(d, 3*ts, e)
		st32(d, 4*ts, a>>32)
		st32(d, 5*ts, b>>32)
		st32(d, 6*ts, c>>32)
		st32(d, 7*ts, e>>32)
		if steps--; steps == 0 {
			return
		}
		s = unsafe.Add(s, 8)
		d = unsafe.Add(d, 8*ts)
	}
}

// bitRowsWords turns bit rows into a byte stream like the loop in
// bitunshuffle, for columns c0.. in steps of 8, and returns the first
// column it did not do.
func bitRowsWords(out, rows []byte, rl, c0 int) int {
	steps := (rl - c0) / 8
	if c0 < 0 || steps <= 0 || len(rows) < 8*rl || len(out) < 8*rl {
		return c0
	}
	s := unsafe.Pointer(&rows[c0])
	d := unsafe.Pointer(&out[8*c0])
	for k := steps; ; k-- {
		r0, r1, r2, r3, r4, r5, r6, r7 := bitsToBytes(ld64(s, 0), ld64(s, rl), ld64(s, 2*rl), ld64(s, 3*rl),
			ld64(s, 4*rl), ld64(s, 5*rl), ld64(s, 6*rl), ld64(s, 7*rl))
		st64(d, 0, r0)
		st64(d, 8, r1)
		st64(d, 16, r2)
		st64(d, 24, r3)
		st64(d, 32, r4)
		st64(d, 40, r5)
		st64(d, 48, r6)
		st64(d, 56, r7)
		if k == 1 {
			break
		}
		s = unsafe.Add(s, 8)
		d = unsafe.Add(d, 64)
	}
	return c0 + 8*steps
}
