package cache

import "runtime"

func runtimeGosched() { runtime.Gosched() }

// held returns the record of key (which must be held), shared with the
// cache: a test may corrupt its value.
func (c *core[V]) held(key string) *entry[V] {
	n, _ := c.lookup(key)
	return &n.en
}
