package icechunk

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/gozarr/gozarr/internal/msgpack"
)

// decodeMsgpack decodes one MessagePack value that fills buf (spec
// version 1 metadata values), into the same JSON-like Go values as
// decodeFlex, with the same bounds on nesting and counts.
func decodeMsgpack(buf []byte) (any, error) {
	v, err := msgpack.Decode(buf, msgpack.Limits{MaxDepth: flexMaxDepth, MaxValues: flexMaxValues})
	if err != nil {
		return nil, corruptf("%v", err)
	}
	return v, nil
}

// encodeMsgpack encodes a JSON-like value (the types encodeFlex takes) as
// MessagePack, for spec 1 metadata: integral floats as integers (as
// serde_json values of integers are), maps with sorted keys.
func encodeMsgpack(v any) []byte { return appendMsgpack(nil, v) }

func appendMsgpack(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 0xc0)
	case bool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case int:
		return appendMsgpackInt(b, int64(x))
	case int64:
		return appendMsgpackInt(b, x)
	case uint64:
		if x <= math.MaxInt64 {
			return appendMsgpackInt(b, int64(x))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return appendMsgpackInt(b, int64(x))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(x))
	case string:
		b = appendMsgpackLen(b, len(x), 0xa0, 31, 0xd9, 0xda, 0xdb)
		return append(b, x...)
	case []byte:
		b = appendMsgpackLen(b, len(x), 0, -1, 0xc4, 0xc5, 0xc6)
		return append(b, x...)
	case []any:
		b = appendMsgpackLen(b, len(x), 0x90, 15, 0, 0xdc, 0xdd)
		for _, e := range x {
			b = appendMsgpack(b, e)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = appendMsgpackLen(b, len(x), 0x80, 15, 0, 0xde, 0xdf)
		for _, k := range keys {
			b = appendMsgpack(b, k)
			b = appendMsgpack(b, x[k])
		}
		return b
	}
	return append(b, 0xc0)
}

// appendMsgpackLen writes a length header: the fix form (fix|n) up to
// fixMax, else the 8-bit (if the type has one: t8 != 0), 16- and 32-bit
// forms.
func appendMsgpackLen(b []byte, n int, fix byte, fixMax int, t8, t16, t32 byte) []byte {
	switch {
	case n <= fixMax:
		return append(b, fix|byte(n))
	case t8 != 0 && n <= math.MaxUint8:
		return append(b, t8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, t16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, t32), uint32(n))
}

func appendMsgpackInt(b []byte, x int64) []byte {
	switch {
	case x >= 0 && x < 128:
		return append(b, byte(x))
	case x < 0 && x >= -32:
		return append(b, byte(x))
	case x >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(x))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(x))
}
