package blosc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// TestTrailingBytes checks finding 12 of issue 11: a chunk holding a frame
// followed by more bytes (z5 writes 16 after the frame, zarr++ 16
// elements) decodes through a chain, as c-blosc reads it, from the frame's
// own cbytes, and fits the chain's MaxEncodedSize (which readers use to
// refuse oversized chunks); a frame whose cbytes exceeds the chunk stays
// ErrCorrupt.
func TestTrailingBytes(t *testing.T) {
	const n = 48 // int32 elements
	random := make([]byte, 4*n)
	for i := range random { // incompressible: a stored frame, cbytes = nbytes + 16
		random[i] = byte(i*131 + i*i*17)
	}
	for _, tc := range []struct {
		name     string
		clevel   int
		data     []byte
		trailing int
	}{
		{"stored frame, z5", 0, random, 16},
		{"compressed frame, z5", 5, genData(4*n, 4, 9), 16},
		{"stored frame, zarr++ int32", 0, random, 16 * 4},
		{"stored frame, no trailing bytes", 0, random, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"cname":"lz4","clevel":%d,"shuffle":"shuffle","blocksize":0}`, tc.clevel)
			chain, err := codecs.NewChain([]codecs.Spec{
				{Name: "bytes", Configuration: json.RawMessage(`{"endian":"little"}`)},
				{Name: "blosc", Configuration: json.RawMessage(cfg)},
			}, codecs.ChunkRepr{Shape: []int{n}, DType: dtype.TypeInt32, Fill: make([]byte, 4)})
			if err != nil {
				t.Fatal(err)
			}
			frame, err := chain.Encode(nil, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			chunk := append(bytes.Clone(frame), make([]byte, tc.trailing)...)
			if len(chunk) > chain.MaxEncodedSize() {
				t.Errorf("chunk of %d bytes (frame %d) over MaxEncodedSize %d", len(chunk), len(frame), chain.MaxEncodedSize())
			}
			got := make([]byte, len(tc.data))
			if err := chain.Decode(got, chunk); err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("decode: %v", err)
			}
			if err := chain.Decode(got, frame[:len(frame)-1]); !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("frame one byte short: %v, want ErrCorrupt", err)
			}
		})
	}
}
