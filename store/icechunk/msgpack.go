package icechunk

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// A MessagePack reader for spec version 1 metadata values, into the same
// JSON-like Go values as decodeFlex, with bounded nesting and counts.

type mpReader struct {
	b      []byte
	p      int
	values int
}

// decodeMsgpack decodes one MessagePack value that fills buf.
func decodeMsgpack(buf []byte) (any, error) {
	r := &mpReader{b: buf}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.p != len(buf) {
		return nil, corruptf("msgpack: %d trailing bytes", len(buf)-r.p)
	}
	return v, nil
}

func (r *mpReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.p) {
		return nil, corruptf("msgpack: %d bytes wanted at %d of %d", n, r.p, len(r.b))
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

func (r *mpReader) uintN(n int) (uint64, error) {
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

func (r *mpReader) value(depth int) (any, error) {
	if depth > flexMaxDepth {
		return nil, corruptf("msgpack nested deeper than %d", flexMaxDepth)
	}
	if r.values++; r.values > flexMaxValues {
		return nil, corruptf("msgpack holds more than %d values", flexMaxValues)
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
		return append([]byte(nil), b...), err
	case 0xca:
		u, err := r.uintN(4)
		return float64(math.Float32frombits(uint32(u))), err
	case 0xcb:
		u, err := r.uintN(8)
		return math.Float64frombits(u), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		return r.uintN(1 << (c - 0xcc))
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
	return nil, corruptf("msgpack: type byte %#x", c)
}

func (r *mpReader) str(n uint64) (any, error) {
	b, err := r.take(n)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, corruptf("msgpack: string is not UTF-8")
	}
	return string(b), nil
}

func (r *mpReader) arrayN(n uint64, depth int) (any, error) {
	if n > uint64(len(r.b)-r.p) { // every value takes at least a byte
		return nil, corruptf("msgpack: array of %d values in %d bytes", n, len(r.b)-r.p)
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

func (r *mpReader) mapN(n uint64, depth int) (any, error) {
	if n > uint64(len(r.b)-r.p)/2 {
		return nil, corruptf("msgpack: map of %d entries in %d bytes", n, len(r.b)-r.p)
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
