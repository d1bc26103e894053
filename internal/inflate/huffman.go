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
// fastOutSlack output bytes are left, with the bit buffer refilled
// branch-free from 8-byte loads and matches copied in 8-byte words.
// It reports true at the end of the block.
func (d *decoder) fast(lt *[litEnough]uint32, dt *[distEnough]uint32) (eob bool, err error) {
	in, out := d.in, d.out
	bitbuf, bitsleft, pos, op := d.bitbuf, d.bitsleft, d.pos, d.op
	start := d.start
	inEnd, outEnd := len(in)-fastInSlack, len(out)-fastOutSlack
	for pos <= inEnd && op <= outEnd {
		bitbuf |= binary.LittleEndian.Uint64(in[pos:]) << (bitsleft & 63)
		pos += int(63-bitsleft) >> 3
		bitsleft |= 56
		e := lt[bitbuf&litMask]
		// Up to three literals on one refill (at most 11 bits each from
		// the root table).
		lits := 0
		for e&fLiteral != 0 {
			bitbuf >>= e & 63
			bitsleft -= uint(e & 63)
			out[op] = byte(e >> 16)
			op++
			if lits++; lits == 3 {
				break
			}
			e = lt[bitbuf&litMask]
		}
		if lits == 3 {
			continue
		}
		// At least 34 bits are left: enough for a length code, its
		// subtable and its extra bits.
		if e&fExc != 0 {
			if e&fSub != 0 {
				bitbuf >>= litBits
				bitsleft -= litBits
				e = lt[e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1)]
				if e&fLiteral != 0 {
					bitbuf >>= e & 63
					bitsleft -= uint(e & 63)
					out[op] = byte(e >> 16)
					op++
					continue
				}
			}
			if e&fExc != 0 {
				if e&fEOB != 0 {
					bitbuf >>= e & 63
					bitsleft -= uint(e & 63)
					eob = true
				} else {
					d.bitsleft, d.pos = bitsleft, pos
					err = d.errCode("literal/length")
				}
				break
			}
		}
		saved := bitbuf
		bitbuf >>= e & 63
		bitsleft -= uint(e & 63)
		length := int(e>>16) + int(saved&(1<<(e&63)-1))>>(e>>8&15)

		bitbuf |= binary.LittleEndian.Uint64(in[pos:]) << (bitsleft & 63)
		pos += int(63-bitsleft) >> 3
		bitsleft |= 56
		e = dt[bitbuf&distMask]
		if e&fExc != 0 {
			if e&fSub != 0 {
				bitbuf >>= distBits
				bitsleft -= distBits
				e = dt[e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1)]
			}
			if e&fExc != 0 {
				d.bitsleft, d.pos = bitsleft, pos
				err = d.errCode("distance")
				break
			}
		}
		saved = bitbuf
		bitbuf >>= e & 63
		bitsleft -= uint(e & 63)
		dist := int(e>>16) + int(saved&(1<<(e&63)-1))>>(e>>8&15)
		if dist > op-start {
			d.bitsleft, d.pos, d.op = bitsleft, pos, op
			err = d.errDistance(dist)
			break
		}
		copyMatch(out, op, dist, length)
		op += length
	}
	d.bitbuf, d.bitsleft, d.pos, d.op = bitbuf, bitsleft, pos, op
	return eob, err
}

// copyMatch copies length bytes from dist back to out[op:], writing up to
// 7 bytes beyond (the caller leaves the room).
func copyMatch(out []byte, op, dist, length int) {
	src := op - dist
	switch {
	case dist >= 8:
		for i := 0; i < length; i += 8 {
			binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[src+i:]))
		}
	case dist == 1:
		v := uint64(out[src]) * 0x0101010101010101
		for i := 0; i < length; i += 8 {
			binary.LittleEndian.PutUint64(out[op+i:], v)
		}
	default:
		// Copy bytes until the pattern repeats at a distance of at
		// least 8, then words from that distance back.
		step := dist * ((8 + dist - 1) / dist)
		i := 0
		for ; i < length && i < step; i++ {
			out[op+i] = out[src+i]
		}
		for ; i < length; i += 8 {
			binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[op+i-step:]))
		}
	}
}
