package zarr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// Element is the set of Go types the typed API reads and writes. Float16
// arrays are read as dtype.Float16 (IEEE half-precision bits), bfloat16
// arrays as dtype.BFloat16, datetime64 and timedelta64 arrays as int64
// counts of their unit (dtype.NaT for NaT; DataType.Time and Duration
// convert). Raw-bits and fixed-width string types are read with the
// byte-level API (dtype.Strings converts the strings), or, for strings,
// ReadStrings; variable-length strings and bytes only with ReadStrings,
// WriteStrings, ReadByteStrings and WriteByteStrings.
type Element interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// kindOf returns the data type that matches T: by its underlying kind, and
// float16 for dtype.Float16 (whose underlying type is uint16).
func kindOf[T Element]() dtype.DataType {
	t := reflect.TypeFor[T]()
	if t == reflect.TypeFor[dtype.Float16]() {
		return dtype.TypeFloat16
	}
	if t == reflect.TypeFor[dtype.BFloat16]() {
		return dtype.TypeBFloat16
	}
	switch t.Kind() {
	case reflect.Bool:
		return dtype.TypeBool
	case reflect.Int8:
		return dtype.TypeInt8
	case reflect.Int16:
		return dtype.TypeInt16
	case reflect.Int32:
		return dtype.TypeInt32
	case reflect.Int64:
		return dtype.TypeInt64
	case reflect.Uint8:
		return dtype.TypeUint8
	case reflect.Uint16:
		return dtype.TypeUint16
	case reflect.Uint32:
		return dtype.TypeUint32
	case reflect.Uint64:
		return dtype.TypeUint64
	case reflect.Float32:
		return dtype.TypeFloat32
	case reflect.Float64:
		return dtype.TypeFloat64
	case reflect.Complex64:
		return dtype.TypeComplex64
	case reflect.Complex128:
		return dtype.TypeComplex128
	}
	return dtype.DataType{}
}

// hostLittle reports whether this machine stores numbers little-endian, as
// gozarr's memory representation does.
var hostLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asBytes views a slice of elements as its bytes, after checking that T
// matches the array's data type.
func asBytes[T Element](a *Array, s []T) ([]byte, error) {
	want := a.meta.DataType
	if got := kindOf[T](); got != want && !(got == dtype.TypeInt64 && (want.Kind() == dtype.Datetime || want.Kind() == dtype.Timedelta)) {
		return nil, fmt.Errorf("%w: array %q holds %s%s; Go type %T is for %s arrays", ErrTypeMismatch, a.path, want, varHint(want), *new(T), got)
	}
	if !hostLittle && want.Size() > 1 {
		return nil, fmt.Errorf("%w: typed access needs a little-endian host; use ReadBytesInto", ErrUnsupported)
	}
	if len(s) == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*want.Size()), nil
}

// Read reads the selected elements of a into a new slice and returns it
// with the selection's shape. Index arrays from nd.ParseSelection that
// NumPy broadcasts select pointwise, with NumPy's result shape (see
// nd.Broadcast). T must match the array's data type (float16
// arrays read as dtype.Float16); the narrow types convert (float8, float6
// and float4 arrays read exactly as float32 or float64, int2/int4/uint2/
// uint4 arrays as any Go integer type). No items select the whole array.
// The allocation is bounded as for ReadBytes (ErrTooLarge).
func Read[T Element](ctx context.Context, a *Array, items ...nd.Item) ([]T, []int, error) {
	if shape, n, ok, err := a.zeroDimAxes(items); err != nil {
		return nil, nil, err
	} else if ok { // a 0-d array's element under new axes
		vals, _, err := Read[T](ctx, a)
		if err != nil {
			return nil, nil, err
		}
		return vals[:n], shape, nil
	}
	if pts, shape, ok, err := a.pointwise(items); err != nil {
		return nil, nil, err
	} else if ok { // index arrays NumPy broadcasts: pointwise
		vals, err := readPointsT[T](ctx, a, pts)
		return vals, shape, err
	}
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	if a.meta.DataType.Narrow() {
		return readNarrow[T](ctx, a, sel)
	}
	if _, err := asBytes[T](a, nil); err != nil {
		return nil, nil, err
	}
	n, err := a.allocBytes(sel)
	if err != nil {
		return nil, nil, err
	}
	shape := sel.Shape()
	out := make([]T, n/a.meta.DataType.Size())
	b, err := asBytes(a, out)
	if err != nil {
		return nil, nil, err
	}
	if err := a.ReadSelection(ctx, b, sel); err != nil {
		return nil, nil, err
	}
	return out, shape, nil
}

// ReadInto reads the selected elements of a into out, which must have
// exactly the selection's number of elements.
func ReadInto[T Element](ctx context.Context, a *Array, out []T, items ...nd.Item) error {
	if a.meta.DataType.Narrow() {
		sel, err := a.Selection(items...)
		if err != nil {
			return err
		}
		if sel.NumElements() != len(out) {
			return fmt.Errorf("%w: %d elements to read into, selection of %q has %d", nd.ErrInvalidSelection, len(out), a.path, sel.NumElements())
		}
		b, _, err := readNarrowBytes[T](ctx, a, sel)
		if err != nil {
			return err
		}
		return fromNarrow(a, b, out)
	}
	b, err := asBytes(a, out)
	if err != nil {
		return err
	}
	return a.ReadBytesInto(ctx, b, items...)
}

// Write writes data (C order, the selection's shape) into the selected
// elements of a. Into a narrow type, floats round to the nearest value
// (ties to even, as ml_dtypes converts) and integers out of its range are
// an error (ErrInvalidValue).
func Write[T Element](ctx context.Context, a *Array, data []T, items ...nd.Item) error {
	if a.meta.DataType.Narrow() {
		b, err := toNarrow(a, data)
		if err != nil {
			return err
		}
		return a.WriteBytes(ctx, b, items...)
	}
	b, err := asBytes(a, data)
	if err != nil {
		return err
	}
	err = a.WriteBytes(ctx, b, items...)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		// Say a length mismatch in elements of T, not in the bytes the
		// engine counts (it is found before anything is written).
		if sel, e := a.Selection(items...); e == nil && sel.NumElements() != len(data) {
			return fmt.Errorf("%w: write %q: %d %s values, selection %v needs %d", nd.ErrInvalidSelection, a.path, len(data), a.meta.DataType, sel.Shape(), sel.NumElements())
		}
	}
	return err
}
