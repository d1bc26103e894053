package numcodecs

// Adaptive Entropy Coding (CCSDS 121.0-B-3, "Lossless Data Compression",
// https://public.ccsds.org/Pubs/121x0b3.pdf): the coder of libaec
// (https://gitlab.dkrz.de/k202009/libaec), which HDF5's szip filter, GRIB2's
// CCSDS packing and imagecodecs' AEC codec use. Written from the standard
// and libaec's documentation; streams are checked against libaec's (the
// testdata/aec fixtures).
//
// The stream is a sequence of coded data sets (CDS), one per block of J
// samples of n bits, most significant bit first, with no padding between
// blocks. Each CDS starts with an option identifier of 3 (n <= 8), 4
// (n <= 16) or 5 bits (1 or 2 bits in the restricted set for n <= 4):
//
//   - 0, then one bit: 0 = a run of zero blocks (the run length as a
//     fundamental sequence code: 0-3 = 1-4 blocks, 4 = up to the end of the
//     64-block segment or of the reference sample interval, m > 4 = m
//     blocks), 1 = second extension (pairs (a, b) as the FS code of
//     (a+b)(a+b+1)/2 + b);
//   - all ones: J samples of n bits, uncompressed;
//   - k+1 otherwise: split samples: J FS codes of x>>k, then J k-bit low
//     parts.
//
// A fundamental sequence (FS) code of m is m zero bits and a one. With the
// preprocessor (unit-delay predictor), every rsi blocks form a reference
// sample interval whose first block carries the reference sample, n bits
// right after the identifier (after the low-entropy bit), and codes only
// J-1 prediction errors, mapped to non-negative integers as the standard's
// section 4.3 says. Samples are stored in 1, 2, 3 (AEC_DATA_3BYTE, n in
// 17..24) or 4 bytes, little-endian unless AEC_DATA_MSB; signed samples
// are sign-extended on output when the preprocessor decodes them (libaec's
// behaviour).

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/gozarr/gozarr/codecs"
)

// libaec's flag bits (libaec.h), as imagecodecs_aec's "flags" holds them.
const (
	aecSigned     = 1
	aec3Byte      = 2
	aecMSB        = 4
	aecPreprocess = 8
	aecRestricted = 16
	aecPadRSI     = 32
	aecNotEnforce = 64
	aecAllFlags   = 127
)

// aecMaxRSI is the largest reference sample interval (in blocks) libaec
// accepts, and aecSegment the blocks of a segment a zero-block run's
// "remainder of segment" code ends at.
const (
	aecMaxRSI   = 4096
	aecSegment  = 64
	aecROS      = 4  // FS value of "remainder of segment" in a zero-block run
	aecSEMaxSum = 12 // largest a+b of a second-extension pair libaec decodes
)

// aecParams are the coding parameters; nothing of them is in the stream.
type aecParams struct {
	bits  int    // n: bits per sample, 1..32
	block int    // J: samples per block
	rsi   int    // blocks per reference sample interval
	flags uint32 // libaec flags
}

// check validates the parameters as libaec's decoder would (and the
// encoder's block sizes: 8, 16, 32 or 64, or any even size up to 64 with
// AEC_NOT_ENFORCE, which szip streams use).
func (p aecParams) check(name string) error {
	switch {
	case p.bits < 1 || p.bits > 32:
		return fmt.Errorf("%w: %s: %d bits per sample, want 1 to 32", codecs.ErrInvalidConfig, name, p.bits)
	case p.block < 2 || p.block > 64 || p.block%2 != 0:
		return fmt.Errorf("%w: %s: block size %d, want an even size up to 64", codecs.ErrInvalidConfig, name, p.block)
	case p.flags&aecNotEnforce == 0 && p.block&(p.block-1) != 0 || p.block < 8 && p.flags&aecNotEnforce == 0:
		return fmt.Errorf("%w: %s: block size %d, want 8, 16, 32 or 64 (or flag 64, not enforced)", codecs.ErrInvalidConfig, name, p.block)
	case p.rsi < 1 || p.rsi > aecMaxRSI:
		return fmt.Errorf("%w: %s: reference sample interval %d, want 1 to %d", codecs.ErrInvalidConfig, name, p.rsi, aecMaxRSI)
	case p.flags&^aecAllFlags != 0:
		return fmt.Errorf("%w: %s: unknown flags %#x", codecs.ErrInvalidConfig, name, p.flags&^aecAllFlags)
	case p.flags&aecRestricted != 0 && p.bits > 4:
		return fmt.Errorf("%w: %s: the restricted code set needs at most 4 bits per sample, not %d", codecs.ErrInvalidConfig, name, p.bits)
	}
	return nil
}

// size returns the bytes each sample is stored in.
func (p aecParams) size() int {
	switch {
	case p.bits > 16:
		if p.bits <= 24 && p.flags&aec3Byte != 0 {
			return 3
		}
		return 4
	case p.bits > 8:
		return 2
	}
	return 1
}

// idLen returns the length of the option identifier.
func (p aecParams) idLen() int {
	switch {
	case p.bits > 16:
		return 5
	case p.bits > 8:
		return 4
	case p.flags&aecRestricted != 0 && p.bits <= 2:
		return 1
	case p.flags&aecRestricted != 0:
		return 2
	}
	return 3
}

// bitReader reads a stream most significant bit first. acc holds the next
// bits left-aligned; n of them are valid. The bits below those n are the
// stream's following bits or zero (refills OR the same bits in again).
type bitReader struct {
	src []byte
	pos int
	acc uint64
	n   uint
}

func (r *bitReader) refill() {
	if r.pos+8 <= len(r.src) {
		r.acc |= binary.BigEndian.Uint64(r.src[r.pos:]) >> r.n
		adv := (63 - r.n) >> 3
		r.pos += int(adv)
		r.n += adv << 3
		return
	}
	for r.n <= 56 && r.pos < len(r.src) {
		r.acc |= uint64(r.src[r.pos]) << (56 - r.n)
		r.pos++
		r.n += 8
	}
}

// get returns the next k bits (k <= 32); ok is false past the end.
func (r *bitReader) get(k uint) (uint32, bool) {
	if r.n < k {
		r.refill()
		if r.n < k {
			return 0, false
		}
	}
	v := uint32(r.acc >> (64 - k)) // k == 0: a shift by 64 is 0 in Go
	r.acc <<= k
	r.n -= k
	return v, true
}

// fs returns the value of the next fundamental sequence code (the count of
// zero bits before a one); ok is false past the end.
func (r *bitReader) fs() (uint32, bool) {
	var m uint64
	for {
		if r.n < 57 {
			r.refill()
		}
		if r.n == 0 {
			return 0, false
		}
		z := uint(bits.LeadingZeros64(r.acc))
		if z < r.n {
			r.acc <<= z + 1
			r.n -= z + 1
			m += uint64(z)
			if m > 1<<32-1 {
				return 0, false
			}
			return uint32(m), true
		}
		m += uint64(r.n)
		r.acc, r.n = 0, 0
	}
}

// aecDecode decodes samples into dst, which holds a whole number of
// samples; a stream that ends before dst is full, or whose codes are out
// of range, is ErrCorrupt. Output beyond dst (the padding of the last
// block or interval) is dropped, as libaec's decoder does.
func aecDecode(name string, dst, src []byte, p aecParams) error {
	size := p.size()
	if len(dst)%size != 0 {
		return fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-byte samples", codecs.ErrCorrupt, name, len(dst), size)
	}
	need := len(dst) / size
	if need == 0 {
		return nil
	}
	J := p.block
	n := uint(p.bits)
	idLen := uint(p.idLen())
	uncomp := uint32(1)<<idLen - 1
	pp := p.flags&aecPreprocess != 0
	rsiSize := p.rsi * J
	buf := make([]uint32, min(rsiSize, need+J))
	r := bitReader{src: src}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", codecs.ErrCorrupt, name, fmt.Sprintf(format, args...))
	}
	truncated := func(done int) error {
		return corrupt("stream ends after %d of %d samples", done, need)
	}
	w := aecWriter{dst: dst, size: size, msb: p.flags&aecMSB != 0}
	done := 0
	for done < need {
		// One reference sample interval (or what is left of the output).
		want := min(rsiSize, (need-done+J-1)/J*J)
		if len(buf) < want {
			buf = make([]uint32, want)
		}
		used := 0
		for used < want {
			ref := 0
			if pp && used == 0 {
				ref = 1
			}
			id, ok := r.get(idLen)
			if !ok {
				return truncated(done + used)
			}
			switch {
			case id == 0: // low entropy
				se, ok := r.get(1)
				if !ok {
					return truncated(done + used)
				}
				if ref == 1 {
					if buf[0], ok = r.get(n); !ok {
						return truncated(done + used)
					}
					used = 1
				}
				if se == 1 {
					for i := ref; i < J; {
						m, ok := r.fs()
						if !ok {
							return truncated(done + used)
						}
						beta := aecTriangleRoot(m)
						if beta > aecSEMaxSum {
							return corrupt("second-extension code %d out of range", m)
						}
						d1 := m - beta*(beta+1)/2
						if i&1 == 0 {
							buf[used] = beta - d1
							used++
							i++
						}
						buf[used] = d1
						used++
						i++
					}
					continue
				}
				m, ok := r.fs()
				if !ok {
					return truncated(done + used)
				}
				var zb int
				switch {
				case m < aecROS:
					zb = int(m) + 1
				case m == aecROS:
					b := used / J
					zb = min(p.rsi-b, aecSegment-b%aecSegment)
				default:
					if m > uint32(aecMaxRSI) {
						return corrupt("run of %d zero blocks in an interval of %d", m, p.rsi)
					}
					zb = int(m)
				}
				zs := zb*J - ref
				if zs > rsiSize-used {
					return corrupt("run of %d zero blocks past the end of the reference sample interval", zb)
				}
				end := min(used+zs, len(buf))
				clear(buf[used:end])
				used += zs
			case id == uncomp:
				for i := 0; i < J; i++ {
					v, ok := r.get(n)
					if !ok {
						return truncated(done + used)
					}
					buf[used] = v
					used++
				}
			default: // split samples, k = id-1
				k := uint(id - 1)
				if ref == 1 {
					v, ok := r.get(n)
					if !ok {
						return truncated(done + used)
					}
					buf[0] = v
					used = 1
				}
				blk := buf[used : used+J-ref]
				for i := range blk {
					m, ok := r.fs()
					if !ok {
						return truncated(done + used)
					}
					blk[i] = m << k
				}
				if k > 0 {
					for i := range blk {
						v, ok := r.get(k)
						if !ok {
							return truncated(done + used)
						}
						blk[i] += v
					}
				}
				used += J - ref
			}
		}
		count := min(used, need-done)
		if pp {
			w.postprocess(buf[:count], p)
		} else {
			w.raw(buf[:count])
		}
		done += count
		if p.flags&aecPadRSI != 0 {
			r.get(r.n % 8)
		}
	}
	return nil
}

// aecTriangleRoot returns the largest b with b(b+1)/2 <= m.
func aecTriangleRoot(m uint32) uint32 {
	b := uint32(0)
	for (b+1)*(b+2)/2 <= m && b <= aecSEMaxSum {
		b++
	}
	return b
}

// aecWriter stores samples in dst.
type aecWriter struct {
	dst  []byte
	pos  int
	size int
	msb  bool
}

func (w *aecWriter) put(v uint32) {
	d := w.dst[w.pos : w.pos+w.size]
	switch {
	case w.size == 1:
		d[0] = byte(v)
	case w.size == 2 && w.msb:
		binary.BigEndian.PutUint16(d, uint16(v))
	case w.size == 2:
		binary.LittleEndian.PutUint16(d, uint16(v))
	case w.size == 4 && w.msb:
		binary.BigEndian.PutUint32(d, v)
	case w.size == 4:
		binary.LittleEndian.PutUint32(d, v)
	case w.msb:
		d[0], d[1], d[2] = byte(v>>16), byte(v>>8), byte(v)
	default:
		d[0], d[1], d[2] = byte(v), byte(v>>8), byte(v>>16)
	}
	w.pos += w.size
}

func (w *aecWriter) raw(s []uint32) {
	for _, v := range s {
		w.put(v)
	}
}

// postprocess inverts the unit-delay predictor over one interval: s[0] is
// the reference sample, the rest mapped prediction errors (section 4.3).
func (w *aecWriter) postprocess(s []uint32, p aecParams) {
	if len(s) == 0 {
		return
	}
	n := uint(p.bits)
	if p.flags&aecSigned != 0 {
		xmax := int64(1)<<(n-1) - 1
		xmin := -xmax - 1
		x := int64(int32(s[0]<<(32-n)) >> (32 - n)) // sign-extended reference
		w.put(uint32(x))
		for _, d := range s[1:] {
			x = aecUnmap(x, int64(d), xmin, xmax)
			w.put(uint32(x))
		}
		return
	}
	xmax := int64(1)<<n - 1
	x := int64(s[0])
	w.put(uint32(x))
	for _, d := range s[1:] {
		x = aecUnmap(x, int64(d), 0, xmax)
		w.put(uint32(x))
	}
}

// aecUnmap returns the sample of mapped prediction error d after the
// sample x.
func aecUnmap(x, d, xmin, xmax int64) int64 {
	theta := min(x-xmin, xmax-x)
	switch {
	case d <= 2*theta && d&1 == 0:
		return x + d/2
	case d <= 2*theta:
		return x - (d+1)/2
	case theta == x-xmin:
		return xmin + d
	}
	return xmax - d
}

// aecMap returns the mapped prediction error of sample x after xp.
func aecMap(xp, x, xmin, xmax int64) uint32 {
	delta := x - xp
	theta := min(xp-xmin, xmax-xp)
	switch {
	case delta >= 0 && delta <= theta:
		return uint32(2 * delta)
	case delta < 0 && -delta <= theta:
		return uint32(-2*delta - 1)
	}
	return uint32(theta + abs64(delta))
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// bitWriter writes a stream most significant bit first.
type bitWriter struct {
	out []byte
	acc uint64 // pending bits, right-aligned
	n   uint
}

func (w *bitWriter) put(v uint64, k uint) {
	for k > 32 { // keep acc from overflowing
		w.put(v>>32, k-32)
		v &= 1<<32 - 1
		k = 32
	}
	w.acc = w.acc<<k | v&(1<<k-1)
	w.n += k
	for w.n >= 8 {
		w.n -= 8
		w.out = append(w.out, byte(w.acc>>w.n))
	}
}

// fs writes the fundamental sequence code of m.
func (w *bitWriter) fs(m uint32) {
	for m >= 32 {
		w.put(0, 32)
		m -= 32
	}
	w.put(1, uint(m)+1)
}

// pad fills the last byte with zero bits.
func (w *bitWriter) pad() {
	if w.n > 0 {
		w.put(0, 8-w.n)
	}
}

// aecEncode appends the coding of src (whole samples; a partial sample at
// the end is ignored, as libaec does) to dst. Signed samples may be stored
// sign-extended; the bits above n are ignored.
func aecEncode(dst, src []byte, p aecParams) []byte {
	size := p.size()
	count := len(src) / size
	J := p.block
	n := uint(p.bits)
	mask := uint32(1<<n - 1)
	if n == 32 {
		mask = 1<<32 - 1
	}
	idLen := uint(p.idLen())
	uncomp := uint64(1)<<idLen - 1
	kmax := int(uncomp) - 2 // split identifiers 1..uncomp-1
	pp := p.flags&aecPreprocess != 0
	signed := p.flags&aecSigned != 0
	msb := p.flags&aecMSB != 0
	get := func(i int) uint32 {
		b := src[i*size : i*size+size]
		var v uint32
		for j := range size {
			if msb {
				v = v<<8 | uint32(b[j])
			} else {
				v |= uint32(b[j]) << (8 * j)
			}
		}
		return v & mask
	}
	var xmin, xmax int64 = 0, int64(mask)
	if signed {
		xmax = int64(1)<<(n-1) - 1
		xmin = -xmax - 1
	}
	value := func(u uint32) int64 {
		if signed {
			return int64(int32(u<<(32-n)) >> (32 - n))
		}
		return int64(u)
	}
	w := bitWriter{out: dst}
	rsiSize := p.rsi * J
	d := make([]uint32, rsiSize) // the interval's samples as coded
	raw := make([]uint32, rsiSize)
	for start := 0; start < count; start += rsiSize {
		m := min(rsiSize, count-start)
		blocks := (m + J - 1) / J
		for i := range blocks * J {
			if i < m {
				raw[i] = get(start + i)
			} else {
				raw[i] = raw[m-1] // pad the last block with its last sample
			}
		}
		if pp {
			d[0] = raw[0]
			for i := 1; i < blocks*J; i++ {
				d[i] = aecMap(value(raw[i-1]), value(raw[i]), xmin, xmax)
			}
		} else {
			copy(d, raw[:blocks*J])
		}
		for b := 0; b < blocks; {
			ref := 0
			if pp && b == 0 {
				ref = 1
			}
			blk := d[b*J : b*J+J]
			if allZero(blk[ref:]) {
				// A run of zero blocks, within one segment.
				run := 1
				segEnd := min(blocks, (b/aecSegment+1)*aecSegment)
				for b+run < segEnd && allZero(d[(b+run)*J:(b+run+1)*J]) {
					run++
				}
				w.put(0, idLen)
				w.put(0, 1)
				if ref == 1 {
					w.put(uint64(blk[0]), n)
				}
				switch rosLen := min(p.rsi-b, aecSegment-b%aecSegment); {
				case run >= 5 && run == rosLen: // to the end of the segment or interval
					w.fs(aecROS)
				case run < 5:
					w.fs(uint32(run - 1))
				default:
					w.fs(uint32(run))
				}
				b += run
				continue
			}
			coded := blk[ref:]
			// Costs in bits of every option (beyond the identifier and reference).
			best, bestCost := -1, uint64(J)*uint64(n) // -1: uncompressed
			if ref == 1 {
				bestCost -= uint64(n) // the reference is one of the J raw samples
			}
			seCost, seOK := aecSECost(coded, ref)
			if seOK && seCost+1 < bestCost {
				best, bestCost = -2, seCost+1
			}
			for k := 0; k <= kmax; k++ {
				c := uint64(len(coded)) * uint64(k+1)
				for _, v := range coded {
					c += uint64(v >> k)
				}
				if c < bestCost {
					best, bestCost = k, c
				}
			}
			switch best {
			case -1:
				w.put(uncomp, idLen)
				for _, v := range blk {
					w.put(uint64(v), n)
				}
			case -2:
				w.put(0, idLen)
				w.put(1, 1)
				if ref == 1 {
					w.put(uint64(blk[0]), n)
				}
				aecSEWrite(&w, coded, ref)
			default:
				w.put(uint64(best+1), idLen)
				if ref == 1 {
					w.put(uint64(blk[0]), n)
				}
				for _, v := range coded {
					w.fs(v >> best)
				}
				if best > 0 {
					for _, v := range coded {
						w.put(uint64(v), uint(best))
					}
				}
			}
			b++
		}
		if p.flags&aecPadRSI != 0 {
			w.pad()
		}
	}
	w.pad()
	return w.out
}

func allZero(s []uint32) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// aecSECost returns the bits of the second extension of coded (the block
// after its reference sample when ref is 1: then the first pair is (0,
// coded[0])), and whether every pair is small enough for it.
func aecSECost(coded []uint32, ref int) (uint64, bool) {
	var c uint64
	i := 0
	if ref == 1 {
		b := uint64(coded[0])
		if b > aecSEMaxSum {
			return 0, false
		}
		c += b*(b+1)/2 + b + 1
		i = 1
	}
	for ; i+1 < len(coded); i += 2 {
		a, b := uint64(coded[i]), uint64(coded[i+1])
		if a+b > aecSEMaxSum {
			return 0, false
		}
		c += (a+b)*(a+b+1)/2 + b + 1
	}
	return c, true
}

func aecSEWrite(w *bitWriter, coded []uint32, ref int) {
	i := 0
	if ref == 1 {
		b := coded[0]
		w.fs(b*(b+1)/2 + b)
		i = 1
	}
	for ; i+1 < len(coded); i += 2 {
		a, b := coded[i], coded[i+1]
		w.fs((a+b)*(a+b+1)/2 + b)
	}
}
