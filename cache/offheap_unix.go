//go:build unix

package cache

import (
	"math"
	"os"
	"syscall"
)

var pageSize = os.Getpagesize()

// mapBytes returns n bytes of fresh anonymous memory outside the Go heap
// (capacity rounded up to whole pages). Free them with unmapBytes.
func mapBytes(n int) ([]byte, error) {
	size := (n + pageSize - 1) &^ (pageSize - 1)
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapPopulate)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// unmapBytes frees memory from mapBytes.
func unmapBytes(b []byte) { syscall.Munmap(b[:cap(b)]) }

// reserveBytes maps n bytes of address space without committing memory:
// pages become resident when first written.
func reserveBytes(n int64) ([]byte, error) {
	if n <= 0 || n > int64(math.MaxInt) {
		return nil, syscall.EINVAL // no such mapping on a 32-bit platform
	}
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapNoReserve)
}
