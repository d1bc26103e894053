// Package azure is a gozarr store over an Azure Blob Storage container,
// built on the Azure SDK's azblob. It is a module of its own, so that
// gozarr's core module does not depend on the SDK; importing it registers
// the az://, abfs:// and abfss:// schemes (and
// https://<account>.blob.core.windows.net/... URLs) with store/storeurl.
//
// A Store maps the key "a/b" to the blob "<prefix>/a/b" of its container.
// It implements store.Store (Get, Set, Delete, List, ListDir),
// store.RangesReader (the ranges of one key fetched concurrently),
// store.SizeReader and store.ConcurrencyLimiter.
//
// # Ranges
//
// Range(off, n) and From(off) are one ranged download each. Azure has no
// suffix ranges, so Suffix(n) is two requests: the blob's properties, then
// a download of its last n bytes on the condition that the blob is still
// the one measured (If-Match its ETag; a blob replaced in between is
// measured again). A range starting at or past the end yields an empty,
// non-nil slice; a zero-length range costs one properties request, so that
// a missing key is still store.ErrNotFound. A server answering with more
// bytes than asked for is an error, read no further than one byte past the
// range.
//
// # Requests, retries and deadlines
//
// Every request holds one slot of a per-store limit, 64 by default
// (WithConcurrency). Throttling (429, 503), other 5xx answers and broken
// connections are retried by the SDK's retry policy with exponential
// backoff (DefaultMaxAttempts attempts, pauses up to DefaultMaxBackoff;
// WithRetry), and a body that breaks off is read on from where it broke.
// Every call honours its context's deadline and cancellation.
//
// # Credentials
//
// Open takes, in order: the options (WithSharedKey, WithConnectionString,
// WithSAS, WithCredential, WithAnonymous); the environment variables
// AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY (with the account),
// AZURE_STORAGE_SAS_TOKEN; and the SDK's standard chain,
// azidentity.DefaultAzureCredential (service principal variables, workload
// and managed identity, the Azure CLI's login). When that chain yields no
// token, the store uses anonymous access, which public containers accept.
package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

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

// ErrContainer reports a container that does not exist or cannot be
// reached with the configured credentials: a configuration error, never
// ErrNotFound.
var ErrContainer = errors.New("azure: container not accessible")

// Store is a store.Store over one container and key prefix. It is safe for
// concurrent use.
type Store struct {
	client    *container.Client
	account   string
	container string
	prefix    string // "" or ending in "/"
	lim       *store.Limiter
	coalesce  store.CoalesceOptions
	attempts  int
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.RangesReader       = (*Store)(nil)
	_ store.SizeReader         = (*Store)(nil)
	_ store.ConcurrencyLimiter = (*Store)(nil)
)

// Option configures Open or New.
type Option func(*options)

type options struct {
	endpoint    string
	key         string
	connString  string
	sas         string
	cred        azcore.TokenCredential
	anonymous   bool
	concurrency int
	maxAttempts int
	maxBackoff  time.Duration
	coalesce    store.CoalesceOptions
	transport   policy.Transporter
}

// WithEndpoint sets the blob service URL, for an emulator such as Azurite
// ("http://127.0.0.1:10000/devstoreaccount1") or another cloud. Default:
// https://<account>.blob.core.windows.net/. Ignored by New.
func WithEndpoint(serviceURL string) Option { return func(o *options) { o.endpoint = serviceURL } }

// WithSharedKey signs requests with the account's key. Ignored by New.
func WithSharedKey(key string) Option { return func(o *options) { o.key = key } }

// WithConnectionString takes the endpoint and credentials from a storage
// connection string (the account argument of Open may then be empty).
// Ignored by New.
func WithConnectionString(cs string) Option { return func(o *options) { o.connString = cs } }

// WithSAS appends a shared access signature ("sv=...&sig=...") to every
// request. Ignored by New.
func WithSAS(token string) Option {
	return func(o *options) { o.sas = strings.TrimPrefix(token, "?") }
}

// WithCredential authenticates with an Entra ID token credential instead
// of the default chain. Ignored by New.
func WithCredential(cred azcore.TokenCredential) Option { return func(o *options) { o.cred = cred } }

// WithAnonymous sends unauthenticated requests, for public containers,
// without looking for credentials. Ignored by New.
func WithAnonymous() Option { return func(o *options) { o.anonymous = true } }

// WithConcurrency sets the per-store limit of requests in flight (default
// DefaultConcurrency). Values below 1 mean 1.
func WithConcurrency(n int) Option { return func(o *options) { o.concurrency = n } }

// WithRetry sets the attempts per request (first try included; default
// DefaultMaxAttempts) and the longest pause between attempts (default
// DefaultMaxBackoff) of the client Open builds; with New only the
// attempts at reading a broken body apply.
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return func(o *options) { o.maxAttempts, o.maxBackoff = maxAttempts, maxBackoff }
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default DefaultCoalesce; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return func(o *options) { o.coalesce = opt } }

// WithTransport sends the client's requests through t (an *http.Client
// will do), for tests and proxies. Ignored by New.
func WithTransport(t policy.Transporter) Option { return func(o *options) { o.transport = t } }

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

// tokenProbe bounds how long Open waits for the default credential chain
// to yield a token before it settles for anonymous access.
const tokenProbe = 10 * time.Second

// Open builds a client for account's blob service (see the package doc for
// credentials) and returns a Store over containerName and prefix. With the
// default credential chain it asks for a token once, to fall back to
// anonymous access when there is none; it sends no request to the
// container.
func Open(ctx context.Context, account, containerName, prefix string, opts ...Option) (*Store, error) {
	o := buildOptions(opts)
	co := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: int32(o.maxAttempts - 1), RetryDelay: 100 * time.Millisecond, MaxRetryDelay: o.maxBackoff},
	}}
	if o.transport != nil {
		co.Transport = o.transport
	}
	env := func(k string) string {
		if o.key != "" || o.connString != "" || o.sas != "" || o.cred != nil || o.anonymous {
			return "" // explicit options rule out the environment
		}
		return os.Getenv(k)
	}
	if o.connString == "" {
		o.connString = env("AZURE_STORAGE_CONNECTION_STRING")
	}
	if account == "" && o.connString == "" {
		account = os.Getenv("AZURE_STORAGE_ACCOUNT")
	}
	if o.key == "" && o.connString == "" {
		o.key = env("AZURE_STORAGE_KEY")
	}
	if o.sas == "" && o.connString == "" && o.key == "" {
		o.sas = strings.TrimPrefix(env("AZURE_STORAGE_SAS_TOKEN"), "?")
	}
	if o.connString == "" && account == "" && o.endpoint == "" {
		return nil, fmt.Errorf("%w: no storage account (give one, or set AZURE_STORAGE_ACCOUNT)", ErrContainer)
	}
	serviceURL := o.endpoint
	if serviceURL == "" {
		serviceURL = "https://" + account + ".blob.core.windows.net/"
	}
	if account == "" {
		account = accountFromURL(serviceURL)
	}
	var (
		client *azblob.Client
		err    error
	)
	switch {
	case o.connString != "":
		client, err = azblob.NewClientFromConnectionString(o.connString, co)
	case o.key != "":
		var cred *azblob.SharedKeyCredential
		if cred, err = azblob.NewSharedKeyCredential(account, o.key); err == nil {
			client, err = azblob.NewClientWithSharedKeyCredential(serviceURL, cred, co)
		}
	case o.sas != "":
		client, err = azblob.NewClientWithNoCredential(strings.TrimSuffix(serviceURL, "/")+"/?"+o.sas, co)
	case o.anonymous:
		client, err = azblob.NewClientWithNoCredential(serviceURL, co)
	default:
		cred := o.cred
		if cred == nil {
			if cred, err = azidentity.NewDefaultAzureCredential(nil); err != nil {
				cred = nil
			}
		}
		if cred != nil && o.cred == nil && !hasToken(ctx, cred) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cred = nil
		}
		if cred == nil {
			client, err = azblob.NewClientWithNoCredential(serviceURL, co)
		} else {
			client, err = azblob.NewClient(serviceURL, cred, co)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("azure: creating client: %w", err)
	}
	return New(client.ServiceClient().NewContainerClient(containerName), prefix, opts...)
}

// hasToken reports whether cred yields a storage token within tokenProbe.
func hasToken(ctx context.Context, cred azcore.TokenCredential) bool {
	ctx, cancel := context.WithTimeout(ctx, tokenProbe)
	defer cancel()
	_, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	return err == nil
}

// accountFromURL guesses the account of a service URL: the first label of
// <account>.blob.core.windows.net, or the first path segment (emulators).
func accountFromURL(serviceURL string) string {
	rest := serviceURL[strings.Index(serviceURL, "://")+3:]
	host, path, _ := strings.Cut(rest, "/")
	if a, _, ok := strings.Cut(host, ".blob."); ok {
		return a
	}
	a, _, _ := strings.Cut(path, "/")
	return a
}

// New returns a Store over the container client c with the given key
// prefix ("" for the whole container; a trailing "/" is optional). Of the
// options only WithConcurrency, WithCoalesce and WithRetry apply. It makes
// no request.
func New(c *container.Client, prefix string, opts ...Option) (*Store, error) {
	if c == nil {
		return nil, fmt.Errorf("azure: nil container client")
	}
	p, err := store.NormalizePrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	o := buildOptions(opts)
	name := containerName(c.URL())
	if name == "" || strings.ContainsAny(name, "\\") {
		return nil, fmt.Errorf("%w: invalid container URL %q", ErrContainer, c.URL())
	}
	return &Store{
		client: c, account: accountFromURL(c.URL()), container: name, prefix: p,
		lim: store.NewLimiter(o.concurrency), coalesce: o.coalesce, attempts: o.maxAttempts,
	}, nil
}

// containerName returns the last path segment of a container URL, without
// its query.
func containerName(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u = strings.TrimSuffix(u, "/")
	return u[strings.LastIndexByte(u, '/')+1:]
}

// Client returns the container client the store sends requests through.
func (s *Store) Client() *container.Client { return s.client }

// Container returns the store's container name.
func (s *Store) Container() string { return s.container }

// Prefix returns the store's key prefix: "" or a prefix ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// String describes the store as an az:// URL.
func (s *Store) String() string { return "az://" + s.container + "/" + s.prefix }

// MaxConcurrency implements store.ConcurrencyLimiter: the most requests
// the store runs at once.
func (s *Store) MaxConcurrency() int { return s.lim.Slots() }

func (s *Store) blob(key string) *blob.Client { return s.client.NewBlobClient(s.prefix + key) }

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
	if n, ok := r.IsSuffix(); ok {
		return s.suffix(ctx, key, n)
	}
	var hr blob.HTTPRange
	limit := int64(-1)
	if off, n, ok := r.Bounded(); ok {
		hr, limit = blob.HTTPRange{Offset: off, Count: n}, n
	} else if off, ok := r.IsFrom(); ok {
		hr = blob.HTTPRange{Offset: off}
	}
	b, err := s.download(ctx, key, hr, limit, nil)
	return b, err
}

// maxRemeasure is how many times a suffix read measures a blob again
// that was replaced between its measuring and its download.
const maxRemeasure = 16

// suffix reads the last n bytes of key: its size, then a conditional
// ranged download, measured again if the blob changed in between.
func (s *Store) suffix(ctx context.Context, key string, n int64) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		size, etag, err := s.props(ctx, "get", key)
		if err != nil {
			return nil, err
		}
		if size == 0 {
			return []byte{}, nil
		}
		off := max(size-n, 0)
		b, err := s.download(ctx, key, blob.HTTPRange{Offset: off, Count: size - off}, size-off, etag)
		if bloberror.HasCode(err, bloberror.ConditionNotMet) && attempt < maxRemeasure {
			continue
		}
		return b, err
	}
}

// download reads hr of key (under If-Match etag when etag is not nil),
// reading at most limit+1 bytes when limit >= 0.
func (s *Store) download(ctx context.Context, key string, hr blob.HTTPRange, limit int64, etag *azcore.ETag) ([]byte, error) {
	if err := s.lim.Acquire(ctx); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	defer s.lim.Release()
	opt := &blob.DownloadStreamOptions{Range: hr}
	if etag != nil {
		opt.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag}}
	}
	resp, err := s.blob(key).DownloadStream(ctx, opt)
	if err != nil {
		if bloberror.HasCode(err, bloberror.InvalidRange) || httpStatus(err) == http.StatusRequestedRangeNotSatisfiable {
			return []byte{}, nil
		}
		if bloberror.HasCode(err, bloberror.ConditionNotMet) {
			return nil, err
		}
		return nil, s.wrap("get", key, err)
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: int32(s.attempts - 1)})
	defer body.Close()
	size := int64(-1)
	if resp.ContentLength != nil {
		size = *resp.ContentLength
	}
	b, err := store.ReadAtMost(body, size, limit)
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

// props returns key's size and ETag with one properties request.
func (s *Store) props(ctx context.Context, op, key string) (int64, *azcore.ETag, error) {
	if err := s.lim.Acquire(ctx); err != nil {
		return 0, nil, &store.KeyError{Op: op, Key: key, Err: err}
	}
	defer s.lim.Release()
	p, err := s.blob(key).GetProperties(ctx, nil)
	if err != nil {
		return 0, nil, s.wrap(op, key, err)
	}
	var size int64
	if p.ContentLength != nil {
		size = *p.ContentLength
	}
	return size, p.ETag, nil
}

// Size returns the size of key's value with one properties request.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	n, _, err := s.props(ctx, "size", key)
	return n, err
}

// Set stores value under key with one Put Blob request (Azure replaces
// blobs atomically). A done context writes nothing.
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
	_, err := s.client.NewBlockBlobClient(s.prefix+key).Upload(ctx, streaming.NopCloser(bytes.NewReader(value)), nil)
	if err != nil {
		return s.wrap("set", key, err)
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
	if _, err := s.blob(key).Delete(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return s.wrap("delete", key, err)
	}
	return nil
}

// listPage runs one page request of a pager under the concurrency limit.
func listPage[T any](ctx context.Context, s *Store, next func(context.Context) (T, error)) (T, error) {
	if err := s.lim.Acquire(ctx); err != nil {
		var zero T
		return zero, err
	}
	defer s.lim.Release()
	return next(ctx)
}

// List yields every key starting with prefix, in lexical order, a page of
// up to 5000 keys per request. Stopping the iteration stops the paging.
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
		p := s.prefix + prefix
		pager := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &p})
		for pager.More() {
			page, err := listPage(ctx, s, pager.NextPage)
			if err != nil {
				yield("", s.wrap("list", prefix, err))
				return
			}
			for _, it := range page.Segment.BlobItems {
				if it.Name == nil {
					continue
				}
				if k, ok := strings.CutPrefix(*it.Name, s.prefix); ok && k != "" {
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
	pager := s.client.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: &full})
	for pager.More() {
		page, err := listPage(ctx, s, pager.NextPage)
		if err != nil {
			return nil, nil, s.wrap("list", dir, err)
		}
		for _, p := range page.Segment.BlobPrefixes {
			if p.Name == nil {
				continue
			}
			if d, ok := strings.CutPrefix(*p.Name, full); ok && d != "" && d != "/" {
				dirs = append(dirs, d)
			}
		}
		for _, it := range page.Segment.BlobItems {
			if it.Name == nil {
				continue
			}
			if k, ok := strings.CutPrefix(*it.Name, full); ok && k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys, dirs, nil
}

// wrap turns an SDK error into a *store.KeyError, mapping a missing blob to
// store.ErrNotFound and a missing container to ErrContainer.
func (s *Store) wrap(op, key string, err error) error {
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %q: %w", ErrContainer, s.container, err)}
	case bloberror.HasCode(err, bloberror.BlobNotFound) || (op != "list" && httpStatus(err) == http.StatusNotFound):
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w (az://%s/%s%s)", store.ErrNotFound, s.container, s.prefix, key)}
	}
	return &store.KeyError{Op: op, Key: key, Err: err}
}

func httpStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
