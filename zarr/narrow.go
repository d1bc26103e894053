package zarr

// Typed access to the narrow data types (float8, float6, float4, int2,
// int4, uint2, uint4): one byte per element in memory, converted to and
// from the Go numbers the caller holds.

import (
	"context"
	"fmt"
	"math"
	"reflect"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// narrowOK reports whether Go type T converts to and from the narrow type
// d: float32 and float64 for the floats, the integer types for the
// integers.
func narrowOK[T Element](d dtype.DataType) error {
	var ok bool
	switch k := reflect.TypeFor[T]().Kind(); d.Kind() {
	case dtype.NarrowFloat:
		ok = (k == reflect.Float32 || k == reflect.Float64) && reflect.TypeFor[T]() != reflect.TypeFor[dtype.Float16]()
	case dtype.NarrowInt, dtype.NarrowUint:
		ok = k >= reflect.Int8 && k <= reflect.Int64 || k >= reflect.Uint8 && k <= reflect.Uint64
	}
	if !ok {
		return fmt.Errorf("%w: Go type %T does not hold %s (read it as float32 or float64, or an integer type for int2..uint4)",
			ErrTypeMismatch, *new(T), d)
	}
	return nil
}

func readNarrowBytes[T Element](ctx context.Context, a *Array, sel nd.Selection) ([]byte, []int, error) {
	if err := narrowOK[T](a.meta.DataType); err != nil {
		return nil, nil, err
	}
	n, err := a.allocBytes(sel)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, n)
	if err := a.ReadSelection(ctx, b, sel); err != nil {
		return nil, nil, err
	}
	return b, sel.Shape(), nil
}

func readNarrow[T Element](ctx context.Context, a *Array, sel nd.Selection) ([]T, []int, error) {
	b, shape, err := readNarrowBytes[T](ctx, a, sel)
	if err != nil {
		return nil, nil, err
	}
	out := make([]T, len(b))
	if err := fromNarrow(a, b, out); err != nil {
		return nil, nil, err
	}
	return out, shape, nil
}

// fromNarrow converts narrow elements to T, which narrowOK accepted.
func fromNarrow[T Element](a *Array, b []byte, out []T) error {
	d := a.meta.DataType
	if err := narrowOK[T](d); err != nil {
		return err
	}
	o := reflect.ValueOf(out)
	for i, e := range b {
		if d.Kind() == dtype.NarrowFloat {
			o.Index(i).SetFloat(dtype.NarrowToFloat64(d, e))
			continue
		}
		v := dtype.NarrowToInt64(d, e)
		if x := o.Index(i); x.CanUint() {
			if v < 0 || x.OverflowUint(uint64(v)) {
				return fmt.Errorf("%w: %s value %d of %q does not fit %T", ErrInvalidValue, d, v, a.path, *new(T))
			}
			x.SetUint(uint64(v))
		} else {
			x.SetInt(v)
		}
	}
	return nil
}

// toNarrow converts data to narrow elements.
func toNarrow[T Element](a *Array, data []T) ([]byte, error) {
	d := a.meta.DataType
	if err := narrowOK[T](d); err != nil {
		return nil, err
	}
	out := make([]byte, len(data))
	v := reflect.ValueOf(data)
	for i := range data {
		x := v.Index(i)
		if d.Kind() == dtype.NarrowFloat {
			out[i] = dtype.NarrowFromFloat64(d, x.Float())
			continue
		}
		var n int64
		if x.CanUint() {
			u := x.Uint()
			if u > math.MaxInt64 {
				return nil, fmt.Errorf("%w: %d is out of %s's range", ErrInvalidValue, u, d)
			}
			n = int64(u)
		} else {
			n = x.Int()
		}
		e, err := dtype.NarrowFromInt64(d, n)
		if err != nil {
			return nil, fmt.Errorf("%w: element %d: %v", ErrInvalidValue, i, err)
		}
		out[i] = e
	}
	return out, nil
}
