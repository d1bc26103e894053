package dtype

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseNumpy parses a NumPy dtype string as found in Zarr v2 metadata
// ("<f4", ">i8", "|b1", "|u1", "<c16", "|V4", "<f2", ...) and returns the
// data type and whether its stored byte order is big-endian.
//
// Accepted: a byte-order character ('<' little, '>' big, '|' not
// applicable, '=' native, taken as little-endian; or none) followed by a
// kind code and a size in bytes: b1 (bool), i1/2/4/8, u1/2/4/8, f2/4/8,
// c8/16, V<n> (raw bytes, the raw-bits type r<8n>), S<n>
// (null_terminated_bytes), U<n> (fixed_length_utf32 of n code points),
// M8[unit] and m8[unit] (datetime64 and timedelta64, unit with an optional
// scale: "M8[ns]", "m8[10s]"). '|' is accepted only for types with nothing
// to swap. NumPy type names ("bool", "int16", "float64", ...) and Zarr v3
// names are accepted as little-endian. Other descriptors (structured,
// object) are refused with an error wrapping ErrUnknown.
func ParseNumpy(descr string) (DataType, bool, error) {
	bad := func(why string) (DataType, bool, error) {
		return DataType{}, false, fmt.Errorf("%w: numpy dtype %q: %s", ErrUnknown, descr, why)
	}
	if len(descr) > 32 {
		return bad("too long")
	}
	if d, err := Parse(descr); err == nil && d.kind != Raw && !d.VarLen() {
		return d, false, nil
	}
	s := descr
	order := byte(0)
	if len(s) > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=') {
		order, s = s[0], s[1:]
	}
	if s == "O" {
		return bad("object elements (variable-length strings or bytes, written with vlen-utf8, vlen-bytes or json) are not supported")
	}
	if s == "M8" || s == "m8" {
		return bad("datetime64/timedelta64 without a unit")
	}
	if len(s) < 2 {
		return bad("want a byte order, a kind code and a size")
	}
	code, sizeStr := s[0], s[1:]
	if (code == 'M' || code == 'm') && strings.HasPrefix(sizeStr, "8") {
		k := Datetime
		if code == 'm' {
			k = Timedelta
		}
		d, err := parseNumpyTime(k, sizeStr[1:])
		if err != nil {
			return bad(err.Error())
		}
		if order == '|' {
			return bad("'|' byte order on a multi-byte number")
		}
		return d, order == '>', nil
	}
	size, err := strconv.Atoi(sizeStr)
	if err != nil || strconv.Itoa(size) != sizeStr || size <= 0 {
		return bad("bad size")
	}
	var d DataType
	switch code {
	case 'b':
		if size == 1 {
			d = TypeBool
		}
	case 'i', 'u':
		if size == 1 || size == 2 || size == 4 || size == 8 {
			d = DataType{kind: Int, size: size}
			if code == 'u' {
				d.kind = Uint
			}
		}
	case 'f':
		if size == 2 || size == 4 || size == 8 {
			d = DataType{kind: Float, size: size}
		}
	case 'c':
		if size == 8 || size == 16 {
			d = DataType{kind: Complex, size: size}
		}
	case 'V':
		r, err := RawBits(8 * size)
		if err != nil {
			return bad("raw size out of range")
		}
		d = r
	case 'S':
		b, err := FixedBytes(size)
		if err != nil {
			return bad("byte string size out of range")
		}
		d = b
	case 'U':
		u, err := FixedUTF32(size)
		if err != nil {
			return bad("string size out of range")
		}
		d = u
	default:
		return bad("unsupported kind")
	}
	if !d.Valid() {
		return bad("unsupported size for kind")
	}
	if order == '|' && d.SwapUnit() > 1 {
		return bad("'|' byte order on a multi-byte number")
	}
	return d, order == '>' && d.SwapUnit() > 1, nil
}
