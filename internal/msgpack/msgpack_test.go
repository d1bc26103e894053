package msgpack

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

// TestKnownEncodings decodes bytes Python's msgpack.packb writes
// (use_bin_type=True) and encodes the values back to the same bytes.
func TestKnownEncodings(t *testing.T) {
	for _, tc := range []struct {
		hex []byte
		v   any
	}{
		{[]byte{0xc0}, nil},
		{[]byte{0xc3}, true},
		{[]byte{0x2a}, int64(42)},
		{[]byte{0xff}, int64(-1)},
		{[]byte{0xd0, 0x80}, int64(-128)},
		{[]byte{0xcd, 0x01, 0x00}, int64(256)},
		{[]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
		{[]byte{0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, 1.5},
		{[]byte{0xa3, 'f', 'o', 'o'}, "foo"},
		{[]byte{0xc4, 2, 0xc2, 0xa1}, []byte{0xc2, 0xa1}},
		{[]byte{0x93, 0xa3, 'b', 'a', 'r', 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x02}, []any{"bar", 1.0, int64(2)}},
		{[]byte{0x82, 0xa1, 'a', 0xa1, 'b', 0xa1, 'c', 0x2a}, map[string]any{"a": "b", "c": int64(42)}},
	} {
		v, err := Decode(tc.hex, Limits{})
		if err != nil || !reflect.DeepEqual(v, tc.v) {
			t.Errorf("decode %x: %#v, %v; want %#v", tc.hex, v, err, tc.v)
		}
		enc, err := Append(nil, tc.v)
		if err != nil || !bytes.Equal(enc, tc.hex) {
			t.Errorf("encode %#v: %x, %v; want %x", tc.v, enc, err, tc.hex)
		}
	}
}

func TestSplitArray(t *testing.T) {
	buf := []byte{0x93, 0xa3, 'b', 'a', 'r', 0x91, 0x01, 0x02}
	parts, err := SplitArray(buf, Limits{})
	if err != nil || len(parts) != 3 || !bytes.Equal(parts[1], []byte{0x91, 0x01}) {
		t.Fatalf("%x, %v", parts, err)
	}
}

func TestHostile(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, 100)
	deep = append(deep, 0x01)
	for name, buf := range map[string][]byte{
		"empty":         nil,
		"trailing":      {0x01, 0x02},
		"array 2^32-1":  {0xdd, 0xff, 0xff, 0xff, 0xff},
		"map 2^32-1":    {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01},
		"str past end":  {0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'},
		"bad utf8":      {0xa2, 0xff, 0xfe},
		"ext":           {0xd4, 0x01, 0x02},
		"deep":          deep,
		"truncated f64": {0xcb, 0x3f},
		"reserved 0xc1": {0xc1},
	} {
		if _, err := Decode(buf, Limits{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	many := AppendArrayHeader(nil, 1000)
	many = append(many, bytes.Repeat([]byte{0x01}, 1000)...)
	if _, err := Decode(many, Limits{MaxValues: 100}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("1001 values with a limit of 100: %v", err)
	}
	if _, err := SplitArray([]byte{0x01}, Limits{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("split of a non-array: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x93, 0xa3, 'b', 'a', 'r', 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x02})
	f.Add([]byte{0x82, 0xa1, 'a', 0xa1, 'b', 0xa1, 'c', 0x2a})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, buf []byte) {
		v, err := Decode(buf, Limits{MaxValues: 1 << 12})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		// What decodes re-encodes to a value that decodes equal.
		enc, err := Append(nil, v)
		if err != nil {
			t.Fatalf("re-encode %#v: %v", v, err)
		}
		w, err := Decode(enc, Limits{MaxValues: 1 << 12})
		if err != nil || !reflect.DeepEqual(v, w) && !hasNaN(v) {
			t.Fatalf("round trip %#v -> %x -> %#v, %v", v, enc, w, err)
		}
		if _, err := SplitArray(buf, Limits{MaxValues: 1 << 12}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
	})
}

func hasNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x)
	case []any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	}
	return false
}
