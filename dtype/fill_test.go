package dtype

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func le16(v uint16) []byte   { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte   { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte   { return binary.LittleEndian.AppendUint64(nil, v) }
func f32b(f float32) []byte  { return le32(math.Float32bits(f)) }
func f64b(f float64) []byte  { return le64(math.Float64bits(f)) }
func cat(b ...[]byte) []byte { return bytes.Join(b, nil) }

func mustRaw(t *testing.T, bits int) DataType {
	t.Helper()
	d, err := RawBits(bits)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseFill(t *testing.T) {
	r24 := mustRaw(t, 24)
	cases := []struct {
		d    DataType
		json string
		want []byte
	}{
		{TypeBool, `true`, []byte{1}},
		{TypeBool, `false`, []byte{0}},
		{TypeInt8, `-128`, []byte{0x80}},
		{TypeInt8, `127`, []byte{0x7f}},
		{TypeInt8, `-1`, []byte{0xff}},
		{TypeUint8, `255`, []byte{0xff}},
		{TypeInt16, `-12345`, le16(uint16(0xcfc7))},
		{TypeUint16, `65535`, le16(65535)},
		{TypeInt32, `42`, le32(42)},
		{TypeUint32, `4000000000`, le32(4000000000)},
		{TypeInt64, `-9223372036854775808`, le64(1 << 63)},
		{TypeInt64, `9223372036854775807`, le64(1<<63 - 1)},
		{TypeUint64, `18446744073709551615`, le64(math.MaxUint64)},
		{TypeUint64, `-0`, le64(0)},
		{TypeFloat32, `0.0`, f32b(0)},
		{TypeFloat32, `-0.0`, f32b(float32(math.Copysign(0, -1)))},
		{TypeFloat32, `-1.5`, f32b(-1.5)},
		{TypeFloat32, `0.1`, f32b(0.1)},
		{TypeFloat32, `1e40`, f32b(float32(math.Inf(1)))}, // rounds to +Inf
		{TypeFloat32, `"NaN"`, le32(0x7fc00000)},
		{TypeFloat32, `"Infinity"`, le32(0x7f800000)},
		{TypeFloat32, `"-Infinity"`, le32(0xff800000)},
		{TypeFloat32, `"0x7fc00001"`, le32(0x7fc00001)},
		{TypeFloat32, `"0xFFC00000"`, le32(0xffc00000)},
		{TypeFloat32, `"0x80000000"`, le32(0x80000000)},
		{TypeFloat32, `3`, f32b(3)},
		{TypeFloat64, `1e-300`, f64b(1e-300)},
		{TypeFloat64, `-0.0`, le64(1 << 63)},
		{TypeFloat64, `"NaN"`, le64(0x7ff8000000000000)},
		{TypeFloat64, `"0x7ff0000000000001"`, le64(0x7ff0000000000001)},
		{TypeFloat64, `4.9e-324`, le64(1)},
		{TypeFloat16, `2.5`, le16(0x4100)},
		{TypeFloat16, `65504`, le16(0x7bff)},
		{TypeFloat16, `65519.99`, le16(0x7bff)},
		{TypeFloat16, `65520`, le16(0x7c00)},
		{TypeFloat16, `0.1`, le16(0x2e66)},
		{TypeFloat16, `5.960464477539063e-08`, le16(0x0001)},
		{TypeFloat16, `2.98023223876953125e-08`, le16(0x0000)}, // exactly half the smallest subnormal: ties to even
		{TypeFloat16, `2.98023223876953126e-08`, le16(0x0001)}, // just above the tie
		{TypeFloat16, `1.00048828125`, le16(0x3c00)},           // tie 1+2^-11: to even
		// Decimal above the tie whose nearest float64 is the tie itself:
		// only a correctly rounded parse gives 0x3c01.
		{TypeFloat16, `1.00048828125000000000000001`, le16(0x3c01)},
		{TypeFloat16, `1.00146484374999999999999999`, le16(0x3c01)}, // just below tie 1+3*2^-11
		{TypeFloat16, `"NaN"`, le16(0x7e00)},
		{TypeFloat16, `"-Infinity"`, le16(0xfc00)},
		{TypeFloat16, `"0x7c01"`, le16(0x7c01)},
		{TypeFloat16, `-0.0`, le16(0x8000)},
		{TypeComplex64, `[1.5, -2.0]`, cat(f32b(1.5), f32b(-2))},
		{TypeComplex64, `["NaN", "0x7f800000"]`, cat(le32(0x7fc00000), le32(0x7f800000))},
		{TypeComplex128, `["NaN", "Infinity"]`, cat(le64(0x7ff8000000000000), le64(0x7ff0000000000000))},
		{TypeComplex128, `[0, -0.0]`, cat(f64b(0), le64(1<<63))},
		{r24, `[1, 2, 255]`, []byte{1, 2, 255}},
		{r24, `"AQL/"`, []byte{1, 2, 255}}, // zarr-python's raw_bytes base64 form
		{TypeInt32, " \n 7 \t", le32(7)},
	}
	for _, c := range cases {
		got, err := ParseFill(c.d, json.RawMessage(c.json))
		if err != nil {
			t.Errorf("ParseFill(%s, %s): %v", c.d, c.json, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("ParseFill(%s, %s) = %x, want %x", c.d, c.json, got, c.want)
		}
	}
}

func TestParseFillErrors(t *testing.T) {
	r16 := mustRaw(t, 16)
	cases := []struct {
		d    DataType
		json string
	}{
		{TypeBool, `1`}, {TypeBool, `"true"`}, {TypeBool, `null`},
		{TypeInt8, `128`}, {TypeInt8, `-129`}, {TypeUint8, `-1`}, {TypeUint8, `256`},
		{TypeInt64, `9223372036854775808`}, {TypeInt64, `-9223372036854775809`},
		{TypeUint64, `18446744073709551616`}, {TypeInt32, `1.5`}, {TypeInt32, `1.0`},
		{TypeInt32, `1e3`}, {TypeInt32, `"1"`}, {TypeInt32, `"NaN"`}, {TypeInt32, `[1]`},
		{TypeFloat32, `"nan"`}, {TypeFloat32, `"inf"`}, {TypeFloat32, `"0x7fc0000"`},
		{TypeFloat32, `"0x7fc000000"`}, {TypeFloat32, `"0x7fc0000g"`}, {TypeFloat64, `"0x7ff8"`},
		{TypeFloat16, `"0x7e000000"`}, {TypeFloat32, `true`}, {TypeFloat32, `null`},
		{TypeFloat32, `{}`}, {TypeComplex64, `1.5`}, {TypeComplex64, `[1]`},
		{TypeComplex64, `[1, 2, 3]`}, {TypeComplex64, `[1, "x"]`}, {TypeComplex128, `["0x7ff8", 0]`},
		{r16, `[1]`}, {r16, `[1, 256]`}, {r16, `[1, -1]`}, {r16, `[1, 2.0]`}, {r16, `"AQID"`},
		{r16, `"!!"`}, {TypeInt32, ``}, {TypeInt32, `12 13`}, {TypeInt32, `{"a":`}, {TypeInt32, `]`},
		{DataType{}, `0`},
	}
	for _, c := range cases {
		got, err := ParseFill(c.d, json.RawMessage(c.json))
		if !errors.Is(err, ErrInvalidFill) {
			t.Errorf("ParseFill(%s, %q) = %x, %v; want ErrInvalidFill", c.d, c.json, got, err)
		}
	}
}

func TestParseFillV2(t *testing.T) {
	v4 := mustRaw(t, 32)
	cases := []struct {
		d      DataType
		json   string
		want   []byte
		wantOK bool
	}{
		{TypeInt32, `null`, nil, false},
		{TypeFloat64, `"NaN"`, le64(0x7ff8000000000000), true},
		{TypeFloat32, `"Infinity"`, le32(0x7f800000), true},
		{TypeInt32, `-9999`, le32(uint32(0xffffd8f1)), true},
		{TypeInt32, `0.0`, le32(0), true},
		{TypeUint64, `1e3`, le64(1000), true},
		{TypeBool, `true`, []byte{1}, true},
		{TypeBool, `0`, []byte{0}, true},
		{TypeComplex64, `[0.0, 0.0]`, make([]byte, 8), true},
		{v4, `"AAECAw=="`, []byte{0, 1, 2, 3}, true},
	}
	for _, c := range cases {
		got, ok, err := ParseFillV2(c.d, json.RawMessage(c.json))
		if err != nil || ok != c.wantOK || !bytes.Equal(got, c.want) {
			t.Errorf("ParseFillV2(%s, %s) = %x, %v, %v; want %x, %v", c.d, c.json, got, ok, err, c.want, c.wantOK)
		}
	}
	for _, c := range []struct {
		d    DataType
		json string
	}{
		{TypeFloat32, `"0x7fc00000"`}, {TypeInt32, `1.5`}, {TypeBool, `2`}, {v4, `[0, 1, 2, 3]`},
		{TypeInt8, `1e999999999`}, {TypeInt8, `300.0`},
	} {
		if _, _, err := ParseFillV2(c.d, json.RawMessage(c.json)); !errors.Is(err, ErrInvalidFill) {
			t.Errorf("ParseFillV2(%s, %s) error %v, want ErrInvalidFill", c.d, c.json, err)
		}
	}
}

func TestFormatFill(t *testing.T) {
	r16 := mustRaw(t, 16)
	cases := []struct {
		d      DataType
		elem   []byte
		want   string
		wantV2 string
	}{
		{TypeBool, []byte{1}, `true`, `true`},
		{TypeInt8, []byte{0x80}, `-128`, `-128`},
		{TypeInt16, le16(uint16(0xcfc7)), `-12345`, `-12345`},
		{TypeInt64, le64(1 << 63), `-9223372036854775808`, `-9223372036854775808`},
		{TypeUint64, le64(math.MaxUint64), `18446744073709551615`, `18446744073709551615`},
		{TypeFloat64, f64b(0), `0.0`, `0.0`},
		{TypeFloat64, le64(1 << 63), `-0.0`, `-0.0`},
		{TypeFloat64, f64b(-1.5), `-1.5`, `-1.5`},
		{TypeFloat64, f64b(1e-300), `1e-300`, `1e-300`},
		{TypeFloat64, f64b(1e16), `1e+16`, `1e+16`},
		{TypeFloat64, f64b(1e15), `1000000000000000.0`, `1000000000000000.0`},
		{TypeFloat64, f64b(123456789.125), `123456789.125`, `123456789.125`},
		{TypeFloat64, f64b(0.0001), `0.0001`, `0.0001`},
		{TypeFloat64, f64b(0.00001), `1e-05`, `1e-05`},
		{TypeFloat64, f64b(1.5e300), `1.5e+300`, `1.5e+300`},
		{TypeFloat64, le64(0x7ff8000000000000), `"NaN"`, `"NaN"`},
		{TypeFloat64, le64(0x7ff8000000000001), `"0x7ff8000000000001"`, `"NaN"`},
		{TypeFloat64, le64(0xfff0000000000000), `"-Infinity"`, `"-Infinity"`},
		{TypeFloat32, f32b(0.1), `0.10000000149011612`, `0.10000000149011612`},
		{TypeFloat32, le32(0x7fc00000), `"NaN"`, `"NaN"`},
		{TypeFloat32, le32(0xffc00000), `"0xffc00000"`, `"NaN"`},
		{TypeFloat32, le32(0x7f800000), `"Infinity"`, `"Infinity"`},
		{TypeFloat16, le16(0x4100), `2.5`, `2.5`},
		{TypeFloat16, le16(0x7e00), `"NaN"`, `"NaN"`},
		{TypeFloat16, le16(0x0001), `5.960464477539063e-08`, `5.960464477539063e-08`},
		{TypeComplex64, cat(f32b(1.5), f32b(-2)), `[1.5, -2.0]`, `[1.5, -2.0]`},
		{TypeComplex128, cat(le64(0x7ff8000000000000), le64(0x7ff0000000000000)), `["NaN", "Infinity"]`, `["NaN", "Infinity"]`},
		{r16, []byte{0, 255}, `[0, 255]`, `"AP8="`},
	}
	for _, c := range cases {
		got, err := FormatFill(c.d, c.elem)
		if err != nil || string(got) != c.want {
			t.Errorf("FormatFill(%s, %x) = %s, %v; want %s", c.d, c.elem, got, err, c.want)
		}
		got2, err := FormatFillV2(c.d, c.elem)
		if err != nil || string(got2) != c.wantV2 {
			t.Errorf("FormatFillV2(%s, %x) = %s, %v; want %s", c.d, c.elem, got2, err, c.wantV2)
		}
		// Round trip: v3 keeps every bit.
		back, err := ParseFill(c.d, got)
		if err != nil || !bytes.Equal(back, c.elem) {
			t.Errorf("ParseFill(FormatFill(%s, %x)) = %x, %v", c.d, c.elem, back, err)
		}
	}
	if got, _ := FormatFillV2(TypeInt32, nil); string(got) != "null" {
		t.Errorf("FormatFillV2(nil) = %s", got)
	}
	for _, bad := range []struct {
		d    DataType
		elem []byte
	}{{TypeInt32, []byte{1}}, {TypeBool, []byte{2}}, {DataType{}, nil}, {TypeFloat64, make([]byte, 9)}} {
		if _, err := FormatFill(bad.d, bad.elem); !errors.Is(err, ErrInvalidFill) {
			t.Errorf("FormatFill(%s, %x) error %v, want ErrInvalidFill", bad.d, bad.elem, err)
		}
	}
}

// TestFillRoundTripRandom formats random bit patterns of every type and
// parses them back: every bit must survive (NaN payloads, -0.0, subnormals).
func TestFillRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	types := []DataType{TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeUint8, TypeUint16,
		TypeUint32, TypeUint64, TypeFloat16, TypeFloat32, TypeFloat64, TypeComplex64, TypeComplex128, mustRaw(t, 40)}
	for _, d := range types {
		for i := 0; i < 3000; i++ {
			elem := make([]byte, d.Size())
			for j := range elem {
				elem[j] = byte(r.Uint32())
			}
			js, err := FormatFill(d, elem)
			if err != nil {
				t.Fatalf("FormatFill(%s, %x): %v", d, elem, err)
			}
			back, err := ParseFill(d, js)
			if err != nil || !bytes.Equal(back, elem) {
				t.Fatalf("%s: %x -> %s -> %x, %v", d, elem, js, back, err)
			}
		}
	}
}

// nearestFloat16 finds the float16 nearest to f by searching all finite
// float16 values (ties to even mantissa), the slow obvious way.
func nearestFloat16(f float64) Float16 {
	best, bestErr := Float16(0), math.Inf(1)
	for h := 0; h < 0x10000; h++ {
		v := Float16(h)
		if v&0x7c00 == 0x7c00 {
			continue
		}
		e := math.Abs(v.Float64() - f)
		if e < bestErr || (e == bestErr && v&1 == 0 && (f < 0) == (v&0x8000 != 0)) {
			best, bestErr = v, e
		}
	}
	// Overflow: IEEE rounds to infinity at or beyond 65520.
	if math.Abs(f) >= 65520 {
		if f > 0 {
			return Float16Inf
		}
		return Float16NegInf
	}
	if f == 0 && math.Signbit(f) {
		return 0x8000
	}
	if best&0x7fff == 0 && math.Signbit(f) {
		best = 0x8000
	}
	return best
}

func TestFloat16Conversions(t *testing.T) {
	// Every float16 survives float64 and float32 and back.
	for h := 0; h < 0x10000; h++ {
		v := Float16(h)
		if got := Float16FromFloat64(v.Float64()); got != v {
			t.Fatalf("Float16FromFloat64(%v.Float64()) = %#04x, want %#04x", v.Float64(), got, v)
		}
		if got := Float16FromFloat32(v.Float32()); got != v {
			t.Fatalf("Float16FromFloat32(%v) = %#04x, want %#04x", v.Float32(), got, v)
		}
		if !v.IsNaN() && float64(v.Float32()) != v.Float64() {
			t.Fatalf("%#04x: Float32 %v != Float64 %v", h, v.Float32(), v.Float64())
		}
	}
	known := []struct {
		f float64
		h Float16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00}, {-1e6, 0xfc00},
		{math.Ldexp(1, -24), 0x0001}, {math.Ldexp(1, -25), 0x0000}, {math.Ldexp(3, -26), 0x0001},
		{math.Ldexp(1, -14), 0x0400}, {math.Ldexp(1023, -24), 0x03ff}, {math.Ldexp(2047, -25), 0x0400},
		{1.0 / 3, 0x3555}, {math.Inf(1), 0x7c00}, {math.Copysign(0, -1), 0x8000}, {1e-300, 0},
		{math.NaN(), 0x7e00},
	}
	for _, k := range known {
		if got := Float16FromFloat64(k.f); got != k.h {
			t.Errorf("Float16FromFloat64(%v) = %#04x, want %#04x", k.f, got, k.h)
		}
	}
	// NaN payloads keep their top bits, and a NaN never becomes infinity.
	if got := Float16FromFloat32(math.Float32frombits(0x7f802000)); got != 0x7c01 {
		t.Errorf("signalling NaN payload: got %#04x, want 0x7c01", got)
	}
	if got := Float16FromFloat32(math.Float32frombits(0xff800001)); !got.IsNaN() || got&0x8000 == 0 {
		t.Errorf("tiny-payload negative NaN became %#04x", got)
	}
	if got := Float16(0x7c01).Float32(); math.Float32bits(got) != 0x7f802000 {
		t.Errorf("Float16(0x7c01).Float32() bits %#08x", math.Float32bits(got))
	}
	// Random values in and around float16's range against the brute force.
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 300; i++ {
		f := math.Ldexp(r.Float64()*2-1, r.IntN(44)-27)
		if i%3 == 0 { // exact ties: a float16 plus half an ulp
			h := Float16(r.IntN(0x7bff))
			f = (h.Float64() + (h + 1).Float64()) / 2
		}
		if want, got := nearestFloat16(f), Float16FromFloat64(f); got != want {
			t.Fatalf("Float16FromFloat64(%v) = %#04x, want %#04x", f, got, want)
		}
	}
}

func TestParseNumpy(t *testing.T) {
	v4 := mustRaw(t, 32)
	s4, _ := FixedBytes(4)
	cases := []struct {
		descr string
		d     DataType
		big   bool
	}{
		{"<f4", TypeFloat32, false}, {">i8", TypeInt64, true}, {"|b1", TypeBool, false},
		{"|u1", TypeUint8, false}, {"<c16", TypeComplex128, false}, {">c8", TypeComplex64, true},
		{"|V4", v4, false}, {"|S4", s4, false}, {"<f2", TypeFloat16, false}, {">f2", TypeFloat16, true},
		{"bool", TypeBool, false}, {"float64", TypeFloat64, false}, {"=u2", TypeUint16, false},
		{">u1", TypeUint8, false}, {"i4", TypeInt32, false}, {">b1", TypeBool, false},
	}
	for _, c := range cases {
		d, big, err := ParseNumpy(c.descr)
		if err != nil || d != c.d || big != c.big {
			t.Errorf("ParseNumpy(%q) = %v, %v, %v; want %v, %v", c.descr, d, big, err, c.d, c.big)
		}
	}
	for _, bad := range []string{"", "<", "<f", "<f3", "<i3", "|i2", "|f8", "|U4", "|O", "|M8[ns]", "<M8", "<M8[xs]", "<M8[0s]", "<U0",
		"<f04", "<f-4", "|V0", "<c4", "b2", "r8", "|V99999999999", "<f4 "} {
		if d, _, err := ParseNumpy(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("ParseNumpy(%q) = %v, %v; want ErrUnknown", bad, d, err)
		}
	}
}

func FuzzParseFill(f *testing.F) {
	for _, s := range []string{`0`, `-1`, `1.5`, `"NaN"`, `"Infinity"`, `"0x7fc00000"`, `[1, 2]`,
		`["NaN", -0.0]`, `true`, `null`, `18446744073709551615`, `1e400`, `"AQI="`, `[0, 255, 3]`, `1e-999999999`} {
		for k := uint8(0); k < 19; k++ {
			f.Add(k, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, raw []byte) {
		types := []DataType{TypeBool, TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeUint8, TypeUint16,
			TypeUint32, TypeUint64, TypeFloat16, TypeFloat32, TypeFloat64, TypeComplex64, TypeComplex128, {kind: Raw, size: 3},
			{kind: String, size: 8}, {kind: Bytes, size: 3}, {kind: Datetime, size: 8, unit: Nanoseconds, scale: 1}, TypeBFloat16}
		d := types[int(k)%len(types)]
		elem, err := ParseFill(d, raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidFill) {
				t.Fatalf("error %v does not wrap ErrInvalidFill", err)
			}
		} else {
			if len(elem) != d.Size() {
				t.Fatalf("%d bytes for %s", len(elem), d)
			}
			js, err := FormatFill(d, elem)
			if err != nil {
				t.Fatalf("FormatFill(%s, %x): %v", d, elem, err)
			}
			back, err := ParseFill(d, js)
			if err != nil || !bytes.Equal(back, elem) {
				t.Fatalf("round trip %s %x -> %s -> %x, %v", d, elem, js, back, err)
			}
		}
		if elem, ok, err := ParseFillV2(d, raw); err == nil && ok {
			if _, err := FormatFillV2(d, elem); err != nil {
				t.Fatalf("FormatFillV2(%s, %x): %v", d, elem, err)
			}
		} else if err != nil && !errors.Is(err, ErrInvalidFill) {
			t.Fatalf("v2 error %v does not wrap ErrInvalidFill", err)
		}
	})
}
