package pcodec

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// The files in testdata/pco are the backward-compatibility assets of the
// pcodec repository (pco/assets, written by the pco versions their names
// give); pco/src/tests/compatibility.rs generates the numbers each one
// holds, which these functions regenerate.

func leBytes[T uint8 | uint16 | uint32 | uint64 | int8 | int16 | int32 | int64](xs []T) []byte {
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, xs)
	return buf.Bytes()
}

func pseudorandomF16s() []uint16 {
	num := float32(0.1)
	var out []uint16
	for range 2000 {
		num = float32(math.Mod(float64(float32(num*77.7)+0.1), 2))
		if num < 1 {
			out = append(out, uint16(dtype.Float16FromFloat32(-1-num)))
		} else {
			out = append(out, uint16(dtype.Float16FromFloat32(num)))
		}
	}
	return out
}

func compatCases() map[string]struct {
	t    NumberType
	want []byte
} {
	type c = struct {
		t    NumberType
		want []byte
	}
	cases := map[string]c{}

	var classic []int32
	for i := int32(0); i < 1000; i++ {
		classic = append(classic, i)
	}
	for i := int32(2000); i < 3000; i++ {
		classic = append(classic, i)
	}
	cases["v0_0_0_classic.pco"] = c{I32, leBytes(classic)}

	fm := make([]uint32, 2000)
	for i := range fm {
		f := float32(i)
		if i == 1337 {
			f += 1.001
		}
		fm[i] = math.Float32bits(f)
	}
	cases["v0_0_0_delta_float_mult.pco"] = c{F32, leBytes(fm)}

	im := make([]int32, 2000)
	for i := range im {
		im[i] = int32(i) * 1000
	}
	im[1337]--
	cases["v0_1_0_delta_int_mult.pco"] = c{I32, leBytes(im)}
	cases["v0_1_1_standalone_versioned.pco"] = c{F32, nil}

	f16s := pseudorandomF16s()
	cases["v0_3_0_f16.pco"] = c{F16, leBytes(f16s)}
	fq := make([]uint32, len(f16s))
	for i, h := range f16s {
		x := dtype.Float16(h).Float32()
		b := math.Float32bits(x)
		if math.Abs(float64(x)) < 1.1 {
			b++
		}
		fq[i] = b
	}
	cases["v0_3_0_float_quant.pco"] = c{F32, leBytes(fq)}

	base := []uint32{1121827092, 729032807, 3968137854, 2875434067, 3775328080, 431649926, 1048116090, 1906978350, 14752788, 1180462487}
	var lb []uint32
	for range 100 {
		lb = append(lb, base...)
	}
	cases["v0_4_0_lookback_delta.pco"] = c{U32, leBytes(lb)}
	cases["v0_4_5_uniform_type.pco"] = c{U32, leBytes([]uint32{1, 2, 3, 4, 5})}
	cases["v0_4_8_minor_version.pco"] = c{U32, leBytes([]uint32{1, 2, 3, 4, 5})}

	var dict []uint64
	for range 1000 {
		dict = append(dict, 8924659283, 234897984367, 9827358920)
	}
	cases["v1_0_0_dict.pco"] = c{U64, leBytes(dict)}

	var conv []int32
	var xm1, xm2 float32
	for i := int32(0); i < 2000; i++ {
		x := float32(xm1*1.99) - xm2 + float32((i*47)%77-38)
		conv = append(conv, int32(float32(x+10000)))
		xm2, xm1 = xm1, x
	}
	cases["v1_0_0_conv1.pco"] = c{I32, leBytes(conv)}

	var u8s []uint8
	for i := 0; i <= 64; i++ {
		u8s = append(u8s, uint8(i))
	}
	for i := 192; i <= 255; i++ {
		u8s = append(u8s, uint8(i))
	}
	cases["v1_0_0_u8.pco"] = c{U8, u8s}
	var i8s []int8
	for i := -128; i <= -64; i++ {
		i8s = append(i8s, int8(i))
	}
	for i := 64; i <= 127; i++ {
		i8s = append(i8s, int8(i))
	}
	cases["v1_0_0_i8.pco"] = c{I8, leBytes(i8s)}
	return cases
}

// TestPcoCompatibilityAssets decodes every format version, mode and delta
// encoding of pcodec's own compatibility assets exactly.
func TestPcoCompatibilityAssets(t *testing.T) {
	cases := compatCases()
	files, _ := filepath.Glob(filepath.Join("testdata", "pco", "*.pco"))
	if len(files) != len(cases) {
		t.Fatalf("%d asset files, %d cases", len(files), len(cases))
	}
	for _, f := range files {
		name := filepath.Base(f)
		c, ok := cases[name]
		if !ok {
			t.Errorf("%s: no expected values", name)
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(c.want))
		if err := Decompress(got, src, c.t); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			size := int(c.t.Bits() / 8)
			for i := 0; i < len(got); i += size {
				if !bytes.Equal(got[i:i+size], c.want[i:i+size]) {
					t.Errorf("%s: first difference at number %d: got %x want %x", name, i/size, got[i:i+size], c.want[i:i+size])
					break
				}
			}
		}
	}
}

func readTestdata(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", dir, name))
}
