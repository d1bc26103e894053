// Package storeurl opens a gozarr store from a URL or a local path, so that
// every tool (zarrcat among them) accepts the same locations:
//
//	/data/x.zarr, ./x.zarr, x.zarr   a local directory (store/fs)
//	file:///data/x.zarr              the same, as a URL (percent-escapes decoded)
//	s3://bucket/prefix/x.zarr        an S3 bucket and key prefix (store/s3,
//	                                 registered by importing it: see below)
//	http://host/x.zarr, https://...  a read-only HTTP store (store/http)
//	memory://                        a new, empty in-memory store (store/mem)
//	memory://name                    the in-memory store called name in this
//	                                 process, created on first use
//	.../data.ozx, .../data.zip       a zip archive (a file, not a directory) in
//	                                 any of the stores above, read-only (store/zip)
//	gs://bucket/prefix, az://...     Google Cloud Storage, Azure Blob: schemes
//	                                 (and hosts) registered by importing the
//	                                 store/gcs and store/azure modules (Register)
//
// The URL names the store's root: a Zarr array or group at that location is
// at the root of the returned store (key "zarr.json"), so no separate "path
// inside the store" is needed.
//
// Open returns the richest store the location supports: callers
// type-assert to store.Store (or store.Writer) to write, which fails for
// HTTP.
//
// s3:// is opened by package store/s3, which registers the scheme when it
// is imported, so that a program reading only local or HTTP stores does
// not link the AWS SDK (about 110 packages):
//
//	import _ "github.com/gozarr/gozarr/store/s3"
//
// Without that import, Open of an s3:// URL fails with ErrNotLinked, naming
// the import. Any program that calls into store/s3 (s3test, s3.WithXxx
// options for WithS3) has it already. For s3:// the endpoint, region and
// credentials come from the standard AWS environment and config files
// exactly as the AWS SDK reads them (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL,
// AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...),
// or from WithS3 options; a custom endpoint implies path-style addressing,
// and with no credentials anywhere the store tries anonymous access (see
// s3.Open).
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/zip"
)

// ErrUnsupported reports a URL scheme Open does not know.
var ErrUnsupported = errors.New("storeurl: unsupported URL scheme")

// ErrInvalidURL reports a location Open cannot parse.
var ErrInvalidURL = errors.New("storeurl: invalid store URL")

// ErrNotLinked reports a location whose scheme Parse knows but whose store
// package is not in the program (s3:// without store/s3, gs:// without
// store/gcs, az:// without store/azure): the message names the import
// that brings it. It wraps ErrUnsupported.
var ErrNotLinked = fmt.Errorf("%w: its store is not linked into this program", ErrUnsupported)

// Option configures Open.
type Option func(*options)

type options struct {
	http     []http.Option
	fs       []fs.Option
	create   bool
	timeouts *store.Timeouts
	scheme   map[string][]any
}

// WithS3 passes options to s3.Open for s3:// URLs (an explicit endpoint,
// region or credentials, a concurrency limit, an HTTP client, ...): opts
// are s3.Option values (storeurl does not import store/s3, so that
// programs without S3 do not link the AWS SDK; s3.Open reports any other
// type as an error). It is WithScheme("s3", opts...).
func WithS3[T any](opts ...T) Option {
	v := make([]any, len(opts))
	for i, o := range opts {
		v[i] = o
	}
	return WithScheme("s3", v...)
}

// WithScheme passes opts to the opener registered for scheme with
// RegisterOptions (see WithS3); openers registered with Register ignore
// them.
func WithScheme(scheme string, opts ...any) Option {
	scheme = strings.ToLower(scheme)
	return func(o *options) {
		if o.scheme == nil {
			o.scheme = map[string][]any{}
		}
		o.scheme[scheme] = append(o.scheme[scheme], opts...)
	}
}

// WithTimeouts sets the timeouts of remote stores (http.WithTimeouts for
// http:// and https://; registered openers receive t as a store.Timeouts
// value among their options, after those of WithScheme: s3:// applies it
// as s3.WithTimeouts).
func WithTimeouts(t store.Timeouts) Option {
	return func(o *options) { o.timeouts = &t }
}

// schemeOptions returns the options a registered opener of scheme gets.
func (o *options) schemeOptions(scheme string) []any {
	v := append([]any(nil), o.scheme[scheme]...)
	if o.timeouts != nil {
		v = append(v, *o.timeouts)
	}
	return v
}

// WithHTTP passes options to http.New for http:// and https:// URLs (headers
// such as an auth token, a client, a concurrency limit, ...).
func WithHTTP(opts ...http.Option) Option {
	return func(o *options) { o.http = append(o.http, opts...) }
}

// WithFS passes options to fs.New for local paths and file:// URLs (for
// instance fs.ReadOnly()).
func WithFS(opts ...fs.Option) Option { return func(o *options) { o.fs = append(o.fs, opts...) } }

// CreateDir makes Open create a missing local directory (and its parents)
// instead of failing, for tools about to write a new array. Default: the
// directory must exist. A missing local path ending in .zip or .ozx is
// then a new archive instead: a *zip.Builder staging values in a
// temporary directory beside it, whose Close(ctx) writes the archive
// (see zip.Write) and removes the staging directory.
func CreateDir() Option { return func(o *options) { o.create = true } }

var (
	memMu     sync.Mutex
	memStores = map[string]*mem.Store{}
)

// Location is a parsed store location.
type Location struct {
	// Scheme is "file" (also for plain paths), "s3", "http", "https" or
	// "memory".
	Scheme string
	// Path is the local directory, for "file".
	Path string
	// Bucket and Prefix name the objects, for "s3". Prefix may be empty.
	Bucket, Prefix string
	// URL is the base URL, for "http" and "https", and the whole location
	// for a registered scheme (see Register).
	URL string
	// Name is the in-process store's name, for "memory"; "" means a new
	// store each time.
	Name string
}

// Parse splits a location (see the package doc) into its parts without
// touching the filesystem or the network. A string without "://" before its
// first "/" is a local path.
func Parse(location string) (Location, error) {
	if location == "" {
		return Location{}, fmt.Errorf("%w: empty location", ErrInvalidURL)
	}
	i := strings.Index(location, "://")
	if i <= 0 || strings.ContainsAny(location[:i], "/\\") {
		return Location{Scheme: "file", Path: location}, nil
	}
	scheme := strings.ToLower(location[:i])
	rest := location[i+3:]
	switch scheme {
	case "file":
		u, err := url.Parse(location)
		if err != nil {
			return Location{}, fmt.Errorf("%w: %q: %w", ErrInvalidURL, location, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, fmt.Errorf("%w: %q: file URLs name a local absolute path (file:///path), not host %q", ErrInvalidURL, location, u.Host)
		}
		if u.Path == "" {
			return Location{}, fmt.Errorf("%w: %q: no path", ErrInvalidURL, location)
		}
		return Location{Scheme: "file", Path: u.Path}, nil
	case "s3":
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("%w: %q: no bucket (want s3://bucket/prefix)", ErrInvalidURL, location)
		}
		return Location{Scheme: "s3", Bucket: bucket, Prefix: prefix}, nil
	case "http", "https":
		return Location{Scheme: scheme, URL: location}, nil
	case "memory":
		return Location{Scheme: "memory", Name: strings.TrimSuffix(rest, "/")}, nil
	}
	if registered(scheme) != nil {
		return Location{Scheme: scheme, URL: location}, nil
	}
	if _, ok := linkable[scheme]; ok {
		return Location{}, notLinked(location, scheme)
	}
	return Location{}, fmt.Errorf("%w: %q in %q (want a path, file://, s3://, http(s):// or memory://)", ErrUnsupported, scheme, location)
}

// linkable maps the schemes of this module's store packages that register
// themselves to the package to import.
var linkable = map[string]string{
	"s3":    "github.com/gozarr/gozarr/store/s3",
	"gs":    "github.com/gozarr/gozarr/store/gcs",
	"az":    "github.com/gozarr/gozarr/store/azure",
	"abfs":  "github.com/gozarr/gozarr/store/azure",
	"abfss": "github.com/gozarr/gozarr/store/azure",
}

// NotLinkedError is the ErrNotLinked error of Parse and Open: the
// location, its scheme and the package to import for it.
type NotLinkedError struct {
	Location, Scheme, Package string
}

func (e *NotLinkedError) Error() string {
	return fmt.Sprintf("%v: %s:// URLs such as %q need package %s (import _ %q)", ErrNotLinked, e.Scheme, e.Location, e.Package, e.Package)
}

// Unwrap returns ErrNotLinked.
func (e *NotLinkedError) Unwrap() error { return ErrNotLinked }

// notLinked is the ErrNotLinked error of location, whose scheme's package
// is not imported.
func notLinked(location, scheme string) error {
	return &NotLinkedError{Location: location, Scheme: scheme, Package: linkable[scheme]}
}

// Open returns the store at location, a URL or a local path (see the package
// doc). It is safe for concurrent use. It makes no request to a remote
// store except what s3.Open needs to find credentials.
func Open(ctx context.Context, location string, opts ...Option) (store.Reader, error) {
	var o options
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	if dir, name, ok := zipLocation(location); ok {
		return openZip(ctx, dir, name, opts)
	}
	if b, ok, err := newZipBuilder(location, o); ok {
		return b, err
	}
	loc, err := Parse(location)
	if err != nil {
		return nil, err
	}
	switch loc.Scheme {
	case "file":
		return openDir(loc.Path, o)
	case "s3":
		open := registered("s3")
		if open == nil {
			return nil, notLinked(location, "s3")
		}
		return open(ctx, location, o.schemeOptions("s3"))
	case "http", "https":
		if open := hostOpener(loc.URL); open != nil {
			return open(ctx, location, o.schemeOptions(loc.Scheme))
		}
		hopts := o.http
		if o.timeouts != nil {
			hopts = append([]http.Option{http.WithTimeouts(*o.timeouts)}, hopts...)
		}
		st, err := http.New(loc.URL, hopts...)
		if err != nil {
			return nil, fmt.Errorf("storeurl: %w", err)
		}
		return st, nil
	}
	if open := registered(loc.Scheme); open != nil {
		return open(ctx, location, o.schemeOptions(loc.Scheme))
	}
	// memory
	if loc.Name == "" {
		return mem.New(), nil
	}
	memMu.Lock()
	defer memMu.Unlock()
	st := memStores[loc.Name]
	if st == nil {
		st = mem.New()
		memStores[loc.Name] = st
	}
	return st, nil
}

func openDir(path string, o options) (store.Reader, error) {
	if o.create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("storeurl: creating %q: %w", path, err)
		}
	}
	st, err := fs.New(filepath.FromSlash(path), o.fs...)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %w", err)
	}
	return st, nil
}

// Opener opens the store at location, a URL of a scheme or host it was
// registered for (see Register).
type Opener func(ctx context.Context, location string) (store.Reader, error)

// OptionsOpener is an Opener that also gets the options given for its
// scheme with WithScheme (WithS3 for "s3") and WithTimeouts (see
// RegisterOptions).
type OptionsOpener func(ctx context.Context, location string, opts []any) (store.Reader, error)

var registry struct {
	sync.RWMutex
	schemes map[string]OptionsOpener
	hosts   map[string]OptionsOpener
}

// Register makes Parse and Open accept URLs of scheme (such as "gs"),
// opened by open: store modules that keep their SDKs out of the core
// module call it from init, so importing them is enough (store/gcs
// registers gs://, store/azure az://, abfs:// and abfss://). Registering a
// scheme again replaces its opener. It fails for a built-in scheme and for
// a name that is not a URL scheme.
func Register(scheme string, open Opener) error {
	if open == nil {
		return fmt.Errorf("storeurl: cannot register scheme %q", scheme)
	}
	return RegisterOptions(scheme, func(ctx context.Context, location string, _ []any) (store.Reader, error) {
		return open(ctx, location)
	})
}

// RegisterOptions is Register for an opener that takes options: those
// given for its scheme with WithScheme, then a store.Timeouts value for
// WithTimeouts. store/s3 registers "s3" so (s3:// is parsed by Parse
// whether or not it is registered; the other built-in schemes cannot be
// registered).
func RegisterOptions(scheme string, open OptionsOpener) error {
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "file", "http", "https", "memory":
		return fmt.Errorf("storeurl: %q is built in", scheme)
	}
	if u, err := url.Parse(scheme + "://x"); err != nil || u.Scheme != scheme || open == nil {
		return fmt.Errorf("storeurl: cannot register scheme %q", scheme)
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.schemes == nil {
		registry.schemes = map[string]OptionsOpener{}
	}
	registry.schemes[scheme] = open
	return nil
}

// RegisterHost makes Open hand http:// and https:// URLs whose host is
// host, or ends in "."+host, to open instead of the HTTP store (store/azure
// registers "blob.core.windows.net", store/gcs "storage.googleapis.com").
func RegisterHost(host string, open Opener) error {
	host = strings.ToLower(strings.Trim(host, "."))
	if host == "" || strings.ContainsAny(host, "/:@ ") || open == nil {
		return fmt.Errorf("storeurl: cannot register host %q", host)
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.hosts == nil {
		registry.hosts = map[string]OptionsOpener{}
	}
	registry.hosts[host] = func(ctx context.Context, location string, _ []any) (store.Reader, error) {
		return open(ctx, location)
	}
	return nil
}

func registered(scheme string) OptionsOpener {
	registry.RLock()
	defer registry.RUnlock()
	return registry.schemes[scheme]
}

// hostOpener returns the opener registered for the host of an http(s) URL,
// or nil.
func hostOpener(location string) OptionsOpener {
	u, err := url.Parse(location)
	if err != nil {
		return nil
	}
	h := strings.ToLower(u.Hostname())
	registry.RLock()
	defer registry.RUnlock()
	for suffix, open := range registry.hosts {
		if h == suffix || strings.HasSuffix(h, "."+suffix) {
			return open
		}
	}
	return nil
}

// zipLocation splits a location naming a zip archive (its last segment
// ends in .zip or .ozx; a local path must be a regular file) into the
// location of the store holding it and the archive's key there.
func zipLocation(location string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(location, '/')
	name = location[i+1:]
	lower := strings.ToLower(name)
	if !strings.HasSuffix(lower, ".zip") && !strings.HasSuffix(lower, ".ozx") || strings.ContainsAny(name, "?#") || len(name) == 4 {
		return "", "", false
	}
	dir = location[:i+1]
	switch loc, err := Parse(location); {
	case err != nil || loc.Scheme == "memory":
		return "", "", false
	case loc.Scheme == "file":
		fi, err := os.Stat(filepath.FromSlash(loc.Path))
		if err != nil || !fi.Mode().IsRegular() {
			return "", "", false
		}
		if dir == "" {
			dir = "."
		}
		if strings.HasPrefix(location, "file://") && dir == "file://" {
			return "", "", false
		}
	case strings.HasSuffix(dir, "://"):
		return "", "", false // no container to hold it: s3://x.zip
	}
	return dir, name, true
}

// openZip opens the archive name in the store at dir.
func openZip(ctx context.Context, dir, name string, opts []Option) (store.Reader, error) {
	parent, err := Open(ctx, dir, opts...)
	if err != nil {
		return nil, err
	}
	zr, err := zip.Open(ctx, parent, name)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %w", err)
	}
	return zr, nil
}

// newZipBuilder returns a zip.Builder for a missing local path ending in
// .zip or .ozx when o asks for creation; ok is false for other locations.
func newZipBuilder(location string, o options) (b *zip.Builder, ok bool, err error) {
	lower := strings.ToLower(location)
	if !o.create || (!strings.HasSuffix(lower, ".zip") && !strings.HasSuffix(lower, ".ozx")) {
		return nil, false, nil
	}
	loc, err := Parse(location)
	if err != nil || loc.Scheme != "file" {
		return nil, false, nil
	}
	path := filepath.FromSlash(loc.Path)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, true, fmt.Errorf("storeurl: creating %q: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".gozarr-tmp-zip-")
	if err != nil {
		return nil, true, fmt.Errorf("storeurl: %w", err)
	}
	staging, err := fs.New(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, true, fmt.Errorf("storeurl: %w", err)
	}
	return zip.NewBuilder(staging, func(ctx context.Context, write func(io.Writer) error) error {
		return writeFileAtomic(path, write, tmp)
	}), true, nil
}

// writeFileAtomic writes path through write into a temporary file beside
// it, synced and renamed into place, then removes the staging directory.
func writeFileAtomic(path string, write func(io.Writer) error, staging string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".gozarr-tmp-")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		// CreateTemp makes the file private (0600); an archive is an
		// ordinary file, readable as cp's directories are.
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.RemoveAll(staging)
}
