package zfp

import (
	"encoding/binary"
	"math/bits"
)

// The ZFP bit stream: bits are written least significant first, so bit i
// of the stream is bit i%8 of byte i/8 on every platform. The C library
// moves words of 8 to 64 bits at a time; Debian's libzfp (the reference
// here) uses 8-bit words, so a finished stream is padded to a whole byte,
// and that is what bitWriter.finish does.

// bitWriter appends bits to buf. The zero value writes a new stream.
type bitWriter struct {
	buf []byte
	acc uint64 // pending bits, least significant first
	n   uint   // number of pending bits, < 64
}

// writeBit writes the low bit of b and returns it.
func (w *bitWriter) writeBit(b uint64) uint64 {
	b &= 1
	w.acc |= b << w.n
	w.n++
	if w.n == 64 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, w.acc)
		w.acc, w.n = 0, 0
	}
	return b
}

// writeBits writes the low n (0..64) bits of v and returns v >> n.
func (w *bitWriter) writeBits(v uint64, n uint) uint64 {
	if n == 0 {
		return v
	}
	low := v
	if n < 64 {
		low &= 1<<n - 1
	}
	w.acc |= low << w.n
	if w.n+n >= 64 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, w.acc)
		w.acc = low >> (64 - w.n) // 0 when w.n is 0
		w.n = w.n + n - 64
	} else {
		w.n += n
	}
	return v >> n
}

// pad writes n zero bits.
func (w *bitWriter) pad(n uint32) {
	for n > 0 {
		k := uint(min(n, 64-uint32(w.n)))
		w.n += k
		n -= uint32(k)
		if w.n == 64 {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, w.acc)
			w.acc, w.n = 0, 0
		}
	}
}

// finish pads the stream to a whole byte and returns it.
func (w *bitWriter) finish() []byte {
	for w.n > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
	return w.buf
}

// bitReader reads a stream bitWriter wrote. Bits past the end of data
// read as zeros; the caller checks consumed against the data's length.
type bitReader struct {
	data []byte
	off  int    // next byte of data to load into acc
	acc  uint64 // unread bits, least significant first
	n    uint   // number of unread bits in acc
}

func (r *bitReader) fill() {
	if r.off+8 <= len(r.data) {
		r.acc = binary.LittleEndian.Uint64(r.data[r.off:])
	} else {
		var w [8]byte
		if r.off < len(r.data) {
			copy(w[:], r.data[r.off:])
		}
		r.acc = binary.LittleEndian.Uint64(w[:])
	}
	r.off += 8
	r.n = 64
}

// readBit returns the next bit.
func (r *bitReader) readBit() uint64 {
	if r.n == 0 {
		r.fill()
	}
	b := r.acc & 1
	r.acc >>= 1
	r.n--
	return b
}

// readBits returns the next n (0..64) bits.
func (r *bitReader) readBits(n uint) uint64 {
	if n <= r.n {
		v := r.acc & (1<<n - 1) // all ones for n = 64
		r.acc >>= n
		r.n -= n
		return v
	}
	return r.readBitsRefill(n)
}

// readBitsRefill is readBits when the buffer holds fewer than n bits.
func (r *bitReader) readBitsRefill(n uint) uint64 {
	v, have := r.acc, r.n
	r.fill()
	need := n - have
	v |= r.acc << have
	v &= 1<<n - 1
	r.acc >>= need
	r.n -= need
	return v
}

// scanZeros reads up to max zero bits and, if a one-bit comes before
// max zeros were read, that one-bit too: it returns the number of zeros
// read and whether the one-bit was.
func (r *bitReader) scanZeros(max uint32) (uint32, bool) {
	if t := uint32(bits.TrailingZeros64(r.acc)); t < max && t < uint32(r.n) {
		r.acc >>= t + 1
		r.n -= uint(t) + 1
		return t, true
	}
	return r.scanZerosRefill(max)
}

// scanZerosRefill is scanZeros across buffer refills.
func (r *bitReader) scanZerosRefill(max uint32) (uint32, bool) {
	z := uint32(0)
	for z < max {
		if r.n == 0 {
			r.fill()
		}
		t := uint32(bits.TrailingZeros64(r.acc)) // >= r.n: no one-bit buffered
		if t < uint32(r.n) && z+t < max {
			r.acc >>= t + 1 // t < 64
			r.n -= uint(t) + 1
			return z + t, true
		}
		k := min(uint32(r.n), max-z)
		r.acc >>= k
		r.n -= uint(k)
		z += k
	}
	return z, false
}

// consumed returns how many bits have been read.
func (r *bitReader) consumed() uint64 { return uint64(r.off)*8 - uint64(r.n) }

// skip moves n bits ahead.
func (r *bitReader) skip(n uint32) {
	if uint(n) <= r.n {
		r.acc >>= n
		r.n -= uint(n)
		return
	}
	pos := r.consumed() + uint64(n)
	r.off = int(pos / 64 * 8)
	r.fill()
	k := uint(pos % 64)
	r.acc >>= k
	r.n -= k
}

// The block decoders keep a reader's state in local variables (data, off,
// acc and the count of bits in acc); load64, readRefill and scanRefill are
// bitReader's fill, readBitsRefill and scanZerosRefill on those.

// load64 returns the 8 bytes of data at off, little-endian, zeros past
// the end.
func load64(data []byte, off int) uint64 {
	if off >= 0 && off+8 <= len(data) {
		return binary.LittleEndian.Uint64(data[off:])
	}
	return load64Tail(data, off)
}

func load64Tail(data []byte, off int) uint64 {
	var w [8]byte
	if off >= 0 && off < len(data) {
		copy(w[:], data[off:])
	}
	return binary.LittleEndian.Uint64(w[:])
}

// readRefill reads n (avail < n <= 64) bits.
func readRefill(data []byte, off int, acc uint64, avail, n uint32) (v uint64, off2 int, acc2 uint64, avail2 uint32) {
	v = acc
	acc = load64(data, off)
	need := n - avail
	v |= acc << avail
	v &= 1<<n - 1 // all ones for n = 64
	return v, off + 8, acc >> need, 64 - need
}

// scanRefill reads up to max zero bits and, if a one-bit comes before max
// zeros were read, that one-bit too, across refills: it returns the number
// of zeros read and whether the one-bit was.
func scanRefill(data []byte, off int, acc uint64, avail, max uint32) (z uint32, one bool, off2 int, acc2 uint64, avail2 uint32) {
	for z < max {
		if avail == 0 {
			acc = load64(data, off)
			off += 8
			avail = 64
		}
		t := uint32(bits.TrailingZeros64(acc)) // >= avail: no one-bit buffered
		if t < avail && z+t < max {
			return z + t, true, off, acc >> (t + 1), avail - t - 1
		}
		k := min(avail, max-z)
		acc >>= k
		avail -= k
		z += k
	}
	return z, false, off, acc, avail
}

// seek moves the reader to bit pos of the stream.
func (r *bitReader) seek(pos uint64) {
	r.off = int(pos / 64 * 8)
	r.fill()
	k := uint(pos % 64)
	r.acc >>= k
	r.n -= k
}
