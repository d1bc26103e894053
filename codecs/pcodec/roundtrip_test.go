package pcodec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

const nShapes = 8

var allTypes = []NumberType{U8, I8, U16, I16, F16, U32, I32, F32, U64, I64, F64}

// genData makes n numbers of type t in one of several shapes: uniform
// random bits, a small range, a smooth walk, sorted, constant.
func genData(rng *rand.Rand, t NumberType, n, shape int) []byte {
	size := int(t.Bits() / 8)
	out := make([]byte, n*size)
	put := func(i int, v uint64) {
		for b := range size {
			out[i*size+b] = byte(v >> (8 * b))
		}
	}
	walk := 0.0
	for i := range n {
		var v uint64
		switch shape {
		case 0:
			v = rng.Uint64()
		case 1:
			v = uint64(rng.IntN(1000))
		case 2:
			walk += rng.NormFloat64()
			switch {
			case t == F64:
				v = math.Float64bits(1000 + walk)
			case t == F32:
				v = uint64(math.Float32bits(float32(1000 + walk)))
			case t == F16:
				v = uint64(dtype.Float16FromFloat32(float32(walk)))
			default:
				v = uint64(int64(walk * 10))
			}
		case 3:
			v = uint64(i * 3)
		case 4:
			v = 42
		case 5: // decimals (float mult), multiples of 1000 (int mult)
			k := rng.IntN(100000) - 50000
			switch t {
			case F64:
				v = math.Float64bits(float64(k) * 0.01)
			case F32:
				v = uint64(math.Float32bits(float32(k) * 0.01))
			case F16:
				v = uint64(dtype.Float16FromFloat32(float32(k%1000) * 0.25))
			default:
				v = uint64(int64(k)*1000 + int64(rng.IntN(3)))
			}
		case 7: // a repeating pattern of random numbers (lookback)
			if i < 13 {
				v = rng.Uint64()
			} else {
				v = 0
				for b := range size {
					v |= uint64(out[(i-13)*size+b]) << (8 * b)
				}
			}
		case 6: // floats of lower precision (float quant)
			x := rng.NormFloat64()
			switch t {
			case F64:
				v = math.Float64bits(float64(float32(x)))
			case F32:
				v = uint64(math.Float32bits(dtype.Float16FromFloat32(float32(x)).Float32()))
			default:
				v = uint64(rng.IntN(1 << 20))
			}
		}
		put(i, v)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 3, 7, 255, 256, 257, 1000, 5000}
	opts := []EncodeOptions{DefaultEncodeOptions(), {Level: 0, DeltaOrder: 0, PageN: 300}, {Level: 12, DeltaOrder: 3, PageN: 1 << 18}, {Level: 4, DeltaOrder: 7, PageN: 1000, Classic: true}}
	switch {
	case raceEnabled:
		sizes, opts = []int{0, 1, 3, 257, 1000}, opts[:2]
	case testing.Short():
	default:
		sizes = append(sizes, 70000)
	}
	seen, seenDelta := map[int]bool{}, map[int]bool{}
	for _, nt := range allTypes {
		for _, n := range sizes {
			for shape := range nShapes {
				for _, o := range opts {
					src := genData(rng, nt, n, shape)
					enc, err := Compress(nil, src, nt, o)
					if err != nil {
						t.Fatalf("%s n=%d shape %d %+v: %v", nt, n, shape, o, err)
					}
					if mode, delta, ok := firstChunkKind(enc, nt); ok {
						seen[mode] = true
						seenDelta[delta] = true
					}
					got := make([]byte, len(src))
					if err := Decompress(got, enc, nt); err != nil {
						t.Fatalf("%s n=%d shape %d %+v: decode: %v", nt, n, shape, o, err)
					}
					if !bytes.Equal(got, src) {
						t.Fatalf("%s n=%d shape %d %+v: round trip differs", nt, n, shape, o)
					}
					if max := MaxCompressedSize(n, nt, o.PageN); len(enc) > max {
						t.Fatalf("%s n=%d shape %d: %d bytes exceed the bound %d", nt, n, shape, len(enc), max)
					}
				}
			}
		}
	}
	for _, m := range []int{modeClassic, modeIntMult, modeFloatMult, modeFloatQuant} {
		if !seen[m] {
			t.Errorf("the encoder never chose mode %d", m)
		}
	}
	for _, d := range []int{deltaNone, deltaConsecutive, deltaLookback} {
		if !seenDelta[d] {
			t.Errorf("the encoder never chose delta encoding %d", d)
		}
	}
}
