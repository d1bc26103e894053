package objstore

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
)

// GetIf implements store.ConditionalReader: the range r of key, only while
// the object is the version c's ETag names. The ETag is the one of the
// answer that carries the bytes (S3, Azure, HTTP report it with every
// read), so bytes of another version are never returned: they are
// store.ErrChanged. A last-modified condition, an ETag on a backend whose
// versions are not ETags (GCS generations) and an answer without an ETag
// are store.ErrConditionUnsupported.
func (s *Store) GetIf(ctx context.Context, key string, r store.ByteRange, c store.ReadCondition) ([]byte, error) {
	if c.IsZero() {
		return s.Get(ctx, key, r)
	}
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	if c.ETag == "" || s.cfg.Scheme == "gs" {
		return nil, fmt.Errorf("%w: %s: %s (the store checks ETags only)", store.ErrConditionUnsupported, s.locate(key), c)
	}
	r, empty := requestRange(r)
	var b []byte
	var v string
	var err error
	if empty {
		_, v, err = s.head(ctx, "get", key)
		b = []byte{}
	} else {
		b, v, err = s.read(ctx, "get", key, r)
	}
	if err != nil {
		return nil, err
	}
	if v == "" {
		return nil, fmt.Errorf("%w: %s: the answer has no ETag", store.ErrConditionUnsupported, s.locate(key))
	}
	if !store.SameETag(v, c.ETag) {
		return nil, fmt.Errorf("%w: %s is at ETag %s, the reference names %s", store.ErrChanged, s.locate(key), v, c.ETag)
	}
	return b, nil
}
