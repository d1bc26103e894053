//go:build purego || !amd64

package blosc

// haveAsm reports whether assembly kernels are in use.
const haveAsm = false

// unshuffleAsm is the stub of the assembly kernels: it does nothing.
func unshuffleAsm(dst, src []byte, ts, n int) int { return 0 }
