package cache

import "syscall"

// mapPopulate faults a new mapping's pages in with the mmap call, which
// costs less than faulting them in one by one as the frame is copied.
const mapPopulate = syscall.MAP_POPULATE

// mapNoReserve reserves address space without committing swap for it.
const mapNoReserve = syscall.MAP_NORESERVE
