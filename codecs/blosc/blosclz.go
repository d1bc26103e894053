package blosc

import (
	"encoding/binary"
	"math/bits"
	"sync"
)

// BloscLZ is Blosc's own LZ77 codec, a FastLZ derivative. A stream is a
// sequence of tokens, the first always a literal run:
//
//   - ctrl < 32: a literal run of ctrl+1 bytes follows (the first ctrl byte
//     of a stream may carry the marker bit 0x20, which the decoder masks);
//   - ctrl >= 32: a match. L = ctrl>>5 (1..7), high distance bits D =
//     ctrl&31. L == 7 is followed by extra length bytes, summed while they
//     are 255. Then a low distance byte C: the match copies L+2 (plus the
//     extra) bytes from distance D<<8 + C + 1; when D == 31 and C == 255 two
//     big-endian bytes E follow and the distance is E + 8191 + 1.
//
// A match must be followed by another token: the c-blosc decoder stops
// before copying a match that ends the input, so valid streams end with a
// literal run.

const (
	blzMaxCopy        = 32
	blzMaxDistance    = 8191
	blzMaxFarDistance = 65535 + blzMaxDistance - 1
	blzHashLog        = 14
	blzProbeHashLog   = 12
)

// blosclzDecode decodes src into dst and reports the number of bytes
// written and whether the stream was well formed and fit dst.
func blosclzDecode(dst, src []byte) (int, bool) {
	if len(src) == 0 {
		return 0, true
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl < 32 {
			n := ctrl + 1
			if op+n > len(dst) || ip+n > len(src) {
				return op, false
			}
			copy(dst[op:op+n], src[ip:ip+n])
			op += n
			ip += n
			if ip >= len(src) {
				return op, true
			}
			ctrl = int(src[ip])
			ip++
			continue
		}
		length := ctrl>>5 - 1
		hi := (ctrl & 31) << 8
		if length == 6 {
			for {
				if ip+1 >= len(src) {
					return op, false
				}
				code := src[ip]
				ip++
				length += int(code)
				if code != 255 {
					break
				}
			}
		} else if ip+1 >= len(src) {
			return op, false
		}
		code := int(src[ip])
		ip++
		length += 3
		dist := hi + code + 1
		if code == 255 && hi == 31<<8 {
			if ip+1 >= len(src) {
				return op, false
			}
			dist = int(src[ip])<<8 | int(src[ip+1]) + blzMaxDistance + 1
			ip += 2
		}
		if op+length > len(dst) || op-dist < 0 {
			return op, false
		}
		if ip >= len(src) {
			// c-blosc drops a match that ends the stream.
			return op, true
		}
		ctrl = int(src[ip])
		ip++
		op = copyMatch(dst, op, dist, length)
	}
}

// copyMatch copies length bytes from dst[op-dist:] to dst[op:], with the
// overlap semantics of LZ77, and returns op+length.
func copyMatch(dst []byte, op, dist, length int) int {
	end := op + length
	s := op - dist
	if dist >= length {
		copy(dst[op:end], dst[s:s+length])
		return end
	}
	if dist == 1 {
		b := dst[s]
		for i := op; i < end; i++ {
			dst[i] = b
		}
		return end
	}
	// The pattern dst[s:op] repeats with period dist; copying it doubles
	// the run each step.
	for op < end {
		op += copy(dst[op:end], dst[s:op])
	}
	return end
}

var blzTables = sync.Pool{New: func() any { return new([1 << blzHashLog]uint32) }}

func blzHash(seq uint32, log uint) uint32 { return (seq * 2654435761) >> (32 - log) }

// blosclzCompress compresses src into dst at level clevel (1..9) and
// returns the compressed size, or 0 when the data does not compress well
// enough (judged, as c-blosc does, from a probe of its last quarter) or does
// not fit in len(dst). split tells whether the block is one of several
// per-byte streams, which favours longer minimum matches.
func blosclzCompress(clevel int, src, dst []byte, split bool) int {
	if len(src) < 16 || len(dst) < 66 || clevel < 1 || clevel > 9 {
		return 0
	}
	tab := blzTables.Get().(*[1 << blzHashLog]uint32)
	defer blzTables.Put(tab)

	// Entropy probe: compress (part of) the last quarter and skip blocks
	// whose ratio is too small to be worth the decoding time.
	probe := src[len(src)-len(src)/4:]
	probe = probe[:min(len(probe), 1<<blzProbeHashLog)]
	thresholds := [10]float64{0, 2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0}
	ratio := 0.0
	if len(probe) >= 16 {
		var pbuf [1<<blzProbeHashLog + 1<<blzProbeHashLog/32 + 8]byte
		if n := blzParse(probe, pbuf[:], tab[:1<<blzProbeHashLog], blzProbeHashLog, 3, 3, false); n > 0 {
			ratio = float64(len(probe)) / float64(n)
		}
	}
	if ratio < thresholds[clevel] {
		return 0
	}
	shift, minlen := 4, 4
	if !split || ratio < 4 {
		shift, minlen = 3, 3
	}
	hashlog := uint(blzHashLog)
	if clevel == 1 {
		hashlog -= 2
	} else if clevel == 2 {
		hashlog--
	}
	n := blzParse(src, dst, tab[:1<<hashlog], hashlog, shift, minlen, clevel == 9)
	if n > 0 {
		dst[0] |= 1 << 5 // c-blosc's marker for blosclz
	}
	return n
}

// blzParse is the greedy hash-chain-free LZ77 parse of src into dst. It
// returns the compressed size, or 0 when dst is too small.
func blzParse(src, dst []byte, tab []uint32, hashlog uint, shift, minlen int, rehash bool) int {
	clear(tab)
	n := len(src)
	ipLimit := n - 12
	ipBound := n - 1
	op := 0
	lit := 0 // start of the pending literal run
	// emitLiterals writes src[lit:end] as literal runs.
	emitLiterals := func(end int) bool {
		for lit < end {
			k := min(end-lit, blzMaxCopy)
			if op+1+k > len(dst) {
				return false
			}
			dst[op] = byte(k - 1)
			copy(dst[op+1:], src[lit:lit+k])
			op += 1 + k
			lit += k
		}
		return true
	}
	ip := 4 // the first four bytes are always literals
	for ip < ipLimit {
		seq := binary.LittleEndian.Uint32(src[ip:])
		h := blzHash(seq, hashlog)
		ref := int(tab[h])
		tab[h] = uint32(ip)
		distance := ip - ref
		if distance <= 0 || distance >= blzMaxFarDistance || binary.LittleEndian.Uint32(src[ref:]) != seq {
			ip++
			continue
		}
		// Extend the match up to ipBound (the last byte stays a literal).
		m := 4
		for ip+m+8 <= ipBound {
			if x := binary.LittleEndian.Uint64(src[ip+m:]) ^ binary.LittleEndian.Uint64(src[ref+m:]); x != 0 {
				m += bits.TrailingZeros64(x) >> 3
				goto matched
			}
			m += 8
		}
		for ip+m < ipBound && src[ref+m] == src[ip+m] {
			m++
		}
	matched:
		covered := m - (shift - 3)
		l := covered - 2 // the encoded length; 1 means 3 bytes
		d := distance - 1
		if l < minlen || (l <= 5 && d >= blzMaxDistance) {
			ip++
			continue
		}
		if !emitLiterals(ip) {
			return 0
		}
		if op+l/255+5 > len(dst) {
			return 0
		}
		far := d >= blzMaxDistance
		hiD := d >> 8
		if far {
			d -= blzMaxDistance
			hiD = 31
		}
		if l < 7 {
			dst[op] = byte(l<<5 + hiD)
			op++
		} else {
			dst[op] = byte(7<<5 + hiD)
			op++
			r := l - 7
			for ; r >= 255; r -= 255 {
				dst[op] = 255
				op++
			}
			dst[op] = byte(r)
			op++
		}
		if far {
			dst[op] = 255
			dst[op+1] = byte(d >> 8)
			dst[op+2] = byte(d)
			op += 3
		} else {
			dst[op] = byte(d)
			op++
		}
		ip += covered
		lit = ip
		// Hash the match boundary, as the next search starts past it.
		if ip+4 <= n {
			tab[blzHash(binary.LittleEndian.Uint32(src[ip-2:]), hashlog)] = uint32(ip - 2)
			if rehash {
				tab[blzHash(binary.LittleEndian.Uint32(src[ip-1:]), hashlog)] = uint32(ip - 1)
			}
		}
	}
	if !emitLiterals(n) {
		return 0
	}
	return op
}
