package sharding

import "github.com/gozarr/gozarr/nd"

// Internals the external tests (package sharding_test) check.

// MortonOrder is mortonOrder.
var MortonOrder = mortonOrder

// AllFill is nd.IsFilled.
var AllFill = nd.IsFilled

// Coords returns the coordinates within the shard of inner chunk i.
func Coords(l *Layout, i int) []int { return l.coords(i) }

// NewEmptyIndex returns an index of n missing inner chunks.
func NewEmptyIndex(n int) *Index {
	ix := &Index{e: make([]int64, 2*n)}
	for i := range ix.e {
		ix.e[i] = -1
	}
	return ix
}

// EncodeIndex is l.encodeIndex.
func EncodeIndex(l *Layout, dst []byte, entries []uint64) ([]byte, error) {
	return l.encodeIndex(dst, entries)
}

// MemSize is ix.memSize.
func MemSize(ix *Index) int64 { return ix.memSize() }
