package icechunk

import (
	"container/list"
	"context"
	"sync"

	"golang.org/x/sync/singleflight"
)

// objCache holds parsed snapshots and manifests under one byte budget,
// least recently used first out. Loads of one object are single-flight.
type objCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    *list.List // of *cacheEntry, most recent at the front
	byKey  map[string]*list.Element
	sf     singleflight.Group
	loads  int64
}

type cacheEntry struct {
	key  string
	val  any
	size int64
	refs int64 // chunk refs held (manifests)
}

func newObjCache(budget int64) *objCache {
	return &objCache{budget: budget, lru: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the cached value for key, or loads it with load, which
// returns the value, its size in bytes and the chunk refs it holds.
func (c *objCache) get(ctx context.Context, key string, load func(ctx context.Context) (any, int64, int64, error)) (any, error) {
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		v := e.Value.(*cacheEntry).val
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, err, _ := c.sf.Do(key, func() (any, error) {
		v, size, refs, err := load(ctx)
		if err != nil {
			return nil, err
		}
		c.put(key, v, size, refs)
		return v, nil
	})
	return v, err
}

func (c *objCache) put(key string, v any, size, refs int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads++
	if _, ok := c.byKey[key]; ok || size > c.budget {
		return // too big to hold: the caller still gets it, nothing else keeps it
	}
	c.byKey[key] = c.lru.PushFront(&cacheEntry{key: key, val: v, size: size, refs: refs})
	c.used += size
	for c.used > c.budget {
		e := c.lru.Back()
		ce := e.Value.(*cacheEntry)
		c.lru.Remove(e)
		delete(c.byKey, ce.key)
		c.used -= ce.size
	}
}

// CacheStats reports what a Repository's cache holds.
type CacheStats struct {
	Bytes     int64 // bytes of snapshots and manifests held
	Objects   int   // objects held
	ChunkRefs int64 // chunk references in the manifests held
	Loads     int64 // objects fetched and parsed since the repository was opened
}

// BytesPerRef is the bytes held per chunk reference held (0 with none).
func (s CacheStats) BytesPerRef() float64 {
	if s.ChunkRefs == 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.ChunkRefs)
}

func (c *objCache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := CacheStats{Bytes: c.used, Objects: c.lru.Len(), Loads: c.loads}
	for e := c.lru.Front(); e != nil; e = e.Next() {
		s.ChunkRefs += e.Value.(*cacheEntry).refs
	}
	return s
}
