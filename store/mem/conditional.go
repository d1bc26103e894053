package mem

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/gozarr/gozarr/store"
)

// gens numbers the writes of all memory stores: a version is never reused.
var gens atomic.Uint64

var _ store.ConditionalWriter = (*Store)(nil)

// GetVersion implements store.ConditionalWriter: the value and its write
// generation.
func (s *Store) GetVersion(ctx context.Context, key string) ([]byte, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", &store.KeyError{Op: "get", Key: key, Err: err}
	}
	s.mu.RLock()
	v, ok := s.m[key]
	g := s.gen[key]
	s.mu.RUnlock()
	if !ok {
		return nil, "", &store.KeyError{Op: "get", Key: key, Err: store.ErrNotFound}
	}
	return append([]byte{}, v...), strconv.FormatUint(g, 10), nil
}

// SetIfVersion implements store.ConditionalWriter.
func (s *Store) SetIfVersion(ctx context.Context, key string, value []byte, version string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	v := append([]byte{}, value...)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := ""
	if _, ok := s.m[key]; ok {
		cur = strconv.FormatUint(s.gen[key], 10)
	}
	if cur != version {
		return &store.KeyError{Op: "set", Key: key, Err: store.ErrConflict}
	}
	s.m[key] = v
	s.gen[key] = gens.Add(1)
	return nil
}
