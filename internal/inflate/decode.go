package inflate

import (
	"encoding/binary"
	"fmt"
)

// Slack the fast loop keeps: input bytes it may load without checks (two
// 8-byte refills) and output bytes it may write (three literals and a
// match of 258 bytes copied in 16-byte words).
const (
	fastInSlack  = 16
	fastOutSlack = 3 + 258 + 16
	// maxOverrun is how many zero bytes past the end of the input the bit
	// buffer may take in before the stream is known to be truncated.
	maxOverrun = 8
)

// decoder is the state of one DEFLATE stream's decoding. out's length is
// its usable capacity; op is the write position, start the first byte of
// this stream's output (distances reach no further back) and end the
// limit of the output.
type decoder struct {
	in       []byte
	pos      int // next input byte to load (past len(in) when zeros were)
	bitbuf   uint64
	bitsleft uint

	out   []byte
	op    int
	start int
	end   int // the output limit, absolute
	limit int // the caller's limit, for messages

	lit  [litEnough]uint32
	dist [distEnough]uint32
	pre  [preSize]uint32
	lens [maxLitSyms + maxDistSyms]uint8
}

// errTruncated is the error of a stream that ends early.
func (d *decoder) errTruncated() error {
	return fmt.Errorf("%w: deflate stream truncated at byte %d", ErrCorrupt, len(d.in))
}

// refill tops the bit buffer up to at least 56 bits, loading zeros past
// the end of the input (checked when the stream ends, and failing once
// more than maxOverrun bytes of them were needed).
func (d *decoder) refill() error {
	if d.pos+8 <= len(d.in) {
		d.bitbuf |= binary.LittleEndian.Uint64(d.in[d.pos:]) << (d.bitsleft & 63)
		d.pos += int(63-d.bitsleft) >> 3
		d.bitsleft |= 56
		return nil
	}
	for d.bitsleft < 56 {
		if d.pos < len(d.in) {
			d.bitbuf |= uint64(d.in[d.pos]) << d.bitsleft
		} else if d.pos >= len(d.in)+maxOverrun {
			return d.errTruncated()
		}
		d.pos++
		d.bitsleft += 8
	}
	return nil
}

// bits consumes and returns the next n bits (n <= 32; the buffer must
// hold them).
func (d *decoder) bits(n uint) uint32 {
	v := uint32(d.bitbuf & (1<<n - 1))
	d.bitbuf >>= n
	d.bitsleft -= n
	return v
}

// consumed returns the bytes of input the stream has used so far (a
// partial byte counts), or an error when that is beyond the input.
func (d *decoder) consumed() (int, error) {
	n := d.pos - int(d.bitsleft>>3)
	if n > len(d.in) {
		return 0, d.errTruncated()
	}
	return n, nil
}

// need makes room for n more output bytes at op, growing out up to the
// limit; past the limit it is ErrTooLarge.
func (d *decoder) need(n int) error {
	if d.op+n <= len(d.out) {
		return nil
	}
	if d.op+n > d.end {
		return fmt.Errorf("%w: decoded data exceeds %d bytes", ErrTooLarge, d.limit)
	}
	size := min(d.end, max(2*len(d.out), d.op+n, d.start+4096))
	nb := make([]byte, size)
	copy(nb, d.out[:d.op])
	d.out = nb
	return nil
}

// inflate decodes one DEFLATE stream from d.in[d.pos:] (the bit buffer
// empty) to d.out[d.op:], and leaves d.pos at the byte after its end.
func (d *decoder) inflate() error {
	d.bitbuf, d.bitsleft = 0, 0
	for {
		if err := d.refill(); err != nil {
			return err
		}
		final := d.bits(1)
		var err error
		switch d.bits(2) {
		case 0:
			err = d.stored()
		case 1:
			err = d.huffman(fixedLit, fixedDist)
		case 2:
			if err = d.dynamic(); err == nil {
				err = d.huffman(&d.lit, &d.dist)
			}
		default:
			err = fmt.Errorf("%w: deflate block type 3 (reserved) at byte %d", ErrCorrupt, d.pos-int(d.bitsleft>>3))
		}
		if err != nil {
			return err
		}
		if final == 1 {
			n, err := d.consumed()
			if err != nil {
				return err
			}
			d.pos, d.bitbuf, d.bitsleft = n, 0, 0
			return nil
		}
	}
}

// stored copies a stored block.
func (d *decoder) stored() error {
	d.bits(d.bitsleft & 7)
	p := d.pos - int(d.bitsleft>>3)
	d.bitbuf, d.bitsleft = 0, 0
	if p+4 > len(d.in) {
		return d.errTruncated()
	}
	n := int(binary.LittleEndian.Uint16(d.in[p:]))
	if nn := int(binary.LittleEndian.Uint16(d.in[p+2:])); nn != n^0xffff {
		return fmt.Errorf("%w: stored block length %d does not match its complement %d at byte %d", ErrCorrupt, n, nn, p)
	}
	p += 4
	if p+n > len(d.in) {
		return d.errTruncated()
	}
	if err := d.need(n); err != nil {
		return err
	}
	d.op += copy(d.out[d.op:], d.in[p:p+n])
	d.pos = p + n
	return nil
}

// The order of the code length code lengths (RFC 1951 section 3.2.7).
var preOrder = [numPreSyms]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads a dynamic block's code lengths and builds its tables.
func (d *decoder) dynamic() error {
	if err := d.refill(); err != nil {
		return err
	}
	at := d.pos - int(d.bitsleft>>3)
	nlit := int(d.bits(5)) + 257
	ndist := int(d.bits(5)) + 1
	npre := int(d.bits(4)) + 4
	if nlit > 286 || ndist > 30 {
		return fmt.Errorf("%w: dynamic block with %d literal/length and %d distance codes at byte %d", ErrCorrupt, nlit, ndist, at)
	}
	var prelens [numPreSyms]uint8
	for i := range npre {
		if d.bitsleft < 3 {
			if err := d.refill(); err != nil {
				return err
			}
		}
		prelens[preOrder[i]] = uint8(d.bits(3))
	}
	if !build(d.pre[:], prelens[:], preSymEntry[:], preBits) {
		return fmt.Errorf("%w: invalid code length code in dynamic block at byte %d", ErrCorrupt, at)
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if d.bitsleft < 7+7 {
			if err := d.refill(); err != nil {
				return err
			}
		}
		e := d.pre[d.bitbuf&(preSize-1)]
		if e&fExc != 0 {
			return fmt.Errorf("%w: invalid code length code in dynamic block at byte %d", ErrCorrupt, at)
		}
		d.bits(uint(e & 63))
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var v uint8
		var rep int
		switch sym {
		case 16:
			if i == 0 {
				return fmt.Errorf("%w: code length repeat with no previous length in dynamic block at byte %d", ErrCorrupt, at)
			}
			v, rep = lens[i-1], 3+int(d.bits(2))
		case 17:
			rep = 3 + int(d.bits(3))
		default:
			rep = 11 + int(d.bits(7))
		}
		if i+rep > len(lens) {
			return fmt.Errorf("%w: code lengths overrun %d codes in dynamic block at byte %d", ErrCorrupt, len(lens), at)
		}
		for ; rep > 0; rep-- {
			lens[i] = v
			i++
		}
	}
	if lens[256] == 0 {
		return fmt.Errorf("%w: dynamic block without an end-of-block code at byte %d", ErrCorrupt, at)
	}
	if !build(d.lit[:], lens[:nlit], litSymEntry[:], litBits) {
		return fmt.Errorf("%w: invalid literal/length code in dynamic block at byte %d", ErrCorrupt, at)
	}
	if !build(d.dist[:], lens[nlit:], distSymEntry[:], distBits) {
		return fmt.Errorf("%w: invalid distance code in dynamic block at byte %d", ErrCorrupt, at)
	}
	return nil
}
