package store

// Helpers for object-store backends (the store/gcs and store/azure
// modules): a request limiter, key prefixes and bounded body reads.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// Limiter bounds how many requests a remote store runs at once. It is safe
// for concurrent use; build one with NewLimiter.
type Limiter struct{ sem chan struct{} }

// NewLimiter returns a Limiter of n slots (at least 1).
func NewLimiter(n int) *Limiter { return &Limiter{sem: make(chan struct{}, max(n, 1))} }

// Acquire takes a slot, waiting for one, or returns ctx.Err() when ctx is
// done first.
func (l *Limiter) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives back a slot taken by Acquire.
func (l *Limiter) Release() { <-l.sem }

// Slots returns how many requests the Limiter lets run at once.
func (l *Limiter) Slots() int { return cap(l.sem) }

// NormalizePrefix returns a backend's key prefix without leading or
// trailing "/" plus one trailing "/", or "" for an empty prefix. A prefix
// that is not a valid key (ValidateKey) is an error wrapping
// ErrInvalidKey.
func NormalizePrefix(prefix string) (string, error) {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return "", nil
	}
	if err := ValidateKey(p); err != nil {
		return "", fmt.Errorf("prefix: %w", err)
	}
	return p + "/", nil
}

// maxPrealloc is the most ReadAtMost allocates before the bytes arrive.
const maxPrealloc = 64 << 20

// ReadAtMost reads the body of a read announced as size bytes (negative
// when unknown). An unbounded read (limit < 0) is ReadBody. A bounded one
// reads at most limit+1 bytes whatever the announcement, allocating no
// more than that up front (and at most 64 MiB before the bytes arrive):
// a body longer than limit is an error, not a larger allocation.
func ReadAtMost(body io.Reader, size, limit int64) ([]byte, error) {
	if limit < 0 {
		return ReadBody(body, size)
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(limit+1, maxPrealloc)))
	if _, err := buf.ReadFrom(io.LimitReader(body, limit+1)); err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("server sent more than the %d bytes asked for", limit)
	}
	return buf.Bytes(), nil
}
