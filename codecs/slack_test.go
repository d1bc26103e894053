package codecs

import (
	"bytes"
	"math"
	"testing"
)

// TestZstdDecodeSlack decodes a multi-block zstd frame three ways: into an
// exact buffer, into one with DecodeSlack spare capacity, and into a capped
// sub-slice of a larger buffer whose following bytes must stay untouched.
func TestZstdDecodeSlack(t *testing.T) {
	src := make([]byte, 600<<10)
	for i := range src {
		src[i] = byte(math.Sin(float64(i)/300)*40) + byte(i%7)
	}
	z, err := NewZstd(1, false)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := z.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	n := len(src)
	for name, dst := range map[string][]byte{
		"exact": make([]byte, 0, n),
		"slack": make([]byte, 0, n+DecodeSlack),
	} {
		out, err := z.Decode(dst, enc, n)
		if err != nil || !bytes.Equal(out, src) || &out[0] != &dst[:1][0] {
			t.Fatalf("%s: err %v, equal %v, in place %v", name, err, bytes.Equal(out, src), err == nil && &out[0] == &dst[:1][0])
		}
	}
	big := bytes.Repeat([]byte{0xAB}, n+DecodeSlack)
	out, err := z.Decode(big[:0:n], enc, n)
	if err != nil || !bytes.Equal(out, src) {
		t.Fatalf("capped: %v", err)
	}
	for i, b := range big[n:] {
		if b != 0xAB {
			t.Fatalf("byte %d past a capped output was overwritten", i)
		}
	}
	// A frame larger than the limit is refused even with slack to spare.
	if _, err := z.Decode(make([]byte, 0, n+DecodeSlack), enc, n-1); err == nil {
		t.Fatal("frame larger than the limit accepted")
	}
}
