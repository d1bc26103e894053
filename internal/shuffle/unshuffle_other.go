//go:build !amd64 || purego

package shuffle

// HaveKernels reports whether Unshuffle has assembly kernels on this
// platform.
const HaveKernels = false

// Unshuffle does nothing on this platform and returns 0: the caller's
// scalar loop does every element.
func Unshuffle(dst, src []byte, k, n int) int { return 0 }
