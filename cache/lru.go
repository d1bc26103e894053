package cache

// LRU is an in-memory cache bounded by bytes: adding past the bound evicts
// the least recently used entries (Get and Add make an entry the most
// recent). Get returns the stored slice itself, read-only. It is safe for
// concurrent use.
type LRU struct {
	c core[[]byte]
	flight
}

// NewLRU returns an empty LRU holding at most maxBytes (values + keys +
// EntryOverhead per entry). maxBytes ≤ 0 holds nothing.
func NewLRU(maxBytes int64) *LRU {
	return &LRU{c: newCore(max(0, maxBytes), func(en entry[[]byte]) ([]byte, error) { return en.v, nil })}
}

// Get implements Cache.
func (l *LRU) Get(key string) ([]byte, bool) {
	v, _, ok := l.getElem(key)
	return v, ok
}

// GetBytes implements ByteGetter: Get without converting key to a string.
func (l *LRU) GetBytes(key []byte) ([]byte, bool) {
	en, ok := l.c.getBytes(key)
	return en.v, ok
}

// hitBytes is GetBytes counting a hit but no miss (Tiered's Get then
// counts it).
func (l *LRU) hitBytes(key []byte) ([]byte, bool) {
	if n, ok := l.c.m.loadBytes(key); ok {
		n.mark()
		n.hits.Add(1)
		return n.en.v, true
	}
	return nil, false
}

func (l *LRU) getElem(key string) ([]byte, int, bool) {
	en, ok := l.c.get(key)
	return en.v, en.elem, ok
}

// Add implements Cache.
func (l *LRU) Add(key string, value []byte) { l.AddElem(key, value, 0) }

// AddElem implements ElemAdder: the element size is kept for a tier below.
func (l *LRU) AddElem(key string, value []byte, elemSize int) {
	dropped, _ := l.c.add(entry[[]byte]{key: key, v: value, w: weight(key, len(value)), raw: int64(len(value)), elem: elemSize})
	if len(dropped) > 0 {
		l.c.handDown(dropped, nil)
	}
}

// Remove implements Cache.
func (l *LRU) Remove(key string) { l.c.del(key) }

// Stats implements Cache.
func (l *LRU) Stats() Stats { return l.c.stats() }

// Keys returns the keys held, most recently used first.
func (l *LRU) Keys() []string {
	all := l.c.all()
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.key
	}
	return out
}

func (l *LRU) setOnEvict(f evictFunc, tr *transit) { l.c.setOnEvict(f, tr) }

func (l *LRU) has(key string) bool { return l.c.has(key) }

func (l *LRU) touch(key string) bool { return l.c.touch(key) }

func (l *LRU) fail(err error) { l.c.fail(err) }
