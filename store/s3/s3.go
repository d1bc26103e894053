// Package s3 is a gozarr store over an Amazon S3 bucket, or any S3-compatible
// server (MinIO, Versity's gateway, Ceph, ...), built on aws-sdk-go-v2.
//
// A Store maps the key "a/b" to the object "<prefix>/a/b" of its bucket. It
// is an objstore.Store over this package's driver, so it has what every
// remote store has: store.Store (Get, Set, Delete, List, ListDir),
// store.RangesReader (the ranges of one key fetched concurrently),
// store.IntoReader, store.SizeReader (HeadObject), store.ConcurrencyLimiter,
// a StoreID made of endpoint, bucket and prefix, and
// store.ConditionalWriter: GetVersion reads the ETag, SetIfVersion writes
// with If-Match on it, or If-None-Match: * to create, so writers in several
// processes of one shard never lose each other's read-modify-writes. A
// failed precondition (412), or a conflicting concurrent conditional write
// (409), is store.ErrConflict. Servers that ignore the conditions (older
// S3-compatible ones) give no protection: check yours.
//
// # Ranges
//
// Every range form of store.ByteRange maps to one GetObject with an HTTP
// Range header: Range(off, n) is "bytes=off-(off+n-1)", From(off) is
// "bytes=off-", Suffix(n) is "bytes=-n" (a suffix longer than the object
// yields the whole object). S3 answers 416 InvalidRange for a range that
// starts at or past the end of the object: the store returns an empty,
// non-nil slice for it, as store.ByteRange documents. A zero-length range
// (Range(off, 0) or Suffix(0)) sends no GET but one HeadObject, so that a
// missing key is still store.ErrNotFound whatever the range. Should a server
// answer a suffix request with 416 although the object is not empty (some
// S3 emulators do when the suffix is longer than the object) the store
// fetches the whole object once instead.
//
// # Requests, retries and deadlines
//
// Every request a Store makes (GET, HEAD, PUT, DELETE, LIST page) holds one
// slot of a per-store limit, 64 by default (WithConcurrency), so a Store
// keeps many ranged reads in flight without opening unbounded connections.
// Throttling (503 SlowDown, 429), 5xx answers and broken connections (the
// SDK's own classification of retryable errors) are retried with
// exponential backoff by the store (objstore's retries:
// objstore.DefaultMaxAttempts attempts, WithRetry; the SDK's retryer makes
// one attempt, also with a client given to New); a body that breaks off
// while being read is fetched again, up to the same number of attempts. A
// conditional write is sent again only after a HeadObject shows that the
// object is still the version read (or still absent): a write whose answer
// was lost is never applied over another writer's. Every call honours its
// context's deadline and cancellation.
//
// Open also sets timeouts (WithTimeouts, default store.DefaultTimeouts), so
// that a server that stops answering cannot hang a call: 10 s to connect,
// 30 s for an answer's headers, 30 s without a byte of an answer's body
// (store.ErrStalled, retried like a broken body). A store made by New with
// a client of its own keeps that client's settings.
//
// An answer is read no further than the range needs: a 206 answer longer
// than the range asked for is refused (store.ErrBadContentRange) after
// reading at most one byte past the range, and of a 200 answer to a
// bounded range (a server that ignores Range) only the bytes up to the
// range's end are read. A listing whose pages do not advance (a repeated
// continuation token, keys out of order) fails with ErrBadListing instead
// of looping.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
)

// ErrBucket reports a bucket that does not exist or cannot be reached with
// the configured credentials: a configuration error, never ErrNotFound.
var ErrBucket = errors.New("s3: bucket not accessible")

// ErrBadListing reports a listing answer that cannot be right: a page
// repeating the previous page's continuation token, or keys not in
// increasing order, which would make List loop or break its order. It is
// objstore.ErrBadListing.
var ErrBadListing = objstore.ErrBadListing

// Store is a store.Store over one bucket and key prefix. It is safe for
// concurrent use.
type Store struct {
	*objstore.Store
	client *awss3.Client
	bucket string
}

// Option configures New or Open.
type Option func(*options)

type options struct {
	endpoint     string
	region       string
	accessKey    string
	secretKey    string
	sessionToken string
	static       bool
	anonymous    bool
	httpClient   aws.HTTPClient
	timeouts     store.Timeouts
	objstore.Options
}

// WithEndpoint makes Open talk to an S3-compatible server at url (for
// instance "http://127.0.0.1:7070") with path-style addressing
// ("<endpoint>/<bucket>/<key>"). Without it Open takes the endpoint from
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the shared config file, and an
// endpoint found there implies path-style addressing too. Ignored by New.
func WithEndpoint(url string) Option { return func(o *options) { o.endpoint = url } }

// WithRegion sets the region Open signs requests for. Without it the region
// comes from AWS_REGION, AWS_DEFAULT_REGION or the shared config profile, and
// is "us-east-1" when none of them names one. Ignored by New.
func WithRegion(region string) Option { return func(o *options) { o.region = region } }

// WithStaticCredentials makes Open sign with these keys instead of the SDK's
// default credential chain. sessionToken may be empty. Ignored by New.
func WithStaticCredentials(accessKey, secretKey, sessionToken string) Option {
	return func(o *options) {
		o.accessKey, o.secretKey, o.sessionToken = accessKey, secretKey, sessionToken
		o.static = true
	}
}

// WithAnonymous makes Open send unsigned requests, for public buckets. Open
// also falls back to anonymous access by itself when the default credential
// chain finds no credentials. Ignored by New.
func WithAnonymous() Option { return func(o *options) { o.anonymous = true } }

// WithConcurrency sets the per-store limit of requests in flight (default
// objstore.DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option { return objstore.WithConcurrency[Option](n) }

// WithHTTPClient makes Open send S3 requests through c (credential providers
// keep the SDK's client; AWS_CA_BUNDLE does not apply to c). By default Open
// uses the SDK's client with an idle-connection pool as large as the
// concurrency limit, so connections are reused. Ignored by New (configure
// the *s3.Client instead).
func WithHTTPClient(c aws.HTTPClient) Option { return func(o *options) { o.httpClient = c } }

// WithRetry sets the attempts per request (first try included; default
// objstore.DefaultMaxAttempts) and the longest pause between attempts
// (default objstore.DefaultMaxBackoff) of the store's retries (with New
// too).
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return objstore.WithRetry[Option](maxAttempts, maxBackoff)
}

// WithTimeouts sets how long the client Open builds waits to connect, for
// an answer's headers and for each next part of its body (see
// store.Timeouts; zero fields keep the defaults of store.DefaultTimeouts,
// negative ones mean no limit). With WithHTTPClient only the idle timeout
// applies. Ignored by New.
func WithTimeouts(t store.Timeouts) Option { return func(o *options) { o.timeouts = t } }

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default objstore.DefaultCoalesce(): ranges less than 1 MiB
// apart; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return objstore.WithCoalesce[Option](opt) }

func buildOptions(opts []Option) options {
	o := objstore.Build[Option](objstore.DefaultOptions(), opts)
	o.timeouts = o.timeouts.Resolve()
	return o
}

// New returns a Store over bucket with the given key prefix ("" for the whole
// bucket; a trailing "/" is optional), sending requests through client. Of
// the options only WithConcurrency, WithCoalesce and WithRetry apply (the
// client's own retryer makes one attempt per request: the store retries).
// It makes no request.
func New(client *awss3.Client, bucket, prefix string, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("s3: nil client")
	}
	if bucket == "" || strings.ContainsAny(bucket, "/\\") {
		return nil, fmt.Errorf("%w: invalid bucket name %q", ErrBucket, bucket)
	}
	o := buildOptions(opts)
	st, err := objstore.New(&driver{client: client, bucket: bucket}, objstore.Config{
		Scheme: "s3", Bucket: bucket, Prefix: prefix, Options: o.Options, Conditional: true,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	return &Store{Store: st, client: client, bucket: bucket}, nil
}

// Open builds an S3 client from the SDK's default configuration chain
// (environment: AWS_REGION, AWS_PROFILE, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL; the shared config and credentials files; SSO and instance
// roles) as modified by opts, and returns a Store over bucket and prefix.
//
// When no credentials are found anywhere, Open uses anonymous (unsigned)
// access, which public buckets accept. Finding that out may query the EC2
// instance metadata service, as the SDK does; set
// AWS_EC2_METADATA_DISABLED=true where there is none. A custom endpoint
// (WithEndpoint or from the environment) implies path-style addressing.
// Open makes no request to S3 itself.
func Open(ctx context.Context, bucket, prefix string, opts ...Option) (*Store, error) {
	o := buildOptions(opts)
	var lo []func(*config.LoadOptions) error
	if o.region != "" {
		lo = append(lo, config.WithRegion(o.region))
	}
	switch {
	case o.anonymous:
		lo = append(lo, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case o.static:
		lo = append(lo, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.accessKey, o.secretKey, o.sessionToken)))
	}
	if o.httpClient == nil {
		// The SDK's client (which honours AWS_CA_BUNDLE), keeping as many
		// idle connections as requests may be in flight.
		lo = append(lo, config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			objstore.ConfigureTransport(t, o.timeouts, o.Concurrency)
		}).WithDialerOptions(func(d *net.Dialer) { d.Timeout = o.timeouts.Connect })))
	}
	// The store retries (objstore): the SDK makes one attempt per request.
	lo = append(lo, config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }))
	// The SDK's default logger writes warnings to the program's stderr
	// ("falling back to IMDSv1", a response without a checksum): a
	// library's errors go to its caller, not to a terminal it does not own.
	lo = append(lo, config.WithLogger(logging.Nop{}))
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("s3: loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if !o.anonymous && !o.static {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cfg.Credentials = aws.AnonymousCredentials{}
		}
	}
	client := awss3.NewFromConfig(cfg, func(so *awss3.Options) {
		if o.endpoint != "" {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		if o.httpClient != nil {
			so.HTTPClient = o.httpClient
		}
		so.HTTPClient = objstore.WatchIdle(so.HTTPClient, o.timeouts.Idle)
		if so.BaseEndpoint != nil {
			so.UsePathStyle = true
		}
		// Checksums only where S3 requires them: a ranged read cannot be
		// checked anyway, and S3-compatible servers differ in support.
		so.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return New(client, bucket, prefix, opts...)
}

// Client returns the S3 client the store sends requests through.
func (s *Store) Client() *awss3.Client { return s.client }

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// driver is the objstore.Driver of one bucket.
type driver struct {
	client *awss3.Client
	bucket string
}

// once makes the SDK send a request once: the store retries.
func once(o *awss3.Options) { o.RetryMaxAttempts = 1 }

// Read implements objstore.Driver with one GetObject (a Range header
// unless the whole object is asked for; If-Match and If-Unmodified-Since
// for cond).
func (d *driver) Read(ctx context.Context, name string, off, n int64, cond store.ReadCondition) (objstore.Object, error) {
	in := &awss3.GetObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(name)}
	if rng := objstore.HTTPRange(off, n); rng != "" {
		in.Range = aws.String(rng)
	}
	in.IfMatch, in.IfUnmodifiedSince = conditions(cond)
	out, err := d.client.GetObject(ctx, in, once)
	if err != nil {
		return objstore.Object{}, err
	}
	etag := aws.ToString(out.ETag)
	o := objstore.Object{Body: out.Body, Length: -1, Version: etag,
		Validators: objstore.Validators{ETag: etag, LastModified: aws.ToTime(out.LastModified)}}
	if out.ContentLength != nil {
		o.Length = *out.ContentLength
	}
	switch cr := aws.ToString(out.ContentRange); {
	case strings.HasPrefix(cr, "bytes "):
		o.ContentRange = cr // other units are not checked
	case out.ContentRange == nil && in.Range != nil:
		o.Whole = true // the server ignored the Range header
	}
	return o, nil
}

// conditions returns GetObject's and HeadObject's If-Match and
// If-Unmodified-Since for cond (nil when cond does not set them).
func conditions(cond store.ReadCondition) (ifMatch *string, ifUnmodifiedSince *time.Time) {
	if cond.ETag != "" {
		ifMatch = aws.String(objstore.QuoteETag(cond.ETag))
	}
	if !cond.LastModified.IsZero() {
		ifUnmodifiedSince = aws.Time(objstore.UnmodifiedSince(cond))
	}
	return ifMatch, ifUnmodifiedSince
}

// Head implements objstore.Driver with one HeadObject (under cond, as
// Read): size, ETag and Last-Modified.
func (d *driver) Head(ctx context.Context, name string, cond store.ReadCondition) (objstore.Info, error) {
	in := &awss3.HeadObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(name)}
	in.IfMatch, in.IfUnmodifiedSince = conditions(cond)
	out, err := d.client.HeadObject(ctx, in, once)
	if err != nil {
		return objstore.Info{}, err
	}
	etag := aws.ToString(out.ETag)
	return objstore.Info{Size: aws.ToInt64(out.ContentLength), Version: etag,
		Validators: objstore.Validators{ETag: etag, LastModified: aws.ToTime(out.LastModified)}}, nil
}

// Put implements objstore.Driver with one PutObject (S3 replaces objects
// atomically): If-Match on an ETag, or If-None-Match: * to create.
func (d *driver) Put(ctx context.Context, name string, value []byte, cond objstore.Condition) error {
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(d.bucket),
		Key:           aws.String(name),
		Body:          bytes.NewReader(value),
		ContentLength: aws.Int64(int64(len(value))),
	}
	switch {
	case cond.IfNoneMatch:
		in.IfNoneMatch = aws.String("*")
	case cond.IfMatch != "":
		in.IfMatch = aws.String(cond.IfMatch)
	}
	_, err := d.client.PutObject(ctx, in, once)
	return err
}

// Delete implements objstore.Driver with one DeleteObject.
func (d *driver) Delete(ctx context.Context, name string) error {
	_, err := d.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(name)}, once)
	return err
}

// ListPage implements objstore.Driver with one ListObjectsV2 (up to 1000
// names).
func (d *driver) ListPage(ctx context.Context, prefix, delim, token string) (objstore.Page, error) {
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(d.bucket), Prefix: aws.String(prefix)}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	if token != "" {
		in.ContinuationToken = aws.String(token)
	}
	out, err := d.client.ListObjectsV2(ctx, in, once)
	if err != nil {
		return objstore.Page{}, err
	}
	var p objstore.Page
	for _, obj := range out.Contents {
		p.Keys = append(p.Keys, aws.ToString(obj.Key))
	}
	for _, cp := range out.CommonPrefixes {
		p.Dirs = append(p.Dirs, aws.ToString(cp.Prefix))
	}
	if aws.ToBool(out.IsTruncated) {
		p.Next = aws.ToString(out.NextContinuationToken)
	}
	return p, nil
}

// retryable is the SDK's classification of retryable errors (throttling,
// 5xx, broken connections).
var retryable = retry.IsErrorRetryables(retry.DefaultRetryables)

// Classify implements objstore.Driver: a missing bucket (ErrBucket), a
// missing object, a range past the end, a failed condition, and the
// errors the SDK's retryer would retry, plus answers that stalled or broke
// off while the SDK decoded them.
func (d *driver) Classify(_ context.Context, op string, err error) (objstore.Kind, error) {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var nsb *types.NoSuchBucket
	var api smithy.APIError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	status := httpStatus(err)
	switch {
	case errors.As(err, &nsb) || code == "NoSuchBucket":
		return objstore.KindOther, fmt.Errorf("%w: %q: %w", ErrBucket, d.bucket, err)
	case errors.As(err, &nsk) || errors.As(err, &nf) || code == "NoSuchKey" || code == "NotFound" || status == http.StatusNotFound:
		return objstore.KindNotFound, err
	case code == "InvalidRange" || status == http.StatusRequestedRangeNotSatisfiable:
		return objstore.KindEmptyRange, err
	case op == "set" && (status == http.StatusPreconditionFailed || status == http.StatusConflict ||
		code == "PreconditionFailed" || code == "ConditionalRequestConflict"):
		return objstore.KindConflict, err
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed":
		return objstore.KindChanged, err
	case retryable.IsErrorRetryable(err) == aws.TrueTernary || errors.Is(err, store.ErrStalled) || errors.Is(err, io.ErrUnexpectedEOF):
		return objstore.KindTransient, err
	}
	// Surface context errors as themselves so callers can test for them.
	var ce *smithy.CanceledError
	if errors.As(err, &ce) && ce.Err != nil && !errors.Is(err, ce.Err) {
		return objstore.KindOther, fmt.Errorf("%w: %w", ce.Err, err)
	}
	return objstore.KindOther, err
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
