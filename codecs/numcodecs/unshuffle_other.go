//go:build !amd64 || purego

package numcodecs

const haveUnshuffleKernel = false

func unshuffleKernel(dst, src []byte, k, n int) int { return 0 }
