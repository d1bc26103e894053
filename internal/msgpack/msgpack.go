// Package msgpack reads MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md)
// into JSON-like Go values, for the formats gozarr reads that use it
// (Icechunk spec 1 metadata, numcodecs' msgpack2 object codec), and
// writes the same values back. Input is untrusted: nesting, the number of
// values and every length are bounded by the input's size and the Limits.
package msgpack

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"
)

// ErrCorrupt reports input that is not one well-formed MessagePack value
// within the limits.
var ErrCorrupt = errors.New("malformed msgpack")

// Limits bound what one Decode builds.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and maps (default 64).
	MaxDepth int
	// MaxValues is the most values in all (default 1<<20).
	MaxValues int
}

func (l Limits) orDefault() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = 64
	}
	if l.MaxValues <= 0 {
		l.MaxValues = 1 << 20
	}
	return l
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Decode decodes the one MessagePack value that fills buf: nil, bool,
// int64 (uint64 past MaxInt64), float64 (float32 widened), string
// (UTF-8, else an error), []byte (bin, copied), []any, map[string]any
// (other keys as their fmt.Sprint form). Extension types are refused.
func Decode(buf []byte, lim Limits) (any, error) {
	r := &reader{b: buf, lim: lim.orDefault()}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.p != len(buf) {
		return nil, corruptf("%d trailing bytes", len(buf)-r.p)
	}
	return v, nil
}

// SplitArray returns the encoded bytes of each element of the array that
// fills buf (sub-slices of buf), checking every element is well formed.
func SplitArray(buf []byte, lim Limits) ([][]byte, error) {
	r := &reader{b: buf, lim: lim.orDefault()}
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(buf)-r.p) {
		return nil, corruptf("array of %d values in %d bytes", n, len(buf)-r.p)
	}
	out := make([][]byte, n)
	for i := range out {
		start := r.p
		if _, err := r.value(1); err != nil {
			return nil, err
		}
		out[i] = buf[start:r.p:r.p]
	}
	if r.p != len(buf) {
		return nil, corruptf("%d trailing bytes", len(buf)-r.p)
	}
	return out, nil
}

type reader struct {
	b      []byte
	p      int
	values int
	lim    Limits
}

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.p) {
		return nil, corruptf("%d bytes wanted at %d of %d", n, r.p, len(r.b))
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

func (r *reader) uintN(n int) (uint64, error) {
	s, err := r.take(uint64(n))
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range s {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func (r *reader) arrayLen() (uint64, error) {
	t, err := r.take(1)
	if err != nil {
		return 0, err
	}
	switch c := t[0]; {
	case c&0xf0 == 0x90:
		return uint64(c & 0x0f), nil
	case c == 0xdc, c == 0xdd:
		return r.uintN(2 << (c - 0xdc))
	}
	return 0, corruptf("type byte %#x where an array was expected", t[0])
}

func (r *reader) value(depth int) (any, error) {
	if depth > r.lim.MaxDepth {
		return nil, corruptf("nested deeper than %d", r.lim.MaxDepth)
	}
	if r.values++; r.values > r.lim.MaxValues {
		return nil, corruptf("more than %d values", r.lim.MaxValues)
	}
	t, err := r.take(1)
	if err != nil {
		return nil, err
	}
	c := t[0]
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c&0xf0 == 0x80:
		return r.mapN(uint64(c&0x0f), depth)
	case c&0xf0 == 0x90:
		return r.arrayN(uint64(c&0x0f), depth)
	case c&0xe0 == 0xa0:
		return r.str(uint64(c & 0x1f))
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6:
		n, err := r.uintN(1 << (c - 0xc4))
		if err != nil {
			return nil, err
		}
		b, err := r.take(n)
		return append([]byte{}, b...), err
	case 0xca:
		u, err := r.uintN(4)
		return float64(math.Float32frombits(uint32(u))), err
	case 0xcb:
		u, err := r.uintN(8)
		return math.Float64frombits(u), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, err := r.uintN(1 << (c - 0xcc))
		if u <= math.MaxInt64 {
			return int64(u), err
		}
		return u, err
	case 0xd0, 0xd1, 0xd2, 0xd3:
		w := 1 << (c - 0xd0)
		u, err := r.uintN(w)
		shift := 64 - 8*w
		return int64(u<<shift) >> shift, err
	case 0xd9, 0xda, 0xdb:
		n, err := r.uintN(1 << (c - 0xd9))
		if err != nil {
			return nil, err
		}
		return r.str(n)
	case 0xdc, 0xdd:
		n, err := r.uintN(2 << (c - 0xdc))
		if err != nil {
			return nil, err
		}
		return r.arrayN(n, depth)
	case 0xde, 0xdf:
		n, err := r.uintN(2 << (c - 0xde))
		if err != nil {
			return nil, err
		}
		return r.mapN(n, depth)
	}
	return nil, corruptf("type byte %#x", c)
}

func (r *reader) str(n uint64) (any, error) {
	b, err := r.take(n)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, corruptf("string is not UTF-8")
	}
	return string(b), nil
}

func (r *reader) arrayN(n uint64, depth int) (any, error) {
	if n > uint64(len(r.b)-r.p) { // every value takes at least a byte
		return nil, corruptf("array of %d values in %d bytes", n, len(r.b)-r.p)
	}
	out := make([]any, n)
	for i := range out {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (r *reader) mapN(n uint64, depth int) (any, error) {
	if n > uint64(len(r.b)-r.p)/2 {
		return nil, corruptf("map of %d entries in %d bytes", n, len(r.b)-r.p)
	}
	out := make(map[string]any, n)
	for range n {
		k, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			ks = fmt.Sprint(k)
		}
		if out[ks], err = r.value(depth + 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Append appends the MessagePack encoding of v to dst: nil, bool, the Go
// integer and float types (float32 as float 32, floats as float 64),
// string, []byte (bin), []any and map[string]any (keys sorted, so equal
// values encode equally). Other types are an error.
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, 0xc0), nil
	case bool:
		if x {
			return append(dst, 0xc3), nil
		}
		return append(dst, 0xc2), nil
	case int:
		return appendInt(dst, int64(x)), nil
	case int8:
		return appendInt(dst, int64(x)), nil
	case int16:
		return appendInt(dst, int64(x)), nil
	case int32:
		return appendInt(dst, int64(x)), nil
	case int64:
		return appendInt(dst, x), nil
	case uint8:
		return appendUint(dst, uint64(x)), nil
	case uint16:
		return appendUint(dst, uint64(x)), nil
	case uint32:
		return appendUint(dst, uint64(x)), nil
	case uint64:
		return appendUint(dst, x), nil
	case uint:
		return appendUint(dst, uint64(x)), nil
	case float32:
		return be(append(dst, 0xca), uint64(math.Float32bits(x)), 4), nil
	case float64:
		return be(append(dst, 0xcb), math.Float64bits(x), 8), nil
	case string:
		n := len(x)
		switch {
		case n < 32:
			dst = append(dst, 0xa0|byte(n))
		case n < 1<<8:
			dst = append(dst, 0xd9, byte(n))
		case n < 1<<16:
			dst = be(append(dst, 0xda), uint64(n), 2)
		default:
			dst = be(append(dst, 0xdb), uint64(n), 4)
		}
		return append(dst, x...), nil
	case []byte:
		n := len(x)
		switch {
		case n < 1<<8:
			dst = append(dst, 0xc4, byte(n))
		case n < 1<<16:
			dst = be(append(dst, 0xc5), uint64(n), 2)
		default:
			dst = be(append(dst, 0xc6), uint64(n), 4)
		}
		return append(dst, x...), nil
	case []any:
		dst = AppendArrayHeader(dst, len(x))
		for _, e := range x {
			var err error
			if dst, err = Append(dst, e); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case map[string]any:
		n := len(x)
		switch {
		case n < 16:
			dst = append(dst, 0x80|byte(n))
		case n < 1<<16:
			dst = be(append(dst, 0xde), uint64(n), 2)
		default:
			dst = be(append(dst, 0xdf), uint64(n), 4)
		}
		keys := make([]string, 0, n)
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst, _ = Append(dst, k)
			var err error
			if dst, err = Append(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("msgpack: cannot encode %T", v)
}

// AppendArrayHeader appends the header of an array of n values.
func AppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n < 1<<16:
		return be(append(dst, 0xdc), uint64(n), 2)
	}
	return be(append(dst, 0xdd), uint64(n), 4)
}

func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(int8(v)))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return be(append(dst, 0xd1), uint64(v), 2)
	case v >= math.MinInt32:
		return be(append(dst, 0xd2), uint64(v), 4)
	}
	return be(append(dst, 0xd3), uint64(v), 8)
}

func appendUint(dst []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(dst, byte(v))
	case v < 1<<8:
		return append(dst, 0xcc, byte(v))
	case v < 1<<16:
		return be(append(dst, 0xcd), v, 2)
	case v < 1<<32:
		return be(append(dst, 0xce), v, 4)
	}
	return be(append(dst, 0xcf), v, 8)
}

// be appends the n low bytes of v, big-endian.
func be(dst []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}
