//go:build unix

package fs

// MapCounts returns how many mappings Map has made and how many it has
// unmapped, over every store of the process.
func MapCounts() (maps, unmaps int64) { return mmaps.Load(), munmaps.Load() }

// MapCacheStats returns the mappings s's cache holds, how many of them
// are idle (held by no reader) and the bytes they map; zeros when the
// cache is disabled.
func MapCacheStats(s *Store) (entries, idle int, bytes int64) {
	c := s.maps
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for m := c.idle.next; m != &c.idle; m = m.next {
		idle++
	}
	return len(c.byKey), idle, c.bytes
}
