package cache

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// ErrTier reports a Tiered cache built from a cache that cannot be a tier.
var ErrTier = errors.New("cache: invalid tier")

// Tiered is an ordered list of caches, each with its own byte bound (say a
// small LRU, then Compressed, then Disk). Add puts a value in tier 0; an
// entry a tier evicts to make room (or refuses as larger than its bound)
// moves down to the next tier, and out of the cache from the last one. Get
// looks in the tiers in order; a hit below tier 0 moves the entry back up to
// tier 0.
//
// Moving up copies: the lower tier keeps its copy (it is the same value:
// Add of a new value removes a key from every lower tier), so when the
// entry falls out of tier 0 again, moving it down only refreshes that copy
// instead of compressing or writing it again. An entry may therefore be
// counted in more than one tier's Stats. Tiered is safe for concurrent use.
type Tiered struct {
	tiers  []Cache
	hits   atomic.Int64
	misses atomic.Int64
	tr     transit
	flight
}

// NewTiered chains tiers, fastest first. Every tier but the last must be a
// cache of this package (LRU, Compressed or Disk) so that its evictions can
// move down; the tiers belong to the Tiered cache from then on and must
// not be used on their own. At least one tier is required.
func NewTiered(tiers ...Cache) (*Tiered, error) {
	if len(tiers) == 0 {
		return nil, fmt.Errorf("%w: no tiers", ErrTier)
	}
	t := &Tiered{tiers: append([]Cache(nil), tiers...)}
	for i, c := range t.tiers {
		h, ok := c.(evictHooker)
		if !ok {
			if i < len(t.tiers)-1 {
				return nil, fmt.Errorf("%w: tier %d (%T) cannot hand its evictions down", ErrTier, i, c)
			}
			continue
		}
		if i == len(t.tiers)-1 {
			h.setOnEvict(nil, nil)
			continue
		}
		next := t.tiers[i+1]
		h.setOnEvict(func(key string, m moved) {
			if nh, ok := next.(evictHooker); ok && nh.touch(key) {
				return // still there since it moved up: refresh it
			}
			if d, ok := next.(*Disk); ok && m.packed != nil {
				d.addPacked(key, m) // stored compressed, as it was
				return
			}
			v, err := m.decoded()
			if err != nil {
				// A corrupt frame: it leaves the cache, counted by the
				// tier it fell from.
				h.fail(fmt.Errorf("%w: moving %q down: %v", ErrCache, key, err))
				return
			}
			AddElem(next, key, v, m.elem)
		}, &t.tr)
	}
	return t, nil
}

// Tiers returns the tiers, fastest first.
func (t *Tiered) Tiers() []Cache { return append([]Cache(nil), t.tiers...) }

// Get implements Cache.
func (t *Tiered) Get(key string) ([]byte, bool) {
	// An entry moving down is in no tier for a moment: look it up in
	// transit, and scan again if moves ended during the scan.
	for range 4 {
		ver := t.tr.ver.Load()
		if v, ok := t.scan(key); ok {
			t.hits.Add(1)
			return v, true
		}
		if t.tr.moving.Load() == 0 && t.tr.ver.Load() == ver {
			break
		}
		if get := t.tr.lookup(key); get != nil {
			if v, _, ok := get(); ok {
				t.hits.Add(1)
				return v, true
			}
		}
	}
	t.misses.Add(1)
	return nil, false
}

// GetBytes implements ByteGetter: a hit in a first tier that is an LRU
// converts nothing; any other lookup is Get's (which then counts the
// first tier's miss, once).
func (t *Tiered) GetBytes(key []byte) ([]byte, bool) {
	if l, ok := t.tiers[0].(*LRU); ok {
		if v, ok := l.hitBytes(key); ok {
			t.hits.Add(1)
			return v, true
		}
	}
	return t.Get(string(key))
}

// scan looks key up in each tier in order, moving a hit below tier 0 up.
func (t *Tiered) scan(key string) ([]byte, bool) {
	for i, c := range t.tiers {
		var v []byte
		var elem int
		var ok bool
		if h, isOurs := c.(evictHooker); isOurs {
			v, elem, ok = h.getElem(key)
		} else {
			v, ok = c.Get(key)
		}
		if !ok {
			continue
		}
		if i > 0 {
			// Up to tier 0; tier i keeps its copy (see Tiered).
			AddElem(t.tiers[0], key, v, elem)
		}
		return v, true
	}
	return nil, false
}

// Add implements Cache: the value goes to tier 0 and any older value of
// key in the lower tiers is dropped.
func (t *Tiered) Add(key string, value []byte) { t.AddElem(key, value, 0) }

// AddElem implements ElemAdder.
func (t *Tiered) AddElem(key string, value []byte, elemSize int) {
	for _, c := range t.tiers[1:] {
		c.Remove(key)
	}
	AddElem(t.tiers[0], key, value, elemSize)
}

// Remove implements Cache: key is dropped from every tier.
func (t *Tiered) Remove(key string) {
	for _, c := range t.tiers {
		c.Remove(key)
	}
}

// Stats implements Cache: Hits and Misses are the Tiered cache's own
// (a hit in any tier, a miss in all); Evictions are the last tier's (the
// entries that left the cache); the other figures are summed over tiers
// (an entry held by two tiers counts twice), and Tiers holds each tier's
// Stats.
func (t *Tiered) Stats() Stats {
	s := Stats{Hits: t.hits.Load(), Misses: t.misses.Load()}
	for _, c := range t.tiers {
		ts := c.Stats()
		s.Tiers = append(s.Tiers, ts)
		s.Errors += ts.Errors
		if ts.LastError != "" {
			s.LastError = ts.LastError
		}
		s.Entries += ts.Entries
		s.Bytes += ts.Bytes
		s.ValueBytes += ts.ValueBytes
		s.MaxBytes += ts.MaxBytes
		s.Evictions = ts.Evictions
	}
	return s
}

// Close closes every tier that has a Close method (Disk), returning the
// first error.
func (t *Tiered) Close() error {
	var first error
	for _, c := range t.tiers {
		if cl, ok := c.(io.Closer); ok {
			if err := cl.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (t *Tiered) has(key string) bool {
	for _, c := range t.tiers {
		if h, ok := c.(haser); ok && h.has(key) {
			return true
		}
	}
	return false
}
