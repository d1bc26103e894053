// Package gcs is a gozarr store over a Google Cloud Storage bucket, built on
// cloud.google.com/go/storage. It is a module of its own, so that gozarr's
// core module does not depend on Google's SDK; importing it registers the
// gs:// scheme (and https://storage.googleapis.com/bucket/... URLs) with
// store/storeurl.
//
// A Store maps the key "a/b" to the object "<prefix>/a/b" of its bucket. It
// implements store.Store (Get, Set, Delete, List, ListDir),
// store.RangesReader (the ranges of one key fetched concurrently),
// store.SizeReader and store.ConcurrencyLimiter.
//
// # Ranges
//
// Range(off, n) and From(off) are one ranged read each, Suffix(n) a suffix
// read (the whole object when it is shorter). A range starting at or past
// the end of the object yields an empty, non-nil slice, as store.ByteRange
// documents; a zero-length range costs one metadata request, so that a
// missing key is still store.ErrNotFound. A server that answers with more
// bytes than asked for is an error, read no further than one byte past the
// range (GCS does so for objects uploaded with Content-Encoding gzip, which
// it serves inflated and whole: gozarr never writes them).
//
// # Requests, retries and deadlines
//
// Every request holds one slot of a per-store limit, 64 by default
// (WithConcurrency). Transient errors (429, 5xx, broken connections) are
// retried by the SDK with exponential backoff, for every request including
// writes (a Set replaces the whole object, so repeating it is harmless):
// DefaultMaxAttempts attempts, pauses up to DefaultMaxBackoff (WithRetry).
// Every call honours its context's deadline and cancellation.
//
// # Credentials
//
// Open uses the SDK's standard chain, Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials, the metadata
// server on Google Cloud), and falls back to anonymous access, which public
// buckets accept, when it finds none or they yield no token (Open fetches
// one to know). STORAGE_EMULATOR_HOST, the SDK's own variable, points
// every client at an emulator; so does WithEndpoint. WithClientOptions
// leaves authentication to the options given.
package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/gozarr/gozarr/store"
)

// DefaultConcurrency is the default per-store limit of requests in flight.
const DefaultConcurrency = 64

// DefaultMaxAttempts is the number of attempts Open configures for each
// request (the first try and up to four retries).
const DefaultMaxAttempts = 5

// DefaultMaxBackoff is the longest pause between two attempts that Open
// configures.
const DefaultMaxBackoff = 5 * time.Second

// DefaultCoalesce are the coalescing knobs GetRanges uses by default, as
// for S3: ranges less than 1 MiB apart are read with one request.
var DefaultCoalesce = store.CoalesceOptions{MaxGap: 1 << 20, MaxSize: store.DefaultMaxSize}

// ErrBucket reports a bucket that does not exist or cannot be reached with
// the configured credentials: a configuration error, never ErrNotFound.
var ErrBucket = errors.New("gcs: bucket not accessible")

// Store is a store.Store over one bucket and key prefix. It is safe for
// concurrent use.
type Store struct {
	client   *storage.Client
	bucket   *storage.BucketHandle
	name     string
	prefix   string // "" or ending in "/"
	lim      *store.Limiter
	coalesce store.CoalesceOptions
	// bucketState is bucketUnknown until a missing object made the store
	// ask whether its bucket exists (see bucketMissing).
	bucketState atomic.Int32
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.RangesReader       = (*Store)(nil)
	_ store.SizeReader         = (*Store)(nil)
	_ store.ConcurrencyLimiter = (*Store)(nil)
)

// Option configures New or Open.
type Option func(*options)

type options struct {
	endpoint    string
	anonymous   bool
	concurrency int
	maxAttempts int
	maxBackoff  time.Duration
	coalesce    store.CoalesceOptions
	client      []option.ClientOption
}

// WithEndpoint makes Open talk to a GCS-compatible server at url (for
// instance the fake-gcs-server emulator at "http://127.0.0.1:4443"),
// without authentication. Ignored by New.
func WithEndpoint(url string) Option { return func(o *options) { o.endpoint = url } }

// WithAnonymous makes Open send unauthenticated requests, for public
// buckets, without looking for credentials. Ignored by New.
func WithAnonymous() Option { return func(o *options) { o.anonymous = true } }

// WithClientOptions passes options to storage.NewClient (credentials
// files, an HTTP client, a quota project, ...). Ignored by New.
func WithClientOptions(opts ...option.ClientOption) Option {
	return func(o *options) { o.client = append(o.client, opts...) }
}

// WithConcurrency sets the per-store limit of requests in flight (default
// DefaultConcurrency). Values below 1 mean 1.
func WithConcurrency(n int) Option { return func(o *options) { o.concurrency = n } }

// WithRetry sets the attempts per request (first try included; default
// DefaultMaxAttempts) and the longest pause between attempts (default
// DefaultMaxBackoff). New applies them to the bucket handle it makes.
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return func(o *options) { o.maxAttempts, o.maxBackoff = maxAttempts, maxBackoff }
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default DefaultCoalesce; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return func(o *options) { o.coalesce = opt } }

func buildOptions(opts []Option) options {
	o := options{concurrency: DefaultConcurrency, maxAttempts: DefaultMaxAttempts, maxBackoff: DefaultMaxBackoff, coalesce: DefaultCoalesce}
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	o.concurrency = max(o.concurrency, 1)
	o.maxAttempts = max(o.maxAttempts, 1)
	if o.maxBackoff <= 0 {
		o.maxBackoff = DefaultMaxBackoff
	}
	return o
}

// Open builds a client (see the package doc for credentials and
// emulators) and returns a Store over bucket and prefix. It makes no
// request to the bucket.
func Open(ctx context.Context, bucket, prefix string, opts ...Option) (*Store, error) {
	o := buildOptions(opts)
	co := []option.ClientOption{storage.WithJSONReads()}
	switch {
	case o.endpoint != "":
		co = append(co, option.WithEndpoint(strings.TrimSuffix(o.endpoint, "/")+"/storage/v1/"), option.WithoutAuthentication())
	case o.anonymous:
		co = append(co, option.WithoutAuthentication())
	case len(o.client) == 0 && os.Getenv("STORAGE_EMULATOR_HOST") == "":
		auth, _, err := defaultAuth(ctx)
		if err != nil {
			return nil, err
		}
		co = append(co, auth)
	}
	co = append(co, o.client...)
	client, err := storage.NewClient(ctx, co...)
	if err != nil {
		return nil, fmt.Errorf("gcs: creating client: %w", err)
	}
	return New(client, bucket, prefix, opts...)
}

// defaultAuth returns the client option of Application Default
// Credentials when they yield a token, else that of anonymous access
// (anonymous true), which public buckets accept. Its only error is a done
// ctx.
func defaultAuth(ctx context.Context) (opt option.ClientOption, anonymous bool, err error) {
	creds, err := google.FindDefaultCredentials(ctx, storage.ScopeFullControl)
	if err == nil {
		_, err = creds.TokenSource.Token()
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	if err != nil {
		return option.WithoutAuthentication(), true, nil
	}
	return option.WithCredentials(creds), false, nil
}

// New returns a Store over bucket with the given key prefix ("" for the
// whole bucket; a trailing "/" is optional), sending requests through
// client. Of the options only WithConcurrency, WithRetry and WithCoalesce
// apply. It makes no request.
func New(client *storage.Client, bucket, prefix string, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("gcs: nil client")
	}
	if bucket == "" || strings.ContainsAny(bucket, "/\\") {
		return nil, fmt.Errorf("%w: invalid bucket name %q", ErrBucket, bucket)
	}
	p, err := store.NormalizePrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	o := buildOptions(opts)
	b := client.Bucket(bucket).Retryer(
		storage.WithPolicy(storage.RetryAlways),
		storage.WithMaxAttempts(o.maxAttempts),
		storage.WithBackoff(gax.Backoff{Initial: 100 * time.Millisecond, Max: o.maxBackoff, Multiplier: 2}),
	)
	return &Store{client: client, bucket: b, name: bucket, prefix: p, lim: store.NewLimiter(o.concurrency), coalesce: o.coalesce}, nil
}

// Client returns the client the store sends requests through.
func (s *Store) Client() *storage.Client { return s.client }

// Bucket returns the store's bucket name.
func (s *Store) Bucket() string { return s.name }

// Prefix returns the store's key prefix: "" or a prefix ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// String describes the store as a gs:// URL.
func (s *Store) String() string { return "gs://" + s.name + "/" + s.prefix }

// MaxConcurrency implements store.ConcurrencyLimiter: the most requests
// the store runs at once.
func (s *Store) MaxConcurrency() int { return s.lim.Slots() }

func (s *Store) object(key string) *storage.ObjectHandle {
	return s.bucket.Object(s.prefix + key)
}

// Get reads the range r of key. A missing key is store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.get(ctx, key, r)
}

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
	if err := s.lim.Acquire(ctx); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	defer s.lim.Release()
	rd, err := s.object(key).NewRangeReader(ctx, off, n)
	if err != nil {
		if httpStatus(err) == http.StatusRequestedRangeNotSatisfiable {
			// A range past the end, or a suffix of an empty object.
			return []byte{}, nil
		}
		return nil, s.wrap(ctx, "get", key, err)
	}
	defer rd.Close()
	b, err := store.ReadAtMost(rd, rd.Remain(), n)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: %w", ctx.Err(), err)}
		}
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	return b, nil
}

// GetRanges reads several ranges of key, in the order of ranges: nearby
// bounded ranges coalesced into one request (WithCoalesce), the requests
// run concurrently under the store's limit.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return store.GetRangesConcurrent(ctx, key, ranges, s.coalesce, s.get)
}

// Size returns the size of key's value with one metadata request.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	if err := s.lim.Acquire(ctx); err != nil {
		return 0, &store.KeyError{Op: "size", Key: key, Err: err}
	}
	defer s.lim.Release()
	a, err := s.object(key).Attrs(ctx)
	if err != nil {
		return 0, s.wrap(ctx, "size", key, err)
	}
	return a.Size, nil
}

// Set stores value under key with one upload (GCS replaces objects
// atomically). A done context writes nothing.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.lim.Acquire(ctx); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	defer s.lim.Release()
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	w := s.object(key).NewWriter(ctx)
	w.ChunkSize = 0 // one request; no resumable session for chunk-sized values
	w.ContentType = "application/octet-stream"
	if _, err := io.Copy(w, bytes.NewReader(value)); err != nil {
		_ = w.Close()
		return s.wrap(ctx, "set", key, err)
	}
	if err := w.Close(); err != nil {
		return s.wrap(ctx, "set", key, err)
	}
	return nil
}

// Delete removes key. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.lim.Acquire(ctx); err != nil {
		return &store.KeyError{Op: "delete", Key: key, Err: err}
	}
	defer s.lim.Release()
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "delete", Key: key, Err: err}
	}
	err := s.object(key).Delete(ctx)
	if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
		return s.wrap(ctx, "delete", key, err)
	}
	return nil
}

// pages pages through the objects below prefix (with delimiter delim),
// a page of up to 1000 per request, each request holding a concurrency
// slot. yield gets each page and says whether to go on.
func (s *Store) pages(ctx context.Context, prefix, delim string, yield func([]*storage.ObjectAttrs) bool) error {
	q := &storage.Query{Prefix: s.prefix + prefix, Delimiter: delim}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return err
	}
	pager := iterator.NewPager(s.bucket.Objects(ctx, q), 1000, "")
	for {
		var page []*storage.ObjectAttrs
		if err := s.lim.Acquire(ctx); err != nil {
			return err
		}
		next, err := pager.NextPage(&page)
		s.lim.Release()
		if err != nil {
			return err
		}
		if !yield(page) || next == "" {
			return nil
		}
	}
}

// List yields every key starting with prefix, in lexical (byte) order, a
// page of up to 1000 keys per request. Stopping the iteration stops the
// paging.
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
		stopped := false
		err := s.pages(ctx, prefix, "", func(page []*storage.ObjectAttrs) bool {
			for _, a := range page {
				if k, ok := strings.CutPrefix(a.Name, s.prefix); ok && k != "" {
					if !yield(k, nil) {
						stopped = true
						return false
					}
				}
			}
			return true
		})
		if err != nil && !stopped {
			yield("", s.wrap(ctx, "list", prefix, err))
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
	err = s.pages(ctx, dir, "/", func(page []*storage.ObjectAttrs) bool {
		for _, a := range page {
			if a.Prefix != "" {
				if d, ok := strings.CutPrefix(a.Prefix, full); ok && d != "" && d != "/" {
					dirs = append(dirs, d)
				}
			} else if k, ok := strings.CutPrefix(a.Name, full); ok && k != "" {
				keys = append(keys, k)
			}
		}
		return true
	})
	if err != nil {
		return nil, nil, s.wrap(ctx, "list", dir, err)
	}
	return keys, dirs, nil
}

// wrap turns an SDK error into a *store.KeyError, mapping a missing object
// to store.ErrNotFound and a missing bucket to ErrBucket.
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %q: %w", ErrBucket, s.name, err)}
	case errors.Is(err, storage.ErrObjectNotExist) || (op != "list" && httpStatus(err) == http.StatusNotFound):
		if s.bucketMissing(ctx) {
			return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %q does not exist", ErrBucket, s.name)}
		}
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w (gs://%s/%s%s)", store.ErrNotFound, s.name, s.prefix, key)}
	case op == "list" && httpStatus(err) == http.StatusNotFound:
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %q: %w", ErrBucket, s.name, err)}
	}
	return &store.KeyError{Op: op, Key: key, Err: err}
}

// bucketMissing reports whether the store's bucket is known not to exist:
// GCS answers a read in a missing bucket as it does a missing object, so
// the first missing object sends one bucket metadata request, whose answer
// the store keeps (a bucket it may not read the metadata of, as with
// anonymous access, counts as existing).
func (s *Store) bucketMissing(ctx context.Context) bool {
	switch s.bucketState.Load() {
	case bucketExists:
		return false
	case bucketGone:
		return true
	}
	_, err := s.bucket.Attrs(ctx)
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		s.bucketState.Store(bucketGone)
		return true
	case err == nil || httpStatus(err) == http.StatusForbidden || httpStatus(err) == http.StatusUnauthorized:
		s.bucketState.Store(bucketExists)
	}
	return false
}

// Values of Store.bucketState.
const (
	bucketUnknown = iota
	bucketExists
	bucketGone
)

func httpStatus(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
