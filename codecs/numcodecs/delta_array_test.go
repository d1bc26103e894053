package numcodecs_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
)

// TestDeltaArrayChain checks finding 13 of issue 11: "numcodecs.delta"
// before "bytes" (zarr-python 3's place for numcodecs filters) resolves as
// an array->array codec whose encoded chunk is an array of astype,
// serialised by the codecs after it, and the chain keeps the codec's name
// and configuration in metadata.
func TestDeltaArrayChain(t *testing.T) {
	le := func(vals ...int64) []byte { // int32 little-endian
		b := make([]byte, 0, 4*len(vals))
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	tests := []struct {
		name  string
		specs string
		dt    dtype.DataType
		src   []byte
		want  []byte // the encoded chunk
		dec   []byte // what it decodes to (nil: src)
	}{
		{"i4 as i2, little", `[{"name":"numcodecs.delta","configuration":{"dtype":"<i4","astype":"<i2"}},{"name":"bytes","configuration":{"endian":"little"}}]`,
			dtype.TypeInt32, le(1000, 1003, 998, 70000), []byte{0xe8, 0x03, 3, 0, 0xfb, 0xff, 0x8a, 0x0d}, le(1000, 1003, 998, 4464)}, // 1000, 3, -5, 69002 wrapped to 3466
		{"i4 as i2, big", `[{"name":"numcodecs.delta","configuration":{"dtype":"<i4","astype":"<i2"}},{"name":"bytes","configuration":{"endian":"big"}}]`,
			dtype.TypeInt32, le(1000, 1003, 998, 70000), []byte{0x03, 0xe8, 0, 3, 0xff, 0xfb, 0x0d, 0x8a}, le(1000, 1003, 998, 4464)},
		{"int32 name, no astype, uint32 array", `[{"name":"numcodecs.delta","configuration":{"dtype":"int32"}},{"name":"bytes","configuration":{"endian":"little"}}]`,
			dtype.TypeUint32, le(5, 2, 9), le(5, -3, 7), nil},
		{"u1 as u1, bytes without endian", `[{"name":"numcodecs.delta","configuration":{"dtype":"|u1"}},{"name":"bytes"}]`,
			dtype.TypeUint8, []byte{10, 20, 5}, []byte{10, 10, 241}, nil},
		{"two deltas and a transpose", `[{"name":"transpose","configuration":{"order":[0]}},{"name":"numcodecs.delta","configuration":{"dtype":"<i4"}},{"name":"numcodecs.delta","configuration":{"dtype":"<i4","astype":"<i8"}},{"name":"bytes","configuration":{"endian":"little"}}]`,
			dtype.TypeInt32, le(1, 4, 9, 16), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var specs []codecs.Spec
			if err := json.Unmarshal([]byte(tc.specs), &specs); err != nil {
				t.Fatal(err)
			}
			n := len(tc.src) / tc.dt.Size()
			ch, err := codecs.NewChain(specs, codecs.ChunkRepr{Shape: []int{n}, DType: tc.dt, Fill: make([]byte, tc.dt.Size())})
			if err != nil {
				t.Fatalf("NewChain: %v", err)
			}
			if ch.ArrayToArrayCount() != len(specs)-1 || ch.BytesToBytesCount() != 0 {
				t.Errorf("%d array->array and %d bytes->bytes codecs", ch.ArrayToArrayCount(), ch.BytesToBytesCount())
			}
			enc, err := ch.Encode([]byte("xx"), tc.src)
			if err != nil || !bytes.Equal(enc[2:], tc.want) || string(enc[:2]) != "xx" {
				t.Fatalf("encode: % x, %v; want % x", enc, err, tc.want)
			}
			if len(enc)-2 > ch.MaxEncodedSize() {
				t.Errorf("encoded %d bytes, bound %d", len(enc)-2, ch.MaxEncodedSize())
			}
			got := make([]byte, len(tc.src))
			if err := ch.Decode(got, enc[2:]); err != nil {
				t.Fatalf("decode: %v", err)
			}
			want := tc.dec
			if want == nil {
				want = tc.src
			}
			if !bytes.Equal(got, want) { // an i2 astype loses a wide step, as in numcodecs
				t.Fatalf("decoded % x, want % x", got, want)
			}
			if err := ch.Decode(got, enc[2:len(enc)-1]); !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("short chunk: %v, want ErrCorrupt", err)
			}
			back, err := ch.Specs()
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range back {
				if s.Name != specs[i].Name {
					t.Errorf("spec %d: %s, want %s", i, s.Name, specs[i].Name)
				}
			}
			if ch2, err := codecs.NewChain(back, ch.Repr()); err != nil || ch2.ArrayToArrayCount() != ch.ArrayToArrayCount() {
				t.Errorf("metadata round trip: %v", err)
			}
		})
	}
}

// TestDeltaArrayRepr checks the encoded chunk representation of the
// array->array delta: astype's data type, the fill value cast to it as
// NumPy casts; and the configurations it refuses before "bytes".
func TestDeltaArrayRepr(t *testing.T) {
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1))
	tests := []struct {
		cfg      string
		dt       dtype.DataType
		fill     []byte
		wantType dtype.DataType
		wantFill []byte
	}{
		{`{"dtype":"<i4","astype":"<i2"}`, dtype.TypeInt32, []byte{0x70, 0x11, 0x01, 0}, dtype.TypeInt16, []byte{0x70, 0x11}}, // 70000 -> 4464
		{`{"dtype":"<i2","astype":"<i8"}`, dtype.TypeInt16, []byte{0xfe, 0xff}, dtype.TypeInt64, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{`{"dtype":"<u2","astype":"<i8"}`, dtype.TypeUint16, []byte{0xfe, 0xff}, dtype.TypeInt64, []byte{0xfe, 0xff, 0, 0, 0, 0, 0, 0}},
		{`{"dtype":"<f8","astype":"<f4"}`, dtype.TypeFloat64, f64, dtype.TypeFloat32, binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1))},
		{`{"dtype":"float64"}`, dtype.TypeFloat64, f64, dtype.TypeFloat64, f64},
		{`{"dtype":"|b1"}`, dtype.TypeBool, []byte{1}, dtype.TypeBool, []byte{1}},
	}
	for _, tc := range tests {
		d := deltaOf(t, tc.cfg)
		a, err := d.AsArrayToArray()
		if err != nil {
			t.Fatalf("%s: %v", tc.cfg, err)
		}
		enc, err := a.EncodedRepr(codecs.ChunkRepr{Shape: []int{3, 2}, DType: tc.dt, Fill: tc.fill})
		if err != nil {
			t.Fatalf("%s: %v", tc.cfg, err)
		}
		if enc.DType != tc.wantType || !bytes.Equal(enc.Fill, tc.wantFill) || len(enc.Shape) != 2 || enc.Shape[0] != 3 || enc.Shape[1] != 2 {
			t.Errorf("%s: %v %v fill % x, want %v fill % x", tc.cfg, enc.Shape, enc.DType, enc.Fill, tc.wantType, tc.wantFill)
		}
	}
	for _, bad := range []struct {
		cfg string
		dt  dtype.DataType
	}{
		{`{"dtype":">i4"}`, dtype.TypeInt32},                    // big-endian view
		{`{"dtype":"<i4","astype":">i2"}`, dtype.TypeInt32},     // big-endian astype
		{`{"dtype":"<i8"}`, dtype.TypeInt32},                    // wrong size
		{`{"dtype":"<f4"}`, dtype.TypeInt32},                    // wrong family
		{`{"dtype":"<i4"}`, dtype.TypeFloat32},                  // wrong family
		{`{"dtype":"|u1"}`, dtype.TypeBool},                     // wrong family
		{`{"dtype":"<i4","astype":"<i2"}`, dtype.TypeComplex64}, // no delta of complex
	} {
		js := `[{"name":"numcodecs.delta","configuration":` + bad.cfg + `},{"name":"bytes","configuration":{"endian":"little"}}]`
		var specs []codecs.Spec
		if err := json.Unmarshal([]byte(js), &specs); err != nil {
			t.Fatal(err)
		}
		_, err := codecs.NewChain(specs, codecs.ChunkRepr{Shape: []int{4}, DType: bad.dt, Fill: make([]byte, bad.dt.Size())})
		if !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s on %v: %v, want ErrInvalidConfig", bad.cfg, bad.dt, err)
		}
	}
}

func deltaOf(t *testing.T, cfg string) *numcodecs.Delta {
	t.Helper()
	c, err := codecs.New(codecs.Spec{Name: "numcodecs.delta", Configuration: json.RawMessage(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*numcodecs.Delta)
}
