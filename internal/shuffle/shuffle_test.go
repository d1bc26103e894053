package shuffle

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestUnshuffle checks the kernels against the definition, element by
// element, for every kernel width and lengths around the 16-element step;
// the elements the kernel leaves are checked untouched.
func TestUnshuffle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 4, 8} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 100, 1000} {
			src := make([]byte, k*n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			want := make([]byte, k*n)
			for e := range n {
				for b := range k {
					want[e*k+b] = src[b*n+e]
				}
			}
			got := make([]byte, k*n)
			done := Unshuffle(got, src, k, n)
			if done%16 != 0 || done > n || (HaveKernels && (k == 2 || k == 4 || k == 8) && done != n/16*16) {
				t.Fatalf("k=%d n=%d: did %d elements", k, n, done)
			}
			if !bytes.Equal(got[:done*k], want[:done*k]) {
				t.Fatalf("k=%d n=%d: wrong bytes", k, n)
			}
			if !bytes.Equal(got[done*k:], make([]byte, (n-done)*k)) {
				t.Fatalf("k=%d n=%d: wrote past the %d elements it reported", k, n, done)
			}
		}
	}
}
