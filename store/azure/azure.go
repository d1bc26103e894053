// Package azure is a gozarr store over an Azure Blob Storage container,
// built on the Azure SDK's azblob. It is a module of its own, so that
// gozarr's core module does not depend on the SDK; importing it registers
// the az://, abfs:// and abfss:// schemes (and
// https://<account>.blob.core.windows.net/... URLs) with store/storeurl.
//
// A Store maps the key "a/b" to the blob "<prefix>/a/b" of its container.
// It is an objstore.Store over this package's driver, so it has what every
// remote store has: store.Store, store.RangesReader (nearby ranges joined
// with the knobs it reports, the requests concurrent), store.IntoReader,
// store.SizeReader, store.ConcurrencyLimiter, a StoreID made of account,
// container and prefix, and store.ConditionalWriter: SetIfVersion uploads
// under If-Match the ETag read (If-None-Match "*" for "absent"), so
// writers in several processes of one shard never lose each other's
// read-modify-writes.
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
// connections, and a body that breaks off or stalls, are retried by
// store/objstore, the layer every remote store shares, with full-jitter
// exponential backoff (objstore.DefaultMaxAttempts attempts, pauses up to
// objstore.DefaultMaxBackoff; WithRetry); the SDK sends each request
// once, whatever the retry policy of a client given to New.
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
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
)

// ErrContainer reports a container that does not exist or cannot be
// reached with the configured credentials: a configuration error, never
// ErrNotFound.
var ErrContainer = errors.New("azure: container not accessible")

// Store is a store.Store over one container and key prefix. It is safe
// for concurrent use.
type Store struct {
	*objstore.Store
	client    *container.Client
	container string
}

// Option configures Open or New.
type Option func(*options)

type options struct {
	endpoint   string
	key        string
	connString string
	sas        string
	cred       azcore.TokenCredential
	anonymous  bool
	transport  policy.Transporter
	objstore.Options
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
// objstore.DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option { return objstore.WithConcurrency[Option](n) }

// WithRetry sets the attempts per request (first try included; default
// objstore.DefaultMaxAttempts) and the longest pause between attempts
// (default objstore.DefaultMaxBackoff): the layer's retries, for Open and
// New alike.
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return objstore.WithRetry[Option](maxAttempts, maxBackoff)
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default objstore.DefaultCoalesce(): ranges less than 1 MiB
// apart; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return objstore.WithCoalesce[Option](opt) }

// WithTransport sends the client's requests through t (an *http.Client
// will do), for tests and proxies. Ignored by New.
func WithTransport(t policy.Transporter) Option { return func(o *options) { o.transport = t } }

// tokenProbe bounds how long Open waits for the default credential chain
// to yield a token before it settles for anonymous access.
const tokenProbe = 10 * time.Second

// Open builds a client for account's blob service (see the package doc for
// credentials) and returns a Store over containerName and prefix. With the
// default credential chain it asks for a token once, to fall back to
// anonymous access when there is none; it sends no request to the
// container.
func Open(ctx context.Context, account, containerName, prefix string, opts ...Option) (*Store, error) {
	o := objstore.Build[Option](objstore.DefaultOptions(), opts)
	// The layer retries; the SDK tries once (see once).
	co := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
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
	o := objstore.Build[Option](objstore.DefaultOptions(), opts)
	name := containerName(c.URL())
	if name == "" || strings.ContainsAny(name, "\\") {
		return nil, fmt.Errorf("%w: invalid container URL %q", ErrContainer, c.URL())
	}
	d := &driver{client: c, container: name}
	st, err := objstore.New(d, objstore.Config{Scheme: "az", Host: accountFromURL(c.URL()), Bucket: name, Prefix: prefix,
		Options: o.Options, Conditional: true})
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	return &Store{Store: st, client: c, container: name}, nil
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

// driver is the objstore.Driver of one container.
type driver struct {
	client    *container.Client
	container string
}

// once makes the SDK send a request once, whatever the client's retry
// policy: the layer retries (backoff, conditional writes re-sent only after
// a check).
func once(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

func (d *driver) blob(name string) *blob.Client { return d.client.NewBlobClient(name) }

// maxRemeasure is how many times a suffix read measures a blob again
// that was replaced between its measuring and its download.
const maxRemeasure = 16

// Read implements objstore.Driver with one ranged download (under
// If-Match and If-Unmodified-Since for cond); a suffix (off < 0) is the
// blob's properties, then a download of its last -off bytes under If-Match
// the ETag measured (measured again if the blob was replaced in between).
func (d *driver) Read(ctx context.Context, name string, off, n int64, cond store.ReadCondition) (objstore.Object, error) {
	if off >= 0 {
		hr := blob.HTTPRange{Offset: off}
		if n >= 0 {
			hr.Count = n
		}
		return d.download(ctx, name, hr, accessConditions(cond, nil))
	}
	for attempt := 0; ; attempt++ {
		in, err := d.Head(ctx, name, cond)
		if err != nil {
			return objstore.Object{}, err
		}
		if in.Size == 0 {
			return objstore.Object{Body: io.NopCloser(strings.NewReader("")), Length: 0, Version: in.Version, Validators: in.Validators}, nil
		}
		start := max(in.Size+off, 0)
		etag := azcore.ETag(in.Version)
		o, err := d.download(ctx, name, blob.HTTPRange{Offset: start, Count: in.Size - start}, accessConditions(cond, &etag))
		if bloberror.HasCode(err, bloberror.ConditionNotMet) && attempt < maxRemeasure {
			continue
		}
		return o, err
	}
}

// accessConditions returns the access conditions of a read under cond
// and, when etag is not nil, If-Match etag (nil for none).
func accessConditions(cond store.ReadCondition, etag *azcore.ETag) *blob.AccessConditions {
	if cond.IsZero() && etag == nil {
		return nil
	}
	mc := &blob.ModifiedAccessConditions{IfMatch: etag}
	if cond.ETag != "" && etag == nil {
		mc.IfMatch = to.Ptr(azcore.ETag(objstore.QuoteETag(cond.ETag)))
	}
	if !cond.LastModified.IsZero() {
		mc.IfUnmodifiedSince = to.Ptr(objstore.UnmodifiedSince(cond))
	}
	return &blob.AccessConditions{ModifiedAccessConditions: mc}
}

// download opens hr of name under ac (nil: none).
func (d *driver) download(ctx context.Context, name string, hr blob.HTTPRange, ac *blob.AccessConditions) (objstore.Object, error) {
	resp, err := d.blob(name).DownloadStream(once(ctx), &blob.DownloadStreamOptions{Range: hr, AccessConditions: ac})
	if err != nil {
		return objstore.Object{}, err
	}
	o := objstore.Object{Body: resp.Body, Length: -1}
	if resp.ContentLength != nil {
		o.Length = *resp.ContentLength
	}
	if resp.ETag != nil {
		o.Version = string(*resp.ETag)
	}
	o.Validators = objstore.Validators{ETag: o.Version, LastModified: deref(resp.LastModified)}
	return o, nil
}

// Head implements objstore.Driver with one properties request (under
// cond, as Read): size, ETag and Last-Modified.
func (d *driver) Head(ctx context.Context, name string, cond store.ReadCondition) (objstore.Info, error) {
	var opt *blob.GetPropertiesOptions
	if ac := accessConditions(cond, nil); ac != nil {
		opt = &blob.GetPropertiesOptions{AccessConditions: ac}
	}
	p, err := d.blob(name).GetProperties(once(ctx), opt)
	if err != nil {
		return objstore.Info{}, err
	}
	in := objstore.Info{Size: deref(p.ContentLength), Validators: objstore.Validators{LastModified: deref(p.LastModified)}}
	if p.ETag != nil {
		in.Version = string(*p.ETag)
	}
	in.ETag = in.Version
	return in, nil
}

// Put implements objstore.Driver with one Put Blob request (Azure replaces
// blobs atomically), under If-Match or If-None-Match "*" as cond says.
func (d *driver) Put(ctx context.Context, name string, value []byte, cond objstore.Condition) error {
	var opt *blockblob.UploadOptions
	if !cond.IsZero() {
		mc := &blob.ModifiedAccessConditions{}
		if cond.IfNoneMatch {
			mc.IfNoneMatch = to.Ptr(azcore.ETagAny)
		} else {
			mc.IfMatch = to.Ptr(azcore.ETag(cond.IfMatch))
		}
		opt = &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mc}}
	}
	_, err := d.client.NewBlockBlobClient(name).Upload(once(ctx), streaming.NopCloser(bytes.NewReader(value)), opt)
	return err
}

// Delete implements objstore.Driver.
func (d *driver) Delete(ctx context.Context, name string) error {
	_, err := d.blob(name).Delete(once(ctx), nil)
	return err
}

// ListPage implements objstore.Driver: up to 5000 names per page, the
// marker as token.
func (d *driver) ListPage(ctx context.Context, prefix, delim, token string) (objstore.Page, error) {
	var marker *string
	if token != "" {
		marker = &token
	}
	var p objstore.Page
	var items []*container.BlobItem
	if delim == "" {
		page, err := d.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, Marker: marker}).NextPage(once(ctx))
		if err != nil {
			return p, err
		}
		items, p.Next = page.Segment.BlobItems, deref(page.NextMarker)
	} else {
		page, err := d.client.NewListBlobsHierarchyPager(delim, &container.ListBlobsHierarchyOptions{Prefix: &prefix, Marker: marker}).NextPage(once(ctx))
		if err != nil {
			return p, err
		}
		items, p.Next = page.Segment.BlobItems, deref(page.NextMarker)
		for _, bp := range page.Segment.BlobPrefixes {
			if bp.Name != nil {
				p.Dirs = append(p.Dirs, *bp.Name)
			}
		}
	}
	for _, it := range items {
		if it.Name != nil {
			p.Keys = append(p.Keys, *it.Name)
		}
	}
	return p, nil
}

// deref returns *p, or T's zero value for a nil p.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// Classify implements objstore.Driver: a missing blob, a failed condition
// (412, or 409 for If-None-Match on an existing blob), a range past the
// end, and a missing container (ErrContainer).
func (d *driver) Classify(ctx context.Context, op string, err error) (objstore.Kind, error) {
	status := httpStatus(err)
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return objstore.KindOther, fmt.Errorf("%w: %q: %w", ErrContainer, d.container, err)
	case bloberror.HasCode(err, bloberror.BlobNotFound) || (op != "list" && status == http.StatusNotFound):
		return objstore.KindNotFound, err
	case op != "set" && (bloberror.HasCode(err, bloberror.ConditionNotMet) || status == http.StatusPreconditionFailed):
		return objstore.KindChanged, err
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists) || status == http.StatusPreconditionFailed ||
		(op == "set" && status == http.StatusConflict):
		return objstore.KindConflict, err
	case bloberror.HasCode(err, bloberror.InvalidRange) || status == http.StatusRequestedRangeNotSatisfiable:
		return objstore.KindEmptyRange, err
	case ctx.Err() == nil && transient(err, status):
		return objstore.KindTransient, err
	}
	return objstore.KindOther, err
}

// transient reports what the SDK's retry policy would retry (408, 429,
// 500, 502, 503, 504 answers, a failed round trip) and a body that broke
// off or stalled, for the layer to retry.
func transient(err error, status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, store.ErrStalled)
}

func httpStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
