// Package mem is an in-memory store.Store, for tests, caches of small
// arrays and data that never needs to outlive the process.
package mem

import (
	"context"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
)

// Store is an in-memory store. It implements store.Store,
// store.RangesReader, store.IntoReader and store.SizeReader. It is safe for
// concurrent use. Values are copied on Set and on every read, so callers
// never share memory with the store. Keys must pass store.ValidateKey. The
// zero value is not usable; call New.
type Store struct {
	mu  sync.RWMutex
	m   map[string][]byte // values are never modified once stored
	gen map[string]uint64 // the write generation of each value (conditional writes)
	id  uint64            // unique, never reused (StoreID)
}

// ids numbers memory stores.
var ids atomic.Uint64

// StoreID implements store.Identifier: "memory://" and a number no other
// memory store of the process has, or will have.
func (s *Store) StoreID() string { return "memory://" + strconv.FormatUint(s.id, 10) }

var (
	_ store.Store        = (*Store)(nil)
	_ store.RangesReader = (*Store)(nil)
	_ store.IntoReader   = (*Store)(nil)
	_ store.SizeReader   = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{m: make(map[string][]byte), gen: make(map[string]uint64), id: ids.Add(1)}
}

// value returns the stored slice for key (not a copy: stored values are
// immutable) after checking ctx and the key.
func (s *Store) value(ctx context.Context, op, key string) ([]byte, error) {
	v, _, err := s.entry(ctx, op, key)
	return v, err
}

// entry returns the stored slice for key and its write generation, read
// together, after checking ctx and the key.
func (s *Store) entry(ctx context.Context, op, key string) ([]byte, uint64, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, &store.KeyError{Op: op, Key: key, Err: err}
	}
	s.mu.RLock()
	v, ok := s.m[key]
	g := s.gen[key]
	s.mu.RUnlock()
	if !ok {
		return nil, 0, &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	}
	return v, g, nil
}

// Get returns a copy of the bytes r selects from key's value (see package
// store for clamping). A missing key is store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	v, err := s.value(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	return cut(v, r), nil
}

// cut copies the part of v that a valid r selects, never returning nil.
func cut(v []byte, r store.ByteRange) []byte {
	start, end, _ := r.Resolve(int64(len(v)))
	return append([]byte{}, v[start:end]...)
}

// GetRanges returns copies of several ranges of key's value, in the order
// of ranges, all from the same version of the value.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	for _, r := range ranges {
		if err := r.Validate(); err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: err}
		}
	}
	v, err := s.value(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		out[i] = cut(v, r)
	}
	return out, nil
}

// ReadInto copies the bytes [offset, offset+len(dst)) of key's value into
// dst and returns how many it copied (fewer when the value ends first).
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	if offset < 0 {
		return 0, &store.KeyError{Op: "read", Key: key, Err: store.OffsetLen(offset, int64(len(dst))).Validate()}
	}
	v, err := s.value(ctx, "read", key)
	if err != nil {
		return 0, err
	}
	if offset >= int64(len(v)) {
		return 0, nil
	}
	return copy(dst, v[offset:]), nil
}

// Size returns the length of key's value.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	v, err := s.value(ctx, "size", key)
	if err != nil {
		return 0, err
	}
	return int64(len(v)), nil
}

// Set stores a copy of value under key, replacing any previous value.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	return s.put(ctx, key, value, nil)
}

// put stores a copy of value under key: with a nil version always, else
// only while key's version (its generation, "" when absent) is *version.
func (s *Store) put(ctx context.Context, key string, value []byte, version *string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	v := append([]byte{}, value...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if version != nil {
		cur := ""
		if _, ok := s.m[key]; ok {
			cur = strconv.FormatUint(s.gen[key], 10)
		}
		if cur != *version {
			return &store.KeyError{Op: "set", Key: key, Err: store.ErrConflict}
		}
	}
	s.m[key] = v
	s.gen[key] = gens.Add(1)
	return nil
}

// Delete removes key. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "delete", Key: key, Err: err}
	}
	s.mu.Lock()
	delete(s.m, key)
	delete(s.gen, key)
	s.mu.Unlock()
	return nil
}

// keys returns the sorted keys starting with prefix, as of one moment.
func (s *Store) keys(prefix string) []string {
	s.mu.RLock()
	var keys []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.RUnlock()
	slices.Sort(keys)
	return keys
}

// List yields the keys starting with prefix in lexical order, as they were
// when iteration began. An invalid prefix (see store.ValidatePrefix) or a
// done ctx is yielded as an error.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for k, err := range listing.Sorted(ctx, s.keys(prefix), prefix) {
			if !yield(k, err) {
				return
			}
		}
	}
}

// ListDir lists the keys directly in dir and its sub-directories (ending in
// "/"), both relative to dir and sorted. dir is "" or ends in "/"; a dir
// without the trailing "/" is read as if it had one.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	return listing.Dir(ctx, s.keys(dir), dir)
}
