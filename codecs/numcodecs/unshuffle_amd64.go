//go:build !purego

package numcodecs

// haveUnshuffleKernel: the SSE2 kernels (SSE2 is part of amd64's baseline).
const haveUnshuffleKernel = true

// unshuffle2SSE2, unshuffle4SSE2 and unshuffle8SSE2 interleave the k
// planes of src (each n bytes long, one after the other) into dst for
// the first blocks*16 elements (blocks*16 <= n): HDF5's and numcodecs'
// unshuffle of k-byte elements, 16 elements per iteration.
//
//go:noescape
func unshuffle2SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle4SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle8SSE2(dst, src *byte, n, blocks int)

// unshuffleKernel unshuffles the first n/16*16 elements of k-byte
// elements (k 2, 4 or 8) and returns how many it did.
func unshuffleKernel(dst, src []byte, k, n int) int {
	blocks := n / 16
	if blocks == 0 || len(src) < k*n || len(dst) < k*n {
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
