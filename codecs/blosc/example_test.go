package blosc_test

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gozarr/gozarr/codecs/blosc"
)

// Compress a buffer of float32-sized integers with lz4 and byte shuffle,
// inspect the header cheaply, then decode into a preallocated buffer.
func Example() {
	src := make([]byte, 4*100000)
	for i := range 100000 {
		binary.LittleEndian.PutUint32(src[4*i:], uint32(i/10))
	}
	frame, err := blosc.Compress(nil, src, blosc.Options{Cname: blosc.LZ4, Clevel: 5, Shuffle: blosc.ByteShuffle, Typesize: 4})
	if err != nil {
		panic(err)
	}
	nbytes, _, blocksize, typesize, _, err := blosc.FrameInfo(frame)
	if err != nil {
		panic(err)
	}
	fmt.Println(nbytes, blocksize, typesize, len(frame) < len(src)/50)

	out := make([]byte, 0, nbytes) // decoded in place, no allocation
	out, err = blosc.Decompress(out, frame, nbytes)
	fmt.Println(err, bytes.Equal(out, src))
	// Output:
	// 400000 400000 4 true
	// <nil> true
}
