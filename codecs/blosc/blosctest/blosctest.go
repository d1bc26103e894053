// Package blosctest generates the deterministic test data shared by the
// blosc tests and the c-blosc fixture generator in bench/cblosc, so that
// fixtures store only frames and a seed. It is safe for concurrent use.
package blosctest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Kind selects the shape of generated data.
type Kind int

const (
	// Walk is a noisy random walk of ts-byte little-endian integers: some
	// redundancy in the high bytes, noise in the low ones (typical sensor
	// data; shuffling helps, plain LZ barely).
	Walk Kind = iota
	// Ramp is a slowly varying integer sequence, highly compressible, for
	// large buffers that must stay small once compressed.
	Ramp
	// Float32 is a smooth field of float32 values rounded to 1/256, like
	// gridded model output: the benchmark data.
	Float32
)

// Data returns n bytes of kind k for element size ts (1..255), derived
// only from (k, n, ts, seed).
func Data(k Kind, n, ts int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	if k == Float32 {
		for i := 0; i+4 <= n; i += 4 {
			e := float64(i / 4)
			v := 100*math.Sin(e/500)*math.Cos(e/7919) + r.NormFloat64()*0.5
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(math.Round(v*256)/256)))
		}
		return b
	}
	var x float64
	var w [8]byte
	for i, e := 0, 0; i < n; e++ {
		var v uint64
		if k == Ramp {
			v = uint64(e/3) + uint64(seed%1000)
		} else {
			x += r.NormFloat64()
			v = uint64(int64(1000 + 50*math.Sin(float64(e)/300) + x))
		}
		binary.LittleEndian.PutUint64(w[:], v)
		for j := 0; j < ts && i < n; j++ {
			if j < 8 {
				b[i] = w[j]
			} else {
				b[i] = byte(j)
			}
			i++
		}
	}
	return b
}
