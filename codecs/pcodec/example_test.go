package pcodec_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs/pcodec"
)

// Compress and Decompress work on little-endian numbers in byte slices.
func Example() {
	raw := make([]byte, 8*1000)
	for i := range 1000 {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(float64(i)*0.25))
	}
	enc, err := pcodec.Compress(nil, raw, pcodec.F64, pcodec.DefaultEncodeOptions())
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(raw))
	if err := pcodec.Decompress(out, enc, pcodec.F64); err != nil {
		panic(err)
	}
	fmt.Println(math.Float64frombits(binary.LittleEndian.Uint64(out[8*999:])), len(enc) < len(raw)/10)
	// Output: 249.75 true
}
