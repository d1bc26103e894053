//go:build unix

package loader

import (
	"os"
	"syscall"
)

var pageSize = os.Getpagesize()

// mapBytes returns n bytes of anonymous memory outside the Go heap, so
// that windows held do not raise the garbage collector's heap goal (which
// would let garbage grow as large as the budget beside them); nil when the
// system refuses.
func mapBytes(n int) []byte {
	size := (n + pageSize - 1) &^ (pageSize - 1)
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b[:n]
}

// unmapBytes frees memory from mapBytes.
func unmapBytes(b []byte) { _ = syscall.Munmap(b[:cap(b)]) }
