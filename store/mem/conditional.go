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
	v, g, err := s.entry(ctx, "get", key)
	if err != nil {
		return nil, "", err
	}
	return append([]byte{}, v...), strconv.FormatUint(g, 10), nil
}

// SetIfVersion implements store.ConditionalWriter.
func (s *Store) SetIfVersion(ctx context.Context, key string, value []byte, version string) error {
	return s.put(ctx, key, value, &version)
}
