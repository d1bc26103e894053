package codecs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// TestBytesBigEndian checks big-endian encoding against byte orders built
// by hand from known values.
func TestBytesBigEndian(t *testing.T) {
	f16 := []uint16{0x3c00, 0xc000, 0x7e00} // 1, -2, NaN
	tests := []struct {
		dt     dtype.DataType
		little []byte // in-memory form
		big    []byte // expected encoding
	}{
		{dtype.TypeInt8, []byte{0x01, 0xff}, []byte{0x01, 0xff}},
		{dtype.TypeBool, []byte{1, 0, 1}, []byte{1, 0, 1}},
		{dtype.TypeInt16, le16(0x0102, 0xfffe), []byte{0x01, 0x02, 0xff, 0xfe}},
		{dtype.TypeUint16, le16(0xabcd), []byte{0xab, 0xcd}},
		{dtype.TypeFloat16, le16(f16...), []byte{0x3c, 0x00, 0xc0, 0x00, 0x7e, 0x00}},
		{dtype.TypeInt32, le32(0x01020304, 0xa0b0c0d0), []byte{1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0}},
		{dtype.TypeFloat32, le32(math.Float32bits(1.5)), be32(math.Float32bits(1.5))},
		{dtype.TypeUint64, le64(0x0102030405060708), []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{dtype.TypeFloat64, le64(math.Float64bits(-3.25), math.Float64bits(1e300)),
			be64(math.Float64bits(-3.25), math.Float64bits(1e300))},
		// Complex numbers swap each component on its own.
		{dtype.TypeComplex64, le32(math.Float32bits(1), math.Float32bits(-2)),
			be32(math.Float32bits(1), math.Float32bits(-2))},
		{dtype.TypeComplex128, le64(0x0102030405060708, 0x1112131415161718),
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}},
		// Raw bits never swap.
		{mustRaw(24), []byte{1, 2, 3, 4, 5, 6}, []byte{1, 2, 3, 4, 5, 6}},
	}
	bigC := must(NewBytes(BigEndian))
	littleC := must(NewBytes(LittleEndian))
	for _, tc := range tests {
		repr := reprOf(tc.dt, len(tc.little)/tc.dt.Size())
		got, err := bigC.Encode([]byte("prefix"), tc.little, repr)
		if err != nil {
			t.Fatalf("%s: %v", tc.dt, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), tc.big...)) {
			t.Errorf("%s: big Encode = % x, want prefix + % x", tc.dt, got, tc.big)
		}
		dec := make([]byte, len(tc.little))
		if err := bigC.Decode(dec, tc.big, repr); err != nil || !bytes.Equal(dec, tc.little) {
			t.Errorf("%s: big Decode = % x, %v; want % x", tc.dt, dec, err, tc.little)
		}
		buf := slices.Clone(tc.big)
		if err := bigC.DecodeInPlace(buf, repr); err != nil || !bytes.Equal(buf, tc.little) {
			t.Errorf("%s: big DecodeInPlace = % x, %v; want % x", tc.dt, buf, err, tc.little)
		}
		got, _ = littleC.Encode(nil, tc.little, repr)
		if !bytes.Equal(got, tc.little) {
			t.Errorf("%s: little Encode = % x, want % x", tc.dt, got, tc.little)
		}
	}
}

func le16(v ...uint16) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return b
}

func le32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func be32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

func le64(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

func be64(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint64(b, x)
	}
	return b
}

// TestSwapBytes compares the word-at-a-time swap with a naive reversal for
// every unit, lengths around the 32-byte blocks, and aligned and unaligned
// buffers.
func TestSwapBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, unit := range []int{1, 2, 4, 8, 16} {
		for n := 0; n <= 100; n += unit {
			off := (n / unit) % 2 // every other length unaligned
			src := randomBytes(r, n+off)[off:]
			want := make([]byte, n)
			for i := 0; i < n; i += unit {
				for k := 0; k < unit; k++ {
					want[i+k] = src[i+unit-1-k]
				}
			}
			got := make([]byte, n+off)[off:]
			swapBytes(got, src, unit)
			if !bytes.Equal(got, want) {
				t.Fatalf("unit %d n %d: got % x, want % x", unit, n, got, want)
			}
			swapBytes(src, src, unit) // in place
			if !bytes.Equal(src, want) {
				t.Fatalf("unit %d n %d in place: got % x, want % x", unit, n, src, want)
			}
		}
	}
}

func TestBytesConfig(t *testing.T) {
	tests := []struct {
		js      string
		want    Endian
		wantCfg string // JSON of Configuration(), "null" for none
		err     error
	}{
		{`{"endian":"little"}`, LittleEndian, `{"endian":"little"}`, nil},
		{`{"endian":"big"}`, BigEndian, `{"endian":"big"}`, nil},
		{``, EndianUnset, `null`, nil},
		{`null`, EndianUnset, `null`, nil},
		{`{}`, EndianUnset, `null`, nil},
		{`{"endian":"LITTLE"}`, "", "", ErrInvalidConfig},
		{`{"endian":5}`, "", "", ErrInvalidConfig},
		{`{"endian":"big","extra":true}`, "", "", ErrInvalidConfig},
		{`[1]`, "", "", ErrInvalidConfig},
	}
	for _, tc := range tests {
		c, err := New(Spec{Name: "bytes", Configuration: json.RawMessage(tc.js)})
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: err %v, want %v", tc.js, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		b := c.(*Bytes)
		if b.Endian() != tc.want {
			t.Errorf("%s: endian %q, want %q", tc.js, b.Endian(), tc.want)
		}
		got, _ := json.Marshal(b.Configuration())
		if string(got) != tc.wantCfg {
			t.Errorf("%s: Configuration %s, want %s", tc.js, got, tc.wantCfg)
		}
	}
}

func TestBytesErrors(t *testing.T) {
	unset := must(NewBytes(EndianUnset))
	big := must(NewBytes(BigEndian))
	i32 := reprOf(dtype.TypeInt32, 3)
	buf := make([]byte, 12)
	if _, err := unset.Encode(nil, buf, i32); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Encode int32 without endian: %v", err)
	}
	if err := unset.Decode(buf, buf, i32); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Decode int32 without endian: %v", err)
	}
	if err := unset.DecodeInPlace(buf, i32); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("DecodeInPlace int32 without endian: %v", err)
	}
	if err := unset.ValidateRepr(reprOf(dtype.TypeUint8, 3)); err != nil {
		t.Errorf("uint8 without endian: %v", err)
	}
	// Raw bits have nothing to swap: zarr-python 3 writes r64 (NumPy V8)
	// arrays with a bare {"name": "bytes"}.
	r64, err := dtype.Parse("r64")
	if err != nil {
		t.Fatal(err)
	}
	if err := unset.ValidateRepr(reprOf(r64, 3)); err != nil {
		t.Errorf("r64 without endian: %v", err)
	}
	if err := big.Decode(buf, buf[:8], i32); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode of 8 bytes for 12: %v", err)
	}
	if err := big.Decode(buf[:8], buf, i32); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode into 8 bytes for 12: %v", err)
	}
	if err := big.DecodeInPlace(buf[:11], i32); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeInPlace of 11 bytes: %v", err)
	}
	if _, err := big.Encode(nil, buf[:4], i32); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Encode of 4 bytes for 12: %v", err)
	}
	if _, err := NewBytes("native"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewBytes(native): %v", err)
	}
	if got := big.MaxEncodedSize(i32); got != 12 {
		t.Errorf("MaxEncodedSize = %d, want 12", got)
	}
}
