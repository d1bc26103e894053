package numcodecs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestUnshuffleKernel: transpose's unshuffle of 2-, 4- and 8-byte
// elements (the SIMD kernel where there is one) equals the definition,
// for element counts around the kernel's 16-element step.
func TestUnshuffleKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, k := range []int{2, 3, 4, 8} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 1000, 4099} {
			src := make([]byte, k*n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			want := make([]byte, k*n)
			for i := range n {
				for j := range k {
					want[i*k+j] = src[j*n+i]
				}
			}
			got := make([]byte, k*n+7)
			transpose(got, src, k, n)
			if !bytes.Equal(got[:k*n], want) {
				t.Errorf("k %d n %d: unshuffle differs", k, n)
			}
			if !bytes.Equal(got[k*n:], make([]byte, 7)) {
				t.Errorf("k %d n %d: wrote past the output", k, n)
			}
		}
	}
}

// BenchmarkUnshuffle: unshuffles of 256 KiB (a NetCDF chunk of 256x256
// float32), and a copy of as much, the limit, in the same run.
func BenchmarkUnshuffle(b *testing.B) {
	b.Run("copy", func(b *testing.B) {
		src, dst := make([]byte, 1<<18), make([]byte, 1<<18)
		b.SetBytes(1 << 18)
		b.ReportAllocs()
		for b.Loop() {
			copy(dst, src)
		}
	})
	for _, k := range []int{2, 4, 8} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			n := 256 * 256 * 4 / k
			src := make([]byte, k*n)
			dst := make([]byte, k*n)
			b.SetBytes(int64(k * n))
			b.ReportAllocs()
			for b.Loop() {
				transpose(dst, src, k, n)
			}
		})
	}
}
