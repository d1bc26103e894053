package codecs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

func mustPackBits(t testing.TB, cfg string) *PackBits {
	t.Helper()
	c, err := New(Spec{Name: "packbits", Configuration: json.RawMessage(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*PackBits)
}

// TestPackBitsLayout checks the bit order the spec gives (element i in
// bits [i·b, (i+1)·b), lowest bit first; byte j holds bits [8j, 8j+8)),
// against bytes worked out by hand.
func TestPackBitsLayout(t *testing.T) {
	int4, _ := dtype.Parse("int4")
	uint2, _ := dtype.Parse("uint2")
	for _, tc := range []struct {
		cfg  string
		d    dtype.DataType
		in   []byte
		want []byte
	}{
		// int4 1, -2, 7, -8, 0 -> nibbles 1, e, 7, 8, 0; 4 padding bits.
		{`{}`, int4, []byte{1, 0xfe, 7, 0xf8, 0}, []byte{0xe1, 0x87, 0x00}},
		{`{"padding_encoding": "first_byte"}`, int4, []byte{1, 0xfe, 7, 0xf8, 0}, []byte{4, 0xe1, 0x87, 0x00}},
		{`{"padding_encoding": "end_byte"}`, int4, []byte{1, 0xfe, 7, 0xf8, 0}, []byte{0xe1, 0x87, 0x00, 4}},
		// uint2 3, 0, 1, 2, 3 -> 11 00 01 10 | 11
		{`{}`, uint2, []byte{3, 0, 1, 2, 3}, []byte{0b10_01_00_11, 0b11}},
		// bool
		{`{"padding_encoding": "first_byte"}`, dtype.TypeBool, []byte{1, 0, 1, 1, 0, 0, 0, 0, 1}, []byte{7, 0b0000_1101, 1}},
		// uint16 keeping bits 4..11: 0x0ab0 -> 0xab, 0x1230 -> 0x23
		{`{"first_bit": 4, "last_bit": 11}`, dtype.TypeUint16, []byte{0xb0, 0x0a, 0x30, 0x12}, []byte{0xab, 0x23}},
		// int16 keeping bits 0..11 (12 bits each): -1 and 5
		{`{"start_bit": 0, "end_bit": 11}`, dtype.TypeInt16, []byte{0xff, 0xff, 5, 0}, []byte{0xff, 0x5f, 0x00}},
	} {
		p := mustPackBits(t, tc.cfg)
		repr := ChunkRepr{Shape: []int{len(tc.in) / tc.d.Size()}, DType: tc.d}
		got, err := p.Encode(nil, tc.in, repr)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s %s: encode %x -> %x, %v; want %x", tc.cfg, tc.d, tc.in, got, err, tc.want)
			continue
		}
		if n := p.MaxEncodedSize(repr); n != len(tc.want) {
			t.Errorf("%s %s: MaxEncodedSize %d, want %d", tc.cfg, tc.d, n, len(tc.want))
		}
		back := make([]byte, len(tc.in))
		if err := p.Decode(back, got, repr); err != nil {
			t.Errorf("%s %s: decode: %v", tc.cfg, tc.d, err)
			continue
		}
		want := tc.in
		if tc.d == dtype.TypeUint16 { // bits outside 4..11 come back zero
			want = []byte{0xb0, 0x0a, 0x30, 0x02}
		}
		if !bytes.Equal(back, want) {
			t.Errorf("%s %s: decode %x -> %x, want %x", tc.cfg, tc.d, got, back, want)
		}
	}
}

// TestPackBitsRoundTrip packs and unpacks random chunks of every type the
// codec takes, with and without bit ranges and padding bytes.
func TestPackBitsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := append(dtype.NarrowTypes(), dtype.TypeBool, dtype.TypeInt8, dtype.TypeUint32, dtype.TypeInt64,
		dtype.TypeFloat32, dtype.TypeFloat64, dtype.TypeComplex64, dtype.TypeBFloat16)
	for _, d := range types {
		for _, cfg := range []string{`{}`, `{"padding_encoding": "first_byte"}`, `{"padding_encoding": "last_byte", "first_bit": 1}`} {
			p := mustPackBits(t, cfg)
			for _, n := range []int{0, 1, 7, 9, 100} {
				repr := ChunkRepr{Shape: []int{n}, DType: d}
				l, err := p.layout(d)
				if err != nil {
					if d.Bits() > 1 || cfg == `{}` {
						t.Fatalf("%s %s: %v", d, cfg, err)
					}
					continue // bool has no bit 1
				}
				in := make([]byte, repr.NumBytes())
				for c := 0; c < len(in); c += l.compBytes {
					v := rng.Uint64() & (1<<l.bits - 1) << l.first
					if l.bits == 64 {
						v = rng.Uint64()
					}
					if l.signed && v>>(l.first+l.bits-1)&1 == 1 {
						v |= ^uint64(0) << (l.first + l.bits)
					}
					for i := range l.compBytes {
						in[c+i] = byte(v >> (8 * i))
					}
				}
				enc, err := p.Encode(nil, in, repr)
				if err != nil {
					t.Fatalf("%s %s n=%d: %v", d, cfg, n, err)
				}
				back := make([]byte, len(in))
				if err := p.Decode(back, enc, repr); err != nil || !bytes.Equal(back, in) {
					t.Fatalf("%s %s n=%d: round trip %x -> %x -> %x (%v)", d, cfg, n, in, enc, back, err)
				}
			}
		}
	}
}

func TestPackBitsRefuses(t *testing.T) {
	for _, cfg := range []string{`{"padding_encoding": "middle"}`, `{"first_bit": 5, "last_bit": 2}`,
		`{"first_bit": -1}`, `{"first_bit": 1, "start_bit": 1}`, `{"gozarr_arena": 1}`, `{"last_bit": 64}`} {
		if _, err := New(Spec{Name: "packbits", Configuration: json.RawMessage(cfg)}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", cfg, err)
		}
	}
	int4, _ := dtype.Parse("int4")
	p := mustPackBits(t, `{"padding_encoding": "first_byte", "last_bit": 9}`)
	if err := p.ValidateRepr(ChunkRepr{Shape: []int{4}, DType: int4}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("last_bit 9 of int4: %v", err)
	}
	p = mustPackBits(t, `{"padding_encoding": "first_byte"}`)
	repr := ChunkRepr{Shape: []int{5}, DType: int4}
	dst := make([]byte, 5)
	for _, src := range [][]byte{nil, {4, 1, 2}, {4, 1, 2, 3, 4}, {3, 0xe1, 0x87, 0}} {
		if err := p.Decode(dst, src, repr); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %x: %v, want ErrCorrupt", src, err)
		}
	}
	if err := p.ValidateRepr(ChunkRepr{Shape: []int{1}, DType: dtype.TypeVarString}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("vlen string: %v", err)
	}
}

func FuzzPackBits(f *testing.F) {
	f.Add(`{"padding_encoding": "first_byte"}`, "int4", []byte{4, 0xe1, 0x87, 0}, 5)
	f.Add(`{"first_bit": 3, "last_bit": 40}`, "int64", []byte{1, 2, 3, 4, 5}, 1)
	f.Add(`{}`, "bool", []byte{0xff}, 8)
	f.Fuzz(func(t *testing.T, cfg, name string, src []byte, n int) {
		c, err := New(Spec{Name: "packbits", Configuration: json.RawMessage(cfg)})
		if err != nil {
			return
		}
		d, err := dtype.Parse(name)
		if err != nil || n < 0 || n > 1<<12 {
			return
		}
		p := c.(*PackBits)
		repr := ChunkRepr{Shape: []int{n}, DType: d}
		if p.ValidateRepr(repr) != nil {
			return
		}
		dst := make([]byte, repr.NumBytes())
		if err := p.Decode(dst, src, repr); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error %v is not ErrCorrupt", err)
			}
			return
		}
		// What decodes re-encodes to the same bytes but for padding bits
		// and, for bit ranges, bits outside the range.
		enc, err := p.Encode(nil, dst, repr)
		if err != nil || len(enc) != len(src) {
			t.Fatalf("re-encode: %d bytes, %v; had %d", len(enc), err, len(src))
		}
	})
}
