package dtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrNotNumber reports a data type that is not a real number type (bool,
// int, uint, float, bfloat16 or a narrow type), or an element of the wrong
// size, given to NumberOf or Number.Put.
var ErrNotNumber = errors.New("dtype: not a real number type")

// ErrDoesNotFit reports a value Number.Put cannot store exactly in a data
// type: an integer out of its range, a float that is not a whole number
// (or NaN) for an integer type, a finite float beyond a narrower float's
// range, anything but 0 or 1 for bool.
var ErrDoesNotFit = errors.New("value does not fit the data type")

// Number is one element of a real number type, decoded exactly: an
// integer (signed or not, whatever its width) or a float. It is the one
// model every conversion between element types goes through, as
// image/color's models are for pixels: NumberOf reads an element of any
// real type into a Number, Put writes it as an element of another
// (checking that it fits), Float64 and Int give it to arithmetic.
// The zero Number is the integer 0.
type Number struct {
	isFloat bool
	neg     bool    // an integer below zero (then i holds it)
	i       int64   // integers, clamped to int64 when above MaxInt64
	u       uint64  // non-negative integers
	f       float64 // floats
}

// IntNumber is the integer v.
func IntNumber(v int64) Number { return Number{neg: v < 0, i: v, u: uint64(max(v, 0))} }

// UintNumber is the integer v.
func UintNumber(v uint64) Number { return Number{u: v, i: int64(min(v, math.MaxInt64))} }

// FloatNumber is the float v.
func FloatNumber(v float64) Number { return Number{isFloat: true, f: v} }

// NumberOf decodes elem, one little-endian element of the real number
// type d (booleans read as 0 and 1; float16, bfloat16 and the narrow
// floats widen exactly). Other types, and an elem that is not d's size,
// give ErrNotNumber.
func NumberOf(d DataType, elem []byte) (Number, error) {
	if len(elem) != d.size || d.size == 0 {
		return Number{}, fmt.Errorf("%w: %d bytes for one %s", ErrNotNumber, len(elem), d)
	}
	le := binary.LittleEndian
	switch d.kind {
	case Bool:
		return UintNumber(uint64(elem[0])), nil
	case Int:
		switch d.size {
		case 1:
			return IntNumber(int64(int8(elem[0]))), nil
		case 2:
			return IntNumber(int64(int16(le.Uint16(elem)))), nil
		case 4:
			return IntNumber(int64(int32(le.Uint32(elem)))), nil
		case 8:
			return IntNumber(int64(le.Uint64(elem))), nil
		}
	case Uint:
		switch d.size {
		case 1:
			return UintNumber(uint64(elem[0])), nil
		case 2:
			return UintNumber(uint64(le.Uint16(elem))), nil
		case 4:
			return UintNumber(uint64(le.Uint32(elem))), nil
		case 8:
			return UintNumber(le.Uint64(elem)), nil
		}
	case Float:
		switch d.size {
		case 2:
			return FloatNumber(Float16(le.Uint16(elem)).Float64()), nil
		case 4:
			return FloatNumber(float64(math.Float32frombits(le.Uint32(elem)))), nil
		case 8:
			return FloatNumber(math.Float64frombits(le.Uint64(elem))), nil
		}
	case BFloat:
		return FloatNumber(float64(BFloat16(le.Uint16(elem)).Float32())), nil
	case NarrowFloat:
		return FloatNumber(NarrowToFloat64(d, elem[0])), nil
	case NarrowInt, NarrowUint:
		return IntNumber(NarrowToInt64(d, elem[0])), nil
	}
	return Number{}, fmt.Errorf("%w: %s", ErrNotNumber, d)
}

// IsFloat tells whether n is a float (else an integer).
func (n Number) IsFloat() bool { return n.isFloat }

// Float64 is n as a float64 (integers beyond ±2^53 rounded).
func (n Number) Float64() float64 {
	switch {
	case n.isFloat:
		return n.f
	case n.neg:
		return float64(n.i)
	}
	return float64(n.u)
}

// Int is n as an int64 when it is an integer within int64's range.
func (n Number) Int() (int64, bool) {
	if n.isFloat || !n.neg && n.u > math.MaxInt64 {
		return 0, false
	}
	return n.i, true
}

// Uint is n as a uint64 when it is a non-negative integer.
func (n Number) Uint() (uint64, bool) { return n.u, !n.isFloat && !n.neg }

// String formats n exactly: integers in decimal, floats in the shortest
// form that reads back to the same float64.
func (n Number) String() string {
	switch {
	case n.isFloat:
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	case n.neg:
		return strconv.FormatInt(n.i, 10)
	}
	return strconv.FormatUint(n.u, 10)
}

// Put writes n into out as one little-endian element of d (bool, int,
// uint or float), or fails with ErrDoesNotFit when d cannot hold it: an
// integer out of range, a float that is not a whole number (or NaN) into
// an integer type, a finite float beyond the range of a narrower float,
// anything but 0 or 1 into bool. Floats round to a narrower float's
// precision. Other types, and an out that is not d's size, give
// ErrNotNumber.
func (n Number) Put(d DataType, out []byte) error {
	if len(out) != d.size {
		return fmt.Errorf("%w: %d bytes for one %s", ErrNotNumber, len(out), d)
	}
	le := binary.LittleEndian
	switch d.kind {
	case Float:
		f := n.Float64()
		switch d.size {
		case 2:
			h := Float16FromFloat64(f)
			if g := h.Float64(); math.IsInf(g, 0) && !math.IsInf(f, 0) {
				return fmt.Errorf("%w: %g overflows %s", ErrDoesNotFit, f, d)
			}
			le.PutUint16(out, uint16(h))
		case 4:
			g := float32(f)
			switch {
			case !n.isFloat && n.neg:
				g = float32(n.i) // one rounding, as NumPy's cast (not via float64)
			case !n.isFloat:
				g = float32(n.u)
			}
			if math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
				return fmt.Errorf("%w: %g overflows %s", ErrDoesNotFit, f, d)
			}
			le.PutUint32(out, math.Float32bits(g))
		default:
			le.PutUint64(out, math.Float64bits(f))
		}
		return nil
	case Int, Uint, Bool:
	default:
		return fmt.Errorf("%w: cannot store into %s", ErrNotNumber, d)
	}
	neg, i, u := n.neg, n.i, n.u
	if n.isFloat {
		f := n.f
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || f >= 1<<64 || f < -(1<<63) {
			return fmt.Errorf("%w: %g is not an integer %s can hold", ErrDoesNotFit, f, d)
		}
		neg = f < 0
		if neg {
			i = int64(f)
		} else {
			u, i = uint64(f), int64(min(uint64(f), math.MaxInt64))
		}
	}
	size := d.size
	var lo int64
	var hi uint64
	switch d.kind {
	case Bool:
		lo, hi = 0, 1
	case Int:
		lo, hi = -1<<(8*size-1), 1<<(8*size-1)-1
	default:
		lo, hi = 0, math.MaxUint64>>(64-8*size)
	}
	if neg && i < lo || !neg && u > hi {
		v := strconv.FormatUint(u, 10)
		if neg {
			v = strconv.FormatInt(i, 10)
		}
		return fmt.Errorf("%w: %s overflows %s", ErrDoesNotFit, v, d)
	}
	bits := u
	if neg {
		bits = uint64(i)
	}
	for k := range out {
		out[k] = byte(bits >> (8 * k))
	}
	return nil
}
