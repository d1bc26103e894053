//go:build !purego

package shuffle

// SSE2 is part of the amd64 baseline, so these kernels need no CPU
// feature detection. Build with -tags purego for no kernels.

//go:noescape
func unshuffle2SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle4SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle8SSE2(dst, src *byte, n, blocks int)

// HaveKernels reports whether Unshuffle has assembly kernels on this
// platform.
const HaveKernels = true

// Unshuffle interleaves the first elements of the k planes of src (each n
// bytes long) into dst as k-byte elements, for k 2, 4 or 8, and returns how
// many elements it did: a multiple of 16, the rest left to the caller's
// scalar loop (0 for other k, or when src or dst is shorter than k*n).
func Unshuffle(dst, src []byte, k, n int) int {
	blocks := n / 16
	if blocks == 0 || len(src) < n*k || len(dst) < n*k {
		return 0
	}
	switch k {
	case 2:
		unshuffle2SSE2(&dst[0], &src[0], n, blocks)
	case 4:
		unshuffle4SSE2(&dst[0], &src[0], n, blocks)
	case 8:
		unshuffle8SSE2(&dst[0], &src[0], n, blocks)
	default:
		return 0
	}
	return blocks * 16
}
