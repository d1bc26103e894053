package inflate

import (
	"encoding/binary"
	"fmt"
)

const (
	litMask  = 1<<litBits - 1
	distMask = 1<<distBits - 1
)

// huffman decodes the symbols of a block coded with the tables lt and dt:
// the fast loop while both buffers have slack, one checked symbol at a
// time near their ends.
func (d *decoder) huffman(lt *[litEnough]uint32, dt *[distEnough]uint32) error {
	for {
		if d.pos+fastInSlack <= len(d.in) && d.op+fastOutSlack <= len(d.out) {
			if eob, err := d.fast(lt, dt); eob || err != nil {
				return err
			}
		}
		if eob, err := d.slow(lt, dt); eob || err != nil {
			return err
		}
	}
}

func (d *decoder) errCode(kind string) error {
	return fmt.Errorf("%w: invalid %s code at byte %d", ErrCorrupt, kind, d.pos-int(d.bitsleft>>3))
}

func (d *decoder) errDistance(dist int) error {
	return fmt.Errorf("%w: distance %d reaches before the start of the output (%d bytes) at byte %d",
		ErrCorrupt, dist, d.op-d.start, d.pos-int(d.bitsleft>>3))
}

// slow decodes one symbol with every check, growing the output as needed.
// It reports true at the end of the block.
func (d *decoder) slow(lt *[litEnough]uint32, dt *[distEnough]uint32) (bool, error) {
	if d.bitsleft < 48 {
		if err := d.refill(); err != nil {
			return false, err
		}
	}
	e := lt[d.bitbuf&litMask]
	if e&fSub != 0 {
		d.bits(litBits)
		e = lt[e>>16+uint32(d.bitbuf)&(1<<(e>>8&15)-1)]
	}
	if e&fLiteral != 0 {
		d.bits(uint(e & 63))
		if err := d.need(1); err != nil {
			return false, err
		}
		d.out[d.op] = byte(e >> 16)
		d.op++
		return false, nil
	}
	if e&fExc != 0 {
		if e&fEOB != 0 {
			d.bits(uint(e & 63))
			return true, nil
		}
		return false, d.errCode("literal/length")
	}
	length := int(e>>16 + d.bits(uint(e&63))>>(e>>8&15))
	e = dt[d.bitbuf&distMask]
	if e&fSub != 0 {
		d.bits(distBits)
		e = dt[e>>16+uint32(d.bitbuf)&(1<<(e>>8&15)-1)]
	}
	if e&fExc != 0 {
		return false, d.errCode("distance")
	}
	dist := int(e>>16 + d.bits(uint(e&63))>>(e>>8&15))
	if dist > d.op-d.start {
		return false, d.errDistance(dist)
	}
	if err := d.need(length); err != nil {
		return false, err
	}
	out := d.out[d.op-dist : d.op+length]
	for i := dist; i < len(out); i++ {
		out[i] = out[i-dist]
	}
	d.op += length
	return false, nil
}

// fast decodes symbols while at least fastInSlack input bytes and
// fastOutSlack output bytes are left, as libdeflate's fast loop does: the
// bit buffer is refilled branch-free from 8-byte loads, the next
// literal/length entry is looked up before the current symbol's output is
// written, and matches are copied in 16- or 8-byte words. bitsleft has
// whole entries subtracted from it: only its low 6 bits are meaningful.
// It reports true at the end of the block.
func (d *decoder) fast(lt *[litEnough]uint32, dt *[distEnough]uint32) (eob bool, err error) {
	switch st, dist := d.fastLoop(lt, dt); st {
	case fastEOB:
		return true, nil
	case fastBadLit:
		return false, d.errCode("literal/length")
	case fastBadDist:
		return false, d.errCode("distance")
	case fastFar:
		return false, d.errDistance(dist)
	}
	return false, nil
}

// How fastLoop ends.
const (
	fastSlack   = iota // too little slack left
	fastEOB            // end of block
	fastBadLit         // an invalid literal/length code
	fastBadDist        // an invalid distance code
	fastFar            // a distance (returned) before the start of the output
)

// fastLoop is fast's loop. It has one exit, after which it stores its
// state, so that the decoder is not live in the loop.
func (d *decoder) fastLoop(lt *[litEnough]uint32, dt *[distEnough]uint32) (status, far int) {
	// out and op start at the stream's start: a distance is valid when
	// it is at most op.
	in, out := d.in, d.out[d.start:]
	bitbuf, bitsleft, pos, op := d.bitbuf, d.bitsleft, d.pos, d.op-d.start
	// The bit reader outside the fast loop may hold fewer bits than a
	// table lookup takes (after a block header, say): refill before the
	// first lookup, as at the top of every iteration (the caller checked
	// the input's slack).
	bitbuf |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (bitsleft & 63)
	pos += int((63-bitsleft)&63) >> 3
	bitsleft |= 56
	e := lt[bitbuf&litMask]
	for pos+fastInSlack <= len(in) && op+fastOutSlack <= len(out) {
		bitbuf |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (bitsleft & 63)
		pos += int((63-bitsleft)&63) >> 3
		bitsleft |= 56
		// At least 56 bits: three literals of at most 11 bits each from
		// the root table and a length code of at most 20 bits after them.
		saved := bitbuf
		bitbuf >>= e & 63
		bitsleft -= uint(e)
		if e&fLiteral != 0 {
			lit := byte(e >> 16)
			e = lt[bitbuf&litMask]
			saved = bitbuf
			bitbuf >>= e & 63
			bitsleft -= uint(e)
			out[op] = lit
			op++
			if e&fLiteral != 0 {
				lit = byte(e >> 16)
				e = lt[bitbuf&litMask]
				saved = bitbuf
				bitbuf >>= e & 63
				bitsleft -= uint(e)
				out[op] = lit
				op++
				if e&fLiteral != 0 {
					lit = byte(e >> 16)
					e = lt[bitbuf&litMask]
					out[op] = lit
					op++
					continue
				}
			}
		}
		if e&fExc != 0 {
			if e&fSub != 0 {
				e = lt[e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1)]
				saved = bitbuf
				bitbuf >>= e & 63
				bitsleft -= uint(e)
				if e&fLiteral != 0 {
					lit := byte(e >> 16)
					e = lt[bitbuf&litMask]
					out[op] = lit
					op++
					continue
				}
			}
			if e&fExc != 0 {
				status = fastEOB
				if e&fEOB == 0 {
					status = fastBadLit
				}
				break
			}
		}
		length := int(e>>16) + int(saved&(1<<(e&63)-1))>>(e>>8&15)

		bitbuf |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (bitsleft & 63)
		pos += int((63-bitsleft)&63) >> 3
		bitsleft |= 56
		e = dt[bitbuf&distMask]
		if e&fExc != 0 {
			if e&fSub == 0 {
				status = fastBadDist
				break
			}
			bitbuf >>= distBits
			bitsleft -= distBits
			e = dt[e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1)]
			if e&fExc != 0 {
				status = fastBadDist
				break
			}
		}
		saved = bitbuf
		bitbuf >>= e & 63
		bitsleft -= uint(e)
		dist := int(e>>16) + int(saved&(1<<(e&63)-1))>>(e>>8&15)
		e = lt[bitbuf&litMask] // at least 28 bits are left
		if dist > op {
			status, far = fastFar, dist
			break
		}
		src := op - dist
		switch {
		case dist >= 8:
			binary.LittleEndian.PutUint64(out[op:op+8], binary.LittleEndian.Uint64(out[src:src+8]))
			binary.LittleEndian.PutUint64(out[op+8:op+16], binary.LittleEndian.Uint64(out[src+8:src+16]))
			for i := 16; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[op+i:op+i+8], binary.LittleEndian.Uint64(out[src+i:src+i+8]))
			}
		case dist > 1:
			// 8-byte words a distance apart: the first dist bytes of each
			// are final (they come from bytes before it), the rest are
			// overwritten by the next.
			for i := 0; i < length; i += dist {
				binary.LittleEndian.PutUint64(out[op+i:op+i+8], binary.LittleEndian.Uint64(out[src+i:src+i+8]))
			}
		default:
			copyRun(out, op, length)
		}
		op += length
	}
	d.bitbuf, d.bitsleft, d.pos, d.op = bitbuf, bitsleft&63, pos, op+d.start
	return status, far
}

// copyRun repeats the byte before out[op] length times, writing up to 7
// bytes beyond (the caller leaves the room).
func copyRun(out []byte, op, length int) {
	v := uint64(out[op-1]) * 0x0101010101010101
	for i := 0; i < length; i += 8 {
		binary.LittleEndian.PutUint64(out[op+i:op+i+8], v)
	}
}
