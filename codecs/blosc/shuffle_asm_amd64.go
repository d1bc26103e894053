//go:build !purego

package blosc

import kernels "github.com/gozarr/gozarr/internal/shuffle"

// SSE2 is part of the amd64 baseline, so these kernels need no CPU
// feature detection. Build with -tags purego for the pure-Go kernels.

// haveAsm reports whether assembly kernels are in use.
const haveAsm = true

// unshuffleAsm unshuffles the first elements of a block of n elements of
// type size ts with the shared kernels and returns how many it did (a
// multiple of 16; 0 for type sizes without a kernel).
func unshuffleAsm(dst, src []byte, ts, n int) int { return kernels.Unshuffle(dst, src, ts, n) }

//go:noescape
func transposeBitsSSE2(p *byte, n int)

// bitRowsAsm turns the 8 bit rows of rl bytes in rows into the byte stream
// out (8*rl bytes) for the first columns, and returns how many columns it
// did (a multiple of 16): a byte transpose of the 8 rows (the 8-stream
// unshuffle kernel) followed by an in-place bit transpose of every word.
func bitRowsAsm(out, rows []byte, rl int) int {
	done := kernels.Unshuffle(out, rows, 8, rl)
	if done > 0 {
		transposeBitsSSE2(&out[0], done/2)
	}
	return done
}
