//go:build !unix

package fs

// mapCache is the cache of mappings Map keeps on Unix; elsewhere nothing
// is mapped and there is none.
type mapCache struct{}

// initMaps does nothing: only Unix maps values.
func (s *Store) initMaps() {}

// drop does nothing.
func (c *mapCache) drop(string) {}

// close does nothing.
func (c *mapCache) close() {}
