package cache

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gozarr/gozarr/store"
)

// Store is a store.Reader that keeps the encoded bytes its Get and
// GetRanges calls return in a Cache, keyed by (key, byte range): put it in
// front of a remote store so that chunk bytes and shard indexes are fetched
// once. Concurrent misses of one (key, range) fetch it once. Missing keys
// (store.ErrNotFound) are not cached. Ranges are cached as asked: a range
// is not served from a cached larger one.
//
// NewStore returns a *Store when the inner store only reads; when it is
// also a store.Writer and/or store.Lister, the value NewStore returns
// implements those too, passing calls through. Set and Delete through the
// wrapper invalidate every cached range of their key (writes that bypass
// the wrapper are not seen). Like store.Reader, Get returns a slice the
// caller owns (a copy of the cached bytes). Store is safe for concurrent
// use.
type Store struct {
	r     store.Reader
	c     Cache
	id    string
	mu    sync.Mutex
	gens  map[string]uint64 // write generation per key written through the wrapper
	genNo uint64
}

// NewStore wraps r with the cache c (which may be shared with other stores
// and arrays: keys are made unique per wrapper). See Store for what the
// result implements.
func NewStore(r store.Reader, c Cache) store.Reader {
	s := &Store{r: r, c: c, gens: map[string]uint64{}}
	s.id = "enc" + strconv.FormatUint(storeIDs.Add(1), 10)
	_, w := r.(store.Writer)
	_, l := r.(store.Lister)
	switch {
	case w && l:
		return &storeWL{storeW{s}}
	case w:
		return &storeW{s}
	case l:
		return &storeL{s}
	}
	return s
}

// storeIDs numbers Stores for their cache keys: unlike an address, a
// number is never reused by a later Store, so entries of a freed Store can
// never be served to a new one.
var storeIDs atomic.Uint64

// Capabilities implements store.CapabilityReporter: reads into caller's
// buffers (ReadInto) and batched ranges go through the cache; sizes pass
// through when the inner store has them, and so do conditional reads
// (uncached: they must see the current version); the inner store's
// request limit and locality are kept, so a cached S3 store is read with
// S3's concurrency.
func (s *Store) Capabilities() store.Capabilities {
	in := store.CapabilitiesOf(s.r)
	return store.Capabilities{Into: s, Ranges: s, Sizer: in.Sizer, Locker: in.Locker, CondReader: in.CondReader,
		Coalesce: in.Coalesce, MaxConcurrency: in.MaxConcurrency, Local: in.Local}
}

// ReadInto implements store.IntoReader through the cache: the range
// [offset, offset+len(dst)) is cached as one range (Get's), then copied.
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	if offset < 0 {
		return 0, &store.KeyError{Op: "read", Key: key, Err: store.ErrInvalidRange}
	}
	if len(dst) == 0 {
		return 0, ctx.Err()
	}
	v, err := s.cached(ctx, key, store.OffsetLen(offset, int64(len(dst))))
	if err != nil {
		return 0, err
	}
	return copy(dst, v), nil // one copy, straight from the cached bytes
}

// Unwrap returns the inner store.
func (s *Store) Unwrap() store.Reader { return s.r }

// Cache returns the cache.
func (s *Store) Cache() Cache { return s.c }

// cacheKey names (key, br) at key's current write generation.
func (s *Store) cacheKey(key string, br store.ByteRange) string {
	s.mu.Lock()
	g := s.gens[key]
	s.mu.Unlock()
	k := Key(s.id, key, 0, -1) + "|" + br.String()
	if g != 0 {
		k += "|g" + strconv.FormatUint(g, 10)
	}
	return k
}

// Get implements store.Reader.
func (s *Store) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	if err := br.Validate(); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	v, err := s.cached(ctx, key, br)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), v...), nil
}

// cached returns the cached bytes of (key, br), loading them once for all
// concurrent callers on a miss. The result is the cache's: do not modify.
func (s *Store) cached(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	return GetOrLoad(ctx, s.c, s.cacheKey(key, br), func(ctx context.Context) ([]byte, error) {
		return s.r.Get(ctx, key, br)
	})
}

// GetRanges implements store.RangesReader: cached ranges are served from
// the cache and the others fetched with one store.GetRanges call.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	out := make([][]byte, len(ranges))
	keys := make([]string, len(ranges))
	var miss []int
	var missRanges []store.ByteRange
	for i, br := range ranges {
		keys[i] = s.cacheKey(key, br)
		if v, ok := s.c.Get(keys[i]); ok {
			out[i] = append([]byte(nil), v...)
			continue
		}
		miss = append(miss, i)
		missRanges = append(missRanges, br)
	}
	if len(miss) == 0 {
		return out, nil
	}
	got, err := store.GetRanges(ctx, s.r, key, missRanges)
	if err != nil {
		return nil, err
	}
	if len(got) != len(miss) {
		return nil, fmt.Errorf("cache: store returned %d ranges of %q for %d requested", len(got), key, len(miss))
	}
	for j, i := range miss {
		out[i] = got[j]
		s.c.Add(keys[i], append([]byte(nil), got[j]...))
	}
	return out, nil
}

// invalidate moves key to a new write generation: every range cached
// before is unreachable from now on (and ages out of the cache).
func (s *Store) invalidate(key string) {
	s.mu.Lock()
	s.genNo++
	s.gens[key] = s.genNo
	s.mu.Unlock()
}

// storeW adds store.Writer.
type storeW struct{ *Store }

// Set implements store.Writer and invalidates key's cached ranges.
func (s *storeW) Set(ctx context.Context, key string, value []byte) error {
	defer s.invalidate(key)
	s.invalidate(key)
	return s.r.(store.Writer).Set(ctx, key, value)
}

// Delete implements store.Writer and invalidates key's cached ranges.
func (s *storeW) Delete(ctx context.Context, key string) error {
	defer s.invalidate(key)
	s.invalidate(key)
	return s.r.(store.Writer).Delete(ctx, key)
}

// storeL adds store.Lister.
type storeL struct{ *Store }

// List implements store.Lister.
func (s *storeL) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return s.r.(store.Lister).List(ctx, prefix)
}

// ListDir implements store.Lister.
func (s *storeL) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	return s.r.(store.Lister).ListDir(ctx, dir)
}

// storeWL adds both.
type storeWL struct{ storeW }

// List implements store.Lister.
func (s *storeWL) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return s.r.(store.Lister).List(ctx, prefix)
}

// ListDir implements store.Lister.
func (s *storeWL) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	return s.r.(store.Lister).ListDir(ctx, dir)
}
