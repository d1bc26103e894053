package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/gozarr/gozarr/dtype"
)

// appendExtValue formats one element of the extension data types: fixed
// strings quoted (byte strings as b"..."), datetimes in ISO 8601 and NaT,
// timedeltas as a count and unit, bfloat16 as the shortest decimal that
// reads back to it, the narrow types as their values. ok is false for the other types.
func appendExtValue(dst []byte, dt dtype.DataType, b []byte) ([]byte, bool) {
	switch dt.Kind() {
	case dtype.String:
		s, err := dtype.DecodeString(dt, b)
		if err != nil {
			return append(dst, "<invalid>"...), true
		}
		return strconv.AppendQuote(dst, s), true
	case dtype.Bytes:
		dst = append(dst, 'b')
		return strconv.AppendQuoteToASCII(dst, string(bytes.TrimRight(b, "\x00"))), true
	case dtype.Datetime, dtype.Timedelta:
		return append(dst, dtype.FormatTime(dt, int64(binary.LittleEndian.Uint64(b)))...), true
	case dtype.BFloat:
		h := dtype.BFloat16(binary.LittleEndian.Uint16(b))
		v := float64(h.Float32())
		if out, ok := appendNonFinite(dst, v); ok {
			return out, true
		}
		for prec := 1; prec < 4; prec++ {
			s := strconv.FormatFloat(v, 'g', prec, 32)
			if f, err := strconv.ParseFloat(s, 64); err == nil && dtype.BFloat16FromFloat64(f) == h {
				return append(dst, s...), true
			}
		}
		return strconv.AppendFloat(dst, v, 'g', -1, 32), true
	case dtype.NarrowInt, dtype.NarrowUint:
		return strconv.AppendInt(dst, dtype.NarrowToInt64(dt, b[0]), 10), true
	case dtype.NarrowFloat:
		// Every narrow float is exactly a float32: its shortest form.
		v := dtype.NarrowToFloat64(dt, b[0])
		if out, ok := appendNonFinite(dst, v); ok {
			return out, true
		}
		return strconv.AppendFloat(dst, v, 'g', -1, 32), true
	}
	return dst, false
}

// appendNonFinite appends nan, inf or -inf as NumPy prints them; ok is
// false for finite v.
func appendNonFinite(dst []byte, v float64) ([]byte, bool) {
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...), true
	case math.IsInf(v, 1):
		return append(dst, "inf"...), true
	case math.IsInf(v, -1):
		return append(dst, "-inf"...), true
	}
	return dst, false
}
