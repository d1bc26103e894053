package zfp_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs/zfp"
)

// Compress a 2-D float64 array with an error tolerance, as
// zfpy.compress_numpy(a, tolerance=1e-3) does, and decode it.
func Example() {
	const ny, nx = 16, 20
	src := make([]byte, ny*nx*8)
	for i := 0; i < ny*nx; i++ {
		v := math.Sin(float64(i%nx)/4) * math.Cos(float64(i/nx)/5)
		binary.LittleEndian.PutUint64(src[8*i:], math.Float64bits(v))
	}
	p, err := zfp.FixedAccuracy(1e-3)
	if err != nil {
		panic(err)
	}
	enc, err := zfp.Compress(nil, src, zfp.Float64, []int{ny, nx}, p)
	if err != nil {
		panic(err)
	}
	dst := make([]byte, len(src))
	h, err := zfp.Decompress(dst, enc)
	if err != nil {
		panic(err)
	}
	worst := 0.0
	for i := 0; i < ny*nx; i++ {
		a := math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
		b := math.Float64frombits(binary.LittleEndian.Uint64(dst[8*i:]))
		worst = max(worst, math.Abs(a-b))
	}
	fmt.Println(h.Type, h.Shape, h.Params.Mode() == zfp.ModeFixedAccuracy)
	fmt.Println("smaller:", len(enc) < len(src)/4, "within tolerance:", worst <= 1e-3)
	// Output:
	// double [16 20] true
	// smaller: true within tolerance: true
}
