// Package dtype describes Zarr data types: their names, sizes, byte-swapping
// units and NumPy descriptors, and the encoding of fill values.
//
// In memory gozarr holds every element little-endian (the representation the
// `bytes` codec produces with endian "little"), whatever the array's stored
// byte order; raw-bits types (r8, r16, ...) are opaque bytes.
package dtype

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnknown reports a data type name that gozarr does not know.
var ErrUnknown = errors.New("unknown data type")

// Kind is the family of a data type.
type Kind uint8

// The kinds of data type.
const (
	Bool Kind = iota + 1
	Int
	Uint
	Float
	Complex
	Raw
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	case Complex:
		return "complex"
	case Raw:
		return "raw"
	case String:
		return "string"
	case Bytes:
		return "bytes"
	case Datetime:
		return "datetime"
	case Timedelta:
		return "timedelta"
	case BFloat:
		return "bfloat"
	case VarString:
		return "vlen-string"
	case VarBytes:
		return "vlen-bytes"
	case VarObject:
		return "object"
	case VarArray:
		return "ragged"
	case NarrowFloat:
		return "narrow-float"
	case NarrowInt:
		return "narrow-int"
	case NarrowUint:
		return "narrow-uint"
	}
	return "invalid"
}

// DataType is a Zarr v3 core data type. The zero value is invalid. DataType
// values are comparable.
type DataType struct {
	kind  Kind
	size  int      // bytes per element
	unit  TimeUnit // Datetime and Timedelta only
	scale uint32   // Datetime and Timedelta only: the unit's multiple
	// narrow is the narrow types' format, 1 + its index in narrowFormats
	// (NarrowFloat, NarrowInt and NarrowUint only).
	narrow uint8
}

// The core data types, by their Zarr v3 names.
var (
	TypeBool       = DataType{kind: Bool, size: 1}
	TypeInt8       = DataType{kind: Int, size: 1}
	TypeInt16      = DataType{kind: Int, size: 2}
	TypeInt32      = DataType{kind: Int, size: 4}
	TypeInt64      = DataType{kind: Int, size: 8}
	TypeUint8      = DataType{kind: Uint, size: 1}
	TypeUint16     = DataType{kind: Uint, size: 2}
	TypeUint32     = DataType{kind: Uint, size: 4}
	TypeUint64     = DataType{kind: Uint, size: 8}
	TypeFloat16    = DataType{kind: Float, size: 2}
	TypeFloat32    = DataType{kind: Float, size: 4}
	TypeFloat64    = DataType{kind: Float, size: 8}
	TypeComplex64  = DataType{kind: Complex, size: 8}
	TypeComplex128 = DataType{kind: Complex, size: 16}
)

// RawBits returns the raw-bits type of the given width in bits ("r8",
// "r16", ...). bits must be a positive multiple of 8.
func RawBits(bits int) (DataType, error) {
	if bits <= 0 || bits%8 != 0 || bits > 1<<20 {
		return DataType{}, fmt.Errorf("%w: r%d (raw bits must be a positive multiple of 8)", ErrUnknown, bits)
	}
	return DataType{kind: Raw, size: bits / 8}, nil
}

// Parse returns the data type with the given Zarr v3 name, such as
// "float32", "r24" or "bfloat16". Types that need a configuration
// (fixed_length_utf32, numpy.datetime64, ...) are ParseExtension's.
func Parse(name string) (DataType, error) {
	if name == "bfloat16" {
		return TypeBFloat16, nil
	}
	if d, ok := parseVarName(name); ok {
		return d, nil
	}
	if d, ok := parseNarrow(name); ok {
		return d, nil
	}
	for _, d := range []DataType{TypeBool, TypeInt8, TypeInt16, TypeInt32, TypeInt64,
		TypeUint8, TypeUint16, TypeUint32, TypeUint64, TypeFloat16, TypeFloat32, TypeFloat64,
		TypeComplex64, TypeComplex128} {
		if d.Name() == name {
			return d, nil
		}
	}
	if rest, ok := strings.CutPrefix(name, "r"); ok {
		if bits, err := strconv.Atoi(rest); err == nil && strconv.Itoa(bits) == rest {
			return RawBits(bits)
		}
	}
	if why, ok := unsupportedNames[name]; ok {
		return DataType{}, fmt.Errorf("%w: %q (%s, not supported)", ErrUnknown, name, why)
	}
	return DataType{}, fmt.Errorf("%w: %q", ErrUnknown, name)
}

// unsupportedNames are data types other writers use that gozarr does not
// read, with what they are, for precise errors.
var unsupportedNames = map[string]string{
	"struct": "a structured (record) type",
}

// Name returns the Zarr v3 name: "bool", "int16", "complex64", "r8", ...
func (d DataType) Name() string {
	switch d.kind {
	case Bool:
		return "bool"
	case Int:
		return "int" + strconv.Itoa(8*d.size)
	case Uint:
		return "uint" + strconv.Itoa(8*d.size)
	case Float:
		return "float" + strconv.Itoa(8*d.size)
	case Complex:
		return "complex" + strconv.Itoa(8*d.size)
	case Raw:
		return "r" + strconv.Itoa(8*d.size)
	}
	if n := d.extName(); n != "" {
		return n
	}
	return "invalid"
}

// String returns Name, with the parameters of the types that have some:
// "fixed_length_utf32[3]", "numpy.datetime64[10s]".
func (d DataType) String() string { return d.describe() }

// Kind returns the type's family.
func (d DataType) Kind() Kind { return d.kind }

// Size returns the size of one element in bytes.
func (d DataType) Size() int { return d.size }

// Valid reports whether d is a real data type (not the zero value).
func (d DataType) Valid() bool { return d.kind != 0 && d.size > 0 }

// SwapUnit returns the width in bytes of the units whose byte order an
// endianness change reverses: the element size for numbers, half of it for
// complex numbers (each component swaps alone), and 1 for bool and raw bits
// (nothing to swap), 4 for fixed_length_utf32 (each code point swaps) and
// 1 for null_terminated_bytes.
func (d DataType) SwapUnit() int {
	switch d.kind {
	case Complex:
		return d.size / 2
	case Bool, Raw, Bytes, VarString, VarBytes, VarObject, VarArray, NarrowFloat, NarrowInt, NarrowUint:
		return 1
	case String:
		return 4
	}
	return d.size
}

// NumpyDescr returns the NumPy array-interface descriptor of the in-memory
// (little-endian) representation: "|b1", "|i1", "<i2", "<f2", "<c8", "|V3",
// "<U3", "|S3", "<M8[ns]", "<m8[10s]"; bfloat16, which NumPy lacks, is
// "<V2" (what ml_dtypes' bfloat16 reports).
func (d DataType) NumpyDescr() string {
	switch d.kind {
	case Bool:
		return "|b1"
	case Raw:
		return "|V" + strconv.Itoa(d.size)
	case String:
		return "<U" + strconv.Itoa(d.size/4)
	case Bytes:
		return "|S" + strconv.Itoa(d.size)
	case Datetime:
		return "<M8[" + d.timeSuffix() + "]"
	case Timedelta:
		return "<m8[" + d.timeSuffix() + "]"
	case BFloat:
		return "<V2"
	case VarString, VarBytes, VarObject, VarArray:
		return "|O"
	case NarrowFloat, NarrowInt, NarrowUint:
		return "|V1" // NumPy has none of them (ml_dtypes registers its own)
	}
	code := map[Kind]string{Int: "i", Uint: "u", Float: "f", Complex: "c"}[d.kind]
	if d.size == 1 {
		return "|" + code + "1"
	}
	return "<" + code + strconv.Itoa(d.size)
}
