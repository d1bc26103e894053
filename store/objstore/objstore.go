// Package objstore is the one layer under gozarr's remote object stores
// (store/gcs, store/azure): a backend implements the small Driver
// interface (a ranged read with the object's size and version, a put with
// an optional condition, delete, one page of a listing, head), and Store
// gives every backend the same store.Store on top of it: key and range
// validation, the request limiter, bounded body reading, coalesced and
// concurrent GetRanges with knobs it reports, ReadInto, conditional writes
// (store.ConditionalWriter) when the driver has them, a stable identity
// (StoreID from scheme, bucket and prefix, never an address) and its
// capabilities.
//
// It follows the split of go-cloud's blob and blob/driver: the driver is
// thin and knows its SDK; everything portable is done once, here, so the
// backends cannot drift apart. Retries and per-request timeouts stay in
// the SDKs, whose policies the drivers configure (see each backend).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// Kind classifies a driver's error.
type Kind int

// The kinds of driver errors the layer tells apart.
const (
	// KindOther is any other error, reported as it is.
	KindOther Kind = iota
	// KindNotFound: the object does not exist (store.ErrNotFound).
	KindNotFound
	// KindConflict: a Put's condition failed (store.ErrConflict).
	KindConflict
	// KindEmptyRange: the range asked for holds no byte of the object
	// (HTTP 416): the read yields an empty value.
	KindEmptyRange
)

// Condition is the condition of a Put: none (the zero value), the object
// still at version IfMatch, or (IfNoneMatch) the object absent.
type Condition struct {
	IfMatch     string
	IfNoneMatch bool
}

// IsZero reports an unconditional Put.
func (c Condition) IsZero() bool { return c.IfMatch == "" && !c.IfNoneMatch }

// Object is an open read of an object: Body holds the bytes asked for
// (Length of them, -1 when unknown), Version the object's version (GCS
// generation, Azure ETag; "" when the backend has none).
type Object struct {
	Body    io.ReadCloser
	Length  int64
	Version string
}

// Page is one page of a listing: object names (full names, the driver's
// root included) and, with a delimiter, common prefixes (ending in it);
// Next is the token of the next page, "" after the last.
type Page struct {
	Keys, Dirs []string
	Next       string
}

// Driver is what a backend implements. Names are full object names (the
// Store adds its prefix); they are valid store keys. Every method honours
// ctx. Errors are the SDK's; Classify tells their kind.
type Driver interface {
	// Read opens name for reading n bytes from off (n < 0: to the end;
	// off < 0: the last -off bytes, the whole object when shorter). A
	// range past the end may be an error of KindEmptyRange or an empty
	// body.
	Read(ctx context.Context, name string, off, n int64) (Object, error)
	// Head returns name's size and version with one metadata request.
	Head(ctx context.Context, name string) (size int64, version string, err error)
	// Put replaces name's value with value under cond (a failed
	// condition is an error of KindConflict). It does not keep value.
	Put(ctx context.Context, name string, value []byte, cond Condition) error
	// Delete removes name (a missing one may be an error of
	// KindNotFound, which the Store ignores).
	Delete(ctx context.Context, name string) error
	// ListPage returns the page of names starting with prefix after
	// token ("" for the first), with delim ("" or "/") grouping names
	// into Dirs.
	ListPage(ctx context.Context, prefix, delim, token string) (Page, error)
	// Classify returns err's kind and the error to report in its place
	// (err itself, or err wrapped in a backend sentinel such as a missing
	// bucket's). op is "get", "set", "delete", "list" or "size".
	Classify(ctx context.Context, op string, err error) (Kind, error)
}

// Config describes a Store over a Driver.
type Config struct {
	// Scheme, Bucket and Prefix name the store's data ("gs", "bucket",
	// "a/b"): StoreID is made of them (and Host), so two Stores over one
	// bucket and prefix share caches and write locks; String and error
	// messages show them as scheme://bucket/prefix.
	Scheme, Bucket, Prefix string
	// Host is whatever else tells two buckets of one name apart (an
	// account, an endpoint), in StoreID only; "" when nothing does.
	Host string
	// Concurrency is the most requests in flight (at least 1).
	Concurrency int
	// Coalesce are GetRanges' knobs (reported to readers, so ranges are
	// joined once).
	Coalesce store.CoalesceOptions
	// Conditional: the driver honours Put conditions, so the Store is a
	// store.ConditionalWriter.
	Conditional bool
}

// Store is a store.Store over a Driver. It is safe for concurrent use.
type Store struct {
	d      Driver
	cfg    Config
	prefix string // "" or ending in "/"
	lim    *store.Limiter
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.RangesReader       = (*Store)(nil)
	_ store.IntoReader         = (*Store)(nil)
	_ store.SizeReader         = (*Store)(nil)
	_ store.ConcurrencyLimiter = (*Store)(nil)
	_ store.Coalescer          = (*Store)(nil)
	_ store.Identifier         = (*Store)(nil)
	_ store.CapabilityReporter = (*Store)(nil)
)

// New returns a Store over d. The prefix is normalised
// (store.NormalizePrefix).
func New(d Driver, cfg Config) (*Store, error) {
	if d == nil {
		return nil, errors.New("objstore: nil driver")
	}
	p, err := store.NormalizePrefix(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	cfg.Prefix = p
	cfg.Concurrency = max(cfg.Concurrency, 1)
	return &Store{d: d, cfg: cfg, prefix: p, lim: store.NewLimiter(cfg.Concurrency)}, nil
}

// Driver returns the store's driver.
func (s *Store) Driver() Driver { return s.d }

// Prefix returns the key prefix: "" or ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// String describes the store as a URL: scheme://bucket/prefix.
func (s *Store) String() string { return s.cfg.Scheme + "://" + s.cfg.Bucket + "/" + s.prefix }

// StoreID implements store.Identifier: scheme://[host/]bucket/prefix, so
// Stores over one bucket and prefix have one identity.
func (s *Store) StoreID() string {
	if s.cfg.Host != "" {
		return s.cfg.Scheme + "://" + s.cfg.Host + "/" + s.cfg.Bucket + "/" + s.prefix
	}
	return s.String()
}

// MaxConcurrency implements store.ConcurrencyLimiter.
func (s *Store) MaxConcurrency() int { return s.lim.Slots() }

// CoalesceOptions implements store.Coalescer: the knobs GetRanges joins
// nearby ranges with.
func (s *Store) CoalesceOptions() store.CoalesceOptions { return s.cfg.Coalesce }

// Capabilities implements store.CapabilityReporter: ranges, sizes and
// reads into a caller's buffer, the coalescing knobs, the request limit,
// and conditional writes when the driver has them.
func (s *Store) Capabilities() store.Capabilities {
	c := store.Capabilities{Into: s, Sizer: s, Ranges: s, Coalesce: s.cfg.Coalesce, MaxConcurrency: s.lim.Slots()}
	if s.cfg.Conditional {
		c.Conditional = s
	}
	return c
}

// fail turns a driver error into a *store.KeyError.
func (s *Store) fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	kind, out := s.d.Classify(ctx, op, err)
	switch kind {
	case KindNotFound:
		out = fmt.Errorf("%w (%s%s)", store.ErrNotFound, s.String(), key)
	case KindConflict:
		out = fmt.Errorf("%w: %w", store.ErrConflict, out)
	}
	return &store.KeyError{Op: op, Key: key, Err: out}
}

// acquire takes a request slot.
func (s *Store) acquire(ctx context.Context, op, key string) error {
	if err := s.lim.Acquire(ctx); err != nil {
		return &store.KeyError{Op: op, Key: key, Err: err}
	}
	return nil
}

// Get reads the range r of key. A missing key is store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.get(ctx, key, r)
}

// get is Get after validation: one request (a head for an empty range).
func (s *Store) get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	r, empty := store.RequestRange(r)
	if empty {
		if _, err := s.Size(ctx, key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	off, n := int64(0), int64(-1)
	if o, l, ok := r.Bounded(); ok {
		off, n = o, l
	} else if o, ok := r.IsFrom(); ok {
		off = o
	} else if l, ok := r.IsSuffix(); ok {
		off = -l
	}
	b, _, err := s.read(ctx, "get", key, off, n)
	return b, err
}

// read reads n bytes of key from off (as Driver.Read) under a request
// slot, no more than n (a longer body is an error, read one byte past n)
// and allocating no more than n+1 before the bytes arrive.
func (s *Store) read(ctx context.Context, op, key string, off, n int64) ([]byte, string, error) {
	if err := s.acquire(ctx, op, key); err != nil {
		return nil, "", err
	}
	defer s.lim.Release()
	o, err := s.d.Read(ctx, s.prefix+key, off, n)
	if err != nil {
		if kind, _ := s.d.Classify(ctx, op, err); kind == KindEmptyRange {
			return []byte{}, "", nil
		}
		return nil, "", s.fail(ctx, op, key, err)
	}
	defer o.Body.Close()
	b, err := store.ReadAtMost(o.Body, o.Length, n)
	if err != nil {
		return nil, "", s.fail(ctx, op, key, err)
	}
	return b, o.Version, nil
}

// GetRanges reads several ranges of key, in the order of ranges: nearby
// bounded ranges joined into one request with the store's knobs
// (CoalesceOptions), the requests run concurrently under its limit.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return store.GetRangesConcurrent(ctx, key, ranges, s.cfg.Coalesce, s.get)
}

// ReadInto implements store.IntoReader: the bytes [off, off+len(dst)) of
// key into dst, with one request; fewer than len(dst) only when the value
// ends first.
func (s *Store) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	if err := store.ValidateRequest("get", key, store.OffsetLen(off, int64(len(dst)))); err != nil {
		return 0, err
	}
	if len(dst) == 0 {
		_, err := s.Size(ctx, key)
		return 0, err
	}
	if err := s.acquire(ctx, "get", key); err != nil {
		return 0, err
	}
	defer s.lim.Release()
	o, err := s.d.Read(ctx, s.prefix+key, off, int64(len(dst)))
	if err != nil {
		if kind, _ := s.d.Classify(ctx, "get", err); kind == KindEmptyRange {
			return 0, nil
		}
		return 0, s.fail(ctx, "get", key, err)
	}
	defer o.Body.Close()
	n, err := io.ReadFull(o.Body, dst)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	if err != nil {
		return n, s.fail(ctx, "get", key, err)
	}
	return n, nil
}

// Size implements store.SizeReader with one metadata request.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	n, _, err := s.head(ctx, "size", key)
	return n, err
}

func (s *Store) head(ctx context.Context, op, key string) (int64, string, error) {
	if err := s.acquire(ctx, op, key); err != nil {
		return 0, "", err
	}
	defer s.lim.Release()
	n, v, err := s.d.Head(ctx, s.prefix+key)
	if err != nil {
		return 0, "", s.fail(ctx, op, key, err)
	}
	return n, v, nil
}

// Set stores value under key with one upload. A done context writes
// nothing.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	return s.put(ctx, key, value, Condition{})
}

func (s *Store) put(ctx context.Context, key string, value []byte, cond Condition) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.acquire(ctx, "set", key); err != nil {
		return err
	}
	defer s.lim.Release()
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	if err := s.d.Put(ctx, s.prefix+key, value, cond); err != nil {
		return s.fail(ctx, "set", key, err)
	}
	return nil
}

// GetVersion implements store.ConditionalWriter (when the driver has
// conditions): the whole value of key and its version, read with one
// request.
func (s *Store) GetVersion(ctx context.Context, key string) ([]byte, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", err
	}
	b, v, err := s.read(ctx, "get", key, 0, -1)
	if err == nil && v == "" {
		// An empty object read as an empty range carries no version.
		_, v, err = s.head(ctx, "get", key)
	}
	return b, v, err
}

// SetIfVersion implements store.ConditionalWriter: key's value replaced
// only if its version is still version ("": only if key does not exist),
// else an error wrapping store.ErrConflict.
func (s *Store) SetIfVersion(ctx context.Context, key string, value []byte, version string) error {
	if !s.cfg.Conditional {
		return &store.KeyError{Op: "set", Key: key, Err: errors.New("objstore: the backend has no conditional writes")}
	}
	cond := Condition{IfMatch: version, IfNoneMatch: version == ""}
	return s.put(ctx, key, value, cond)
}

// Delete removes key. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.acquire(ctx, "delete", key); err != nil {
		return err
	}
	defer s.lim.Release()
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "delete", Key: key, Err: err}
	}
	if err := s.d.Delete(ctx, s.prefix+key); err != nil {
		if kind, _ := s.d.Classify(ctx, "delete", err); kind != KindNotFound {
			return s.fail(ctx, "delete", key, err)
		}
	}
	return nil
}

// pages yields the pages below prefix (full name) with delim, each
// request under a slot.
func (s *Store) pages(ctx context.Context, prefix, delim string) iter.Seq2[Page, error] {
	return func(yield func(Page, error) bool) {
		token := ""
		for {
			if err := s.lim.Acquire(ctx); err != nil {
				yield(Page{}, err)
				return
			}
			p, err := s.d.ListPage(ctx, prefix, delim, token)
			s.lim.Release()
			if !yield(p, err) || err != nil || p.Next == "" {
				return
			}
			token = p.Next
		}
	}
}

// List yields every key starting with prefix, in lexical order, a page per
// request. Stopping the iteration stops the paging.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield("", err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
			return
		}
		for p, err := range s.pages(ctx, s.prefix+prefix, "") {
			if err != nil {
				yield("", s.fail(ctx, "list", prefix, err))
				return
			}
			for _, name := range p.Keys {
				if k, ok := strings.CutPrefix(name, s.prefix); ok && k != "" {
					if !yield(k, nil) {
						return
					}
				}
			}
		}
	}
}

// ListDir lists one level below dir with the delimiter "/": keys directly
// in dir and sub-directory names ending in "/", both relative to dir and
// sorted.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if err := store.ValidatePrefix(dir); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: err}
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	full := s.prefix + dir
	for p, err := range s.pages(ctx, full, "/") {
		if err != nil {
			return nil, nil, s.fail(ctx, "list", dir, err)
		}
		for _, d := range p.Dirs {
			if d, ok := strings.CutPrefix(d, full); ok && d != "" && d != "/" {
				dirs = append(dirs, d)
			}
		}
		for _, name := range p.Keys {
			if k, ok := strings.CutPrefix(name, full); ok && k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys, dirs, nil
}
