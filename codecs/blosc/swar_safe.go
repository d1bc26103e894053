//go:build !(amd64 || arm64 || ppc64le || loong64 || 386 || wasm)

package blosc

// unshuffleWords does nothing where the unsafe word kernels are not built
// (big-endian architectures, or costly unaligned loads): the safe kernels
// do the work.
func unshuffleWords(dst, src []byte, ts, n, i0, nv int) int { return i0 }

// bitRowsWords does nothing where the unsafe word kernels are not built.
func bitRowsWords(out, rows []byte, rl, c0 int) int { return c0 }
