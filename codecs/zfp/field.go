package zfp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrCorrupt reports a stream that is not valid ZFP: a bad magic or
	// mode word, a truncated stream, dimensions that do not fit.
	ErrCorrupt = errors.New("zfp: corrupt stream")
	// ErrParams reports an element type, shape or compression parameter
	// that ZFP cannot encode.
	ErrParams = errors.New("zfp: unsupported parameters")
)

// Type is a ZFP scalar type, numbered as zfp_type in the C library.
type Type int

// The scalar types.
const (
	Int32   Type = 1
	Int64   Type = 2
	Float32 Type = 3
	Float64 Type = 4
)

// Size returns the size of one element in bytes (0 for an invalid Type).
func (t Type) Size() int {
	switch t {
	case Int32, Float32:
		return 4
	case Int64, Float64:
		return 8
	}
	return 0
}

// String returns the C library's name of the type.
func (t Type) String() string {
	switch t {
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Float32:
		return "float"
	case Float64:
		return "double"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Limits of the C library.
const (
	minBitsLimit = 1     // ZFP_MIN_BITS
	maxBitsLimit = 16658 // ZFP_MAX_BITS
	maxPrecLimit = 64    // ZFP_MAX_PREC
	minExpLimit  = -1074 // ZFP_MIN_EXP
	codecVersion = 5     // ZFP_CODEC of zfp 1.0
	modeShortMax = 4094
)

// Params are ZFP's four "expert mode" parameters, which every mode sets:
// at least MinBits and at most MaxBits bits per block, at most MaxPrec bit
// planes, no bit plane below MinExp (MinExp below -1074 selects the
// reversible algorithm). Use FixedRate, FixedPrecision, FixedAccuracy or
// Reversible to get the values the C library sets.
type Params struct {
	MinBits, MaxBits, MaxPrec uint32
	MinExp                    int32
}

// Reversible returns the parameters of lossless compression.
func Reversible() Params {
	return Params{minBitsLimit, maxBitsLimit, maxPrecLimit, minExpLimit - 1}
}

// FixedRate returns the parameters of fixed-rate mode, rate bits per value
// for blocks of dims dimensions, as zfpy sets them (zfp_stream_set_rate
// without a scalar type, so no minimum for the block exponent, and no
// word alignment). Rates giving more than 32768 bits per block, which the
// header cannot hold, are ErrParams.
func FixedRate(rate float64, dims int) (Params, error) {
	if dims < 1 || dims > 4 {
		return Params{}, fmt.Errorf("%w: %d dimensions", ErrParams, dims)
	}
	n := float64(int(1) << (2 * dims))
	b := math.Floor(n*rate + 0.5)
	if !(b >= 0 && b <= 0x8000) {
		return Params{}, fmt.Errorf("%w: rate %v gives %v bits per block (at most 32768)", ErrParams, rate, b)
	}
	return Params{uint32(b), uint32(b), maxPrecLimit, minExpLimit}, nil
}

// FixedPrecision returns the parameters of fixed-precision mode: prec bit
// planes (0 or more than 64 mean 64).
func FixedPrecision(prec uint) Params {
	p := uint32(maxPrecLimit)
	if prec != 0 && prec < maxPrecLimit {
		p = uint32(prec)
	}
	return Params{minBitsLimit, maxBitsLimit, p, minExpLimit}
}

// FixedAccuracy returns the parameters of fixed-accuracy mode: errors of
// at most about tolerance (0: as small as the format allows).
func FixedAccuracy(tolerance float64) (Params, error) {
	if math.IsNaN(tolerance) || math.IsInf(tolerance, 0) || tolerance < 0 {
		return Params{}, fmt.Errorf("%w: tolerance %v", ErrParams, tolerance)
	}
	emin := minExpLimit
	if tolerance > 0 {
		_, e := math.Frexp(tolerance)
		emin = e - 1
	}
	return Params{minBitsLimit, maxBitsLimit, maxPrecLimit, int32(emin)}, nil
}

// Mode is a compression mode, numbered as zfp_mode in the C library (and
// in numcodecs' zfpy "mode").
type Mode int

// The modes.
const (
	ModeNull           Mode = 0
	ModeExpert         Mode = 1
	ModeFixedRate      Mode = 2
	ModeFixedPrecision Mode = 3
	ModeFixedAccuracy  Mode = 4
	ModeReversible     Mode = 5
)

// Mode returns the mode the parameters amount to, as the C library
// classifies them.
func (p Params) Mode() Mode {
	switch {
	case p.MinBits > p.MaxBits || p.MaxPrec == 0 || p.MaxPrec > 64:
		return ModeNull
	case p.MinBits == minBitsLimit && p.MaxBits == maxBitsLimit && p.MaxPrec == maxPrecLimit && p.MinExp == minExpLimit:
		return ModeExpert
	case p.MinBits == p.MaxBits && p.MaxBits >= 1 && p.MaxBits <= maxBitsLimit && p.MaxPrec >= maxPrecLimit && p.MinExp == minExpLimit:
		return ModeFixedRate
	case p.MinBits <= minBitsLimit && p.MaxBits >= maxBitsLimit && p.MaxPrec >= 1 && p.MinExp == minExpLimit:
		return ModeFixedPrecision
	case p.MinBits <= minBitsLimit && p.MaxBits >= maxBitsLimit && p.MaxPrec >= maxPrecLimit && p.MinExp >= minExpLimit:
		return ModeFixedAccuracy
	case p.MinBits <= minBitsLimit && p.MaxBits >= maxBitsLimit && p.MaxPrec >= maxPrecLimit && p.MinExp < minExpLimit:
		return ModeReversible
	}
	return ModeExpert
}

func (p Params) reversible() bool { return p.MinExp < minExpLimit }

// modeWord returns the header's mode field: 12 bits for the common
// settings, else 64 bits with the low 12 all ones.
func (p Params) modeWord() uint64 {
	switch p.Mode() {
	case ModeFixedRate:
		if p.MaxBits <= 2048 {
			return uint64(p.MaxBits - 1)
		}
	case ModeFixedPrecision:
		if p.MaxPrec <= 128 {
			return uint64(p.MaxPrec-1) + 2048
		}
	case ModeFixedAccuracy:
		if p.MinExp <= 843 {
			return uint64(int64(p.MinExp)-minExpLimit) + 2048 + 128 + 1
		}
	case ModeReversible:
		return 2048 + 128
	}
	clampm1 := func(v, hi uint32) uint64 { return uint64(max(1, min(v, hi)) - 1) }
	minexp := uint64(max(0, min(int64(p.MinExp)+16495, 0x7fff)))
	m := minexp
	m = m<<7 + clampm1(p.MaxPrec, 0x80)
	m = m<<15 + clampm1(p.MaxBits, 0x8000)
	m = m<<15 + clampm1(p.MinBits, 0x8000)
	return m<<12 + 0xfff
}

// paramsFromMode decodes a mode field; ok is false for the null mode.
func paramsFromMode(m uint64) (Params, bool) {
	var p Params
	switch {
	case m < 2048:
		p = Params{uint32(m) + 1, uint32(m) + 1, maxPrecLimit, minExpLimit}
	case m < 2048+128:
		p = Params{minBitsLimit, maxBitsLimit, uint32(m) + 1 - 2048, minExpLimit}
	case m == 2048+128:
		p = Reversible()
	case m <= modeShortMax:
		p = Params{minBitsLimit, maxBitsLimit, maxPrecLimit, int32(int64(m) + minExpLimit - (2048 + 128 + 1))}
	default:
		m >>= 12
		p.MinBits = uint32(m&0x7fff) + 1
		m >>= 15
		p.MaxBits = uint32(m&0x7fff) + 1
		m >>= 15
		p.MaxPrec = uint32(m&0x7f) + 1
		m >>= 7
		p.MinExp = int32(m&0x7fff) - 16495
	}
	return p, p.MinBits <= p.MaxBits && p.MaxPrec > 0 && p.MaxPrec <= 64
}

// Header is what a full ZFP header (as zfpy writes it) records.
type Header struct {
	Type Type
	// Shape is the array's shape in C order (slowest dimension first), as
	// NumPy and zfpy give it: nx, the fastest, is Shape[len(Shape)-1].
	Shape  []int
	Params Params
}

// NumElements returns the number of values the header describes.
func (h Header) NumElements() int {
	n := 1
	for _, s := range h.Shape {
		n *= s
	}
	return n
}

// dimBits is the width of each dimension in the header, by dimensionality.
var dimBits = [5]uint{0, 48, 24, 16, 12}

// readHeader reads a full header: 96 bits, or 148 when the mode field is
// long.
func readHeader(r *bitReader) (Header, error) {
	var h Header
	if r.readBits(32) != 'z'|'f'<<8|'p'<<16|codecVersion<<24 {
		return h, fmt.Errorf("%w: no zfp magic (\"zfp\" and codec version %d)", ErrCorrupt, codecVersion)
	}
	meta := r.readBits(52)
	h.Type = Type(meta&3 + 1)
	meta >>= 2
	d := int(meta&3 + 1)
	meta >>= 2
	h.Shape = make([]int, d)
	width := dimBits[d]
	mask := uint64(1)<<width - 1
	if d == 1 {
		mask = 0xffffffff // the C library reads 32 of the 48 bits
	}
	for i := d - 1; i >= 0; i-- {
		h.Shape[i] = int(meta&mask) + 1
		meta >>= width
	}
	m := r.readBits(12)
	if m > modeShortMax {
		m += r.readBits(52) << 12
	}
	p, ok := paramsFromMode(m)
	if !ok {
		return h, fmt.Errorf("%w: mode word %#x has no valid parameters", ErrCorrupt, m)
	}
	h.Params = p
	return h, nil
}

// ReadHeader returns the header at the start of a stream zfpy wrote.
func ReadHeader(src []byte) (Header, error) {
	r := bitReader{data: src}
	h, err := readHeader(&r)
	if err == nil && r.consumed() > uint64(len(src))*8 {
		err = fmt.Errorf("%w: %d bytes, too short for a header", ErrCorrupt, len(src))
	}
	return h, err
}

// writeHeader writes the full header of an array of type t and shape.
func writeHeader(w *bitWriter, t Type, shape []int, p Params) error {
	d := len(shape)
	var meta uint64
	for _, s := range shape {
		if s < 1 || uint64(s-1)>>dimBits[d] != 0 {
			return fmt.Errorf("%w: shape %v does not fit a zfp header (%d bits per dimension in %d-D)", ErrParams, shape, dimBits[d], d)
		}
		meta = meta<<dimBits[d] + uint64(s-1)
	}
	meta = meta<<2 + uint64(d-1)
	meta = meta<<2 + uint64(t-1)
	w.writeBits('z'|'f'<<8|'p'<<16|codecVersion<<24, 32)
	w.writeBits(meta, 52)
	m := p.modeWord()
	if m > modeShortMax {
		w.writeBits(m, 64)
	} else {
		w.writeBits(m, 12)
	}
	return nil
}

// checkShape validates the type and shape of an array to code.
func checkShape(t Type, shape []int) error {
	if t.Size() == 0 {
		return fmt.Errorf("%w: scalar type %d", ErrParams, int(t))
	}
	if len(shape) < 1 || len(shape) > 4 {
		return fmt.Errorf("%w: %d dimensions (zfp codes 1 to 4)", ErrParams, len(shape))
	}
	for _, s := range shape {
		if s < 1 {
			return fmt.Errorf("%w: shape %v", ErrParams, shape)
		}
	}
	return nil
}

// MaxSize returns an upper bound on the size of a stream Compress writes
// for an array of type t and shape with parameters p (the C library's
// zfp_stream_maximum_size with 64-bit stream words, as pip's zfpy pads).
func MaxSize(t Type, shape []int, p Params) int {
	if checkShape(t, shape) != nil {
		return 0
	}
	d := len(shape)
	blocks := 1
	for _, s := range shape {
		blocks *= (s + 3) / 4
	}
	values := uint64(1) << (2 * d)
	var b uint64
	rev := p.reversible()
	switch t {
	case Int32:
		if rev {
			b = 5
		}
	case Int64:
		if rev {
			b = 6
		}
	case Float32:
		b = 9
		if rev {
			b = 15
		}
	case Float64:
		b = 12
		if rev {
			b = 19
		}
	}
	b += values - 1 + values*uint64(min(p.MaxPrec, uint32(t.Size()*8)))
	b = min(b, uint64(p.MaxBits))
	b = max(b, uint64(p.MinBits))
	return int((148 + uint64(blocks)*b + 63) / 64 * 8)
}

// Compress appends to dst a zfpy stream (full header, then the blocks) of
// the array src: little-endian elements of type t in C order, of the given
// shape (1 to 4 dimensions). The output is byte for byte what zfpy 1.0.1
// (Debian's build, 8-bit stream words) writes for the same array and
// parameters.
func Compress(dst, src []byte, t Type, shape []int, p Params) ([]byte, error) {
	if err := checkShape(t, shape); err != nil {
		return dst, err
	}
	if p.Mode() == ModeNull {
		return dst, fmt.Errorf("%w: parameters %+v", ErrParams, p)
	}
	// A float block needs room for its exponent (modes.rst): the C library
	// writes past such a budget (and past its buffer), so refuse it.
	if need := map[Type]uint32{Float32: 9, Float64: 12}[t]; !p.reversible() && p.MaxBits < need {
		return dst, fmt.Errorf("%w: %d bits per block, %s blocks need at least %d (a higher rate)", ErrParams, p.MaxBits, t, need)
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	if len(src) != n*t.Size() {
		return dst, fmt.Errorf("%w: %d bytes for %d values of %s", ErrParams, len(src), n, t)
	}
	w := bitWriter{buf: dst}
	if err := writeHeader(&w, t, shape, p); err != nil {
		return dst, err
	}
	if len(shape) == 1 {
		rev := p.reversible()
		switch {
		case t == Float32 && rev:
			compress1DRev[float32, int32, uint32](&w, src, n, &p, true)
		case t == Float64 && rev:
			compress1DRev[float64, int64, uint64](&w, src, n, &p, true)
		case t == Int32 && rev:
			compress1DRev[float32, int32, uint32](&w, src, n, &p, false)
		case t == Int64 && rev:
			compress1DRev[float64, int64, uint64](&w, src, n, &p, false)
		case t == Float32:
			compress1D[float32, int32, uint32](&w, src, n, &p, true)
		case t == Float64:
			compress1D[float64, int64, uint64](&w, src, n, &p, true)
		case t == Int32:
			compress1D[float32, int32, uint32](&w, src, n, &p, false)
		case t == Int64:
			compress1D[float64, int64, uint64](&w, src, n, &p, false)
		}
		return w.finish(), nil
	}
	var g grid
	g.init(shape, t.Size())
	switch t {
	case Float32:
		compressFloat[float32, int32, uint32](&w, &g, src, &p)
	case Float64:
		compressFloat[float64, int64, uint64](&w, &g, src, &p)
	case Int32:
		compressInt[int32, uint32](&w, &g, src, &p)
	case Int64:
		compressInt[int64, uint64](&w, &g, src, &p)
	}
	return w.finish(), nil
}

// Decompress decodes the zfpy stream src into dst, which must hold exactly
// the array the header describes (little-endian elements in C order), and
// returns the header. The values are bit for bit those the C library
// decodes. Errors wrap ErrCorrupt.
func Decompress(dst, src []byte) (Header, error) {
	r := bitReader{data: src}
	h, err := readHeader(&r)
	if err != nil {
		return h, err
	}
	if n := h.NumElements(); len(dst) != n*h.Type.Size() {
		return h, fmt.Errorf("%w: header says %d values of %s (shape %v), the output has %d bytes", ErrCorrupt, n, h.Type, h.Shape, len(dst))
	}
	return h, decompressBody(&r, h, dst)
}

// decompressBody decodes the blocks after the header.
func decompressBody(r *bitReader, h Header, dst []byte) error {
	var ok bool
	if len(h.Shape) == 1 {
		n, p, rev := h.Shape[0], &h.Params, h.Params.reversible()
		switch {
		case h.Type == Float32 && rev:
			ok = decompress1DRev[float32, int32, uint32](r, dst, n, p, true)
		case h.Type == Float64 && rev:
			ok = decompress1DRev[float64, int64, uint64](r, dst, n, p, true)
		case h.Type == Int32 && rev:
			ok = decompress1DRev[float32, int32, uint32](r, dst, n, p, false)
		case h.Type == Int64 && rev:
			ok = decompress1DRev[float64, int64, uint64](r, dst, n, p, false)
		case h.Type == Float32:
			ok = decompress1D[float32, int32, uint32](r, dst, n, p, true)
		case h.Type == Float64:
			ok = decompress1D[float64, int64, uint64](r, dst, n, p, true)
		case h.Type == Int32:
			ok = decompress1D[float32, int32, uint32](r, dst, n, p, false)
		case h.Type == Int64:
			ok = decompress1D[float64, int64, uint64](r, dst, n, p, false)
		}
		if !ok || overrun(r) {
			return fmt.Errorf("%w: stream of %d bytes ends inside the blocks (truncated)", ErrCorrupt, len(r.data))
		}
		return nil
	}
	var g grid
	g.init(h.Shape, h.Type.Size())
	switch h.Type {
	case Float32:
		ok = decompressFloat[float32, int32, uint32](r, &g, dst, &h.Params)
	case Float64:
		ok = decompressFloat[float64, int64, uint64](r, &g, dst, &h.Params)
	case Int32:
		ok = decompressInt[int32, uint32](r, &g, dst, &h.Params)
	case Int64:
		ok = decompressInt[int64, uint64](r, &g, dst, &h.Params)
	}
	if !ok || r.consumed() > uint64(len(r.data))*8 {
		return fmt.Errorf("%w: stream of %d bytes ends inside the blocks (truncated)", ErrCorrupt, len(r.data))
	}
	return nil
}

// grid walks the blocks of an array in the C library's order (x fastest).
type grid struct {
	d      int
	n      [4]int // extents, x first
	stride [4]int // byte strides, x first
	size   int    // element size
}

func (g *grid) init(shape []int, size int) {
	g.d = len(shape)
	g.size = size
	st := size
	for i := 0; i < g.d; i++ {
		g.n[i] = shape[g.d-1-i]
		g.stride[i] = st
		st *= g.n[i]
	}
	for i := g.d; i < 4; i++ {
		g.n[i] = 1
	}
}

// blocks calls f for every block with the byte offset of its first value
// and its extent in each dimension (1..4), in stream order; f returns
// false to stop.
func (g *grid) blocks(f func(off int, ext [4]int) bool) bool {
	var ext [4]int
	for w := 0; w < g.n[3]; w += 4 {
		ext[3] = min(4, g.n[3]-w)
		for z := 0; z < g.n[2]; z += 4 {
			ext[2] = min(4, g.n[2]-z)
			for y := 0; y < g.n[1]; y += 4 {
				ext[1] = min(4, g.n[1]-y)
				for x := 0; x < g.n[0]; x += 4 {
					ext[0] = min(4, g.n[0]-x)
					off := x*g.stride[0] + y*g.stride[1] + z*g.stride[2] + w*g.stride[3]
					if !f(off, ext) {
						return false
					}
				}
			}
		}
	}
	return true
}

// gather reads the block at off into raw (bit patterns, x fastest) and
// pads a partial block as the C library does: along each axis in turn a
// short line of n values is completed from its first values (n=1: a a a a;
// n=2: a b b a; n=3: a b c a).
func (g *grid) gather(raw []uint64, src []byte, off int, ext [4]int) {
	d := g.d
	full := true
	for i := 0; i < d; i++ {
		full = full && ext[i] == 4
	}
	for w := 0; w < ext[3]; w++ {
		for z := 0; z < ext[2]; z++ {
			for y := 0; y < ext[1]; y++ {
				o := off + y*g.stride[1] + z*g.stride[2] + w*g.stride[3]
				q := raw[16*z+4*y+64*w:]
				switch {
				case ext[0] == 4 && g.size == 4:
					d := src[o : o+16]
					q[0] = uint64(binary.LittleEndian.Uint32(d[0:]))
					q[1] = uint64(binary.LittleEndian.Uint32(d[4:]))
					q[2] = uint64(binary.LittleEndian.Uint32(d[8:]))
					q[3] = uint64(binary.LittleEndian.Uint32(d[12:]))
				case ext[0] == 4:
					d := src[o : o+32]
					q[0] = binary.LittleEndian.Uint64(d[0:])
					q[1] = binary.LittleEndian.Uint64(d[8:])
					q[2] = binary.LittleEndian.Uint64(d[16:])
					q[3] = binary.LittleEndian.Uint64(d[24:])
				case g.size == 4:
					for x := 0; x < ext[0]; x++ {
						q[x] = uint64(binary.LittleEndian.Uint32(src[o+4*x:]))
					}
				default:
					for x := 0; x < ext[0]; x++ {
						q[x] = binary.LittleEndian.Uint64(src[o+8*x:])
					}
				}
			}
		}
	}
	if full {
		return
	}
	// Pad along x for existing rows, then along y, z and w for all.
	for a := 0; a < d; a++ {
		s := 1 << (2 * a)
		n := ext[a]
		if n == 4 {
			continue
		}
		for _, i := range lines[d][a] {
			// Only lines whose coordinates along later axes exist.
			inside := true
			for b := a + 1; b < d; b++ {
				if (i>>(2*b))&3 >= ext[b] {
					inside = false
				}
			}
			if inside {
				padLine(raw, i, s, n)
			}
		}
	}
}

func padLine(p []uint64, i, s, n int) {
	switch n {
	case 1:
		p[i+s] = p[i]
		p[i+2*s] = p[i]
		p[i+3*s] = p[i]
	case 2:
		p[i+2*s] = p[i+s]
		p[i+3*s] = p[i]
	case 3:
		p[i+3*s] = p[i]
	}
}

// scatter writes the valid part of a decoded block (the values' bit
// patterns, x fastest) to dst.
func scatter[I signed](g *grid, dst []byte, blk *[256]I, off int, ext [4]int) {
	size := int(unsafe.Sizeof(I(0)))
	for w := 0; w < ext[3]; w++ {
		for z := 0; z < ext[2]; z++ {
			for y := 0; y < ext[1]; y++ {
				o := off + y*g.stride[1] + z*g.stride[2] + w*g.stride[3]
				q := blk[(16*z+4*y+64*w)&255:]
				if ext[0] == 4 {
					d := dst[o : o+4*size]
					storeRaw(d, size, uint64(q[0]))
					storeRaw(d[size:], size, uint64(q[1]))
					storeRaw(d[2*size:], size, uint64(q[2]))
					storeRaw(d[3*size:], size, uint64(q[3]))
					continue
				}
				for x := 0; x < ext[0]; x++ {
					storeRaw(dst[o+size*x:], size, uint64(q[x]))
				}
			}
		}
	}
}

func compressFloat[F float, I signed, U unsigned](w *bitWriter, g *grid, src []byte, p *Params) {
	bs := 1 << (2 * g.d)
	var raw [256]uint64
	wk := new(fwork[F, I, U])
	var fb [256]F
	fblock := fb[:bs]
	rev := p.reversible()
	g.blocks(func(off int, ext [4]int) bool {
		g.gather(raw[:], src, off, ext)
		for i := range fblock {
			fblock[i] = bitsFloat[F](I(raw[i]))
		}
		if rev {
			revEncodeFloatBlock[F, I, U](w, p, fblock, g.d, wk)
		} else {
			encodeFloatBlock[F, I, U](w, p, fblock, g.d, wk)
		}
		return true
	})
}

func compressInt[I signed, U unsigned](w *bitWriter, g *grid, src []byte, p *Params) {
	bs := 1 << (2 * g.d)
	var raw [256]uint64
	wk := new(work[I, U])
	var ib [256]I
	iblock := ib[:bs]
	rev := p.reversible()
	g.blocks(func(off int, ext [4]int) bool {
		g.gather(raw[:], src, off, ext)
		for i := range iblock {
			iblock[i] = I(raw[i])
		}
		if rev {
			revEncodeIntBlock[I, U](w, p.MinBits, p.MaxBits, p.MaxPrec, iblock, g.d, wk)
		} else {
			encodeIntBlock[I, U](w, p.MinBits, p.MaxBits, p.MaxPrec, iblock, g.d, wk)
		}
		return true
	})
}

// overrun reports whether the reader has gone past the end of its data
// (bits there read as zeros): the stream was truncated.
func overrun(r *bitReader) bool { return r.consumed() > uint64(len(r.data))*8 }

func decompressFloat[F float, I signed, U unsigned](r *bitReader, g *grid, dst []byte, p *Params) bool {
	bs := 1 << (2 * g.d)
	wk := new(fwork[F, I, U])
	var fb [256]F
	fblock := fb[:bs]
	rev := p.reversible()
	return g.blocks(func(off int, ext [4]int) bool {
		if rev {
			revDecodeFloatBlock[F, I, U](r, p, fblock, g.d, wk)
		} else {
			decodeFloatBlock[F, I, U](r, p, fblock, g.d, wk)
		}
		scatter(g, dst, (*[256]I)(unsafe.Pointer(&fb)), off, ext)
		return !overrun(r)
	})
}

func decompressInt[I signed, U unsigned](r *bitReader, g *grid, dst []byte, p *Params) bool {
	bs := 1 << (2 * g.d)
	wk := new(work[I, U])
	var ib [256]I
	iblock := ib[:bs]
	rev := p.reversible()
	return g.blocks(func(off int, ext [4]int) bool {
		if rev {
			revDecodeIntBlock[I, U](r, p.MinBits, p.MaxBits, iblock, g.d, wk)
		} else {
			decodeIntBlock[I, U](r, p.MinBits, p.MaxBits, p.MaxPrec, iblock, g.d, wk)
		}
		scatter(g, dst, &ib, off, ext)
		return !overrun(r)
	})
}
