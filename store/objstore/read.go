package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gozarr/gozarr/store"
)

// Get reads the range r of key. A missing key is store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.get(ctx, key, r)
}

// get is Get after validation: one request (a head for an empty range).
func (s *Store) get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return s.getIf(ctx, key, r, store.ReadCondition{})
}

// getIf is get under the read condition c (the zero value: none). A
// failed condition is told from a missing object (which some servers,
// Azurite among them, answer 412 too) with one more Head.
func (s *Store) getIf(ctx context.Context, key string, r store.ByteRange, c store.ReadCondition) (b []byte, err error) {
	r, empty := requestRange(r)
	if empty {
		_, err = s.head(ctx, "get", key, c)
		b = []byte{}
	} else {
		b, _, err = s.read(ctx, "get", key, r, c)
	}
	if err != nil && !c.IsZero() && errors.Is(err, store.ErrChanged) {
		if _, herr := s.head(ctx, "get", key, store.ReadCondition{}); errors.Is(herr, store.ErrNotFound) {
			return nil, herr
		}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// GetRanges reads several ranges of key, in the order of ranges: nearby
// bounded ranges joined into one request with the store's knobs
// (CoalesceOptions), the requests run concurrently, no more goroutines
// than the store's request limit.
// Results of overlapping ranges may share memory.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return store.GetRangesConcurrent(ctx, key, ranges, s.cfg.Coalesce, s.lim.Slots(), s.get)
}

// errRefetchFull: a non-empty suffix of the object is not satisfiable,
// which only an empty object (or a wrong server) answers; the whole
// object is the answer.
var errRefetchFull = errors.New("suffix not satisfiable: read the whole object")

// offLen returns Driver.Read's arguments for r (not an empty range).
func offLen(r store.ByteRange) (off, n int64) {
	if o, l, ok := r.Bounded(); ok {
		return o, l
	}
	if o, ok := r.IsFrom(); ok {
		return o, -1
	}
	if l, ok := r.IsSuffix(); ok {
		return -l, -1
	}
	return 0, -1
}

// read reads the range r of key (not empty) under the condition c with
// retries, and the object's version.
func (s *Store) read(ctx context.Context, op, key string, r store.ByteRange, c store.ReadCondition) (b []byte, v string, err error) {
	err = s.do(ctx, op, nil, func(ctx context.Context) error {
		b, v, err = s.readOnce(ctx, op, key, r, c)
		return err
	})
	if err == errRefetchFull {
		return s.read(ctx, op, key, store.Full(), c)
	}
	if err != nil {
		return nil, "", s.fail(ctx, op, key, err)
	}
	return b, v, nil
}

// readOnce sends one read of r and reads its body no
// further than r needs: of a partial answer at most one byte past r's
// length (more is store.ErrBadContentRange), of a whole-object answer up
// to r's end (then sliced). A partial answer's Content-Range must match r,
// its validators the condition c.
func (s *Store) readOnce(ctx context.Context, op, key string, r store.ByteRange, c store.ReadCondition) ([]byte, string, error) {
	off, n := offLen(r)
	o, err := s.d.Read(ctx, s.prefix+key, off, n, c)
	if err != nil {
		if s.kind(ctx, op, err) == KindEmptyRange {
			if off < 0 {
				return nil, "", errRefetchFull
			}
			if !c.IsZero() {
				// No bytes, but the condition still needs its check.
				in, err := s.d.Head(ctx, s.prefix+key, c)
				if err == nil {
					err = checkCondition(in.Validators, c)
				}
				if err != nil {
					return nil, "", err
				}
			}
			return []byte{}, "", nil
		}
		return nil, "", err
	}
	defer drainClose(o.Body)
	if err := checkCondition(o.Validators, c); err != nil {
		return nil, "", err
	}
	limit := answerLimit(r, !o.Whole)
	b, more, err := readBody(o.Body, o.Length, limit)
	if more && !o.Whole {
		return nil, "", fmt.Errorf("%w: an answer of more than the %d bytes asked for", store.ErrBadContentRange, limit)
	}
	if err != nil {
		return nil, "", s.bodyErr(ctx, err)
	}
	switch {
	case o.Whole:
		if b, err = sliceWhole(b, r); err != nil {
			return nil, "", err
		}
	case o.ContentRange != "":
		if err := checkContentRange(o.ContentRange, r, len(b)); err != nil {
			return nil, "", err
		}
	}
	return b, o.Version, nil
}

// bodyErr marks err, met while reading a body, as transient, unless the
// context ended (the cause).
func (s *Store) bodyErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return &bodyError{err}
}

// drainClose reads a little of what is left of body, so that an HTTP
// connection can be reused, and closes it.
func drainClose(body io.ReadCloser) {
	io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}

// maxPrealloc is the largest announced body length readBody trusts to
// allocate before the bytes arrive.
const maxPrealloc = 64 << 20

// readBody reads an answer's body, announced as size bytes (-1 when
// unknown), no further than limit bytes (all of it when limit < 0). more
// reports a body holding more than limit bytes, found from size (then
// nothing past limit is read) or by reading one byte past limit; b then
// holds the first limit bytes (or, when the body is longer than its
// announced size, the announced bytes). A known size up to 64 MiB sizes the buffer
// exactly (a shorter body is io.ErrUnexpectedEOF); a larger or unknown one
// grows as the bytes arrive, so a lying server cannot make the reader
// allocate without sending. An empty body is an empty, non-nil slice. So a
// server answering a 10-byte range with a 512 MiB body costs 11 bytes of
// reading, not 512 MiB.
func readBody(body io.Reader, size, limit int64) (b []byte, more bool, err error) {
	n := size // how many bytes to read; -1: to the end
	switch {
	case limit >= 0 && size > limit:
		n, more = limit, true
	case limit >= 0 && size < 0:
		body = io.LimitReader(body, limit+1)
	}
	if n >= 0 && n <= maxPrealloc {
		b = make([]byte, n)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, false, err
		}
		if limit >= 0 && !more {
			// A body longer than announced: one byte more tells.
			var one [1]byte
			if k, _ := io.ReadFull(body, one[:]); k > 0 {
				return b, true, nil
			}
		}
	} else {
		if n >= 0 {
			body = io.LimitReader(body, n)
		}
		if b, err = io.ReadAll(body); err != nil {
			return nil, false, err
		}
		if n >= 0 && int64(len(b)) < n {
			return nil, false, io.ErrUnexpectedEOF
		}
	}
	if limit >= 0 && int64(len(b)) > limit {
		return b[:limit:limit], true, nil
	}
	if b == nil {
		b = []byte{}
	}
	return b, more, nil
}

// ReadInto implements store.IntoReader: the bytes [off, off+len(dst)) of
// key into dst, with one request (and retries); fewer than len(dst) only
// when the value ends first (0 when off is at or past the end). An empty
// dst costs a Head, to report a missing key.
func (s *Store) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	if err := store.ValidateRequest("get", key, store.OffsetLen(off, int64(len(dst)))); err != nil {
		return 0, err
	}
	if len(dst) == 0 {
		_, err := s.head(ctx, "get", key, store.ReadCondition{})
		return 0, err
	}
	var n int
	err := s.do(ctx, "get", nil, func(ctx context.Context) (err error) {
		n, err = s.readIntoOnce(ctx, key, off, dst)
		return err
	})
	if err != nil {
		return 0, s.fail(ctx, "get", key, err)
	}
	return n, nil
}

// readIntoOnce sends one read for ReadInto. A
// partial answer longer than dst, or whose Content-Range does not match,
// is store.ErrBadContentRange; of a whole-object answer the bytes before
// off are skipped; a body shorter than announced is a body error.
func (s *Store) readIntoOnce(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	o, err := s.d.Read(ctx, s.prefix+key, off, int64(len(dst)), store.ReadCondition{})
	if err != nil {
		if s.kind(ctx, "get", err) == KindEmptyRange {
			return 0, nil
		}
		return 0, err
	}
	defer drainClose(o.Body)
	expect := o.Length
	if !o.Whole && expect > int64(len(dst)) {
		return 0, fmt.Errorf("%w: an answer of %d bytes for %d asked for", store.ErrBadContentRange, expect, len(dst))
	}
	if o.Whole && off > 0 {
		if _, err := io.CopyN(io.Discard, o.Body, off); err == io.EOF {
			return 0, nil
		} else if err != nil {
			return 0, s.bodyErr(ctx, err)
		}
		if expect >= 0 {
			expect -= off
		}
	}
	k, err := io.ReadFull(o.Body, dst)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		if expect >= 0 && int64(k) < expect {
			return 0, s.bodyErr(ctx, err) // cut short
		}
		err = nil
	}
	if err != nil {
		return 0, s.bodyErr(ctx, err)
	}
	if !o.Whole {
		if k == len(dst) && expect < 0 {
			// No length announced: one byte more tells whether the
			// server sends more than asked for.
			if m, _ := io.ReadFull(o.Body, make([]byte, 1)); m > 0 {
				return 0, fmt.Errorf("%w: an answer of more than the %d bytes asked for", store.ErrBadContentRange, len(dst))
			}
		}
		if o.ContentRange != "" {
			if err := checkContentRange(o.ContentRange, store.OffsetLen(off, int64(k)), k); err != nil {
				return 0, err
			}
		}
	}
	return k, nil
}
