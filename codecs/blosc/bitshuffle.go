package blosc

// Bit shuffle (the "bitshuffle" algorithm as c-blosc embeds it): a block
// of n elements of ts bytes, n a multiple of 8, is stored as 8*ts rows of
// n/8 bytes; bit i of row 8*j+b is bit b of byte j of element i. Blocks
// whose element count is not a multiple of 8 are stored as they are, and
// the len%ts bytes past the last whole element always are.
//
// It is computed as a byte shuffle (stream j holds byte j of every element)
// followed, within each stream, by an 8x8 bit transpose of every 8 bytes
// and a regrouping of the bit rows. The decoding kernels load 8 words from
// 8 bit rows and transpose them as a 512-bit matrix (bitsToBytes); the
// encoding kernel transposes them as an 8x8 byte matrix and then the bits
// of each word. Every load and store is a full word.

// transposeBits transposes the 8x8 bit matrix whose row i is byte i of x
// (bit k of byte i moves to bit i of byte k).
func transposeBits(x uint64) uint64 {
	t := (x ^ (x >> 7)) & 0x00AA00AA00AA00AA
	x ^= t ^ (t << 7)
	t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCC
	x ^= t ^ (t << 14)
	t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0
	return x ^ t ^ (t << 28)
}

// bitsToBytes turns 8 columns of the 8 bit rows of a stream into 64 bytes
// of that stream: word b holds bit b of 64 consecutive elements (bit e of
// the word for element e), output word w holds the bytes of elements
// 8w..8w+7. Seen as a 512-bit matrix, the bit index (b, w, e) becomes (w,
// e, b): three swaps of a word-index bit with a bit-index bit move b into
// the low bits of the word (the 8x8 bit transpose, done across words), and
// three more move w out (the 8x8 byte transpose): 24 word swaps in all,
// fewer operations than a byte transpose followed by 8 in-word bit
// transposes.
func bitsToBytes(r0, r1, r2, r3, r4, r5, r6, r7 uint64) (uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64) {
	const b4, b2, b1 = 0x0F0F0F0F0F0F0F0F, 0x3333333333333333, 0x5555555555555555
	r0, r4 = swap(r0, r4, 4, b4)
	r1, r5 = swap(r1, r5, 4, b4)
	r2, r6 = swap(r2, r6, 4, b4)
	r3, r7 = swap(r3, r7, 4, b4)
	r0, r2 = swap(r0, r2, 2, b2)
	r1, r3 = swap(r1, r3, 2, b2)
	r4, r6 = swap(r4, r6, 2, b2)
	r5, r7 = swap(r5, r7, 2, b2)
	r0, r1 = swap(r0, r1, 1, b1)
	r2, r3 = swap(r2, r3, 1, b1)
	r4, r5 = swap(r4, r5, 1, b1)
	r6, r7 = swap(r6, r7, 1, b1)
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
	return r0, r1, r2, r3, r4, r5, r6, r7
}

// bitRowsSafe turns the 8 bit rows of rl bytes in rows into the byte
// stream out (8*rl bytes), from column c0 on, in safe Go.
func bitRowsSafe(out, rows []byte, rl, c0 int) {
	c := c0
	for ; c+8 <= rl; c += 8 {
		r0, r1, r2, r3, r4, r5, r6, r7 := bitsToBytes(le.Uint64(rows[c:]), le.Uint64(rows[rl+c:]),
			le.Uint64(rows[2*rl+c:]), le.Uint64(rows[3*rl+c:]), le.Uint64(rows[4*rl+c:]),
			le.Uint64(rows[5*rl+c:]), le.Uint64(rows[6*rl+c:]), le.Uint64(rows[7*rl+c:]))
		o := (*[64]byte)(out[8*c:])
		le.PutUint64(o[0:], r0)
		le.PutUint64(o[8:], r1)
		le.PutUint64(o[16:], r2)
		le.PutUint64(o[24:], r3)
		le.PutUint64(o[32:], r4)
		le.PutUint64(o[40:], r5)
		le.PutUint64(o[48:], r6)
		le.PutUint64(o[56:], r7)
	}
	for ; c < rl; c++ {
		var x uint64
		for b := range 8 {
			x |= uint64(rows[b*rl+c]) << (8 * b)
		}
		le.PutUint64(out[8*c:], transposeBits(x))
	}
}

// bitunshuffle undoes the bit shuffle of src into dst (same length, at
// least ts bytes); tmp is scratch of len(src) bytes.
func bitunshuffle(dst, src []byte, ts int, tmp []byte) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	nb := n * ts
	if ts == 1 {
		tmp = dst
	}
	tmp = tmp[:nb]
	// Bit rows 8j..8j+7 (each n/8 bytes) become byte stream j of tmp.
	rl := n / 8
	for j := range ts {
		rows := src[8*j*rl : 8*(j+1)*rl]
		out := tmp[j*n : (j+1)*n]
		c := bitRowsAsm(out, rows, rl)
		c = bitRowsWords(out, rows, rl, c)
		bitRowsSafe(out, rows, rl, c)
	}
	if ts > 1 {
		unshuffle(dst[:nb], tmp, ts)
	}
	copy(dst[nb:], src[nb:])
}

// bitshuffle applies the bit shuffle of src into dst (same length, at
// least ts bytes); tmp is scratch of len(src) bytes.
func bitshuffle(dst, src []byte, ts int, tmp []byte) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	nb := n * ts
	streams := src[:nb]
	if ts > 1 {
		shuffle(tmp[:nb], src[:nb], ts)
		streams = tmp[:nb]
	}
	rl := n / 8
	for j := range ts {
		in := streams[j*n : (j+1)*n]
		rows := dst[8*j*rl : 8*(j+1)*rl]
		c := 0
		var r [8]uint64
		for ; c+8 <= rl; c += 8 {
			i := in[8*c : 8*c+64]
			for q := range r {
				r[q] = transposeBits(le.Uint64(i[8*q:]))
			}
			transpose8(&r)
			for b := range r {
				le.PutUint64(rows[b*rl+c:], r[b])
			}
		}
		for ; c < rl; c++ {
			x := transposeBits(le.Uint64(in[8*c:]))
			for b := range 8 {
				rows[b*rl+c] = byte(x >> (8 * b))
			}
		}
	}
	copy(dst[nb:], src[nb:])
}
