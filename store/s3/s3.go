// Package s3 is a gozarr store over an Amazon S3 bucket, or any S3-compatible
// server (MinIO, Versity's gateway, Ceph, ...), built on aws-sdk-go-v2.
//
// A Store maps the key "a/b" to the object "<prefix>/a/b" of its bucket. It
// implements store.Store (Get, Set, Delete, List, ListDir), store.RangesReader
// (the ranges of one key fetched concurrently) and store.SizeReader
// (HeadObject).
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
// Throttling (503 SlowDown, 429), 5xx answers and broken connections are
// retried with exponential backoff by the SDK retryer (Open configures 5
// attempts; a client given to New keeps its own settings); a body that
// breaks off while being read is fetched again, up to the same number of
// attempts. Every call honours its context's deadline and cancellation.
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
	"iter"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

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

// ErrBucket reports a bucket that does not exist or cannot be reached with
// the configured credentials: a configuration error, never ErrNotFound.
var ErrBucket = errors.New("s3: bucket not accessible")

// ErrBadListing reports a listing answer that cannot be right: a page
// repeating the previous page's continuation token, or keys not in
// increasing order, which would make List loop or break its order.
var ErrBadListing = errors.New("s3: bad listing answer")

// Store is a store.Store over one bucket and key prefix. It is safe for
// concurrent use.
type Store struct {
	client      *awss3.Client
	bucket      string
	prefix      string // "" or ending in "/"
	sem         chan struct{}
	maxAttempts int // attempts at reading a body that breaks off
	coalesce    store.CoalesceOptions
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.RangesReader = (*Store)(nil)
	_ store.SizeReader   = (*Store)(nil)
	_ store.IntoReader   = (*Store)(nil)
)

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
	concurrency  int
	httpClient   aws.HTTPClient
	maxAttempts  int
	maxBackoff   time.Duration
	coalesce     store.CoalesceOptions
	timeouts     store.Timeouts
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
// DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option { return func(o *options) { o.concurrency = n } }

// WithHTTPClient makes Open send S3 requests through c (credential providers
// keep the SDK's client; AWS_CA_BUNDLE does not apply to c). By default Open
// uses the SDK's client with an idle-connection pool as large as the
// concurrency limit, so connections are reused. Ignored by New (configure
// the *s3.Client instead).
func WithHTTPClient(c aws.HTTPClient) Option { return func(o *options) { o.httpClient = c } }

// WithRetry sets the attempts per request (first try included; default
// DefaultMaxAttempts) and the longest pause between attempts (default
// DefaultMaxBackoff) of the retryer Open builds. With New only maxAttempts
// is used, and only for re-reading bodies that break off.
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return func(o *options) { o.maxAttempts, o.maxBackoff = maxAttempts, maxBackoff }
}

// WithTimeouts sets how long the client Open builds waits to connect, for
// an answer's headers and for each next part of its body (see
// store.Timeouts; zero fields keep the defaults of store.DefaultTimeouts,
// negative ones mean no limit). With WithHTTPClient only the idle timeout
// applies. Ignored by New.
func WithTimeouts(t store.Timeouts) Option { return func(o *options) { o.timeouts = t } }

// DefaultCoalesce are the coalescing knobs GetRanges uses by default: ranges
// less than 1 MiB apart are read with one request (a request to an object
// store costs tens of milliseconds, more than transferring 1 MiB), up to
// store.DefaultMaxSize per request.
var DefaultCoalesce = store.CoalesceOptions{MaxGap: 1 << 20, MaxSize: store.DefaultMaxSize}

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
	o.timeouts = o.timeouts.Resolve()
	return o
}

// New returns a Store over bucket with the given key prefix ("" for the whole
// bucket; a trailing "/" is optional), sending requests through client. Of
// the options only WithConcurrency, WithCoalesce and WithRetry apply. It makes no request.
func New(client *awss3.Client, bucket, prefix string, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("s3: nil client")
	}
	if bucket == "" || strings.ContainsAny(bucket, "/\\") {
		return nil, fmt.Errorf("%w: invalid bucket name %q", ErrBucket, bucket)
	}
	p, err := normPrefix(prefix)
	if err != nil {
		return nil, err
	}
	o := buildOptions(opts)
	return &Store{
		client:      client,
		bucket:      bucket,
		prefix:      p,
		sem:         make(chan struct{}, o.concurrency),
		maxAttempts: o.maxAttempts,
		coalesce:    o.coalesce,
	}, nil
}

func normPrefix(prefix string) (string, error) {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return "", nil
	}
	if err := store.ValidateKey(p); err != nil {
		return "", fmt.Errorf("s3: prefix: %w", err)
	}
	return p + "/", nil
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
			t.MaxIdleConns = max(t.MaxIdleConns, 2*o.concurrency)
			t.MaxIdleConnsPerHost = o.concurrency
			t.TLSHandshakeTimeout = o.timeouts.Connect
			t.ResponseHeaderTimeout = o.timeouts.Header
		}).WithDialerOptions(func(d *net.Dialer) { d.Timeout = o.timeouts.Connect })))
	}
	lo = append(lo, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = o.maxAttempts
			so.MaxBackoff = o.maxBackoff
			// The per-store concurrency limit already bounds the load;
			// a client-side retry quota would turn a burst of SlowDown
			// answers into hard errors.
			so.RateLimiter = ratelimit.None
		})
	}))
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
		if o.timeouts.Idle > 0 {
			so.HTTPClient = idleClient{so.HTTPClient, o.timeouts.Idle}
		}
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

// idleClient watches every answer's body for pauses longer than idle (see
// store.IdleWatch).
type idleClient struct {
	next awss3.HTTPClient
	idle time.Duration
}

func (c idleClient) Do(req *http.Request) (*http.Response, error) {
	w := store.NewIdleWatch(req.Context(), c.idle)
	resp, err := c.next.Do(req.WithContext(w.Context()))
	if err != nil {
		w.Stop()
		return nil, err
	}
	resp.Body = watchedBody{w.Body(resp.Body), resp.Body, w}
	return resp, nil
}

// watchedBody is an answer's body under an IdleWatch, stopped on Close.
type watchedBody struct {
	io.Reader
	body io.Closer
	w    *store.IdleWatch
}

func (b watchedBody) Close() error {
	err := b.body.Close()
	b.w.Stop()
	return err
}

// Client returns the S3 client the store sends requests through.
func (s *Store) Client() *awss3.Client { return s.client }

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the store's key prefix: "" or a prefix ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// String describes the store as an s3:// URL.
func (s *Store) String() string { return "s3://" + s.bucket + "/" + s.prefix }

func (s *Store) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) release() { <-s.sem }

// Get reads the range r of key. A missing key is store.ErrNotFound; see the
// package doc for how ranges map onto requests.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.get(ctx, key, r)
}

func (s *Store) get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	r, empty := store.RequestRange(r)
	if empty {
		// Nothing to read, but a missing key must still be reported.
		if _, err := s.Size(ctx, key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	var lastErr error
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		b, retryable, err := s.getOnce(ctx, key, r)
		if err == nil {
			return b, nil
		}
		if err == errSuffixUnsatisfiable {
			// A non-empty suffix of a non-empty object is always
			// satisfiable: the server is wrong, or the object is empty.
			// Either way the whole object is the answer.
			r = store.Full()
			attempt--
			continue
		}
		if !retryable || ctx.Err() != nil {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// errSuffixUnsatisfiable is getOnce's signal that a suffix request got 416.
var errSuffixUnsatisfiable = errors.New("suffix range not satisfiable")

// getOnce performs one GetObject (with the SDK's own retries) and reads its
// body. retryable reports a body that broke off while being read.
func (s *Store) getOnce(ctx context.Context, key string, r store.ByteRange) (b []byte, retryable bool, err error) {
	in := &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)}
	if !r.IsFull() {
		in.Range = aws.String(r.String())
	}
	if err := s.acquire(ctx); err != nil {
		return nil, false, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	defer s.release()
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if isInvalidRange(err) {
			if _, ok := r.IsSuffix(); ok {
				return nil, false, errSuffixUnsatisfiable
			}
			return []byte{}, false, nil
		}
		return nil, false, s.wrap("get", key, err)
	}
	defer out.Body.Close()
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	partial := out.ContentRange != nil
	limit := store.AnswerLimit(r, partial)
	b, more, err := store.ReadBodyUpTo(out.Body, size, limit)
	if more && partial {
		return nil, false, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf(
			"%w: a 206 answer of more than the %d bytes asked for", store.ErrBadContentRange, limit)}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, &store.KeyError{Op: "get", Key: key, Err: ctx.Err()}
		}
		return nil, true, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("reading body: %w", err)}
	}
	if !r.IsFull() && out.ContentRange == nil {
		// The server ignored the Range header and sent the whole object.
		if b, err = store.SliceWhole(b, r); err != nil {
			return nil, false, &store.KeyError{Op: "get", Key: key, Err: err}
		}
	} else if out.ContentRange != nil {
		if err := checkContentRange(*out.ContentRange, r, len(b)); err != nil {
			return nil, false, &store.KeyError{Op: "get", Key: key, Err: err}
		}
	}
	return b, false, nil
}

// checkContentRange is store.CheckContentRange for a Content-Range in
// bytes; other units are not checked.
func checkContentRange(cr string, r store.ByteRange, n int) error {
	if !strings.HasPrefix(cr, "bytes ") {
		return nil
	}
	return store.CheckContentRange(cr, r, n)
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key straight into
// dst with one ranged GetObject, and returns how many it read: fewer than
// len(dst) only when the value ends first (0 when offset is at or past the
// end). An empty dst costs a HeadObject, to report a missing key.
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	if err := store.ValidateRequest("read", key, store.OffsetLen(offset, int64(len(dst)))); err != nil {
		return 0, err
	}
	if len(dst) == 0 {
		if _, err := s.Size(ctx, key); err != nil {
			return 0, err
		}
		return 0, nil
	}
	var lastErr error
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		n, retryable, err := s.readIntoOnce(ctx, key, offset, dst)
		if err == nil {
			return n, nil
		}
		if !retryable || ctx.Err() != nil {
			return 0, err
		}
		lastErr = err
	}
	return 0, lastErr
}

func (s *Store) readIntoOnce(ctx context.Context, key string, offset int64, dst []byte) (n int, retryable bool, err error) {
	r := store.OffsetLen(offset, int64(len(dst)))
	if err := s.acquire(ctx); err != nil {
		return 0, false, &store.KeyError{Op: "read", Key: key, Err: err}
	}
	defer s.release()
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key), Range: aws.String(r.String()),
	})
	if err != nil {
		if isInvalidRange(err) {
			return 0, false, nil
		}
		return 0, false, s.wrap("read", key, err)
	}
	defer out.Body.Close()
	if out.ContentRange != nil && out.ContentLength != nil && *out.ContentLength > int64(len(dst)) {
		return 0, false, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf(
			"%w: a 206 answer of %d bytes for %d asked for", store.ErrBadContentRange, *out.ContentLength, len(dst))}
	}
	body := io.Reader(out.Body)
	if out.ContentRange == nil && offset > 0 {
		// The server ignored the Range header: skip to offset.
		if _, err := io.CopyN(io.Discard, body, offset); err == io.EOF {
			return 0, false, nil
		} else if err != nil {
			return 0, true, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("reading body: %w", err)}
		}
	}
	n, err = io.ReadFull(body, dst)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		// A short answer is fine only when the response announced it.
		if out.ContentLength != nil {
			expect := *out.ContentLength
			if out.ContentRange == nil {
				expect -= offset
			}
			if int64(n) < expect {
				return 0, true, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("reading body: %w", err)}
			}
		}
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, &store.KeyError{Op: "read", Key: key, Err: ctx.Err()}
		}
		return 0, true, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("reading body: %w", err)}
	}
	if out.ContentRange != nil {
		if err := checkContentRange(*out.ContentRange, store.OffsetLen(offset, int64(n)), n); err != nil {
			return 0, false, &store.KeyError{Op: "read", Key: key, Err: err}
		}
	}
	return n, false, nil
}

// GetRanges reads several ranges of key and returns them in the order of
// ranges. Nearby bounded ranges are coalesced into one request (see
// WithCoalesce); the requests run concurrently, each under the store's
// concurrency limit. Results of overlapping ranges may share memory. It
// fails with the first error; a missing key is store.ErrNotFound.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return store.GetRangesConcurrent(ctx, key, ranges, s.coalesce, s.get)
}

// Size returns the size of key's value with one HeadObject.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	if err := s.acquire(ctx); err != nil {
		return 0, &store.KeyError{Op: "size", Key: key, Err: err}
	}
	defer s.release()
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key),
	})
	if err != nil {
		return 0, s.wrap("size", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

// Set stores value under key with one PutObject. S3 replaces objects
// atomically.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.acquire(ctx); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	defer s.release()
	_, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(value),
		ContentLength: aws.Int64(int64(len(value))),
	})
	if err != nil {
		return s.wrap("set", key, err)
	}
	return nil
}

// Delete removes key with one DeleteObject. Deleting a missing key is not an
// error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.acquire(ctx); err != nil {
		return &store.KeyError{Op: "delete", Key: key, Err: err}
	}
	defer s.release()
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key),
	})
	if err != nil && !errors.Is(s.wrap("delete", key, err), store.ErrNotFound) {
		return s.wrap("delete", key, err)
	}
	return nil
}

// List yields every key starting with prefix, in lexical (byte) order, one
// ListObjectsV2 page (up to 1000 keys) at a time. Stopping the iteration
// stops the paging. Objects whose names are not valid keys (a "dir/"
// marker, say) are left out; pages that do not advance end the listing
// with ErrBadListing.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := validateListPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		in := &awss3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix + prefix)}
		var pages pager
		last := ""
		for {
			out, err := s.listPage(ctx, in)
			if err != nil {
				yield("", s.wrap("list", prefix, err))
				return
			}
			for _, obj := range out.Contents {
				k, ok := strings.CutPrefix(aws.ToString(obj.Key), s.prefix)
				if !ok || store.ValidateKey(k) != nil {
					continue
				}
				if k <= last {
					yield("", &store.KeyError{Op: "list", Key: prefix, Err: fmt.Errorf("%w: key %q after %q", ErrBadListing, k, last)})
					return
				}
				last = k
				if !yield(k, nil) {
					return
				}
			}
			more, err := pages.next(in, out, len(out.Contents))
			if err != nil {
				yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
				return
			}
			if !more {
				return
			}
		}
	}
}

// maxEmptyPages is how many truncated pages in a row may hold nothing
// before a listing gives up.
const maxEmptyPages = 1000

// pager follows a listing's continuation tokens and checks that they
// advance: no token twice, and not endless empty pages.
type pager struct {
	seen  map[string]bool
	empty int
}

// next sets in's continuation token from out, a page holding n entries,
// and reports whether there is another page.
func (p *pager) next(in *awss3.ListObjectsV2Input, out *awss3.ListObjectsV2Output, n int) (bool, error) {
	if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
		return false, nil
	}
	tok := *out.NextContinuationToken
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[tok] {
		return false, fmt.Errorf("%w: continuation token %q repeated", ErrBadListing, tok)
	}
	p.seen[tok] = true
	if p.empty = p.empty + 1; n > 0 {
		p.empty = 0
	}
	if p.empty > maxEmptyPages {
		return false, fmt.Errorf("%w: %d empty pages in a row", ErrBadListing, p.empty)
	}
	in.ContinuationToken = &tok
	return true, nil
}

func validateListPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := store.ValidatePrefix(prefix); err != nil {
		return err
	}
	return nil
}

// listPage fetches one listing page. The SDK retries failed requests but
// not a page whose body stalls (store.ErrStalled) or breaks off while it
// is decoded: those are fetched again here, up to maxAttempts times.
func (s *Store) listPage(ctx context.Context, in *awss3.ListObjectsV2Input) (*awss3.ListObjectsV2Output, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	var out *awss3.ListObjectsV2Output
	var err error
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		out, err = s.client.ListObjectsV2(ctx, in)
		if err == nil || ctx.Err() != nil || !(errors.Is(err, store.ErrStalled) || errors.Is(err, io.ErrUnexpectedEOF)) {
			break
		}
	}
	return out, err
}

// ListDir lists one level below dir ("" or a prefix ending in "/"; a missing
// trailing "/" is added) with ListObjectsV2 and the delimiter "/": keys
// directly in dir and sub-directory names ending in "/", both relative to
// dir and sorted.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if err := validateListPrefix(dir); err != nil {
		return nil, nil, err
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	full := s.prefix + dir
	in := &awss3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(full), Delimiter: aws.String("/"),
	}
	var pages pager
	for {
		out, err := s.listPage(ctx, in)
		if err != nil {
			return nil, nil, s.wrap("list", dir, err)
		}
		for _, obj := range out.Contents {
			if k, ok := strings.CutPrefix(aws.ToString(obj.Key), full); ok && k != "" && !strings.Contains(k, "/") && store.ValidateKey(k) == nil {
				if len(keys) > 0 && k <= keys[len(keys)-1] {
					return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: fmt.Errorf("%w: key %q after %q", ErrBadListing, k, keys[len(keys)-1])}
				}
				keys = append(keys, k)
			}
		}
		for _, cp := range out.CommonPrefixes {
			d, ok := strings.CutPrefix(aws.ToString(cp.Prefix), full)
			if !ok || !strings.HasSuffix(d, "/") || store.ValidateKey(strings.TrimSuffix(d, "/")) != nil || strings.Contains(strings.TrimSuffix(d, "/"), "/") {
				continue
			}
			if len(dirs) > 0 && d <= dirs[len(dirs)-1] {
				return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: fmt.Errorf("%w: prefix %q after %q", ErrBadListing, d, dirs[len(dirs)-1])}
			}
			dirs = append(dirs, d)
		}
		more, err := pages.next(in, out, len(out.Contents)+len(out.CommonPrefixes))
		if err != nil {
			return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: err}
		}
		if !more {
			break
		}
	}
	return keys, dirs, nil
}

// wrap turns an SDK error into a *store.KeyError, mapping a missing object
// to store.ErrNotFound and a missing bucket to ErrBucket.
func (s *Store) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var nsb *types.NoSuchBucket
	var api smithy.APIError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	switch {
	case errors.As(err, &nsb) || code == "NoSuchBucket":
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %q: %w", ErrBucket, s.bucket, err)}
	case errors.As(err, &nsk) || errors.As(err, &nf) || code == "NoSuchKey" || code == "NotFound" || httpStatus(err) == http.StatusNotFound:
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w (s3://%s/%s%s)", store.ErrNotFound, s.bucket, s.prefix, key)}
	}
	// Surface context errors as themselves so callers can test for them.
	var ce *smithy.CanceledError
	if errors.As(err, &ce) && ce.Err != nil {
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %w", ce.Err, err)}
	}
	return &store.KeyError{Op: op, Key: key, Err: err}
}

func isInvalidRange(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "InvalidRange" {
		return true
	}
	return httpStatus(err) == http.StatusRequestedRangeNotSatisfiable
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// MaxConcurrency implements store.ConcurrencyLimiter: the most requests
// the store runs at once.
func (s *Store) MaxConcurrency() int { return cap(s.sem) }
