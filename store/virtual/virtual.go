// Package virtual is gozarr's shared "virtual chunk" layer: a reference
// names a byte range of an object by URL (a kerchunk reference, an
// Icechunk virtual chunk), and a Resolver turns it into a read of a gozarr
// store opened through store/storeurl: local paths and file://, s3://,
// gs://, az://, http:// and https://, with the options and credentials of
// those stores.
//
// # References are untrusted
//
// A references file can name any URL: file:///etc/shadow, a host on the
// internal network, a credentialed bucket. A Resolver therefore resolves
// only URLs under its allowed prefixes: the location of the references
// file itself (WithBase: same store, same prefix) and the prefixes the
// caller adds (Allow). Every other URL is refused with an error wrapping
// ErrNotAllowed that names the URL, before any request is made; so is a
// URL whose path, once under a prefix, climbs out of it ("..", percent-
// escaped or not), and one with user info, a query or a fragment. Prefixes
// match whole path segments: s3://bucket/data allows s3://bucket/data/x.nc,
// not s3://bucket/database.nc. The store for a prefix is opened at the
// prefix (a local directory through store/fs, whose root symlinks cannot
// escape), and the rest of the URL is a key of it checked with
// store.ValidateKey.
//
// # Checksums
//
// A reference may carry the checksum its target had when the reference was
// made (an ETag or a last-modified time, as Icechunk records). The read
// then goes through the target store's ConditionalReader when it has one,
// so a changed object is ErrChanged rather than wrong bytes; a store
// without one reads unconditioned, or fails with ErrUnverifiable under
// StrictChecksums.
package virtual

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/lazy"
	"github.com/gozarr/gozarr/store/storeurl"
)

// Sentinel errors; errors from this package wrap them and name the URL.
var (
	// ErrNotAllowed reports a reference to a URL outside the resolver's
	// allowed prefixes. No request was made.
	ErrNotAllowed = errors.New("virtual: reference target not allowed")
	// ErrInvalidRef reports a malformed reference: an empty or unparsable
	// URL, a negative offset or length, a range that overflows.
	ErrInvalidRef = errors.New("virtual: invalid reference")
	// ErrChanged reports a target that changed since the reference was
	// made (its checksum no longer matches): store.ErrChanged.
	ErrChanged = store.ErrChanged
	// ErrUnverifiable reports, under StrictChecksums, a reference with a
	// checksum whose target store cannot check it.
	ErrUnverifiable = errors.New("virtual: target store cannot check the reference's checksum")
)

// Checksum is what a reference records of its target's version when the
// reference was made (store.ReadCondition: an ETag or a last-modified
// time). The zero value records nothing.
type Checksum = store.ReadCondition

// Ref is one virtual reference: Length bytes at Offset of the object at
// URL, or the whole object when Whole is set (kerchunk's one-element
// [url] reference). A relative URL is relative to the resolver's base
// location.
type Ref struct {
	URL            string
	Offset, Length int64
	Whole          bool
	Checksum       Checksum
}

// Range returns the bytes r selects of its object.
func (r Ref) Range() store.ByteRange {
	if r.Whole {
		return store.Full()
	}
	return store.OffsetLen(r.Offset, r.Length)
}

// Validate reports ErrInvalidRef for an empty URL, a negative offset or
// length, or a range whose end overflows int64.
func (r Ref) Validate() error {
	if r.URL == "" {
		return fmt.Errorf("%w: empty URL", ErrInvalidRef)
	}
	if r.Whole {
		return nil
	}
	if err := r.Range().Validate(); err != nil {
		return fmt.Errorf("%w: %q: offset %d, length %d", ErrInvalidRef, r.URL, r.Offset, r.Length)
	}
	return nil
}

// ConditionalReader is store.ConditionalReader: stores that read part of a
// value only while it is the version a checksum names.
type ConditionalReader = store.ConditionalReader

// Opener opens the store rooted at location (a URL or local path without
// a trailing slash). The default is storeurl.Open with the options of
// WithStoreOptions.
type Opener func(ctx context.Context, location string) (store.Reader, error)

// Option configures New.
type Option func(*Resolver) error

// WithBase says where the references file is: location is the URL or
// local path of the directory holding it (such as "s3://bucket/refs" or
// "/data/refs"), st the store it was read from and prefix the key prefix
// of that directory in st ("" for st's root, else ending in "/"). URLs
// under location resolve to keys of st under prefix, with no store
// opened, and are allowed; relative URLs are relative to location.
// location may be "" when it is unknown: then only relative URLs resolve
// into st. Default: no base; every URL needs an Allow.
func WithBase(location string, st store.Reader, prefix string) Option {
	return func(r *Resolver) error {
		if st == nil {
			return fmt.Errorf("%w: WithBase without a store", ErrInvalidRef)
		}
		if prefix != "" {
			if err := store.ValidatePrefix(prefix); err != nil || !strings.HasSuffix(prefix, "/") {
				return fmt.Errorf("%w: base prefix %q is not a key prefix ending in /", ErrInvalidRef, prefix)
			}
		}
		r.baseStore, r.basePrefix = st, prefix
		if location == "" {
			return nil
		}
		c, err := canonicalPrefix(location)
		if err != nil {
			return err
		}
		r.base = c
		return nil
	}
}

// Allow adds prefixes under which URLs are allowed (in the forms of
// store/storeurl: a local directory, file://, s3://bucket/prefix,
// https://host/path, ...). A prefix is a directory: it allows the URLs
// under it, whole segments only. A relative local path is relative to the
// working directory. Default: none beyond WithBase's location.
func Allow(prefixes ...string) Option {
	return func(r *Resolver) error {
		return eachCanonical(prefixes, func(_, c string) error {
			r.allowed = append(r.allowed, c)
			return nil
		})
	}
}

// eachCanonical calls add with each of urls and its canonicalPrefix form,
// stopping at the first error.
func eachCanonical(urls []string, add func(u, c string) error) error {
	for _, u := range urls {
		c, err := canonicalPrefix(u)
		if err != nil {
			return err
		}
		if err := add(u, c); err != nil {
			return err
		}
	}
	return nil
}

// AllowFile allows exactly the files at the given URLs (same forms as
// Allow's prefixes), not their directories: what a reference store made
// from one file (an HDF5 file virtualized in memory) needs. The store of
// a file's directory is opened to read it, and only the file's key is
// reachable through it.
func AllowFile(urls ...string) Option {
	return func(r *Resolver) error {
		return eachCanonical(urls, func(u, c string) error {
			c = strings.TrimSuffix(c, "/")
			i := strings.LastIndex(c, "/")
			if i < 0 || i == len(c)-1 || strings.HasSuffix(c[:i], ":/") || store.ValidateKey(c[i+1:]) != nil {
				return fmt.Errorf("%w: %q names no file", ErrInvalidRef, u)
			}
			if r.files == nil {
				r.files = map[string]target{}
			}
			r.files[c] = target{prefix: c[:i+1], key: c[i+1:]}
			return nil
		})
	}
}

// WithStoreOptions passes options to storeurl.Open for the stores of
// allowed prefixes (credentials, endpoints, HTTP headers, ...).
func WithStoreOptions(opts ...storeurl.Option) Option {
	return func(r *Resolver) error { r.storeOpts = append(r.storeOpts, opts...); return nil }
}

// WithOpener replaces storeurl.Open for opening the stores of allowed
// prefixes (tests, custom backends). The allow-list applies all the same.
func WithOpener(open Opener) Option {
	return func(r *Resolver) error {
		if open == nil {
			return fmt.Errorf("%w: nil opener", ErrInvalidRef)
		}
		r.open = open
		return nil
	}
}

// StrictChecksums makes a reference with a checksum fail with
// ErrUnverifiable when its target store is not a ConditionalReader.
// Default: such a reference is read without the condition.
func StrictChecksums() Option {
	return func(r *Resolver) error { r.strict = true; return nil }
}

// Resolver resolves references to reads of gozarr stores, within its
// allowed prefixes. It opens the store of a prefix once, on first use,
// and keeps it. A Resolver is safe for concurrent use.
type Resolver struct {
	base       string // canonical base location, ending in "/"; "" for none
	baseStore  store.Reader
	basePrefix string
	allowed    []string          // canonical prefixes, ending in "/"
	files      map[string]target // AllowFile's canonical URLs
	storeOpts  []storeurl.Option
	open       Opener
	strict     bool

	stores lazy.Map[string, store.Reader] // by canonical prefix
}

// New returns a resolver with opts. It opens nothing.
func New(opts ...Option) (*Resolver, error) {
	r := &Resolver{}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(r); err != nil {
			return nil, err
		}
	}
	if r.open == nil {
		so := r.storeOpts
		r.open = func(ctx context.Context, location string) (store.Reader, error) {
			return storeurl.Open(ctx, location, so...)
		}
	}
	return r, nil
}

// Allowed returns the canonical allowed prefixes, the base location's
// first when there is one.
func (r *Resolver) Allowed() []string {
	var out []string
	if r.base != "" {
		out = append(out, r.base)
	}
	out = append(out, r.allowed...)
	for _, f := range slices.Sorted(maps.Keys(r.files)) {
		out = append(out, f)
	}
	return out
}

// target is where a URL resolved to: key in the store of prefix (the base
// store when base is set).
type target struct {
	prefix string
	key    string
	base   bool
}

// check resolves u against the allow-list without any I/O.
func (r *Resolver) check(u string) (target, error) {
	if u == "" {
		return target{}, fmt.Errorf("%w: empty URL", ErrInvalidRef)
	}
	if isRelative(u) {
		if r.baseStore == nil {
			return target{}, fmt.Errorf("%w: %q: a relative URL, and no base location", ErrNotAllowed, u)
		}
		if r.base == "" {
			key := r.basePrefix + u
			if err := store.ValidateKey(key); err != nil {
				return target{}, fmt.Errorf("%w: %q climbs out of the references' directory or is no key: %w", ErrNotAllowed, u, err)
			}
			return target{key: key, base: true}, nil
		}
		u = r.base + u
	}
	c, err := canonical(u)
	if err != nil {
		return target{}, err
	}
	if t, ok := r.files[c]; ok {
		return t, nil
	}
	best := target{}
	found := false
	try := func(prefix string, base bool) {
		if !strings.HasPrefix(c, prefix) || (found && len(prefix) <= len(best.prefix)) {
			return
		}
		best, found = target{prefix: prefix, key: c[len(prefix):], base: base}, true
	}
	if r.base != "" {
		try(r.base, true)
	}
	for _, p := range r.allowed {
		try(p, false)
	}
	if !found {
		return target{}, fmt.Errorf("%w: %q is outside the allowed prefixes %q", ErrNotAllowed, u, r.Allowed())
	}
	if err := store.ValidateKey(best.key); err != nil {
		return target{}, fmt.Errorf("%w: %q: its path below %q is no plain key (.., //, control characters): %w", ErrNotAllowed, u, best.prefix, err)
	}
	if best.base {
		best.key = r.basePrefix + best.key
	}
	return best, nil
}

// Check reports whether url may be resolved: nil, or an error wrapping
// ErrNotAllowed or ErrInvalidRef that names it. It makes no request.
func (r *Resolver) Check(url string) error {
	_, err := r.check(url)
	return err
}

// Target returns the store and key that url resolves to, opening the
// store of its prefix on first use. With a non-zero checksum the store
// returned reads conditionally (see the package doc). Nothing is read.
func (r *Resolver) Target(ctx context.Context, url string, c Checksum) (store.Reader, string, error) {
	t, err := r.check(url)
	if err != nil {
		return nil, "", err
	}
	var st store.Reader
	if t.base {
		st = r.baseStore
	} else if st, err = r.storeOf(ctx, t.prefix); err != nil {
		return nil, "", err
	}
	if c.IsZero() {
		return st, t.key, nil
	}
	cr := store.CapabilitiesOf(st).CondReader // kept by caches and counters
	if cr == nil {
		if r.strict {
			return nil, "", fmt.Errorf("%w: %q (%s): %T", ErrUnverifiable, url, c, st)
		}
		return st, t.key, nil
	}
	return &conditional{st: st, cr: cr, c: c, strict: r.strict}, t.key, nil
}

// storeOf returns the store of the allowed prefix p, opened once (an
// open that ends with ctx is tried again by the next read).
func (r *Resolver) storeOf(ctx context.Context, p string) (store.Reader, error) {
	st, err := r.stores.Get(p, func() (store.Reader, error) {
		loc := strings.TrimSuffix(p, "/")
		if strings.HasPrefix(loc, "file://") {
			loc = strings.TrimPrefix(loc, "file://")
			if loc == "" {
				loc = "/"
			}
		}
		st, err := r.open(ctx, loc)
		if err == nil && st == nil {
			err = fmt.Errorf("virtual: opener returned no store for %q", loc)
		}
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("virtual: opening the store of %q: %w", p, err)
	}
	return st, nil
}

// LocateKey is Locate for the reference of store key key: its error is a
// *store.KeyError naming key (op "locate"), as a store.Locator's are.
func (r *Resolver) LocateKey(ctx context.Context, key string, ref Ref) (store.Location, error) {
	loc, err := r.Locate(ctx, ref)
	if err != nil {
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: err}
	}
	return loc, nil
}

// Locate returns where ref's bytes are, as a store.Locator reports them.
func (r *Resolver) Locate(ctx context.Context, ref Ref) (store.Location, error) {
	if err := ref.Validate(); err != nil {
		return store.Location{}, err
	}
	st, key, err := r.Target(ctx, ref.URL, ref.Checksum)
	if err != nil {
		return store.Location{}, err
	}
	return store.Location{Store: st, Key: key, Range: ref.Range()}, nil
}

// Get reads ref's bytes. A target that ends before the reference's range
// does is an error wrapping ErrInvalidRef (references name bytes that
// exist); a missing target is store.ErrNotFound.
func (r *Resolver) Get(ctx context.Context, ref Ref) ([]byte, error) {
	loc, err := r.Locate(ctx, ref)
	if err != nil {
		return nil, err
	}
	b, err := loc.Store.Get(ctx, loc.Key, loc.Range)
	if err != nil {
		return nil, fmt.Errorf("virtual: %q: %w", ref.URL, err)
	}
	if !ref.Whole && int64(len(b)) != ref.Length {
		return nil, short(ref, len(b))
	}
	return b, nil
}

func short(ref Ref, n int) error {
	return fmt.Errorf("%w: %q: %d bytes at offset %d, the object holds %d of them", ErrInvalidRef, ref.URL, ref.Length, ref.Offset, n)
}

// GetMany reads the bytes of refs, in their order. References to one
// object (same store, key and checksum) are read together, neighbouring
// ranges joined into one request with opt (zero: the target store's own
// knobs, else store's defaults); every URL is checked before any request.
// It starts no goroutines and stops at the first error.
func (r *Resolver) GetMany(ctx context.Context, refs []Ref, opt store.CoalesceOptions) ([][]byte, error) {
	type group struct {
		st   store.Reader
		key  string
		idx  []int
		rngs []store.ByteRange
	}
	var order []string
	groups := map[string]*group{}
	for i, ref := range refs {
		loc, err := r.Locate(ctx, ref)
		if err != nil {
			return nil, err
		}
		id := store.IDOf(loc.Store) + "\x00" + loc.Key
		g := groups[id]
		if g == nil {
			g = &group{st: loc.Store, key: loc.Key}
			groups[id] = g
			order = append(order, id)
		}
		g.idx = append(g.idx, i)
		g.rngs = append(g.rngs, loc.Range)
	}
	out := make([][]byte, len(refs))
	for _, id := range order {
		g := groups[id]
		co := opt
		if co == (store.CoalesceOptions{}) {
			co = store.CapabilitiesOf(g.st).Coalesce
		}
		data, err := store.GetRangesCoalesced(ctx, g.st, g.key, g.rngs, co)
		if err != nil {
			return nil, fmt.Errorf("virtual: %q: %w", refs[g.idx[0]].URL, err)
		}
		for j, i := range g.idx {
			if !refs[i].Whole && int64(len(data[j])) != refs[i].Length {
				return nil, short(refs[i], len(data[j]))
			}
			out[i] = data[j]
		}
	}
	return out, nil
}

// conditional reads from st only while its value is the version c names.
type conditional struct {
	st     store.Reader
	cr     ConditionalReader
	c      Checksum
	strict bool
}

// Get implements store.Reader through GetIf.
func (s *conditional) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	b, err := s.cr.GetIf(ctx, key, br, s.c)
	if errors.Is(err, store.ErrConditionUnsupported) {
		// A condition this store cannot check (a last-modified time where
		// it reports only ETags): as for a store with no GetIf.
		if s.strict {
			return nil, fmt.Errorf("%w: %s (%s): %w", ErrUnverifiable, key, s.c, err)
		}
		return s.st.Get(ctx, key, br)
	}
	return b, err
}

// StoreID implements store.Identifier: the target store's, with the
// checksum, so that references with different checksums are read apart.
func (s *conditional) StoreID() string { return store.IDOf(s.st) + "#" + s.c.String() }

// Capabilities implements store.CapabilityReporter: plain gets only (so
// every read carries the condition), with the target's request limit.
func (s *conditional) Capabilities() store.Capabilities {
	c := store.CapabilitiesOf(s.st)
	return store.Capabilities{Coalesce: c.Coalesce, MaxConcurrency: c.MaxConcurrency}
}

// isRelative reports whether u is a relative reference: no scheme and no
// leading "/".
func isRelative(u string) bool {
	if strings.HasPrefix(u, "/") {
		return false
	}
	i := strings.Index(u, "://")
	return i <= 0 || strings.ContainsAny(u[:i], "/\\")
}

// canonicalPrefix is canonical for a prefix: a directory, ending in "/".
// A relative local path is made absolute against the working directory.
func canonicalPrefix(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: empty prefix", ErrInvalidRef)
	}
	if isRelative(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%w: prefix %q: %w", ErrInvalidRef, p, err)
		}
		p = filepath.ToSlash(abs)
	}
	c, err := canonical(p)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(c, "/") {
		c += "/"
	}
	return c, nil
}

// canonical returns the one spelling of an absolute location that prefixes
// are matched against: file:///clean/path for local paths and file URLs
// (percent-escapes decoded, "." and ".." resolved lexically), a lower-case
// scheme and host with no default port and the decoded path for http(s),
// scheme://rest as written for object stores (whose keys are literal:
// ".." in them is refused later, as no key).
func canonical(u string) (string, error) {
	loc, err := storeurl.Parse(u)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrInvalidRef, u, err)
	}
	switch loc.Scheme {
	case "file":
		p := loc.Path
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("%w: %q is not an absolute path", ErrInvalidRef, u)
		}
		if strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("%w: %q holds a NUL", ErrInvalidRef, u)
		}
		c := path.Clean(p)
		if strings.HasSuffix(p, "/") && c != "/" {
			c += "/"
		}
		return "file://" + c, nil
	case "http", "https":
		pu, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("%w: %q: %w", ErrInvalidRef, u, err)
		}
		if pu.User != nil || pu.RawQuery != "" || pu.ForceQuery || pu.Fragment != "" || pu.Opaque != "" || pu.Host == "" {
			return "", fmt.Errorf("%w: %q: http references name a host and a path only (no user info, query or fragment)", ErrInvalidRef, u)
		}
		scheme := strings.ToLower(pu.Scheme)
		host := strings.ToLower(pu.Host)
		if scheme == "http" {
			host = strings.TrimSuffix(host, ":80")
		} else {
			host = strings.TrimSuffix(host, ":443")
		}
		p := pu.Path
		if p == "" {
			p = "/"
		}
		return scheme + "://" + host + p, nil
	}
	i := strings.Index(u, "://")
	rest := u[i+3:]
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("%w: %q: object store references name a bucket and key only (no query or fragment)", ErrInvalidRef, u)
	}
	return strings.ToLower(u[:i]) + "://" + rest, nil
}
