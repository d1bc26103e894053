package blosc

// Bit shuffle (the "bitshuffle" algorithm as c-blosc embeds it): a block
// of n elements of ts bytes, n a multiple of 8, is stored as 8*ts rows of
// n/8 bytes; bit i of row 8*j+b is bit b of byte j of element i. Blocks
// whose element count is not a multiple of 8 are stored as they are, and
// the len%ts bytes past the last whole element always are.
//
// It is computed as a byte shuffle (stream j holds byte j of every element)
// followed, within each stream, by an 8x8 bit transpose of every 8 bytes
// and a regrouping of the bit rows. The kernels load 8 words from 8 bit
// rows, transpose them as an 8x8 byte matrix and then transpose the bits of
// each word, so every load and store is a full word.

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
		var r [8]uint64
		for ; c+8 <= rl; c += 8 {
			for b := range r {
				r[b] = le.Uint64(rows[b*rl+c:])
			}
			transpose8(&r)
			o := out[8*c : 8*c+64]
			for q := range r {
				le.PutUint64(o[8*q:], transposeBits(r[q]))
			}
		}
		for ; c < rl; c++ {
			var x uint64
			for b := range 8 {
				x |= uint64(rows[b*rl+c]) << (8 * b)
			}
			le.PutUint64(out[8*c:], transposeBits(x))
		}
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
