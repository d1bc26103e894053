package inflate

import "math/bits"

// Decode tables, in the manner of libdeflate's: a root table indexed by
// the next rootBits bits of the stream (deflate codes are read least
// significant bit first, so a table index is a bit-reversed code), with
// subtables for the rare longer codes. An entry is one uint32:
//
//	bits 0-7    bits to consume: code length, plus the extra bits of a
//	            length or distance (so one shift consumes both)
//	bits 8-11   code length alone (the extra bits start above it), or
//	            for a subtable pointer the subtable's index bits
//	bit 12      end of block
//	bit 13      subtable pointer
//	bit 14      exceptional: subtable pointer, end of block or invalid
//	bit 15      literal
//	bits 16-31  literal byte, length or distance base, or subtable start
const (
	fEOB     = 1 << 12
	fSub     = 1 << 13
	fExc     = 1 << 14
	fLiteral = 1 << 15

	// eInvalid is an unused code (the lone code of length 1 of a
	// degenerate code, or symbols 286, 287, 30 and 31).
	eInvalid = fExc

	litBits  = 11
	distBits = 8
	preBits  = 7

	// Room for the largest root table plus subtables of any complete
	// code (zlib's "enough" for 288 symbols, root 11, and 32 symbols,
	// root 8, both of at most 15 bits).
	litEnough  = 2342
	distEnough = 402
	preSize    = 1 << preBits

	maxLitSyms  = 288
	maxDistSyms = 32
	numPreSyms  = 19
)

var lengthBase = [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
var lengthExtra = [29]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
var distBase = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint32{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// Entries of each symbol before its code length is added.
var litSymEntry, distSymEntry, preSymEntry = func() (l [maxLitSyms]uint32, d [maxDistSyms]uint32, p [numPreSyms]uint32) {
	for s := range 256 {
		l[s] = fLiteral | uint32(s)<<16
	}
	l[256] = fExc | fEOB
	for s := 257; s < 286; s++ {
		l[s] = lengthBase[s-257]<<16 | lengthExtra[s-257]
	}
	l[286], l[287] = eInvalid, eInvalid
	for s := range 30 {
		d[s] = distBase[s]<<16 | distExtra[s]
	}
	d[30], d[31] = eInvalid, eInvalid
	for s := range numPreSyms {
		p[s] = uint32(s) << 16
	}
	return
}()

// build fills table with the decode entries of the canonical code whose
// lengths (0 for an unused symbol) are lens, from the symbol entries
// syms. It reports false for an over-subscribed code, an incomplete one
// other than a lone code of length 1 (which zlib and compress/flate
// accept), or one whose subtables would not fit. An empty code fills the
// root table with invalid entries: decoding with it fails.
func build(table []uint32, lens []uint8, syms []uint32, root uint) bool {
	var count [16]uint16
	for _, l := range lens {
		count[l&15]++
	}
	count[0] = 0
	maxLen := 15
	for maxLen > 0 && count[maxLen] == 0 {
		maxLen--
	}
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - int(count[l])
		if left < 0 {
			return false
		}
	}
	rootSize := 1 << root
	if len(table) < rootSize {
		return false
	}
	if left != 0 {
		if maxLen > 1 || count[1] > 1 {
			return false
		}
		for i := range table[:rootSize] {
			table[i] = eInvalid
		}
		if maxLen == 0 {
			return true
		}
	}
	// Symbols sorted by code length, then by symbol.
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [maxLitSyms]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	n := int(offs[15])
	if n > len(syms) {
		return false
	}
	rem := count
	code, curLen := 0, 0
	next := rootSize // next free subtable slot
	prefix, subBits, subStart := -1, 0, 0
	for _, s := range sorted[:n] {
		l := int(lens[s])
		code <<= l - curLen
		curLen = l
		rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
		code++
		rem[l]--
		e := syms[s]
		if l <= int(root) {
			e += uint32(l) | uint32(l)<<8
			for i := rev; i < rootSize; i += 1 << l {
				table[i] = e
			}
			continue
		}
		if p := rev & (rootSize - 1); p != prefix {
			// A new subtable: wide enough for the codes that share
			// this prefix (zlib's count of the codes left).
			prefix = p
			subBits = l - int(root)
			room := 1<<subBits - int(rem[l]) - 1
			for subBits+int(root) < maxLen && room > 0 {
				subBits++
				room = room<<1 - int(rem[subBits+int(root)])
			}
			subStart = next
			next += 1 << subBits
			if next > len(table) {
				return false
			}
			table[p] = uint32(subStart)<<16 | fExc | fSub | uint32(subBits)<<8 | uint32(root)
		}
		sl := l - int(root)
		e += uint32(sl) | uint32(sl)<<8
		for i := rev >> root; i < 1<<subBits; i += 1 << sl {
			table[subStart+i] = e
		}
	}
	return true
}

// The fixed code's tables (RFC 1951 section 3.2.6), built once.
var fixedLit, fixedDist = func() (l *[litEnough]uint32, d *[distEnough]uint32) {
	var lens [maxLitSyms]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	l, d = new([litEnough]uint32), new([distEnough]uint32)
	build(l[:], lens[:], litSymEntry[:], litBits)
	var dl [maxDistSyms]uint8
	for s := range dl {
		dl[s] = 5
	}
	build(d[:], dl[:], distSymEntry[:], distBits)
	return l, d
}()
