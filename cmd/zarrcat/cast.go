package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// errCast reports a value the destination data type cannot hold.
var errCast = errors.New("value does not fit the destination data type")

// scalar is one element read for a cast: an integer (exact) or a float.
type scalar struct {
	isFloat bool
	neg     bool    // integer below zero (then i holds it)
	i       int64   // signed integers, and booleans as 0/1
	u       uint64  // non-negative integers
	f       float64 // floats
}

// loadScalar reads one element of a real data type (little-endian).
func loadScalar(dt dtype.DataType, b []byte) scalar {
	le := binary.LittleEndian
	switch dt.Kind() {
	case dtype.Float:
		return scalar{isFloat: true, f: floatOf(b)}
	case dtype.Int:
		var v int64
		switch len(b) {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(le.Uint16(b)))
		case 4:
			v = int64(int32(le.Uint32(b)))
		default:
			v = int64(le.Uint64(b))
		}
		return scalar{neg: v < 0, i: v, u: uint64(max(v, 0))}
	}
	var v uint64
	switch len(b) {
	case 1:
		v = uint64(b[0])
	case 2:
		v = uint64(le.Uint16(b))
	case 4:
		v = uint64(le.Uint32(b))
	default:
		v = le.Uint64(b)
	}
	return scalar{u: v, i: int64(min(v, math.MaxInt64))}
}

// storeScalar writes s as one element of dt into b, or fails when dt
// cannot hold it: an integer out of range, a float that is not a whole
// number (or NaN) into an integer type, a finite float beyond the range
// of a narrower float, anything but 0 or 1 into bool.
func storeScalar(dt dtype.DataType, b []byte, s scalar) error {
	le := binary.LittleEndian
	size := dt.Size()
	switch dt.Kind() {
	case dtype.Float:
		f := s.f
		if !s.isFloat {
			f = float64(s.u)
			if s.neg {
				f = float64(s.i)
			}
		}
		switch size {
		case 2:
			h := dtype.Float16FromFloat64(f)
			if g := float64(h.Float32()); math.IsInf(g, 0) && !math.IsInf(f, 0) {
				return fmt.Errorf("%w: %g overflows %s", errCast, f, dt)
			}
			le.PutUint16(b, uint16(h))
		case 4:
			g := float32(f)
			if math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
				return fmt.Errorf("%w: %g overflows %s", errCast, f, dt)
			}
			le.PutUint32(b, math.Float32bits(g))
		default:
			le.PutUint64(b, math.Float64bits(f))
		}
		return nil
	case dtype.Int, dtype.Uint, dtype.Bool:
	default:
		return fmt.Errorf("%w: cannot cast to %s", errUsage, dt)
	}
	neg, i, u := s.neg, s.i, s.u
	if s.isFloat {
		if s.f != math.Trunc(s.f) || math.IsInf(s.f, 0) || math.IsNaN(s.f) || s.f >= 1<<64 || s.f < -(1<<63) {
			return fmt.Errorf("%w: %g is not an integer %s can hold", errCast, s.f, dt)
		}
		neg = s.f < 0
		if neg {
			i = int64(s.f)
		} else {
			u, i = uint64(s.f), int64(min(uint64(s.f), math.MaxInt64))
		}
	}
	var lo int64
	var hi uint64
	switch dt.Kind() {
	case dtype.Bool:
		lo, hi = 0, 1
	case dtype.Int:
		lo, hi = -1<<(8*size-1), 1<<(8*size-1)-1
	default:
		lo, hi = 0, math.MaxUint64>>(64-8*size)
	}
	if neg && i < lo || !neg && u > hi {
		v := fmt.Sprint(u)
		if neg {
			v = fmt.Sprint(i)
		}
		return fmt.Errorf("%w: %s overflows %s", errCast, v, dt)
	}
	bits := u
	if neg {
		bits = uint64(i)
	}
	switch size {
	case 1:
		b[0] = byte(bits)
	case 2:
		le.PutUint16(b, uint16(bits))
	case 4:
		le.PutUint32(b, uint32(bits))
	default:
		le.PutUint64(b, bits)
	}
	return nil
}

// castValues converts elements from one real data type to another; the
// same type returns data itself.
func castValues(from, to dtype.DataType, data []byte) ([]byte, error) {
	if from == to {
		return data, nil
	}
	for _, dt := range []dtype.DataType{from, to} {
		if k := dt.Kind(); k != dtype.Bool && k != dtype.Int && k != dtype.Uint && k != dtype.Float {
			return nil, fmt.Errorf("%w: --dtype casts between booleans, integers and real floats, not %s", errUsage, dt)
		}
	}
	fs, ts := from.Size(), to.Size()
	out := make([]byte, len(data)/fs*ts)
	for i, j := 0, 0; i < len(data); i, j = i+fs, j+ts {
		if err := storeScalar(to, out[j:j+ts], loadScalar(from, data[i:i+fs])); err != nil {
			return nil, &castError{i: i / fs, err: err}
		}
	}
	return out, nil
}

// castError is a value castValues cannot convert: element i of the data.
type castError struct {
	i   int
	err error
}

func (e *castError) Error() string { return e.err.Error() }
func (e *castError) Unwrap() error { return e.err }

// castCoords shows the array coordinates of the element a castError
// names inside the box sel (C order): " at [3, 5]", or "".
func castCoords(err error, sel nd.Selection) string {
	var ce *castError
	if !errors.As(err, &ce) {
		return ""
	}
	out := make([]int, len(sel))
	i := ce.i
	for d := len(sel) - 1; d >= 0; d-- {
		c := max(sel[d].Count, 1)
		out[d] = sel[d].Start + i%c*sel[d].Step
		i /= c
	}
	parts := make([]string, len(out))
	for d, v := range out {
		parts[d] = strconv.Itoa(v)
	}
	return " at [" + strings.Join(parts, ", ") + "]"
}
