//go:build unix && !linux

package cache

const mapPopulate = 0

const mapNoReserve = 0

// dropPages is not available here: free pages of an arena stay resident
// until reused.
func dropPages([]byte) {}
