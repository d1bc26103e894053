//go:build unix

package cache

import (
	"os"
	"syscall"
	"unsafe"
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
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapNoReserve)
}

// dropPages gives the pages wholly inside b back to the system; they read
// as zeros if touched again.
func dropPages(b []byte) {
	start := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(pageSize) - 1) &^ uintptr(pageSize-1)
	end := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))) &^ uintptr(pageSize-1)
	if end <= start {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	syscall.Madvise(b[start-base:end-base], syscall.MADV_DONTNEED)
}
