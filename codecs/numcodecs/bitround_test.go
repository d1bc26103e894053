package numcodecs

import (
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// TestBitRoundV3Signed rounds int8 magnitudes from their top set bit, ties
// to even, saturating where rounding would leave the type.
func TestBitRoundV3Signed(t *testing.T) {
	b, err := NewBitRoundV3(3)
	if err != nil {
		t.Fatal(err)
	}
	in := []int8{0, 1, -1, 11, -11, 123, -123, 127, -128, -100}
	want := []int8{0, 1, -1, 12, -12, 112, -128, 112, -128, -96}
	src := make([]byte, len(in))
	for i, v := range in {
		src[i] = byte(v)
	}
	dst := make([]byte, len(src))
	repr := codecs.ChunkRepr{Shape: []int{len(in)}, DType: dtype.TypeInt8, Fill: []byte{0}}
	if err := b.Encode(dst, src, repr); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if int8(dst[i]) != want[i] {
			t.Errorf("%d -> %d, want %d", in[i], int8(dst[i]), want[i])
		}
	}
	if _, err := b.EncodedRepr(codecs.ChunkRepr{Shape: []int{1}, DType: dtype.TypeBool}); err == nil {
		t.Error("bool accepted")
	}
	if _, err := NewBitRoundV3(0); err == nil {
		t.Error("keepbits 0 accepted")
	}
}
