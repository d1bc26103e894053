//go:build unix

package offheap

import (
	"math"
	"os"
	"syscall"
)

var pageSize = os.Getpagesize()

// Map returns n bytes of fresh anonymous memory outside the Go heap
// (capacity rounded up to whole pages), its pages faulted in by the call
// when populate is set and the system can (MapPopulate). Free them with
// Unmap.
func Map(n int, populate bool) ([]byte, error) {
	if n <= 0 {
		return nil, syscall.EINVAL
	}
	size := (n + pageSize - 1) &^ (pageSize - 1)
	flags := syscall.MAP_ANON | syscall.MAP_PRIVATE
	if populate {
		flags |= MapPopulate
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, flags)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// Unmap frees memory from Map or Reserve.
func Unmap(b []byte) { _ = syscall.Munmap(b[:cap(b)]) }

// Reserve maps n bytes of address space without committing memory: pages
// become resident when first written.
func Reserve(n int64) ([]byte, error) {
	if n <= 0 || n > int64(math.MaxInt) {
		return nil, syscall.EINVAL // no such mapping on a 32-bit platform
	}
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapNoReserve)
}
