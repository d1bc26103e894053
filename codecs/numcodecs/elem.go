package numcodecs

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// elemType is a NumPy element type as a typed filter (delta) sees its
// buffers: kind, size and byte order.
type elemType struct {
	descr string // as written in the configuration
	kind  dtype.Kind
	size  int
	big   bool
}

// parseElem parses the NumPy dtype string of a configuration field. Only
// booleans, integers and floats are accepted.
func parseElem(codec, field, s string) (elemType, error) {
	dt, big, err := dtype.ParseNumpy(s)
	if err != nil {
		return elemType{}, fmt.Errorf("%w: %s: %s: %w", codecs.ErrInvalidConfig, codec, field, err)
	}
	switch dt.Kind() {
	case dtype.Bool, dtype.Int, dtype.Uint, dtype.Float:
	default:
		return elemType{}, fmt.Errorf("%w: %s: %s %q: %s elements are not supported", codecs.ErrInvalidConfig, codec, field, s, dt.Kind())
	}
	return elemType{descr: s, kind: dt.Kind(), size: dt.Size(), big: big}, nil
}

// integer reports whether the type is a signed or unsigned integer.
func (e elemType) integer() bool { return e.kind == dtype.Int || e.kind == dtype.Uint }

// load returns the raw bits of the element at b[0:e.size], zero-extended.
func (e elemType) load(b []byte) uint64 {
	switch e.size {
	case 1:
		return uint64(b[0])
	case 2:
		if e.big {
			return uint64(binary.BigEndian.Uint16(b))
		}
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		if e.big {
			return uint64(binary.BigEndian.Uint32(b))
		}
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		if e.big {
			return binary.BigEndian.Uint64(b)
		}
		return binary.LittleEndian.Uint64(b)
	}
}

// store writes the low e.size bytes of v to b in the type's byte order.
func (e elemType) store(b []byte, v uint64) {
	switch e.size {
	case 1:
		b[0] = byte(v)
	case 2:
		if e.big {
			binary.BigEndian.PutUint16(b, uint16(v))
		} else {
			binary.LittleEndian.PutUint16(b, uint16(v))
		}
	case 4:
		if e.big {
			binary.BigEndian.PutUint32(b, uint32(v))
		} else {
			binary.LittleEndian.PutUint32(b, uint32(v))
		}
	default:
		if e.big {
			binary.BigEndian.PutUint64(b, v)
		} else {
			binary.LittleEndian.PutUint64(b, v)
		}
	}
}

// extend widens the raw bits of an integer element to 64 bits, with sign
// extension for signed types (NumPy's integer casts: widening extends by
// the source's signedness, narrowing keeps the low bytes).
// Only the low e.size bytes of v are read.
func (e elemType) extend(v uint64) uint64 {
	if e.size == 8 {
		return v
	}
	shift := 64 - 8*uint(e.size)
	if e.kind == dtype.Int {
		return uint64(int64(v<<shift) >> shift)
	}
	return v << shift >> shift
}

// float returns the value of a float element's raw bits (exact).
func (e elemType) float(v uint64) float64 {
	switch e.size {
	case 2:
		return dtype.Float16(v).Float64()
	case 4:
		return float64(math.Float32frombits(uint32(v)))
	default:
		return math.Float64frombits(v)
	}
}

// round returns f rounded to the type's precision as raw bits (NumPy's
// float casts: round to nearest even, overflow to infinity).
func (e elemType) round(f float64) uint64 {
	switch e.size {
	case 2:
		return uint64(dtype.Float16FromFloat64(f))
	case 4:
		return uint64(math.Float32bits(float32(f)))
	default:
		return math.Float64bits(f)
	}
}

// add returns a+b computed as NumPy does in the type's precision (float16
// through float32, as NumPy's half loops do), as raw bits. a and b are
// values of the type.
func (e elemType) add(a, b float64) uint64 {
	switch e.size {
	case 2:
		return uint64(dtype.Float16FromFloat32(float32(float32(a) + float32(b))))
	case 4:
		return uint64(math.Float32bits(float32(float32(a) + float32(b))))
	default:
		return math.Float64bits(a + b)
	}
}
