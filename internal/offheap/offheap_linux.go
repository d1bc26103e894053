package offheap

import (
	"syscall"
	"unsafe"
)

// MapPopulate is the mmap flag that faults a new mapping's pages in with
// the call, which costs less than faulting them in one by one as they are
// first written (0 where the system has none).
const MapPopulate = syscall.MAP_POPULATE

// mapNoReserve reserves address space without committing swap for it.
const mapNoReserve = syscall.MAP_NORESERVE

// DropPages gives the pages wholly inside b back to the system; they read
// as zeros if touched again.
func DropPages(b []byte) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (base + uintptr(pageSize) - 1) &^ uintptr(pageSize-1)
	end := (base + uintptr(len(b))) &^ uintptr(pageSize-1)
	if end <= start {
		return
	}
	_ = syscall.Madvise(b[start-base:end-base], syscall.MADV_DONTNEED)
}
