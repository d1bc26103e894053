package dtype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Scalar returns the value of one little-endian element elem of a numeric
// type (bool, int, uint, float; float16 widened) as a Go value: bool,
// int64, uint64 or float64. Other types (and an elem of the wrong size)
// give nil.
func Scalar(d DataType, elem []byte) any {
	switch d.kind {
	case Bool, Int, Uint, Float:
	default:
		return nil
	}
	n, err := NumberOf(d, elem)
	switch {
	case err != nil:
		return nil
	case d.kind == Bool:
		return elem[0] != 0
	case d.kind == Int:
		return n.i
	case d.kind == Uint:
		return n.u
	}
	return n.f
}

// PutScalar writes v, a Go number (or bool for bool), into out as one
// little-endian element of the numeric type d: integers must fit d's
// range, floats convert (rounding to float32 or float16). Anything else
// is an error.
func PutScalar(d DataType, v any, out []byte) error {
	if len(out) != d.size {
		return fmt.Errorf("%d bytes for one %s", len(out), d)
	}
	var i int64
	var u uint64
	var f float64
	isFloat, isUint := false, false
	switch x := v.(type) {
	case bool:
		if d.kind != Bool {
			return fmt.Errorf("a bool is not a %s", d)
		}
		out[0] = 0
		if x {
			out[0] = 1
		}
		return nil
	case int:
		i = int64(x)
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case uint8:
		u, isUint = uint64(x), true
	case uint16:
		u, isUint = uint64(x), true
	case uint32:
		u, isUint = uint64(x), true
	case uint64:
		u, isUint = x, true
	case uint:
		u, isUint = uint64(x), true
	case float32:
		f, isFloat = float64(x), true
	case float64:
		f, isFloat = x, true
	default:
		return fmt.Errorf("%T is not a number", v)
	}
	switch d.kind {
	case Float:
		if !isFloat {
			if isUint {
				f = float64(u)
			} else {
				f = float64(i)
			}
		}
		switch d.size {
		case 2:
			binary.LittleEndian.PutUint16(out, uint16(Float16FromFloat64(f)))
		case 4:
			binary.LittleEndian.PutUint32(out, math.Float32bits(float32(f)))
		default:
			binary.LittleEndian.PutUint64(out, math.Float64bits(f))
		}
		return nil
	case Int, Uint:
		if isFloat {
			if f != math.Trunc(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%v is not an integer", f)
			}
			if f < 0 {
				i = int64(f)
			} else {
				u, isUint = uint64(f), true
			}
		}
		bits := 8 * d.size
		if d.kind == Uint {
			if !isUint && i < 0 || isUint && bits < 64 && u>>bits != 0 || !isUint && bits < 64 && uint64(i)>>bits != 0 {
				return fmt.Errorf("%v out of %s's range", v, d)
			}
			if !isUint {
				u = uint64(i)
			}
		} else {
			if isUint {
				if u > math.MaxInt64 {
					return fmt.Errorf("%v out of %s's range", v, d)
				}
				i = int64(u)
			}
			if bits < 64 && (i < -(1<<(bits-1)) || i >= 1<<(bits-1)) {
				return fmt.Errorf("%v out of %s's range", v, d)
			}
			u = uint64(i)
		}
		for k := range out {
			out[k] = byte(u >> (8 * k))
		}
		return nil
	}
	return fmt.Errorf("%s is not a numeric type", d)
}
