// Package kerchunk is a read-only gozarr store over kerchunk references:
// a JSON document (kerchunk's version 0 or version 1 spec, optionally
// gzip- or zstd-compressed) that maps each key of a Zarr hierarchy to
// inline data or to a byte range of another file, so that HDF5, NetCDF-4,
// GRIB or TIFF archives read as Zarr with no library of their format.
//
// Version 1 features are all supported: "templates" with {{name}}
// substitution (and template calls such as {{f(c='x')}}), "gen" items
// expanded over the cartesian product of their dimensions, with offsets
// and lengths that are integer expressions ({{(i + 1) * 1000}}), "base64:"
// inline values, inline JSON documents, and whole-file references ([url]).
// The expressions are a small subset of jinja2, evaluated here; anything
// beyond it is ErrInvalid.
//
// Targets are resolved by a virtual.Resolver: by default only URLs under
// the directory of the references file itself (in the same store), plus
// the prefixes the caller allows (Allow). Any other URL fails with
// virtual.ErrNotAllowed, naming it, before a request is made.
//
// The store implements store.Locator, so the pipeline reads the chunks of
// one read that live in one target file with few requests: neighbouring
// ranges are joined into one, as for the inner chunks of a shard.
package kerchunk

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/virtual"
)

// Sentinel errors, wrapped with what failed.
var (
	// ErrInvalid reports a references document that is not valid kerchunk
	// JSON, or a reference in it that is malformed.
	ErrInvalid = errors.New("kerchunk: invalid references")
	// ErrTooLarge reports a references document over a limit (WithMaxSize,
	// WithMaxKeys).
	ErrTooLarge = errors.New("kerchunk: references over a limit")
)

// Defaults of the limits.
const (
	// DefaultMaxSize is the largest references document read (after
	// decompression): 1 GiB.
	DefaultMaxSize int64 = 1 << 30
	// DefaultMaxKeys is the most references a document may hold, gen
	// expansions included: 2^24.
	DefaultMaxKeys = 1 << 24
)

// Option configures Open.
type Option func(*config) error

type config struct {
	location string
	allow    []string
	vopts    []virtual.Option
	lim      limits
}

// WithLocation names the location (a URL or local path, as storeurl takes
// them) of the store the references file is read from, so that absolute
// URLs under the file's directory resolve into that store and are
// allowed. OpenURL sets it. Default: unknown, so only relative URLs
// resolve there.
func WithLocation(location string) Option {
	return func(c *config) error { c.location = location; return nil }
}

// Allow adds prefixes under which reference targets are allowed (see
// virtual.Allow). Default: none but the references file's directory.
func Allow(prefixes ...string) Option {
	return func(c *config) error { c.allow = append(c.allow, prefixes...); return nil }
}

// WithResolverOptions passes options to virtual.New (store options for
// the targets' stores, an opener, strict checksums).
func WithResolverOptions(opts ...virtual.Option) Option {
	return func(c *config) error { c.vopts = append(c.vopts, opts...); return nil }
}

// WithMaxSize sets the largest references document read, after
// decompression. Default DefaultMaxSize; n must be positive.
func WithMaxSize(n int64) Option {
	return positive("WithMaxSize", n, func(c *config) { c.lim.maxSize = n })
}

// WithMaxKeys sets the most references a document may hold, gen
// expansions included. Default DefaultMaxKeys; n must be positive.
func WithMaxKeys(n int) Option {
	return positive("WithMaxKeys", n, func(c *config) { c.lim.maxKeys = n })
}

// positive is the option name(n) that set makes: n must be positive.
func positive[T int | int64](name string, n T, set func(*config)) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: %s(%d)", ErrInvalid, name, n)
		}
		set(c)
		return nil
	}
}

// Store is a read-only store over kerchunk references. It implements
// store.Reader, store.Lister and store.Locator and is safe for concurrent
// use. A key with no reference is store.ErrNotFound (a chunk that reads as
// the fill value); a reference whose target ends before its range does is
// an error wrapping virtual.ErrInvalidRef.
type Store struct {
	refs map[string]entry
	keys []string // sorted
	res  *virtual.Resolver
	id   string
	conc int
}

var (
	_ store.Reader  = (*Store)(nil)
	_ store.Lister  = (*Store)(nil)
	_ store.Locator = (*Store)(nil)
)

// Open reads the references document at key in st. It reads nothing
// else: targets are opened on first use.
func Open(ctx context.Context, st store.Reader, key string, opts ...Option) (*Store, error) {
	c := config{lim: limits{maxKeys: DefaultMaxKeys, maxSize: DefaultMaxSize}}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("kerchunk: %w", err)
	}
	data, err := st.Get(ctx, key, store.OffsetLen(0, c.lim.maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("kerchunk: reading %q: %w", key, err)
	}
	if int64(len(data)) > c.lim.maxSize {
		return nil, fmt.Errorf("%w: %q holds more than %d bytes (raise WithMaxSize)", ErrTooLarge, key, c.lim.maxSize)
	}
	if data, err = decompress(data, c.lim.maxSize); err != nil {
		return nil, fmt.Errorf("kerchunk: %q: %w", key, err)
	}
	refs, err := parse(data, c.lim)
	if err != nil {
		return nil, fmt.Errorf("kerchunk: %q: %w", key, err)
	}
	dir := ""
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir = key[:i+1]
	}
	loc := ""
	if c.location != "" {
		loc = strings.TrimSuffix(c.location, "/") + "/" + strings.TrimSuffix(dir, "/")
	}
	vopts := append([]virtual.Option{virtual.WithBase(loc, st, dir), virtual.Allow(c.allow...)}, c.vopts...)
	res, err := virtual.New(vopts...)
	if err != nil {
		return nil, fmt.Errorf("kerchunk: %w", err)
	}
	keys := make([]string, 0, len(refs))
	for k := range refs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &Store{refs: refs, keys: keys, res: res, id: "kerchunk:" + store.IDOf(st) + "/" + key,
		conc: store.CapabilitiesOf(st).MaxConcurrency}, nil
}

// OpenURL opens the references document at location (a URL or local
// path of the file, as storeurl takes them): the store of its directory
// is opened with storeOpts, and the directory is the default allowed
// prefix.
func OpenURL(ctx context.Context, location string, storeOpts []storeurl.Option, opts ...Option) (*Store, error) {
	i := strings.LastIndexByte(location, '/')
	dir, name := ".", location
	if i >= 0 {
		dir, name = location[:i], location[i+1:]
		if dir == "" || strings.HasSuffix(dir, ":/") || strings.HasSuffix(dir, "://") {
			dir += "/"
		}
	}
	if name == "" {
		return nil, fmt.Errorf("%w: %q names a directory, not a references file", ErrInvalid, location)
	}
	st, err := storeurl.Open(ctx, dir, storeOpts...)
	if err != nil {
		return nil, fmt.Errorf("kerchunk: %w", err)
	}
	if storeOpts != nil {
		opts = append([]Option{WithResolverOptions(virtual.WithStoreOptions(storeOpts...))}, opts...)
	}
	return Open(ctx, st, name, append([]Option{WithLocation(dir)}, opts...)...)
}

// Resolver returns the resolver of the store's targets.
func (s *Store) Resolver() *virtual.Resolver { return s.res }

// Len returns the number of references.
func (s *Store) Len() int { return len(s.keys) }

// StoreID implements store.Identifier: the references file's store and
// key.
func (s *Store) StoreID() string { return s.id }

// Capabilities implements store.CapabilityReporter: the store locates
// values (store.Locator) and states no request limit of its own beyond
// the references file's store's.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{Locator: s, MaxConcurrency: s.conc}
}

func (s *Store) lookup(op, key string) (entry, error) {
	if err := store.ValidateKey(key); err != nil {
		return entry{}, err
	}
	e, ok := s.refs[key]
	if !ok {
		return entry{}, &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	}
	return e, nil
}

func (e entry) ref() virtual.Ref {
	return virtual.Ref{URL: e.url, Offset: e.off, Length: e.n, Whole: e.whole}
}

// Locate implements store.Locator.
func (s *Store) Locate(ctx context.Context, key string) (store.Location, error) {
	e, err := s.lookup("locate", key)
	if err != nil {
		return store.Location{}, err
	}
	if e.url == "" {
		return store.Location{Inline: e.inline}, nil
	}
	return s.res.LocateKey(ctx, key, e.ref())
}

// Get implements store.Reader: r selects bytes of the referenced value.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	e, err := s.lookup("get", key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if e.url == "" {
		lo, hi, err := r.Resolve(int64(len(e.inline)))
		if err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: err}
		}
		return slices.Clone(e.inline[lo:hi:hi]), nil
	}
	st, tkey, err := s.res.Target(ctx, e.url, virtual.Checksum{})
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if e.whole {
		b, err := st.Get(ctx, tkey, r)
		if err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%q: %w", e.url, err)}
		}
		return b, nil
	}
	lo, hi, err := r.Resolve(e.n)
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	b, err := st.Get(ctx, tkey, store.OffsetLen(e.off+lo, hi-lo))
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%q: %w", e.url, err)}
	}
	if int64(len(b)) != hi-lo {
		return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: %q: %d bytes at offset %d, the object holds %d of them",
			virtual.ErrInvalidRef, e.url, hi-lo, e.off+lo, len(b))}
	}
	return b, nil
}

// List implements store.Lister.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return listing.Sorted(ctx, s.keys, prefix)
}

// ListDir implements store.Lister.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	return listing.Dir(ctx, s.keys, dir)
}

// Keys returns the keys with references, sorted.
func (s *Store) Keys() []string { return slices.Clone(s.keys) }
