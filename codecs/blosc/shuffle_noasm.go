//go:build purego || !amd64

package blosc

// haveAsm reports whether assembly kernels are in use.
const haveAsm = false

// unshuffleAsm is the stub of the assembly kernels: it does nothing.
func unshuffleAsm(dst, src []byte, ts, n int) int { return 0 }

// bitRowsAsm is the stub of the assembly kernel: it does nothing.
func bitRowsAsm(out, rows []byte, rl int) int { return 0 }
