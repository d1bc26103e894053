package zfp

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDecompress decodes arbitrary streams: no panic, no hang, errors
// wrap ErrCorrupt; a reversible stream that decodes re-encodes to a
// stream that decodes to the same values.
func FuzzDecompress(f *testing.F) {
	for _, name := range []string{"f4_1d_rev", "f8_2d_rate8", "i4_3d_prec5", "i8_1d_tol0.5", "f4_4d_rate1.5", "f8_special_rev", "f8_4d_rate16", "f4_2d_tol1e+300"} {
		f.Add(refStream(f, name))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := ReadHeader(src)
		if err != nil {
			return
		}
		n := h.NumElements()
		if n > 1<<14 {
			return
		}
		dst := make([]byte, n*h.Type.Size())
		if _, err := Decompress(dst, src); err != nil {
			return
		}
		if h.Params.Mode() != ModeReversible {
			return
		}
		enc, err := Compress(nil, dst, h.Type, h.Shape, h.Params)
		if err != nil {
			t.Fatal(err)
		}
		again := make([]byte, len(dst))
		if _, err := Decompress(again, enc); err != nil || !bytes.Equal(again, dst) {
			t.Fatalf("reversible round trip: %v", err)
		}
	})
}

// FuzzRoundTrip encodes arbitrary values in every mode: reversible gives
// them back bit for bit, fixed rate writes exactly its bits per block,
// every stream fits MaxSize and decodes.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x01\x00\x00\x80\x7f\x00\x00\xc0\x7f"), uint8(0), uint8(3), uint8(0))
	f.Add(bytes.Repeat([]byte{0x3f, 0x80, 0, 1}, 40), uint8(1), uint8(1), uint8(7))
	f.Add(bytes.Repeat([]byte{9, 8, 7, 6, 5, 4, 3, 2, 1}, 70), uint8(2), uint8(2), uint8(200))
	f.Add(bytes.Repeat([]byte{0xff, 0xee, 0, 0x12}, 90), uint8(3), uint8(0), uint8(31))
	f.Fuzz(func(t *testing.T, data []byte, typ, dims, param uint8) {
		tp := Type(typ%4 + 1)
		d := int(dims%4) + 1
		n := len(data) / tp.Size()
		if n == 0 || n > 1<<13 {
			return
		}
		// Split n values into d dimensions: the last takes what is left.
		shape := make([]int, d)
		rest := n
		for i := 0; i < d-1; i++ {
			shape[i] = int(param)%3 + 1 + i
			if rest%shape[i] != 0 {
				shape[i] = 1
			}
			rest /= shape[i]
		}
		shape[d-1] = rest
		src := data[:n*tp.Size()]
		rate, _ := FixedRate(float64(param%64)+float64(tp.Size()*3)/float64(int(1)<<(2*d)), d)
		acc, _ := FixedAccuracy(math.Ldexp(1, int(param)-128))
		for _, p := range []Params{Reversible(), rate, FixedPrecision(uint(param % 70)), acc} {
			enc, err := Compress(nil, src, tp, shape, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > MaxSize(tp, shape, p) {
				t.Fatalf("%d bytes, MaxSize %d", len(enc), MaxSize(tp, shape, p))
			}
			if p.Mode() == ModeFixedRate {
				blocks := 1
				for _, s := range shape {
					blocks *= (s + 3) / 4
				}
				head := 96
				if p.modeWord() > modeShortMax {
					head = 148
				}
				if want := (head + blocks*int(p.MaxBits) + 7) / 8; len(enc) != want {
					t.Fatalf("fixed rate %d bits/block: %d bytes, want %d", p.MaxBits, len(enc), want)
				}
			}
			dst := make([]byte, len(src))
			if _, err := Decompress(dst, enc); err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			if p.Mode() == ModeReversible && !bytes.Equal(dst, src) {
				t.Fatalf("reversible: values differ")
			}
		}
	})
}

// TestAccuracyBound: fixed-accuracy mode keeps |f - g| <= tolerance on
// smooth data with noise, in every dimensionality (modes.rst).
func TestAccuracyBound(t *testing.T) {
	shapes := [][]int{{301}, {19, 23}, {9, 10, 11}, {5, 6, 7, 5}}
	for _, tol := range []float64{1, 1e-3, 1e-7} {
		for _, shape := range shapes {
			for _, tp := range []Type{Float32, Float64} {
				n := 1
				for _, s := range shape {
					n *= s
				}
				src := make([]byte, n*tp.Size())
				vals := make([]float64, n)
				for i := range vals {
					v := 100*math.Sin(float64(i)*0.05) + 3*math.Cos(float64(i*i%97))
					if tp == Float32 {
						v = float64(float32(v))
						binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(float32(v)))
					} else {
						binary.LittleEndian.PutUint64(src[8*i:], math.Float64bits(v))
					}
					vals[i] = v
				}
				if tp == Float32 && tol < 1e-5 {
					continue // below float32's resolution at this magnitude
				}
				p, _ := FixedAccuracy(tol)
				enc, err := Compress(nil, src, tp, shape, p)
				if err != nil {
					t.Fatal(err)
				}
				dst := make([]byte, len(src))
				if _, err := Decompress(dst, enc); err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for i, v := range vals {
					var g float64
					if tp == Float32 {
						g = float64(math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:])))
					} else {
						g = math.Float64frombits(binary.LittleEndian.Uint64(dst[8*i:]))
					}
					worst = max(worst, math.Abs(g-v))
				}
				if worst > tol {
					t.Errorf("%s %v tolerance %g: error %g", tp, shape, tol, worst)
				}
				if worst == 0 && tol >= 1e-3 {
					t.Errorf("%s %v tolerance %g: lossless, suspicious", tp, shape, tol)
				}
			}
		}
	}
}
