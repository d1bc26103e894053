package objstore

// Helpers of the layer: request planning, answer checks and the request
// limiter.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// requestRange returns the range a remote backend should ask for to read r.
// empty reports a range that selects nothing whatever the value
// (store.OffsetLen(off, 0) or Suffix(0)): the backend sends no read but checks that
// the key exists (a HEAD), since a missing key must still be ErrNotFound.
// From(0) becomes store.Full, which needs no Range header.
func requestRange(r store.ByteRange) (req store.ByteRange, empty bool) {
	_, n, bounded := r.Bounded()
	sn, suffix := r.IsSuffix()
	if (bounded && n == 0) || (suffix && sn == 0) {
		return r, true
	}
	if off, ok := r.IsFrom(); ok && off == 0 {
		return store.Full(), false
	}
	return r, false
}

// sliceWhole returns the part of the whole value b that r selects, clamped
// as the package doc describes, for a server that ignored the Range header
// and answered with everything. The result shares b's memory and has no
// spare capacity. It reports ErrInvalidRange for a range that fails
// Validate.
func sliceWhole(b []byte, r store.ByteRange) ([]byte, error) {
	start, end, err := r.Resolve(int64(len(b)))
	if err != nil {
		return nil, err
	}
	return b[start:end:end], nil
}

// checkContentRange verifies that a 206 answer holding n bytes, with the
// Content-Range header cr, covers what r asks for: cr must read
// "bytes first-last/total" (or "bytes first-last/*"), hold last-first+1 = n
// bytes, start where r starts in a value of total bytes, and hold no more
// than r asks for. An empty answer is not checked (servers format empty
// ranges differently). Errors wrap store.ErrBadContentRange.
func checkContentRange(cr string, r store.ByteRange, n int) error {
	if n == 0 {
		return nil
	}
	spec, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return fmt.Errorf("%w: 206 answer with Content-Range %q", store.ErrBadContentRange, cr)
	}
	rng, totalStr, ok := strings.Cut(spec, "/")
	firstStr, lastStr, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return fmt.Errorf("%w: malformed %q", store.ErrBadContentRange, cr)
	}
	first, err1 := strconv.ParseInt(firstStr, 10, 64)
	last, err2 := strconv.ParseInt(lastStr, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return fmt.Errorf("%w: malformed %q", store.ErrBadContentRange, cr)
	}
	if last-first+1 != int64(n) {
		return fmt.Errorf("%w: %q but %d bytes received", store.ErrBadContentRange, cr, n)
	}
	if o, l, ok := r.Bounded(); ok && (first != o || int64(n) > l) {
		return fmt.Errorf("%w: %q does not match %v", store.ErrBadContentRange, cr, r)
	}
	if l, ok := r.IsSuffix(); ok && int64(n) > l {
		return fmt.Errorf("%w: %q does not match %v", store.ErrBadContentRange, cr, r)
	}
	if total, err := strconv.ParseInt(totalStr, 10, 64); err == nil {
		if last >= total {
			return fmt.Errorf("%w: malformed %q", store.ErrBadContentRange, cr)
		}
		if start, _, _ := r.Resolve(total); start != first {
			return fmt.Errorf("%w: %q does not match %v", store.ErrBadContentRange, cr, r)
		}
	}
	return nil
}

// answerLimit returns how many bytes of an answer to a request for r are
// useful: for a 206 answer (partial true) the length r asks for, for a 200
// answer (the whole value) the bytes up to r's end; -1 when r has no end
// (store.Full, From, and a Suffix of a whole value).
func answerLimit(r store.ByteRange, partial bool) int64 {
	if off, n, ok := r.Bounded(); ok {
		if partial {
			return n
		}
		return off + n
	}
	if n, ok := r.IsSuffix(); ok && partial {
		return n
	}
	return -1
}

// limiter bounds how many requests a remote store runs at once. It is safe
// for concurrent use; build one with newLimiter.
type limiter struct{ sem chan struct{} }

// newLimiter returns a limiter of n slots (at least 1).
func newLimiter(n int) *limiter { return &limiter{sem: make(chan struct{}, max(n, 1))} }

// Acquire takes a slot, waiting for one, or returns ctx.Err() when ctx is
// done first.
func (l *limiter) Acquire(ctx context.Context) error {
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
func (l *limiter) Release() { <-l.sem }

// Slots returns how many requests the limiter lets run at once.
func (l *limiter) Slots() int { return cap(l.sem) }

// normalizePrefix returns a backend's key prefix without leading or
// trailing "/" plus one trailing "/", or "" for an empty prefix. A prefix
// that is not a valid key (store.ValidateKey) is an error wrapping
// ErrInvalidKey.
func normalizePrefix(prefix string) (string, error) {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return "", nil
	}
	if err := store.ValidateKey(p); err != nil {
		return "", fmt.Errorf("prefix: %w", err)
	}
	return p + "/", nil
}
