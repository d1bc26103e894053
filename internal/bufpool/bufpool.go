// Package bufpool recycles large byte buffers by size class, so that
// buffers of different sizes (whole shards, coalesced ranges, chunks) do not
// evict one another from a single pool: a request is served only by a
// buffer of its own class. Classes step by a quarter of a power of two, so
// a buffer is at most 25% larger than asked for. Buffers are held by
// sync.Pools, so idle ones are released at garbage collection.
package bufpool

import (
	"math/bits"
	"sync"
)

// minClass is the smallest class: 4 KiB. Smaller requests share it.
const minClass = 12

// pools[c] holds buffers of capacity classSize(c).
var pools [64 * 4]sync.Pool

// class returns the size class of n and its capacity.
func class(n int) (int, int) {
	if n <= 1<<minClass {
		return minClass * 4, 1 << minClass
	}
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	base := 1 << (e - 1)
	step := base / 4
	q := (n - base + step - 1) / step // 1..4 quarters above base
	return (e-1)*4 + q, base + q*step
}

// Get returns a buffer of length n, from the pool of its class or new.
func Get(n int) *[]byte {
	c, size := class(n)
	if b, ok := pools[c].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, size)
	return &b
}

// Put returns a buffer from Get to its pool. Buffers of other capacities
// are dropped.
func Put(b *[]byte) {
	if b == nil {
		return
	}
	c, size := class(cap(*b))
	if size != cap(*b) {
		return
	}
	pools[c].Put(b)
}
