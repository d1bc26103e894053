package icechunk

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// A FlexBuffers reader (spec version 2 metadata and configuration), into
// JSON-like Go values: nil, bool, int64, uint64, float64, string, []byte,
// []any and map[string]any. Offsets are checked; nesting and the number of
// values made are bounded, so shared sub-values cannot multiply into a bomb.

const (
	flexNull         = 0
	flexInt          = 1
	flexUint         = 2
	flexFloat        = 3
	flexKey          = 4
	flexString       = 5
	flexIndirectInt  = 6
	flexIndirectUint = 7
	flexIndirectFlt  = 8
	flexMap          = 9
	flexVector       = 10
	flexVectorInt    = 11 // ..14: typed vectors of int, uint, float, key
	flexVectorKey    = 14
	flexVectorStrDep = 15
	flexVectorInt2   = 16 // ..24: fixed typed vectors of 2, 3, 4
	flexVectorFlt4   = 24
	flexBlob         = 25
	flexBool         = 26
	flexVectorBool   = 36

	flexMaxDepth  = 64
	flexMaxValues = 1 << 20
)

type flexReader struct {
	buf    []byte
	values int
}

// decodeFlex decodes a whole FlexBuffer.
func decodeFlex(buf []byte) (any, error) {
	if len(buf) < 3 {
		return nil, corruptf("flexbuffer of %d bytes", len(buf))
	}
	width := int(buf[len(buf)-1])
	packed := buf[len(buf)-2]
	if width != 1 && width != 2 && width != 4 && width != 8 {
		return nil, corruptf("flexbuffer root width %d", width)
	}
	pos := len(buf) - 2 - width
	if pos < 0 {
		return nil, corruptf("flexbuffer root outside %d bytes", len(buf))
	}
	r := &flexReader{buf: buf}
	return r.value(pos, width, packed, 0)
}

func (r *flexReader) uint(pos, width int) (uint64, error) {
	if pos < 0 || width <= 0 || pos > len(r.buf)-width {
		return 0, corruptf("flexbuffer read of %d bytes at %d outside %d", width, pos, len(r.buf))
	}
	switch width {
	case 1:
		return uint64(r.buf[pos]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(r.buf[pos:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(r.buf[pos:])), nil
	case 8:
		return binary.LittleEndian.Uint64(r.buf[pos:]), nil
	}
	return 0, corruptf("flexbuffer width %d", width)
}

func (r *flexReader) int(pos, width int) (int64, error) {
	u, err := r.uint(pos, width)
	if err != nil {
		return 0, err
	}
	shift := 64 - 8*width
	return int64(u<<shift) >> shift, nil
}

func (r *flexReader) float(pos, width int) (float64, error) {
	u, err := r.uint(pos, width)
	if err != nil {
		return 0, err
	}
	switch width {
	case 4:
		return float64(math.Float32frombits(uint32(u))), nil
	case 8:
		return math.Float64frombits(u), nil
	}
	return 0, corruptf("flexbuffer float of width %d", width)
}

// indirect returns the position an offset slot at pos points back to.
func (r *flexReader) indirect(pos, width int) (int, error) {
	off, err := r.uint(pos, width)
	if err != nil {
		return 0, err
	}
	if off > uint64(pos) {
		return 0, corruptf("flexbuffer offset %d at %d points before the buffer", off, pos)
	}
	return pos - int(off), nil
}

// value decodes the value in the slot at pos of the given width.
func (r *flexReader) value(pos, width int, packed byte, depth int) (any, error) {
	if depth > flexMaxDepth {
		return nil, corruptf("flexbuffer nested deeper than %d", flexMaxDepth)
	}
	if r.values++; r.values > flexMaxValues {
		return nil, corruptf("flexbuffer holds more than %d values", flexMaxValues)
	}
	typ := int(packed >> 2)
	cw := 1 << (packed & 3) // the child's own width, for offset types
	switch typ {
	case flexNull:
		return nil, nil
	case flexBool:
		u, err := r.uint(pos, width)
		return u != 0, err
	}
	// a scalar's slot holds it; every other type's slot points back to it
	at, w := pos, width
	var err error
	if typ != flexInt && typ != flexUint && typ != flexFloat {
		if at, err = r.indirect(pos, width); err != nil {
			return nil, err
		}
		w = cw
	}
	switch typ {
	case flexInt, flexIndirectInt:
		return r.int(at, w)
	case flexUint, flexIndirectUint:
		return r.uint(at, w)
	case flexFloat, flexIndirectFlt:
		return r.float(at, w)
	case flexKey:
		return r.key(at)
	case flexString, flexBlob:
		n, err := r.uint(at-cw, cw)
		if err != nil {
			return nil, err
		}
		if n > uint64(len(r.buf)-at) {
			return nil, corruptf("flexbuffer string of %d bytes at %d overruns", n, at)
		}
		b := r.buf[at : at+int(n)]
		if typ == flexBlob {
			return append([]byte(nil), b...), nil
		}
		if !utf8.Valid(b) {
			return nil, corruptf("flexbuffer string is not UTF-8")
		}
		return string(b), nil
	case flexMap:
		return r.mapAt(at, cw, depth)
	case flexVector:
		n, err := r.count(at, cw, 1)
		if err != nil {
			return nil, err
		}
		types := at + n*cw
		if types+n > len(r.buf) {
			return nil, corruptf("flexbuffer vector types overrun")
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.value(at+i*cw, cw, r.buf[types+i], depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if (typ >= flexVectorInt && typ <= flexVectorKey) || typ == flexVectorBool || typ == flexVectorStrDep ||
		(typ >= flexVectorInt2 && typ <= flexVectorFlt4) {
		var n, elem int
		if typ >= flexVectorInt2 && typ <= flexVectorFlt4 {
			k := typ - flexVectorInt2
			n, elem = 2+k/3, flexInt+k%3
			if at+n*cw > len(r.buf) {
				return nil, corruptf("flexbuffer fixed vector overruns")
			}
		} else {
			if n, err = r.count(at, cw, 0); err != nil {
				return nil, err
			}
			switch typ {
			case flexVectorBool:
				elem = flexBool
			case flexVectorStrDep:
				elem = flexString
			default:
				elem = typ - flexVectorInt + flexInt
			}
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.value(at+i*cw, cw, byte(elem<<2|bitsOf(cw)), depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, corruptf("flexbuffer type %d", typ)
}

func bitsOf(w int) int {
	switch w {
	case 2:
		return 1
	case 4:
		return 2
	case 8:
		return 3
	}
	return 0
}

// count reads the element count before a vector at at and checks that n
// elements of width w, plus extra bytes per element, fit.
func (r *flexReader) count(at, w, extra int) (int, error) {
	n, err := r.uint(at-w, w)
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.buf)-at)/uint64(w+extra) {
		return 0, corruptf("flexbuffer vector of %d elements at %d overruns", n, at)
	}
	return int(n), nil
}

func (r *flexReader) key(at int) (string, error) {
	if at < 0 || at >= len(r.buf) {
		return "", corruptf("flexbuffer key outside the buffer")
	}
	end := at
	for end < len(r.buf) && r.buf[end] != 0 {
		end++
	}
	if end == len(r.buf) {
		return "", corruptf("flexbuffer key not terminated")
	}
	if !utf8.Valid(r.buf[at:end]) {
		return "", corruptf("flexbuffer key is not UTF-8")
	}
	return string(r.buf[at:end]), nil
}

func (r *flexReader) mapAt(at, w, depth int) (any, error) {
	n, err := r.count(at, w, 1)
	if err != nil {
		return nil, err
	}
	kpos, err := r.indirect(at-3*w, w)
	if err != nil {
		return nil, err
	}
	kw, err := r.uint(at-2*w, w)
	if err != nil {
		return nil, err
	}
	if kw != 1 && kw != 2 && kw != 4 && kw != 8 {
		return nil, corruptf("flexbuffer map keys of width %d", kw)
	}
	kn, err := r.count(kpos, int(kw), 0)
	if err != nil {
		return nil, err
	}
	if kn != n {
		return nil, corruptf("flexbuffer map of %d values has %d keys", n, kn)
	}
	types := at + n*w
	out := make(map[string]any, n)
	for i := 0; i < n; i++ {
		kat, err := r.indirect(kpos+i*int(kw), int(kw))
		if err != nil {
			return nil, err
		}
		k, err := r.key(kat)
		if err != nil {
			return nil, err
		}
		if out[k], err = r.value(at+i*w, w, r.buf[types+i], depth+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}
