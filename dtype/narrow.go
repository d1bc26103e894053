package dtype

// The narrow data types of zarr-extensions: floating-point formats of 8, 6
// and 4 bits (float8_e4m3fn, float8_e5m2, float4_e2m1fn, ...) and integers
// of 2 and 4 bits (int2, int4, uint2, uint4), as zarrs and tensorstore
// write them and ml_dtypes defines their arithmetic.
//
// Specs: https://github.com/zarr-developers/zarr-extensions/tree/main/data-types
//
// In memory (and with the bytes codec) every element is one byte, its
// value in the low bits; the unused high bits are ignored when reading and
// written as zero (float types) or as the sign extension (signed integers,
// which makes an int4 byte the int8 of the same value). The packbits codec
// stores them in their own width.

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gozarr/gozarr/internal/pyjson"
	"math"
	"strconv"
)

// The kinds of the narrow types.
const (
	// NarrowFloat is a floating-point format of at most 8 bits
	// (float8_*, float6_*, float4_*). Each value converts exactly to
	// float32 (NarrowToFloat64, NarrowFromFloat64).
	NarrowFloat Kind = VarBytes + 1 + iota
	// NarrowInt is a signed integer of 2 or 4 bits (int2, int4).
	NarrowInt
	// NarrowUint is an unsigned integer of 2 or 4 bits (uint2, uint4).
	NarrowUint
)

// The special values a narrow float format has.
const (
	flavorIEEE   = iota // ±inf and NaNs where the exponent is all ones
	flavorFN            // no inf; NaN where exponent and mantissa are all ones
	flavorFNUZ          // no inf, no -0; the one NaN is the sign bit alone
	flavorFNU           // unsigned, no zero; NaN is all ones (float8_e8m0fnu)
	flavorFinite        // no inf, no NaN (float6_*, float4_*)
)

// narrowFormat describes one narrow type.
type narrowFormat struct {
	name      string
	bits      uint8 // width of the value
	exp, man  uint8 // exponent and mantissa bits (floats)
	bias      int
	flavor    uint8
	unsigned  bool // floats without a sign bit; unsigned integers
	isInteger bool
}

// narrowFormats are the narrow types, indexed by DataType.narrow-1.
var narrowFormats = [...]narrowFormat{
	{name: "float8_e3m4", bits: 8, exp: 3, man: 4, bias: 3, flavor: flavorIEEE},
	{name: "float8_e4m3", bits: 8, exp: 4, man: 3, bias: 7, flavor: flavorIEEE},
	{name: "float8_e4m3fn", bits: 8, exp: 4, man: 3, bias: 7, flavor: flavorFN},
	{name: "float8_e4m3b11fnuz", bits: 8, exp: 4, man: 3, bias: 11, flavor: flavorFNUZ},
	{name: "float8_e4m3fnuz", bits: 8, exp: 4, man: 3, bias: 8, flavor: flavorFNUZ},
	{name: "float8_e5m2", bits: 8, exp: 5, man: 2, bias: 15, flavor: flavorIEEE},
	{name: "float8_e5m2fnuz", bits: 8, exp: 5, man: 2, bias: 16, flavor: flavorFNUZ},
	{name: "float8_e8m0fnu", bits: 8, exp: 8, man: 0, bias: 127, flavor: flavorFNU, unsigned: true},
	{name: "float6_e2m3fn", bits: 6, exp: 2, man: 3, bias: 1, flavor: flavorFinite},
	{name: "float6_e3m2fn", bits: 6, exp: 3, man: 2, bias: 3, flavor: flavorFinite},
	{name: "float4_e2m1fn", bits: 4, exp: 2, man: 1, bias: 1, flavor: flavorFinite},
	{name: "int2", bits: 2, isInteger: true},
	{name: "int4", bits: 4, isInteger: true},
	{name: "uint2", bits: 2, isInteger: true, unsigned: true},
	{name: "uint4", bits: 4, isInteger: true, unsigned: true},
}

// parseNarrow returns the narrow type of the given v3 name.
func parseNarrow(name string) (DataType, bool) {
	for i := range narrowFormats {
		f := &narrowFormats[i]
		if f.name != name {
			continue
		}
		k := NarrowFloat
		switch {
		case f.isInteger && f.unsigned:
			k = NarrowUint
		case f.isInteger:
			k = NarrowInt
		}
		return DataType{kind: k, size: 1, narrow: uint8(i + 1)}, true
	}
	return DataType{}, false
}

// NarrowTypes returns every narrow data type, in a fixed order.
func NarrowTypes() []DataType {
	out := make([]DataType, 0, len(narrowFormats))
	for i := range narrowFormats {
		d, _ := parseNarrow(narrowFormats[i].name)
		out = append(out, d)
	}
	return out
}

func (d DataType) narrowFormat() *narrowFormat {
	if d.narrow == 0 || int(d.narrow) > len(narrowFormats) {
		return nil
	}
	return &narrowFormats[d.narrow-1]
}

// Narrow reports whether d is one of the narrow types (float8, float6,
// float4, int2, int4, uint2, uint4).
func (d DataType) Narrow() bool { return d.narrowFormat() != nil }

// Bits returns the width of an element's value in bits: 8·Size for the
// byte-sized types, 2 to 8 for the narrow ones, 1 for bool.
func (d DataType) Bits() int {
	if f := d.narrowFormat(); f != nil {
		return int(f.bits)
	}
	if d.kind == Bool {
		return 1
	}
	return 8 * d.size
}

// NarrowToFloat64 returns the value of the element b of a narrow float type
// (NaN for its NaN patterns); bits above the type's width are ignored. It
// returns NaN for types that are not narrow floats.
func NarrowToFloat64(d DataType, b byte) float64 {
	f := d.narrowFormat()
	if f == nil || f.isInteger {
		return math.NaN()
	}
	return f.toFloat64(b)
}

func (f *narrowFormat) toFloat64(b byte) float64 {
	b &= byte(1<<f.bits - 1)
	signBit := byte(0)
	if !f.unsigned {
		signBit = 1 << (f.bits - 1)
	}
	manMask := byte(1<<f.man - 1)
	expMask := byte(1<<f.exp - 1)
	e := (b >> f.man) & expMask
	m := b & manMask
	neg := b&signBit != 0
	switch f.flavor {
	case flavorIEEE:
		if e == expMask {
			if m != 0 {
				return math.NaN()
			}
			if neg {
				return math.Inf(-1)
			}
			return math.Inf(1)
		}
	case flavorFN:
		if e == expMask && m == manMask {
			return math.NaN()
		}
	case flavorFNUZ:
		if b == signBit {
			return math.NaN()
		}
	case flavorFNU:
		if b == 0xff {
			return math.NaN()
		}
		return math.Ldexp(1, int(e)-f.bias)
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-f.bias-int(f.man))
	} else {
		v = math.Ldexp(float64(m)+float64(uint(1)<<f.man), int(e)-f.bias-int(f.man))
	}
	if neg {
		v = -v
	}
	return v
}

// NarrowFromFloat64 rounds v to the nearest value of the narrow float type
// d, ties to even, as ml_dtypes converts: past the largest finite value a
// format with infinities gives ±inf, one with NaN gives NaN, a finite-only
// format (float6, float4) saturates; NaN becomes the format's NaN (-0 in
// the finite-only formats, as ml_dtypes does). The result's unused high
// bits are zero. For types that are not narrow floats it returns 0.
func NarrowFromFloat64(d DataType, v float64) byte {
	f := d.narrowFormat()
	if f == nil || f.isInteger {
		return 0
	}
	return f.fromFloat64(v)
}

func (f *narrowFormat) fromFloat64(v float64) byte {
	signBit := byte(0)
	if !f.unsigned {
		signBit = 1 << (f.bits - 1)
	}
	valueMask := byte(1<<f.bits - 1)
	expMask := 1<<f.exp - 1
	// The format's NaN and its largest finite code.
	var nan byte
	var maxCode int
	switch f.flavor {
	case flavorIEEE:
		nan = byte(expMask<<f.man | 1<<f.man>>1)
		maxCode = expMask<<f.man - 1
	case flavorFN:
		nan = valueMask &^ signBit
		maxCode = int(nan) - 1
	case flavorFNUZ:
		nan = signBit
		maxCode = int(signBit) - 1
	case flavorFNU:
		nan = 0xff
		maxCode = 0xfe
	case flavorFinite:
		nan = signBit // ml_dtypes turns NaN into -0
		maxCode = int(signBit) - 1
	}
	neg := math.Signbit(v)
	sign := byte(0)
	if neg {
		sign = signBit
	}
	if math.IsNaN(v) {
		if f.flavor == flavorFN {
			return nan | sign
		}
		return nan
	}
	if f.flavor == flavorFNU && (neg || v == 0) {
		return nan
	}
	overflow := func() byte {
		switch f.flavor {
		case flavorIEEE:
			return sign | byte(expMask<<f.man)
		case flavorFN:
			return sign | nan
		case flavorFNUZ, flavorFNU:
			return nan
		}
		return sign | byte(maxCode)
	}
	a := math.Abs(v)
	if math.IsInf(a, 1) {
		return overflow()
	}
	if a == 0 {
		if f.flavor == flavorFNUZ {
			return 0
		}
		return sign
	}
	_, exp := math.Frexp(a) // a = frac · 2^exp, frac in [0.5, 1)
	e := exp - 1            // a = (2·frac) · 2^e
	var code int
	switch minNormal := 1 - f.bias; {
	case f.flavor == flavorFNU: // 2^(code-bias), no zero, no subnormals
		m := int(roundEven(math.Ldexp(a, -e))) // 1 or 2
		code = max(e+f.bias+m-1, 0)
	case e < minNormal: // subnormal, or rounds up to the smallest normal
		code = int(roundEven(math.Ldexp(a, int(f.man)-minNormal)))
	case e+f.bias > expMask+1: // far out of range (keeps the shifts small)
		return overflow()
	default:
		m := int(roundEven(math.Ldexp(a, int(f.man)-e))) // in [2^man, 2^(man+1)]
		code = (e+f.bias)<<f.man + m - 1<<f.man
	}
	if code > maxCode {
		return overflow()
	}
	if code == 0 && f.flavor == flavorFNUZ {
		return 0
	}
	return sign | byte(code)
}

// roundEven rounds x to the nearest integer, ties to even.
func roundEven(x float64) float64 { return math.RoundToEven(x) }

// NarrowToInt64 returns the value of the element b of a narrow integer type
// (int2, int4 sign-extended; uint2, uint4 zero-extended); bits above the
// type's width are ignored. It returns 0 for other types.
func NarrowToInt64(d DataType, b byte) int64 {
	f := d.narrowFormat()
	if f == nil || !f.isInteger {
		return 0
	}
	shift := 8 - f.bits
	if f.unsigned {
		return int64(b << shift >> shift)
	}
	return int64(int8(b<<shift) >> shift)
}

// NarrowRange returns the smallest and largest value of a narrow integer
// type: -8..7 for int4, 0..15 for uint4, -2..1 for int2, 0..3 for uint2.
func NarrowRange(d DataType) (lo, hi int64) {
	f := d.narrowFormat()
	if f == nil || !f.isInteger {
		return 0, 0
	}
	if f.unsigned {
		return 0, 1<<f.bits - 1
	}
	return -(1 << (f.bits - 1)), 1<<(f.bits-1) - 1
}

// NarrowFromInt64 returns the element of a narrow integer type holding v
// (sign-extended into the whole byte for int2 and int4), or an error when v
// is out of the type's range.
func NarrowFromInt64(d DataType, v int64) (byte, error) {
	lo, hi := NarrowRange(d)
	if !d.Narrow() || d.kind == NarrowFloat {
		return 0, fmt.Errorf("%w: %s is not a narrow integer type", ErrUnknown, d)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("value %d out of %s's range %d..%d", v, d, lo, hi)
	}
	return byte(v), nil
}

// parseNarrowFill decodes the fill value of a narrow type: an integer in
// range for int2..uint4; for the floats a number (rounded to the format),
// "NaN", "Infinity" or "-Infinity" where the format has them, or the bit
// pattern as "0x" and two hex digits.
func parseNarrowFill(d DataType, v any, out []byte) error {
	f := d.narrowFormat()
	if f.isInteger {
		n, ok := v.(json.Number)
		if !ok {
			return errors.New("want an integer")
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer, not %s", n)
		}
		b, err := NarrowFromInt64(d, i)
		if err != nil {
			return err
		}
		out[0] = b
		return nil
	}
	switch x := v.(type) {
	case json.Number:
		fv, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !isRangeErr(err) {
			return err
		}
		out[0] = f.fromFloat64(fv)
		return nil
	case string:
		hasNaN := f.flavor != flavorFinite
		hasInf := f.flavor == flavorIEEE
		switch {
		case x == "NaN" && hasNaN:
			out[0] = f.fromFloat64(math.NaN())
		case x == "Infinity" && hasInf:
			out[0] = f.fromFloat64(math.Inf(1))
		case x == "-Infinity" && hasInf:
			out[0] = f.fromFloat64(math.Inf(-1))
		case len(x) == 4 && (x[:2] == "0x" || x[:2] == "0X"):
			u, err := strconv.ParseUint(x[2:], 16, 8)
			if err != nil || u >= 1<<f.bits {
				return fmt.Errorf("bad hex fill %q for a %d-bit type", x, f.bits)
			}
			out[0] = byte(u)
		default:
			return fmt.Errorf("%q is not a value of %s", x, d)
		}
		return nil
	}
	return errors.New("want a number or a float constant")
}

// formatNarrowFill is the JSON fill value of the narrow element b.
func formatNarrowFill(d DataType, b byte) (json.RawMessage, error) {
	f := d.narrowFormat()
	if f.isInteger {
		return json.RawMessage(strconv.FormatInt(NarrowToInt64(d, b), 10)), nil
	}
	v := f.toFloat64(b)
	switch {
	case math.IsNaN(v):
		if f.fromFloat64(v) == b {
			return json.RawMessage(`"NaN"`), nil
		}
		return json.RawMessage(fmt.Sprintf(`"0x%02x"`, b)), nil
	case math.IsInf(v, 1):
		return json.RawMessage(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return json.RawMessage(`"-Infinity"`), nil
	}
	return json.RawMessage(pyjson.FormatFloat(v)), nil
}
