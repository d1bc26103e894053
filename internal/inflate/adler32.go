package inflate

import "encoding/binary"

// Adler-32 (RFC 1950 section 8.2): s1 is 1 plus the sum of the bytes and
// s2 the sum of the s1 after each byte, both mod 65521. Instead of one
// byte at a time (a serial chain of two additions per byte), adler32 takes
// 32 bytes, four little-endian words w1..w4, at a time in SWAR: with the
// running s1 before them,
//
//	s2 += 32·s1 + 8·(3·S1 + 2·S2 + S3) + Σ dot(w_m),   s1 += Σ S_m
//
// where S_m is the byte sum of w_m and dot(w) its dot product with the
// weights 8..1. Sums and dot products are linear, so the even and the odd
// bytes of the words are added as four 16-bit lanes (at most 4·255 each)
// and multiplied once by a constant that gathers the weighted lanes into
// the top lane (at most 1020·20 < 2^16, so no lane carries into the next).
const (
	adlerMod  = 65521
	adlerNmax = 5552 // bytes after which s2 could overflow 32 bits
	lanes     = 0x00ff00ff00ff00ff
	ones      = 0x0001000100010001
	// Weights of the even bytes b0, b2, b4, b6 (8, 6, 4, 2) and of the odd
	// bytes b1, b3, b5, b7 (7, 5, 3, 1), reversed into the multiplier so
	// that their products meet in lane 3.
	evenWeights = 2 | 4<<16 | 6<<32 | 8<<48
	oddWeights  = 1 | 3<<16 | 5<<32 | 7<<48
)

// adler32 returns the Adler-32 checksum of p, with the assembly kernel
// where the CPU has one.
func adler32(p []byte) uint32 {
	s1, s2 := uint64(1), uint64(0)
	if haveAdlerKernel {
		for len(p) >= 32 {
			n := min(len(p), adlerNmax) &^ 31
			s, w := adlerBlock(p[:n])
			s2 = (s2 + uint64(n)*s1 + w) % adlerMod
			s1 = (s1 + s) % adlerMod
			p = p[n:]
		}
	}
	return adler32Go(s1, s2, p)
}

// adler32Go continues the checksum (s1, s2) over p in pure Go.
func adler32Go(s1, s2 uint64, p []byte) uint32 {
	for len(p) > 0 {
		n := min(len(p), adlerNmax&^31)
		q := p[:n]
		p = p[n:]
		for len(q) >= 32 {
			w1 := binary.LittleEndian.Uint64(q)
			w2 := binary.LittleEndian.Uint64(q[8:])
			w3 := binary.LittleEndian.Uint64(q[16:])
			w4 := binary.LittleEndian.Uint64(q[24:])
			q = q[32:]
			e1, o1 := w1&lanes, w1>>8&lanes
			e2, o2 := w2&lanes, w2>>8&lanes
			e3, o3 := w3&lanes, w3>>8&lanes
			e4, o4 := w4&lanes, w4>>8&lanes
			l1, l2, l3 := e1+o1, e2+o2, e3+o3
			e, o := e1+e2+e3+e4, o1+o2+o3+o4
			s2 += 32*s1 + 8*((3*l1+2*l2+l3)*ones>>48) + e*evenWeights>>48 + o*oddWeights>>48
			s1 += (e + o) * ones >> 48
		}
		for _, b := range q {
			s1 += uint64(b)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	return uint32(s2<<16 | s1)
}

// adlerBlockGo is what the assembly adlerBlock computes: the sum of the
// bytes of p and their sum weighted by len(p)-k for byte k.
func adlerBlockGo(p []byte) (sum, weighted uint64) {
	for k, b := range p {
		sum += uint64(b)
		weighted += uint64(len(p)-k) * uint64(b)
	}
	return sum, weighted
}
