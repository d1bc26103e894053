//go:build !linux

package cache

// punchHole is not available here: freed extents stay allocated in the
// file until reused or truncated away.
func punchHole(fileIO, int64, int64) {}
