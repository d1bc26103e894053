//go:build !purego

package blosc

// SSE2 is part of the amd64 baseline, so these kernels need no CPU
// feature detection. Build with -tags purego for the pure-Go kernels.

//go:noescape
func unshuffle2SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle4SSE2(dst, src *byte, n, blocks int)

//go:noescape
func unshuffle8SSE2(dst, src *byte, n, blocks int)

// haveAsm reports whether assembly kernels are in use.
const haveAsm = true

// unshuffleAsm unshuffles the first elements of a block of n elements of
// type size ts with assembly and returns how many it did (a multiple of 16;
// 0 for type sizes without a kernel).
func unshuffleAsm(dst, src []byte, ts, n int) int {
	blocks := n / 16
	if blocks == 0 || len(src) < n*ts || len(dst) < n*ts {
		return 0
	}
	switch ts {
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

//go:noescape
func transposeBitsSSE2(p *byte, n int)

// bitRowsAsm turns the 8 bit rows of rl bytes in rows into the byte stream
// out (8*rl bytes) for the first columns, and returns how many columns it
// did (a multiple of 16): a byte transpose of the 8 rows (the 8-stream
// unshuffle kernel) followed by an in-place bit transpose of every word.
func bitRowsAsm(out, rows []byte, rl int) int {
	blocks := rl / 16
	if blocks == 0 || len(rows) < 8*rl || len(out) < 8*rl {
		return 0
	}
	unshuffle8SSE2(&out[0], &rows[0], rl, blocks)
	transposeBitsSSE2(&out[0], blocks*8)
	return blocks * 16
}
