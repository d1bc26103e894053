package sharding

import (
	"fmt"
	"sync"
	"testing"
)

// TestIndexCacheSecondChance: an index used since it was added survives
// the eviction that takes the unused one behind it, and hits and misses
// are counted without the lock (by entry, summed in Stats).
func TestIndexCacheSecondChance(t *testing.T) {
	ix := NewEmptyIndex(10)
	c := NewIndexCache(3 * MemSize(ix))
	for i := range 3 {
		c.Add("s", "k", int64(i), 0, ix)
	}
	if _, ok := c.Get("s", "k", 0, 0); !ok { // the oldest, now used
		t.Fatal("entry 0 missing")
	}
	c.Add("s", "k", 3, 0, ix) // evicts 1, the oldest unused
	for i, want := range []bool{true, false, true, true} {
		if _, ok := c.Get("s", "k", int64(i), 0); ok != want {
			t.Errorf("entry %d held %v, want %v", i, ok, want)
		}
	}
	if st := c.Stats(); st.Hits != 4 || st.Misses != 1 || st.Entries != 3 {
		t.Errorf("stats %+v, want 4 hits, 1 miss, 3 entries", st)
	}
	c.Invalidate("s", "k")
	if st := c.Stats(); st.Hits != 4 || st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("after Invalidate: %+v (hits of dropped entries are kept)", st)
	}
}

// TestIndexCacheConcurrent hammers Get against Add, Invalidate and Clear
// (run with -race): an index served is always the one added for its key.
func TestIndexCacheConcurrent(t *testing.T) {
	ixs := make([]*Index, 8)
	for i := range ixs {
		ixs[i] = NewEmptyIndex(10 + i)
	}
	c := NewIndexCache(4 * MemSize(ixs[0]))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i*7 + g) % len(ixs)
				key := fmt.Sprint("k", k)
				switch i % 11 {
				case 0, 1, 2:
					c.Add("s", key, 0, 0, ixs[k])
				case 3:
					c.Invalidate("s", key)
				case 4:
					if g == 0 {
						c.Clear()
					}
				default:
					if got, ok := c.Get("s", key, 0, 0); ok && got != ixs[k] {
						t.Errorf("%s: another key's index", key)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > st.MaxBytes || st.Entries > 4 {
		t.Errorf("stats %+v", st)
	}
}
