//go:build unix && !linux

package offheap

// MapPopulate is 0: the system has no flag to fault pages in with mmap.
const MapPopulate = 0

const mapNoReserve = 0

// DropPages is not available here: pages stay resident until reused.
func DropPages([]byte) {}
