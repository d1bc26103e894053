package zarr

// The object API: Zarr v2 object arrays ("|O") whose object codec stores
// values other than strings: json2 and msgpack2 (JSON-like values, read
// with ReadObjects) and vlen-array (ragged arrays, read with ReadRagged).
// They go through the one engine as the string API's arrays do (handles
// into a per-operation arena, see strings.go); each element's encoding is
// decoded into a Go value at the end.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// ReadObjects reads the selected elements of an object array (v2 "|O"
// with the json2 or msgpack2 object codec) into a new slice, with the
// selection's shape. Values are nil (Python's None, and elements never
// written), bool, int64 (uint64 past it), float64 (NaN and infinities
// included), string, []byte (msgpack2's bin), []any and map[string]any.
// A ragged array (vlen-array) reads too, each element a []any of int64,
// uint64 or float64 (ReadRagged reads it typed, without the boxing).
// Other arrays are ErrTypeMismatch; strings and bytes have ReadStrings and
// ReadByteStrings.
func ReadObjects(ctx context.Context, a *Array, items ...nd.Item) ([]any, []int, error) {
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	out, err := ReadObjectsSelection(ctx, a, sel)
	if err != nil {
		return nil, nil, err
	}
	return out, sel.Shape(), nil
}

// ReadObjectsSelection is ReadObjects with an already normalised
// selection.
func ReadObjectsSelection(ctx context.Context, a *Array, sel nd.Selection) ([]any, error) {
	f, err := a.objectElements("ReadObjects")
	if err != nil {
		return nil, err
	}
	raw, err := a.readElementBytes(ctx, sel, a.meta.DataType)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(raw))
	for i, b := range raw {
		if out[i], err = f.DecodeElement(b); err != nil {
			return nil, fmt.Errorf("read %q: element %d of the selection: %w", a.path, i, err)
		}
		raw[i] = nil
	}
	return out, nil
}

// WriteObjects writes data (C order, the selection's shape) into the
// selected elements of an object array, each value encoded by the
// array's object codec (json2: JSON as Python writes it, NaN and
// infinities included; msgpack2: MessagePack). Values take the types
// ReadObjects returns, and any Go integer or float; others are
// ErrInvalidValue.
func WriteObjects(ctx context.Context, a *Array, data []any, items ...nd.Item) error {
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	f, err := a.objectElements("WriteObjects")
	if err != nil {
		return err
	}
	enc := make([][]byte, len(data))
	for i, v := range data {
		if enc[i], err = f.AppendElement(nil, v); err != nil {
			return fmt.Errorf("write %q: %w: element %d: %v", a.path, ErrInvalidValue, i, err)
		}
	}
	return writeHandles(ctx, a, sel, len(enc), func(arena *codecs.VLenArena, h []byte, lo, hi int) {
		arena.PutBytes(h, enc[lo:hi])
	})
}

// objectElements returns the element format of an object or ragged
// array.
func (a *Array) objectElements(call string) (numcodecs.ObjectElements, error) {
	if a.meta.DataType == dtype.TypeVarArray {
		d, big, ok := numcodecs.RaggedElement(a.grid.Chain.ArrayToBytes())
		if !ok {
			return nil, fmt.Errorf("%w: %s on array %q without a vlen-array codec", ErrUnsupported, call, a.path)
		}
		return raggedElements{d: d, big: big}, nil
	}
	if err := checkVarType(a, dtype.TypeVarObject, call); err != nil {
		return nil, err
	}
	f, ok := numcodecs.ElementsOf(a.grid.Chain.ArrayToBytes())
	if !ok {
		return nil, fmt.Errorf("%w: %s on array %q, whose object codec %s is not json2 or msgpack2", ErrUnsupported, call, a.path, a.grid.Chain.ArrayToBytes().Name())
	}
	return f, nil
}

// readElementBytes reads the encoded bytes of every selected element of a
// variable-length array of type want.
func (a *Array) readElementBytes(ctx context.Context, sel nd.Selection, want dtype.DataType) ([][]byte, error) {
	if err := checkVarRead(a, sel, want, codecs.BytesHeaderSize); err != nil {
		return nil, err
	}
	raw := make([][]byte, sel.NumElements())
	err := readVar(ctx, a, sel, codecs.HeaderBytes(raw), codecs.BytesHeaderSize,
		func(arena *codecs.VLenArena, handles []byte, lo, hi int) error {
			if handles == nil {
				return arena.ResolveBytesInPlace(raw[lo:hi])
			}
			return arena.ResolveBytes(handles, raw[lo:hi])
		})
	if err != nil {
		clear(raw)
		return nil, err
	}
	return raw, nil
}

// ReadRagged reads the selected elements of a ragged array (v2 "|O" with
// the vlen-array object codec) into a new slice of slices, with the
// selection's shape. T must match the codec's element type (int32 for
// "<i4", float64 for "<f8", ...; ErrTypeMismatch otherwise); big-endian
// elements are swapped. Elements never written are empty.
func ReadRagged[T Element](ctx context.Context, a *Array, items ...nd.Item) ([][]T, []int, error) {
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	size, big, err := raggedType[T](a, "ReadRagged")
	if err != nil {
		return nil, nil, err
	}
	raw, err := a.readElementBytes(ctx, sel, dtype.TypeVarArray)
	if err != nil {
		return nil, nil, err
	}
	out := make([][]T, len(raw))
	for i, b := range raw {
		v := make([]T, len(b)/size)
		dst := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*size)
		copy(dst, b)
		if big != !hostLittle {
			for j := 0; j+size <= len(dst); j += size {
				slices.Reverse(dst[j : j+size])
			}
		}
		out[i] = v
		raw[i] = nil
	}
	return out, sel.Shape(), nil
}

// WriteRagged writes data (C order, the selection's shape) into the
// selected elements of a ragged array, each a slice of the codec's element
// type.
func WriteRagged[T Element](ctx context.Context, a *Array, data [][]T, items ...nd.Item) error {
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	size, big, err := raggedType[T](a, "WriteRagged")
	if err != nil {
		return err
	}
	enc := make([][]byte, len(data))
	for i, v := range data {
		b := slices.Clone(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*size))
		if big != !hostLittle {
			for j := 0; j+size <= len(b); j += size {
				slices.Reverse(b[j : j+size])
			}
		}
		enc[i] = b
	}
	return writeHandles(ctx, a, sel, len(enc), func(arena *codecs.VLenArena, h []byte, lo, hi int) {
		arena.PutBytes(h, enc[lo:hi])
	})
}

// raggedType checks that T is the element type of a's vlen-array codec and
// returns its size and whether elements are stored big-endian.
func raggedType[T Element](a *Array, call string) (int, bool, error) {
	if err := checkVarType(a, dtype.TypeVarArray, call); err != nil {
		return 0, false, err
	}
	d, big, ok := numcodecs.RaggedElement(a.grid.Chain.ArrayToBytes())
	if !ok {
		return 0, false, fmt.Errorf("%w: %s on array %q without a vlen-array codec", ErrUnsupported, call, a.path)
	}
	if got := kindOf[T](); got != d {
		return 0, false, fmt.Errorf("%w: %s with Go type %s on array %q of %s elements", ErrTypeMismatch, call, reflect.TypeFor[T](), a.path, d)
	}
	return d.Size(), big, nil
}

// raggedElements is the element format of a ragged array for the object
// API: an element is a []any of its numbers.
type raggedElements struct {
	d   dtype.DataType
	big bool
}

func (r raggedElements) DecodeElement(b []byte) (any, error) {
	n := r.d.Size()
	if len(b)%n != 0 {
		return nil, fmt.Errorf("%w: vlen-array element of %d bytes, not whole %s values", codecs.ErrCorrupt, len(b), r.d)
	}
	out := make([]any, len(b)/n)
	e := make([]byte, n)
	for i := range out {
		copy(e, b[i*n:])
		if r.big {
			slices.Reverse(e)
		}
		out[i] = dtype.Scalar(r.d, e)
	}
	return out, nil
}

func (r raggedElements) AppendElement(dst []byte, v any) ([]byte, error) {
	vals, ok := v.([]any)
	if !ok {
		return dst, fmt.Errorf("a ragged element is a []any of numbers, not %T", v)
	}
	n := r.d.Size()
	for i, x := range vals {
		start := len(dst)
		dst = append(dst, make([]byte, n)...)
		if err := dtype.PutScalar(r.d, x, dst[start:]); err != nil {
			return dst[:start], fmt.Errorf("value %d: %w", i, err)
		}
		if r.big {
			slices.Reverse(dst[start:])
		}
	}
	return dst, nil
}
