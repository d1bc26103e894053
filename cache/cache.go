package cache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
)

// EntryOverhead is the bytes every entry counts against a cache's bound on
// top of its value and key: the bookkeeping (list element, map slot,
// slice headers) an entry costs in memory.
const EntryOverhead = 96

// ErrClosed reports an operation on a closed Disk cache. Add and Get on a
// closed cache do not return it (they act as a miss and a no-op); Stats
// shows it as the last error.
var ErrClosed = errors.New("cache: closed")

// ErrCache is wrapped by every error a cache counts in Stats (a failed disk
// write or read, a value that does not decompress).
var ErrCache = errors.New("cache: failed")

// Cache is a cache of decoded chunk bytes keyed by strings, bounded by the
// bytes it holds. Implementations are safe for concurrent use.
//
// Get returns the value of key and true, or nil and false on a miss,
// counting a hit or a miss; the returned bytes are read-only for the
// caller (see the package documentation). Add stores value under key,
// replacing any value there, and takes ownership of value; a value larger
// than the whole bound is not kept. Remove drops key if present. Stats
// returns the counters.
type Cache interface {
	Get(key string) ([]byte, bool)
	Add(key string, value []byte)
	Remove(key string)
	Stats() Stats
}

// ElemAdder is implemented by caches whose representation depends on the
// values' element size (Compressed shuffles bytes by it; Tiered hands it
// on). Use the function AddElem, which falls back to Add.
type ElemAdder interface {
	AddElem(key string, value []byte, elemSize int)
}

// ByteGetter is implemented by caches that look up a key given as bytes
// without first converting it to a string (LRU, and Tiered for a hit in
// an LRU first tier): a lookup whose key was built in a reused buffer
// then allocates nothing. GetBytes(key) is Get(string(key)); it must not
// keep key. Use the function GetBytes, which falls back to Get.
type ByteGetter interface {
	GetBytes(key []byte) ([]byte, bool)
}

// GetBytes looks key up in c: with c's GetBytes when c implements
// ByteGetter, else with Get(string(key)).
func GetBytes(c Cache, key []byte) ([]byte, bool) {
	if bg, ok := c.(ByteGetter); ok {
		return bg.GetBytes(key)
	}
	return c.Get(string(key))
}

// AddElem adds value to c with its element size (the array's item size)
// when c can use it, else with plain Add. elemSize ≤ 0 means the cache's
// default.
func AddElem(c Cache, key string, value []byte, elemSize int) {
	if ea, ok := c.(ElemAdder); ok {
		ea.AddElem(key, value, elemSize)
		return
	}
	c.Add(key, value)
}

// Stats are a cache's counters. For a Tiered cache the top-level Hits are
// hits in any tier, Misses are misses in all tiers, Bytes and Entries the
// sums over tiers, and Tiers holds each tier's own Stats.
type Stats struct {
	Hits, Misses int64
	// Evictions counts entries dropped to make room (for a tier: moved on
	// to the next tier or, from the last one, dropped).
	Evictions int64
	// Errors counts failed cache operations (disk writes and reads,
	// corrupt compressed values); the read that met one went on without
	// the cache. LastError is the latest one's message.
	Errors    int64
	LastError string
	// Entries and Bytes are what the cache holds now: Bytes is what counts
	// against MaxBytes (stored bytes + key + EntryOverhead per entry);
	// ValueBytes the decoded size of the values held.
	Entries    int
	Bytes      int64
	ValueBytes int64
	MaxBytes   int64
	Tiers      []Stats
}

// String formats the counters on one line.
func (s Stats) String() string {
	return fmt.Sprintf("hits %d misses %d evictions %d errors %d entries %d bytes %d/%d (values %d)",
		s.Hits, s.Misses, s.Evictions, s.Errors, s.Entries, s.Bytes, s.MaxBytes, s.ValueBytes)
}

// Key builds an unambiguous cache key for a decoded chunk: storeID names
// the store (as zarr.WithStoreID does), key is the chunk's (or shard's)
// store key, base the shard's byte offset within key's value (0 for a
// plain chunk or a whole shard) and inner the C-order index of an inner
// chunk within its shard, or -1 for a whole chunk.
func Key(storeID, key string, base int64, inner int) string {
	return string(AppendKey(make([]byte, 0, len(storeID)+len(key)+32), storeID, key, base, inner))
}

// AppendKey appends Key(storeID, key, base, inner) to dst and returns the
// extended slice; it does not allocate when dst has room, so a lookup can
// build its key in a reused buffer.
func AppendKey[K ~string | ~[]byte](dst []byte, storeID string, key K, base int64, inner int) []byte {
	b := strconv.AppendInt(dst, int64(len(storeID)), 10)
	b = append(b, ':')
	b = append(b, storeID...)
	b = strconv.AppendInt(b, int64(len(key)), 10)
	b = append(b, ':')
	b = append(b, key...)
	if base != 0 {
		b = append(b, '@')
		b = strconv.AppendInt(b, base, 10)
	}
	if inner >= 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(inner), 10)
	}
	return b
}

// weight is what an entry of n stored bytes counts against a bound.
func weight(key string, n int) int64 { return int64(n) + int64(len(key)) + EntryOverhead }

// evictFunc receives entries a cache drops to make room (or refuses as too
// large). Tiered installs one per tier.
type evictFunc func(key string, m moved)

// moved is an entry on its way down to the next tier: its decoded value,
// or, from a Compressed tier, its frame, which a Disk tier stores as it is
// (no decompression to move it, fewer bytes to write).
type moved struct {
	value  []byte // the decoded value, when packed is nil
	packed *frame // a Blosc frame, referenced for the duration of the call
	raw    int    // decoded size
	elem   int    // element size given at Add
}

// decoded returns the entry's decoded value, decompressing a frame.
func (m moved) decoded() ([]byte, error) {
	if m.packed == nil {
		return m.value, nil
	}
	return unpack(m.packed.b, m.raw)
}

// evictHooker is implemented by this package's caches so Tiered can chain
// them.
type evictHooker interface {
	setOnEvict(evictFunc, *transit)
	// getElem is Get returning the element size given at Add too.
	getElem(key string) ([]byte, int, bool)
	// touch refreshes key's recency without counting; false if absent.
	touch(key string) bool
	// fail counts an error in the cache's Stats.
	fail(err error)
}

// entry is one key's record in a core.
type entry[V any] struct {
	key    string
	v      V
	w      int64 // weight against the bound
	raw    int64 // decoded size
	elem   int   // element size given at Add
	remove bool  // evicted as too large or replaced: for Remove callers
}

// core is the byte-bounded LRU bookkeeping shared by LRU, Compressed and
// Disk: V is how each stores a value.
//
// A hit takes no exclusive lock: the key is looked up in a striped map
// (keyMap: a read lock of one of 64 stripes) and the entry marked as used (an atomic flag, and its own hit counter, so that
// readers of different keys share no cache line). Recency is kept by
// second chance, the CLOCK approximation of LRU: the entry at the back of
// the list is evicted only if it was not used since it last came round;
// a used one goes to the front with its mark cleared. Adds, removals and
// evictions take mu.
type core[V any] struct {
	mu        sync.Mutex
	max       int64
	used      int64
	raw       int64
	ll        list.List  // of *node[V], most recently placed at the front
	m         *keyMap[V] // key → node; written under mu
	n         int        // entries in m
	hitsGone  int64      // hits of entries no longer held
	misses    atomic.Int64
	evictions int64
	errs      int64
	lastErr   string
	onEvict   evictFunc
	tr        *transit                       // set by Tiered: entries on their way down
	load      func(entry[V]) ([]byte, error) // decodes an entry's value, for tr
	// pass returns what handDown gives the next tier, and a function to
	// call when it is done with it; nil: the decoded value from load.
	pass func(entry[V]) (moved, func(), error)
}

// keyMap is the key → node map of a core: striped by a hash of the key,
// each stripe with its own read-write lock on its own cache line, so
// lookups of different keys share nothing and a lookup allocates nothing
// (a sync.Map boxes every key it is asked for).
type keyMap[V any] struct {
	seed    maphash.Seed
	stripes [keyStripes]stripe[V]
}

const keyStripes = 64

type stripe[V any] struct {
	mu sync.RWMutex
	m  map[string]*node[V]
	_  [64 - 32]byte // pad to a cache line: RWMutex 24 bytes, map 8
}

func newKeyMap[V any]() *keyMap[V] {
	k := &keyMap[V]{seed: maphash.MakeSeed()}
	for i := range k.stripes {
		k.stripes[i].m = map[string]*node[V]{}
	}
	return k
}

func (k *keyMap[V]) stripe(key string) *stripe[V] {
	return &k.stripes[maphash.String(k.seed, key)%keyStripes]
}

func (k *keyMap[V]) load(key string) (*node[V], bool) {
	s := k.stripe(key)
	s.mu.RLock()
	n, ok := s.m[key]
	s.mu.RUnlock()
	return n, ok
}

// loadBytes is load of the key whose bytes are key, without converting
// them to a string (maphash hashes bytes and strings alike, and a map
// index by string(key) does not allocate).
func (k *keyMap[V]) loadBytes(key []byte) (*node[V], bool) {
	s := &k.stripes[maphash.Bytes(k.seed, key)%keyStripes]
	s.mu.RLock()
	n, ok := s.m[string(key)]
	s.mu.RUnlock()
	return n, ok
}

func (k *keyMap[V]) store(key string, n *node[V]) {
	s := k.stripe(key)
	s.mu.Lock()
	s.m[key] = n
	s.mu.Unlock()
}

func (k *keyMap[V]) delete(key string) {
	s := k.stripe(key)
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

func (k *keyMap[V]) clear() {
	for i := range k.stripes {
		s := &k.stripes[i]
		s.mu.Lock()
		clear(s.m)
		s.mu.Unlock()
	}
}

// node is one held entry: its record (immutable once held), its place in
// the list (under core.mu) and what hits record without a lock.
type node[V any] struct {
	en   entry[V]
	elem *list.Element
	ref  atomic.Bool  // used since it last came round (second chance)
	hits atomic.Int64 // hits while held
}

// transit tracks entries evicted from one tier and not yet added to the
// next, so that a Tiered Get does not miss them in between.
type transit struct {
	mu     sync.Mutex
	m      map[string]*transitEntry
	moving atomic.Int64
	ver    atomic.Uint64
}

type transitEntry struct {
	get  func() ([]byte, int, bool)
	refs int
}

// begin records key as moving; get decodes its value meanwhile.
func (t *transit) begin(key string, get func() ([]byte, int, bool)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*transitEntry{}
	}
	if e, ok := t.m[key]; ok {
		e.get = get
		e.refs++
	} else {
		t.m[key] = &transitEntry{get: get, refs: 1}
	}
	t.moving.Add(1)
	t.ver.Add(1)
}

// end records one move of key as done.
func (t *transit) end(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[key]; ok {
		if e.refs--; e.refs == 0 {
			delete(t.m, key)
		}
	}
	t.moving.Add(-1)
	t.ver.Add(1)
}

// lookup returns the decoder of key if it is moving.
func (t *transit) lookup(key string) func() ([]byte, int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[key]; ok {
		return e.get
	}
	return nil
}

func newCore[V any](maxBytes int64, load func(entry[V]) ([]byte, error)) core[V] {
	return core[V]{max: maxBytes, load: load, m: newKeyMap[V]()}
}

// lookup returns key's node, without a lock.
func (c *core[V]) lookup(key string) (*node[V], bool) {
	return c.m.load(key)
}

// mark records a use of n: a store only when the flag is not set already,
// so readers of a hot entry share its cache line read-only.
func (n *node[V]) mark() {
	if !n.ref.Load() {
		n.ref.Store(true)
	}
}

// get looks key up, counting a hit or miss and marking it used. It takes
// no lock.
func (c *core[V]) get(key string) (entry[V], bool) {
	if n, ok := c.lookup(key); ok {
		n.mark()
		n.hits.Add(1)
		return n.en, true
	}
	c.misses.Add(1)
	return entry[V]{}, false
}

// getBytes is get of the key whose bytes are key.
func (c *core[V]) getBytes(key []byte) (entry[V], bool) {
	if n, ok := c.m.loadBytes(key); ok {
		n.mark()
		n.hits.Add(1)
		return n.en, true
	}
	c.misses.Add(1)
	return entry[V]{}, false
}

// add inserts en (replacing any entry of its key) and evicts least
// recently used entries until the bound holds. It returns the entries
// dropped: the replaced one (remove set: its resources go, it is not
// passed on), evicted ones, or en itself when it alone exceeds the bound.
// The owner releases their resources and calls onEvict outside the lock.
func (c *core[V]) add(en entry[V]) (dropped []entry[V], kept bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.lookup(en.key); ok {
		old := c.unlink(n)
		old.remove = true
		dropped = append(dropped, old)
	}
	if en.w > c.max {
		c.evictions++
		c.beginMove(en)
		return append(dropped, en), false
	}
	chances := c.n // second chances this add gives at most: then evict anyway
	for c.used+en.w > c.max {
		n := c.ll.Back().Value.(*node[V])
		if chances > 0 && n.ref.Load() {
			chances--
			n.ref.Store(false)
			c.ll.MoveToFront(n.elem)
			continue
		}
		old := c.unlink(n)
		c.evictions++
		c.beginMove(old)
		dropped = append(dropped, old)
	}
	n := &node[V]{en: en}
	n.elem = c.ll.PushFront(n)
	c.m.store(en.key, n)
	c.n++
	c.used += en.w
	c.raw += en.raw
	return dropped, true
}

// beginMove records en as on its way to the next tier; c.mu is held.
func (c *core[V]) beginMove(en entry[V]) {
	if c.tr == nil || c.onEvict == nil {
		return
	}
	load := c.load
	c.tr.begin(en.key, func() ([]byte, int, bool) {
		v, err := load(en)
		return v, en.elem, err == nil
	})
}

// handDown passes the entries add dropped (other than replaced ones) to
// the eviction callback, then calls release (if any) on every dropped
// entry.
func (c *core[V]) handDown(dropped []entry[V], release func(entry[V])) {
	c.mu.Lock()
	f, tr := c.onEvict, c.tr
	c.mu.Unlock()
	for _, d := range dropped {
		if f != nil && !d.remove {
			if m, done, err := c.passDown(d); err == nil {
				f(d.key, m)
				done()
			} else {
				c.fail(fmt.Errorf("%w: moving %q down: %v", ErrCache, d.key, err))
			}
			if tr != nil {
				tr.end(d.key)
			}
		}
		if release != nil {
			release(d)
		}
	}
}

// passDown returns what moves down to the next tier for d.
func (c *core[V]) passDown(d entry[V]) (moved, func(), error) {
	if c.pass != nil {
		return c.pass(d)
	}
	v, err := c.load(d)
	return moved{value: v, raw: int(d.raw), elem: d.elem}, func() {}, err
}

// del removes key and returns its entry.
func (c *core[V]) del(key string) (entry[V], bool) {
	return c.delIf(key, func(entry[V]) bool { return true })
}

// delIf removes key if its entry satisfies ok, and returns the entry.
func (c *core[V]) delIf(key string, ok func(entry[V]) bool) (entry[V], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, found := c.lookup(key); found && ok(n.en) {
		return c.unlink(n), true
	}
	return entry[V]{}, false
}

// unlink drops n; c.mu is held.
func (c *core[V]) unlink(n *node[V]) entry[V] {
	c.ll.Remove(n.elem)
	c.m.delete(n.en.key)
	c.n--
	c.used -= n.en.w
	c.raw -= n.en.raw
	c.hitsGone += n.hits.Load()
	return n.en
}

// reset drops every entry (their resources are the owner's); c.mu is held.
func (c *core[V]) reset() {
	for e := c.ll.Front(); e != nil; e = e.Next() {
		c.hitsGone += e.Value.(*node[V]).hits.Load()
	}
	c.ll.Init()
	c.m.clear()
	c.n, c.used, c.raw = 0, 0, 0
}

// touch marks key used if it is held, counting nothing, and reports
// whether it is.
func (c *core[V]) touch(key string) bool {
	n, ok := c.lookup(key)
	if ok {
		n.mark()
	}
	return ok
}

// has reports whether key is held, counting nothing.
func (c *core[V]) has(key string) bool {
	_, ok := c.lookup(key)
	return ok
}

// fail counts an error.
func (c *core[V]) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs++
	c.lastErr = err.Error()
}

// setOnEvict installs the eviction callback and the transit record.
func (c *core[V]) setOnEvict(f evictFunc, tr *transit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onEvict, c.tr = f, tr
}

// stats returns the counters.
func (c *core[V]) stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	hits := c.hitsGone
	for e := c.ll.Front(); e != nil; e = e.Next() {
		hits += e.Value.(*node[V]).hits.Load()
	}
	return Stats{Hits: hits, Misses: c.misses.Load(), Evictions: c.evictions, Errors: c.errs, LastError: c.lastErr,
		Entries: c.n, Bytes: c.used, ValueBytes: c.raw, MaxBytes: c.max}
}

// all returns every entry, most recent first as far as second chance
// knows: those used since they last came round, then the others, each in
// list order.
func (c *core[V]) all() []entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]entry[V], 0, c.n)
	for _, used := range []bool{true, false} {
		for e := c.ll.Front(); e != nil; e = e.Next() {
			if n := e.Value.(*node[V]); n.ref.Load() == used {
				out = append(out, n.en)
			}
		}
	}
	return out
}

// haser is implemented by this package's caches: whether a key is held,
// without counting a hit or a miss.
type haser interface{ has(key string) bool }

// flightGroup is implemented by this package's caches: their own table of
// loads in progress.
type flightGrouper interface{ flights() *flight }

// flight is a table of loads in progress, one per key.
type flight struct {
	mu sync.Mutex
	m  map[string]*call
}

// call is one load in progress.
type call struct {
	waiters atomic.Int32 // callers waiting on done (for tests)
	done    chan struct{}
	val     []byte
	err     error
}

func (f *flight) flights() *flight { return f }

// fallbackFlights serves caches of other packages.
var fallbackFlights flight

// GetOrLoad returns the value of key in c, or loads it with load, adds it
// to c and returns it. Concurrent callers that miss the same key share one
// call of load (run with the first caller's ctx; if that caller's context
// ends the load, the others still waiting try again with their own). The
// returned bytes are read-only (they are the cached value). A load error is
// returned as is and nothing is cached. GetOrLoad returns ctx.Err() when
// ctx ends while it waits for another caller's load.
func GetOrLoad(ctx context.Context, c Cache, key string, load func(ctx context.Context) ([]byte, error)) ([]byte, error) {
	return GetOrLoadElem(ctx, c, key, 0, load)
}

// GetOrLoadElem is GetOrLoad adding the loaded value with AddElem.
func GetOrLoadElem(ctx context.Context, c Cache, key string, elemSize int, load func(ctx context.Context) ([]byte, error)) ([]byte, error) {
	f := &fallbackFlights
	if fg, ok := c.(flightGrouper); ok {
		f = fg.flights()
	}
	for {
		if v, ok := c.Get(key); ok {
			return v, nil
		}
		f.mu.Lock()
		if cl, ok := f.m[key]; ok {
			f.mu.Unlock()
			cl.waiters.Add(1)
			select {
			case <-cl.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if cl.err != nil && ctx.Err() == nil &&
				(errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded)) {
				continue // the leader's context ended, not ours
			}
			return cl.val, cl.err
		}
		if f.m == nil {
			f.m = map[string]*call{}
		}
		cl := &call{done: make(chan struct{})}
		f.m[key] = cl
		f.mu.Unlock()
		if h, ok := c.(haser); ok && h.has(key) {
			// Another leader finished between our Get and our claim:
			// serve its value rather than load again.
			if v, ok := c.Get(key); ok {
				cl.val = v
				f.mu.Lock()
				delete(f.m, key)
				f.mu.Unlock()
				close(cl.done)
				return v, nil
			}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					cl.err = fmt.Errorf("cache: load of %q panicked: %v", key, r)
				}
				f.mu.Lock()
				delete(f.m, key)
				f.mu.Unlock()
				close(cl.done)
			}()
			cl.val, cl.err = load(ctx)
			if cl.err == nil {
				AddElem(c, key, cl.val, elemSize)
			}
		}()
		return cl.val, cl.err
	}
}
