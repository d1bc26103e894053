package cache

import "syscall"

// mapPopulate faults a new mapping's pages in with the mmap call, which
// costs less than faulting them in one by one as the frame is copied.
const mapPopulate = syscall.MAP_POPULATE
