package cache

import (
	"syscall"
	"unsafe"
)

// mapPopulate faults a new mapping's pages in with the mmap call, which
// costs less than faulting them in one by one as the frame is copied.
const mapPopulate = syscall.MAP_POPULATE

// mapNoReserve reserves address space without committing swap for it.
const mapNoReserve = syscall.MAP_NORESERVE

// dropPages gives the pages wholly inside b back to the system; they read
// as zeros if touched again.
func dropPages(b []byte) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (base + uintptr(pageSize) - 1) &^ uintptr(pageSize-1)
	end := (base + uintptr(len(b))) &^ uintptr(pageSize-1)
	if end <= start {
		return
	}
	syscall.Madvise(b[start-base:end-base], syscall.MADV_DONTNEED)
}
