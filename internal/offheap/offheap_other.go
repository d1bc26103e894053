//go:build !unix

package offheap

// MapPopulate is 0: there are no mappings.
const MapPopulate = 0

// Map fails: there are no anonymous mappings; use the Go heap.
func Map(int, bool) ([]byte, error) { return nil, errUnsupported }

// Unmap does nothing.
func Unmap([]byte) {}

// Reserve fails: there are no anonymous mappings.
func Reserve(int64) ([]byte, error) { return nil, errUnsupported }

// DropPages does nothing.
func DropPages([]byte) {}
