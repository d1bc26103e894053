//go:build unix

package fs

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// This file is the cache of mappings Map keeps open across reads (see
// MapCache): a service gathering from the same shards again and again
// would otherwise map every shard anew on each read, pay a minor page
// fault on the first touch of every page, and unmap it again (a TLB
// shootdown on every core). Entries are keyed by key and hold the
// identity of the file mapped (fileID): Map fstats the file it opened and
// serves the cached pages only when the identity matches, so a replaced
// or rewritten file is mapped afresh and its old mapping unmapped once its
// last reader lets go.

// fileID is the identity of a file's version, as fstat tells it: a file
// replaced (renamed over: another inode) or changed in place (a new size,
// modification or change time) has another.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

// fstatID returns the identity of the file open as fd.
func fstatID(fd int) (fileID, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileID{}, err
		}
		break
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: int64(st.Size), mtime: st.Mtim, ctime: st.Ctim}, nil
}

// mmaps and munmaps count the mappings made and unmapped, for tests.
var mmaps, munmaps atomic.Int64

// mmap maps size bytes of fd read-only and shared.
func mmap(fd int, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err == nil {
		mmaps.Add(1)
	}
	return b, err
}

// munmap unmaps b, mapped by mmap.
func munmap(b []byte) {
	munmaps.Add(1)
	unix.Munmap(b)
}

// mapping is one version of a key's file mapped, shared by the readers
// holding it and, while it is the key's current entry, kept by the cache
// once none does.
type mapping struct {
	key  string
	id   fileID
	data []byte
	// Guarded by mapCache.mu.
	refs       int      // readers holding it
	cached     bool     // the key's entry in mapCache.byKey
	prev, next *mapping // in mapCache.idle while cached and refs == 0
}

// mapCache holds the mappings of a store: every key's current one, held
// by readers or idle (unreferenced, in LRU order), within a bound on the
// bytes and the number of them; held mappings are never unmapped, so the
// bound is exceeded only by mappings in use. One mutex guards it, held for
// a lookup or an update only: files are opened, fstat-ed, mapped and
// unmapped outside it.
type mapCache struct {
	mu       sync.Mutex
	byKey    map[string]*mapping
	idle     mapping // sentinel: idle.next is the most recently released
	bytes    int64   // mapped by the entries of byKey
	maxBytes int64
	maxCount int
	closed   bool
}

// newMapCache returns a cache within maxBytes and maxCount mappings.
func newMapCache(maxBytes int64, maxCount int) *mapCache {
	c := &mapCache{byKey: make(map[string]*mapping), maxBytes: maxBytes, maxCount: maxCount}
	c.idle.prev, c.idle.next = &c.idle, &c.idle
	return c
}

// initMaps sets up the store's mapping cache, if enabled, and arranges
// for a store that becomes unreachable to unmap its idle mappings.
func (s *Store) initMaps() {
	if s.mapBytes <= 0 || s.mapCount <= 0 {
		return
	}
	s.maps = newMapCache(s.mapBytes, s.mapCount)
	runtime.AddCleanup(s, func(c *mapCache) { c.close() }, s.maps)
}

// unlink takes m out of the idle list.
func (c *mapCache) unlink(m *mapping) {
	m.prev.next, m.next.prev = m.next, m.prev
	m.prev, m.next = nil, nil
}

// remove takes m out of byKey (and the idle list), and returns its bytes
// if nobody holds it, for the caller to unmap once the lock is released.
func (c *mapCache) remove(m *mapping) []byte {
	delete(c.byKey, m.key)
	m.cached = false
	c.bytes -= int64(len(m.data))
	if m.refs > 0 {
		return nil
	}
	c.unlink(m)
	return m.data
}

// trim evicts idle mappings, the least recently released first, until
// the cache is within its bound or holds no idle one, and returns their
// bytes to unmap.
func (c *mapCache) trim(victims [][]byte) [][]byte {
	for (len(c.byKey) > c.maxCount || c.bytes > c.maxBytes) && c.idle.prev != &c.idle {
		victims = append(victims, c.remove(c.idle.prev))
	}
	return victims
}

// unmapAll unmaps every mapping of victims.
func unmapAll(victims [][]byte) {
	for _, b := range victims {
		if b != nil {
			munmap(b)
		}
	}
}

// acquire returns key's mapping if it is of the file version id, held
// once more, or nil. A mapping of another version is dropped.
func (c *mapCache) acquire(key string, id fileID) *mapping {
	c.mu.Lock()
	m := c.byKey[key]
	if m != nil && m.id == id {
		if m.refs == 0 {
			c.unlink(m)
		}
		m.refs++
		c.mu.Unlock()
		return m
	}
	var stale []byte
	if m != nil {
		stale = c.remove(m)
	}
	c.mu.Unlock()
	if stale != nil {
		munmap(stale)
	}
	return nil
}

// insert makes m, just mapped and held once, key's entry, and returns the
// mapping the reader holds: m, or one of the same version that a
// concurrent Map put there first (m is then unmapped).
func (c *mapCache) insert(m *mapping) *mapping {
	var buf [4][]byte
	victims := buf[:0]
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return m
	}
	if old := c.byKey[m.key]; old != nil {
		if old.id == m.id {
			if old.refs == 0 {
				c.unlink(old)
			}
			old.refs++
			c.mu.Unlock()
			munmap(m.data)
			return old
		}
		victims = append(victims, c.remove(old))
	}
	m.cached = true
	c.byKey[m.key] = m
	c.bytes += int64(len(m.data))
	victims = c.trim(victims)
	c.mu.Unlock()
	unmapAll(victims)
	return m
}

// release drops one hold of m: the last one unmaps it unless it is still
// cached, where it waits, idle, for the next reader or its eviction.
func (c *mapCache) release(m *mapping) {
	var buf [4][]byte
	victims := buf[:0]
	c.mu.Lock()
	if m.refs--; m.refs == 0 {
		if !m.cached {
			victims = append(victims, m.data)
		} else {
			m.prev, m.next = &c.idle, c.idle.next
			c.idle.next.prev = m
			c.idle.next = m
			victims = c.trim(victims)
		}
	}
	c.mu.Unlock()
	unmapAll(victims)
}

// drop removes key's entry, if any (a write through the store replaced
// or removed its file): unmapped now if idle, else by its last reader.
func (c *mapCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	var b []byte
	if m := c.byKey[key]; m != nil {
		b = c.remove(m)
	}
	c.mu.Unlock()
	if b != nil {
		munmap(b)
	}
}

// close unmaps every idle mapping and makes the others unmap when their
// last reader releases them; later mappings are not cached.
func (c *mapCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	var victims [][]byte
	for _, m := range c.byKey {
		victims = append(victims, c.remove(m))
	}
	c.mu.Unlock()
	unmapAll(victims)
}

// mapRef is one reader's hold of a cached mapping.
type mapRef struct {
	c    *mapCache
	m    *mapping
	done atomic.Bool
}

// unmap releases the hold, once: later calls do nothing.
func (r *mapRef) unmap() {
	if r.done.CompareAndSwap(false, true) {
		r.c.release(r.m)
	}
}

// unmapOnce returns a function that unmaps b on its first call only.
func unmapOnce(b []byte) func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			munmap(b)
		}
	}
}
