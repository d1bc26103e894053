package cache

import "github.com/gozarr/gozarr/internal/offheap"

// mapPopulate is the mmap flag that faults a frame's pages in as it is
// mapped (0 where there is none).
const mapPopulate = offheap.MapPopulate

// mapBytes returns n bytes of fresh memory outside the Go heap, its pages
// faulted in (capacity rounded up to whole pages). Free them with
// unmapBytes.
func mapBytes(n int) ([]byte, error) { return offheap.Map(n, true) }

func unmapBytes(b []byte) { offheap.Unmap(b) }

// reserveBytes maps n bytes of address space without committing memory:
// pages become resident when first written.
func reserveBytes(n int64) ([]byte, error) { return offheap.Reserve(n) }

// dropPages gives the pages wholly inside b back to the system (where it
// can): they read as zeros if touched again.
func dropPages(b []byte) { offheap.DropPages(b) }
