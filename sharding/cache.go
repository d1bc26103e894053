package sharding

import (
	"container/list"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"
)

// DefaultIndexCacheBytes is the IndexCache bound NewIndexCache uses for a
// non-positive size, and the bound of an array's own index cache (package
// zarr): 16 MiB, the indexes of about a million inner chunks.
const DefaultIndexCacheBytes int64 = 16 << 20

// IndexCache keeps decoded shard indexes, least recently used first out,
// bounded by the bytes they hold. Entries are keyed by (store identity,
// key, byte range), so the indexes of shards nested in one object are
// kept apart. Concurrent misses of one index fetch it once. An IndexCache
// is safe for concurrent use and may be shared by many arrays and stores.
//
// The cache does not know when a shard changes: a writer that replaces or
// deletes a shard must call Invalidate (the gozarr pipeline does). Missing
// shards are not cached.
//
// A hit takes no lock (a concurrent map and atomic marks): recency is kept
// by second chance, the CLOCK approximation of LRU — the index at the back
// is evicted only if it was not used since it last came round.
type IndexCache struct {
	mu       sync.Mutex
	max      int64
	used     int64
	lru      list.List                        // of *cacheEntry, most recently placed at the front
	entries  sync.Map                         // cacheKey → *cacheEntry; written under mu
	n        int                              // entries held
	byKey    map[objKey]map[cacheKey]struct{} // entries per object
	sf       singleflight.Group
	hitsGone int64 // hits of entries no longer held
	misses   atomic.Int64
}

type objKey struct{ store, key string }

// cacheKey names one shard: the byte range [base, base+size) of an object
// (size 0: to its end), so a shard nested at offset 0 of an outer shard is
// not the outer shard.
type cacheKey struct {
	objKey
	base, size int64
}

type cacheEntry struct {
	k    cacheKey
	ix   *Index
	elem *list.Element // under IndexCache.mu
	ref  atomic.Bool   // used since it last came round
	hits atomic.Int64
}

// CacheStats are an IndexCache's counters.
type CacheStats struct {
	Hits, Misses int64 // lookups by Read that found / did not find an index
	Entries      int   // indexes held
	Bytes        int64 // bytes held (an estimate: 16 per inner chunk plus overhead)
	MaxBytes     int64 // the bound
}

// NewIndexCache returns an empty cache holding at most maxBytes of indexes
// (DefaultIndexCacheBytes when maxBytes ≤ 0).
func NewIndexCache(maxBytes int64) *IndexCache {
	if maxBytes <= 0 {
		maxBytes = DefaultIndexCacheBytes
	}
	return &IndexCache{max: maxBytes, byKey: map[objKey]map[cacheKey]struct{}{}}
}

// lookup returns the entry of k, without a lock.
func (c *IndexCache) lookup(k cacheKey) (*cacheEntry, bool) {
	v, ok := c.entries.Load(k)
	if !ok {
		return nil, false
	}
	return v.(*cacheEntry), true
}

// Get returns the cached index of the shard of size bytes at base in key
// of the store storeID (size 0: up to the end of the value, as in
// a shard nested in another), counting a hit or a miss.
func (c *IndexCache) Get(storeID, key string, base, size int64) (*Index, bool) {
	if e, ok := c.lookup(cacheKey{objKey{storeID, key}, base, size}); ok {
		if !e.ref.Load() {
			e.ref.Store(true)
		}
		e.hits.Add(1)
		return e.ix, true
	}
	c.misses.Add(1)
	return nil, false
}

// peek returns a cached index without counting a hit or a miss.
func (c *IndexCache) peek(storeID, key string, base, size int64) (*Index, bool) {
	if e, ok := c.lookup(cacheKey{objKey{storeID, key}, base, size}); ok {
		return e.ix, true
	}
	return nil, false
}

// Add puts ix in the cache, evicting the least recently used indexes to
// stay within the bound. An index larger than the whole bound is not kept.
func (c *IndexCache) Add(storeID, key string, base, size int64, ix *Index) {
	if ix == nil {
		return
	}
	k := cacheKey{objKey{storeID, key}, base, size}
	need := ix.memSize()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lookup(k); ok {
		c.remove(e)
	}
	if need > c.max {
		return
	}
	chances := c.n // second chances this add gives at most: then evict anyway
	for c.used+need > c.max {
		e := c.lru.Back().Value.(*cacheEntry)
		if chances > 0 && e.ref.Load() {
			chances--
			e.ref.Store(false)
			c.lru.MoveToFront(e.elem)
			continue
		}
		c.remove(e)
	}
	e := &cacheEntry{k: k, ix: ix}
	e.elem = c.lru.PushFront(e)
	c.entries.Store(k, e)
	c.n++
	c.used += need
	keys := c.byKey[k.objKey]
	if keys == nil {
		keys = map[cacheKey]struct{}{}
		c.byKey[k.objKey] = keys
	}
	keys[k] = struct{}{}
}

// remove drops e; c.mu is held.
func (c *IndexCache) remove(e *cacheEntry) {
	c.lru.Remove(e.elem)
	c.entries.Delete(e.k)
	c.n--
	c.used -= e.ix.memSize()
	c.hitsGone += e.hits.Load()
	if keys := c.byKey[e.k.objKey]; keys != nil {
		delete(keys, e.k)
		if len(keys) == 0 {
			delete(c.byKey, e.k.objKey)
		}
	}
}

// Invalidate drops every cached index of key in the store storeID (the
// shard's own and those of shards nested in it). Call it after writing or
// deleting the shard.
func (c *IndexCache) Invalidate(storeID, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.byKey[objKey{storeID, key}] {
		if e, found := c.lookup(k); found {
			c.remove(e)
		}
	}
}

// Clear drops every index and resets nothing else.
func (c *IndexCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; e = e.Next() {
		c.hitsGone += e.Value.(*cacheEntry).hits.Load()
	}
	c.lru.Init()
	c.entries.Clear()
	clear(c.byKey)
	c.n, c.used = 0, 0
}

// Stats returns the cache's counters.
func (c *IndexCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	hits := c.hitsGone
	for e := c.lru.Front(); e != nil; e = e.Next() {
		hits += e.Value.(*cacheEntry).hits.Load()
	}
	return CacheStats{Hits: hits, Misses: c.misses.Load(), Entries: c.n, Bytes: c.used, MaxBytes: c.max}
}

// Load returns the index of the shard [base, base+size) of key in the
// store storeID names (size 0: to the end of the value) from the cache,
// or calls fetch once for all concurrent callers, and caches what it
// returns (unless the shard is missing: fetch returning nil, nil).
// A caller whose context is still live retries when the fetch it shared
// was cancelled by another caller's context.
func (c *IndexCache) Load(ctx context.Context, storeID, key string, base, size int64, fetch func(context.Context) (*Index, error)) (*Index, error) {
	sk := strconv.Itoa(len(storeID)) + ":" + storeID + strconv.Itoa(len(key)) + ":" + key + "@" + strconv.FormatInt(base, 10) + "+" + strconv.FormatInt(size, 10)
	for attempt := 0; ; attempt++ {
		v, err, _ := c.sf.Do(sk, func() (any, error) {
			// Another caller's fetch may have finished (and left the
			// single-flight group) between our cache miss and now.
			if ix, ok := c.peek(storeID, key, base, size); ok {
				return ix, nil
			}
			ix, err := fetch(ctx)
			if err == nil && ix != nil {
				c.Add(storeID, key, base, size, ix)
			}
			return ix, err
		})
		if err != nil && attempt == 0 && ctx.Err() == nil &&
			(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ix, _ := v.(*Index)
		return ix, nil
	}
}
