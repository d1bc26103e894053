// Package gcs is a gozarr store over a Google Cloud Storage bucket, built on
// cloud.google.com/go/storage. It is a module of its own, so that gozarr's
// core module does not depend on Google's SDK; importing it registers the
// gs:// scheme (and https://storage.googleapis.com/bucket/... URLs) with
// store/storeurl.
//
// A Store maps the key "a/b" to the object "<prefix>/a/b" of its bucket.
// It is an objstore.Store over this package's driver, so it has what every
// remote store has: store.Store, store.RangesReader (nearby ranges joined
// with the knobs it reports, the requests concurrent), store.IntoReader,
// store.SizeReader, store.ConcurrencyLimiter, a StoreID made of bucket and
// prefix, and store.ConditionalWriter: SetIfVersion writes with a
// generation-match precondition (ifGenerationMatch, 0 for "absent"), so
// writers in several processes of one shard never lose each other's
// read-modify-writes.
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
// (WithConcurrency). Transient errors (429, 5xx, broken connections, a body
// that breaks off) are retried by store/objstore, the layer every remote
// store shares, with full-jitter exponential backoff:
// objstore.DefaultMaxAttempts attempts, pauses up to
// objstore.DefaultMaxBackoff (WithRetry). The SDK itself sends each
// request once. A Set is sent again freely (it replaces the whole object);
// a conditional write only after a check that its condition still holds.
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
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
)

// ErrBucket reports a bucket that does not exist or cannot be reached with
// the configured credentials: a configuration error, never ErrNotFound.
var ErrBucket = errors.New("gcs: bucket not accessible")

// Store is a store.Store over one bucket and key prefix. It is safe for
// concurrent use.
type Store struct {
	*objstore.Store
	client *storage.Client
	name   string
}

// Option configures New or Open.
type Option func(*options)

type options struct {
	endpoint  string
	anonymous bool
	client    []option.ClientOption
	objstore.Options
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
// objstore.DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option { return objstore.WithConcurrency[Option](n) }

// WithRetry sets the attempts per request (first try included; default
// objstore.DefaultMaxAttempts) and the longest pause between attempts
// (default objstore.DefaultMaxBackoff): the layer's retries (the SDK
// makes one attempt).
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return objstore.WithRetry[Option](maxAttempts, maxBackoff)
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default objstore.DefaultCoalesce(): ranges less than 1 MiB
// apart; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return objstore.WithCoalesce[Option](opt) }

// Open builds a client (see the package doc for credentials and
// emulators) and returns a Store over bucket and prefix. It makes no
// request to the bucket.
func Open(ctx context.Context, bucket, prefix string, opts ...Option) (*Store, error) {
	o := objstore.Build[Option](objstore.DefaultOptions(), opts)
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
	o := objstore.Build[Option](objstore.DefaultOptions(), opts)
	// The layer retries (objstore: backoff, a conditional write re-sent
	// only after a check), so the SDK sends each request once.
	b := client.Bucket(bucket).Retryer(storage.WithPolicy(storage.RetryNever))
	d := &driver{bucket: b, name: bucket}
	st, err := objstore.New(d, objstore.Config{Scheme: "gs", Bucket: bucket, Prefix: prefix, Options: o.Options, Conditional: true})
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	return &Store{Store: st, client: client, name: bucket}, nil
}

// Client returns the client the store sends requests through.
func (s *Store) Client() *storage.Client { return s.client }

// Bucket returns the store's bucket name.
func (s *Store) Bucket() string { return s.name }

// driver is the objstore.Driver of one bucket.
type driver struct {
	bucket *storage.BucketHandle
	name   string
	// bucketState is bucketUnknown until a missing object made the driver
	// ask whether its bucket exists (see bucketMissing).
	bucketState atomic.Int32
}

// Read implements objstore.Driver with one ranged read (a negative off is
// a suffix, as the SDK takes it). A condition on an ETag other than a
// generation number first reads the object's metadata (GCS checks
// generations, not ETags): an ETag that is none of its forms (the JSON
// API's, the XML API's MD5, the generation) is KindChanged, one that is
// makes the read conditional on that generation. The answer reports its
// generation and time, which the layer checks.
func (d *driver) Read(ctx context.Context, name string, off, n int64, cond store.ReadCondition) (objstore.Object, error) {
	obj := d.bucket.Object(name)
	gen, err := d.generationOf(ctx, obj, cond)
	if err != nil {
		return objstore.Object{}, err
	}
	if gen > 0 {
		obj = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	rd, err := obj.NewRangeReader(ctx, off, n)
	if err != nil {
		return objstore.Object{}, err
	}
	g := rd.Attrs.Generation
	o := objstore.Object{Body: rd, Length: rd.Remain(), Version: strconv.FormatInt(g, 10),
		Validators: objstore.Validators{ETag: strconv.FormatInt(g, 10), LastModified: rd.Attrs.LastModified}}
	if gen > 0 && g == gen {
		o.ETag = cond.ETag // the version cond's ETag names
	}
	return o, nil
}

// errChanged is an object whose metadata show another version than a read
// condition's.
var errChanged = errors.New("gcs: the object is not the version the condition names")

// generationOf returns the generation cond's ETag names (0 when cond has
// none, or names one by its generation number), reading obj's metadata.
func (d *driver) generationOf(ctx context.Context, obj *storage.ObjectHandle, cond store.ReadCondition) (int64, error) {
	if cond.ETag == "" {
		return 0, nil
	}
	if g, err := strconv.ParseInt(strings.Trim(cond.ETag, `"`), 10, 64); err == nil && g > 0 {
		return g, nil
	}
	a, err := obj.Attrs(ctx)
	if err != nil {
		return 0, err
	}
	if !etagOf(a, cond.ETag) {
		return 0, fmt.Errorf("%w: ETag %s, the object's is %s (generation %d)", errChanged, cond.ETag, a.Etag, a.Generation)
	}
	return a.Generation, nil
}

// etagOf reports whether etag is one of a's forms: the JSON API's ETag,
// the XML API's (the MD5 in hex) or the generation number.
func etagOf(a *storage.ObjectAttrs, etag string) bool {
	return store.SameETag(etag, a.Etag) || (len(a.MD5) > 0 && store.SameETag(etag, hex.EncodeToString(a.MD5))) ||
		store.SameETag(etag, strconv.FormatInt(a.Generation, 10))
}

// Head implements objstore.Driver: size, generation and update time (and,
// under a condition on an ETag, the ETag when it is one of the object's
// forms; another is KindChanged).
func (d *driver) Head(ctx context.Context, name string, cond store.ReadCondition) (objstore.Info, error) {
	a, err := d.bucket.Object(name).Attrs(ctx)
	if err != nil {
		return objstore.Info{}, err
	}
	in := objstore.Info{Size: a.Size, Version: strconv.FormatInt(a.Generation, 10),
		Validators: objstore.Validators{ETag: a.Etag, LastModified: a.Updated}}
	if cond.ETag != "" {
		if !etagOf(a, cond.ETag) {
			return objstore.Info{}, fmt.Errorf("%w: ETag %s, the object's is %s (generation %d)", errChanged, cond.ETag, a.Etag, a.Generation)
		}
		in.ETag = cond.ETag
	}
	return in, nil
}

// errVersion reports a version that is not a generation.
var errVersion = errors.New("gcs: version is not a generation number")

// Put implements objstore.Driver with one upload, under a generation
// precondition when cond says so (DoesNotExist for IfNoneMatch).
func (d *driver) Put(ctx context.Context, name string, value []byte, cond objstore.Condition) error {
	obj := d.bucket.Object(name)
	switch {
	case cond.IfNoneMatch:
		obj = obj.If(storage.Conditions{DoesNotExist: true})
	case cond.IfMatch != "":
		g, err := strconv.ParseInt(cond.IfMatch, 10, 64)
		if err != nil || g <= 0 {
			return fmt.Errorf("%w: %q", errVersion, cond.IfMatch)
		}
		obj = obj.If(storage.Conditions{GenerationMatch: g})
	}
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0 // one request; no resumable session for chunk-sized values
	w.ContentType = "application/octet-stream"
	if _, err := io.Copy(w, bytes.NewReader(value)); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// Delete implements objstore.Driver.
func (d *driver) Delete(ctx context.Context, name string) error {
	return d.bucket.Object(name).Delete(ctx)
}

// ListPage implements objstore.Driver: up to 1000 names per page.
func (d *driver) ListPage(ctx context.Context, prefix, delim, token string) (objstore.Page, error) {
	q := &storage.Query{Prefix: prefix, Delimiter: delim}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return objstore.Page{}, err
	}
	var attrs []*storage.ObjectAttrs
	next, err := iterator.NewPager(d.bucket.Objects(ctx, q), 1000, token).NextPage(&attrs)
	if err != nil {
		return objstore.Page{}, err
	}
	p := objstore.Page{Next: next}
	for _, a := range attrs {
		if a.Prefix != "" {
			p.Dirs = append(p.Dirs, a.Prefix)
		} else {
			p.Keys = append(p.Keys, a.Name)
		}
	}
	return p, nil
}

// Classify implements objstore.Driver: a missing object, a failed
// precondition, a range past the end, and a missing bucket (ErrBucket).
func (d *driver) Classify(ctx context.Context, op string, err error) (objstore.Kind, error) {
	status := httpStatus(err)
	switch {
	case errors.Is(err, storage.ErrBucketNotExist) || (op == "list" && status == http.StatusNotFound):
		return objstore.KindOther, fmt.Errorf("%w: %q: %w", ErrBucket, d.name, err)
	case errors.Is(err, storage.ErrObjectNotExist) || status == http.StatusNotFound:
		if d.bucketMissing(ctx) {
			return objstore.KindOther, fmt.Errorf("%w: %q does not exist", ErrBucket, d.name)
		}
		return objstore.KindNotFound, err
	case errors.Is(err, errChanged) || (op != "set" && status == http.StatusPreconditionFailed):
		return objstore.KindChanged, err
	case status == http.StatusPreconditionFailed || errors.Is(err, errVersion):
		return objstore.KindConflict, err
	case status == http.StatusRequestedRangeNotSatisfiable:
		return objstore.KindEmptyRange, err
	case ctx.Err() == nil && (storage.ShouldRetry(err) || status == http.StatusTooManyRequests || status >= 500 ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, store.ErrStalled)):
		// What the SDK's own retryer would retry (throttling, 5xx,
		// broken connections), for the layer to retry.
		return objstore.KindTransient, err
	}
	return objstore.KindOther, err
}

// bucketMissing reports whether the store's bucket is known not to exist:
// GCS answers a read in a missing bucket as it does a missing object, so
// the first missing object sends one bucket metadata request, whose answer
// the store keeps (a bucket it may not read the metadata of, as with
// anonymous access, counts as existing).
func (d *driver) bucketMissing(ctx context.Context) bool {
	switch d.bucketState.Load() {
	case bucketExists:
		return false
	case bucketGone:
		return true
	}
	_, err := d.bucket.Attrs(ctx)
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		d.bucketState.Store(bucketGone)
		return true
	case err == nil || httpStatus(err) == http.StatusForbidden || httpStatus(err) == http.StatusUnauthorized:
		d.bucketState.Store(bucketExists)
	}
	return false
}

// Values of driver.bucketState.
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
