// Package http is a read-only gozarr store over HTTP(S): the key "a/b" is
// the URL "<base>/a/b", read with GET and an HTTP Range header.
//
// A Store implements store.Reader, store.RangesReader (nearby ranges
// coalesced, requests concurrent), store.IntoReader and store.SizeReader
// (HEAD). It is read-only: it has no Set or Delete, and no listing, since
// HTTP has no standard way to list. It reads through store/objstore, the
// layer every remote store shares (limiter, retries, bounded bodies,
// Content-Range checks), over this package's driver.
//
// # Ranges and servers that ignore them
//
// Range(off, n) is sent as "bytes=off-(off+n-1)", From(off) as "bytes=off-"
// and Suffix(n) as "bytes=-n". A 206 answer is checked against its
// Content-Range. A 416 answer (the range starts at or past the end) yields
// an empty, non-nil slice, as store.ByteRange documents. A zero-length range
// sends a HEAD instead, so that a missing key is still store.ErrNotFound.
//
// Some servers ignore Range headers and answer 200 with the whole body
// (Python's http.server is one). The store slices such answers itself, so
// reads stay correct, and remembers the server as one that ignores ranges:
// from then on it sends no Range header (RangesIgnored reports it), and every
// read fetches the value from its start: the whole of it, or for a bounded
// range up to the range's end. Put a cache in front of such a store.
//
// # Statuses, retries, deadlines
//
// 404 and 410 are store.ErrNotFound. 429, 500, 502, 503 and 504 answers and
// broken connections are retried with exponential backoff (4 attempts by
// default, see WithRetry); a 429 or 503 answer's Retry-After (seconds or a
// date) is waited instead when it asks for up to MaxRetryAfter, and one
// asking for longer fails at once. Any other status is a *StatusError
// naming the status and the key. Redirects are followed (up to 10, with
// the Range header) by the default client; a redirect loop is
// ErrTooManyRedirects, not retried.
//
// Every call honours its context, and timeouts keep a server that stops
// answering from hanging a read (WithTimeouts, default
// store.DefaultTimeouts): 10 s to connect, 30 s for an answer's headers,
// 30 s without a byte of its body (store.ErrStalled). An attempt that
// times out is retried like a broken connection.
//
// An answer is read no further than the range needs: a 206 answer longer
// than the range asked for is refused (store.ErrBadContentRange) after
// reading at most one byte past the range, and of a 200 answer to a
// bounded range only the bytes up to the range's end are read.
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
)

// DefaultMaxAttempts is the default number of attempts per request (the
// first try and up to three retries): fewer than objstore's, as a web
// server that fails is seldom one throttling its clients.
const DefaultMaxAttempts = 4

// DefaultMaxBackoff is the default longest pause between two attempts.
const DefaultMaxBackoff = 2 * time.Second

// MaxRetryAfter is the longest Retry-After wait the store honours; an
// answer asking for longer fails at once with its *StatusError.
const MaxRetryAfter = 30 * time.Second

// ErrBaseURL reports a base URL that New cannot use.
var ErrBaseURL = errors.New("http store: invalid base URL")

// ErrTooManyRedirects reports a request redirected more than 10 times (a
// redirect loop, most likely) by the store's default client.
var ErrTooManyRedirects = errors.New("http store: too many redirects")

// maxRedirects is how many redirects the default client follows.
const maxRedirects = 10

// StatusError reports an HTTP status the store does not expect. Its message
// names the status and the URL; the key is in the enclosing *store.KeyError.
type StatusError struct {
	StatusCode int
	Status     string // e.g. "403 Forbidden"
	URL        string
	// RetryAfter is the wait a 429 or 503 answer's Retry-After header
	// asked for, 0 if none.
	RetryAfter time.Duration
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("unexpected HTTP status %s from %s (retry after %v)", e.Status, e.URL, e.RetryAfter)
	}
	return fmt.Sprintf("unexpected HTTP status %s from %s", e.Status, e.URL)
}

// Store is a read-only store over HTTP. It is safe for concurrent use.
type Store struct {
	os   *objstore.Store
	base *url.URL
	d    *driver
}

var (
	_ store.Reader             = (*Store)(nil)
	_ store.RangesReader       = (*Store)(nil)
	_ store.IntoReader         = (*Store)(nil)
	_ store.SizeReader         = (*Store)(nil)
	_ store.CapabilityReporter = (*Store)(nil)
	_ store.ConditionalReader  = (*Store)(nil)
)

// Option configures New.
type Option func(*options)

type options struct {
	client   *nethttp.Client
	header   nethttp.Header
	timeouts store.Timeouts
	objstore.Options
}

// WithClient sends requests through c. By default the store uses its own
// client over a clone of http.DefaultTransport keeping as many idle
// connections per host as the concurrency limit, with the connect and
// header timeouts of WithTimeouts, up to 10 redirects and no overall
// timeout (contexts bound each call). With c, c's own settings apply
// instead, and of the timeouts only the idle one.
func WithClient(c *nethttp.Client) Option { return func(o *options) { o.client = c } }

// WithTimeouts sets how long the store waits to connect, for an answer's
// headers and for each next part of its body (see store.Timeouts; zero
// fields keep the defaults of store.DefaultTimeouts, negative ones mean no
// limit).
func WithTimeouts(t store.Timeouts) Option { return func(o *options) { o.timeouts = t } }

// WithHeader adds a header to every request, for instance
// WithHeader("Authorization", "Bearer <token>"). It may be given several
// times.
func WithHeader(key, value string) Option {
	return func(o *options) {
		if o.header == nil {
			o.header = nethttp.Header{}
		}
		o.header.Add(key, value)
	}
}

// WithConcurrency sets the per-store limit of requests in flight (default
// objstore.DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option { return objstore.WithConcurrency[Option](n) }

// WithRetry sets the attempts per request (first try included; default
// DefaultMaxAttempts; 1 disables retries) and the longest pause between
// attempts (default DefaultMaxBackoff).
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return objstore.WithRetry[Option](maxAttempts, maxBackoff)
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default objstore.DefaultCoalesce(): ranges less than 1 MiB
// apart; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return objstore.WithCoalesce[Option](opt) }

// New returns a store reading below baseURL, an http or https URL (a
// trailing "/" is optional; a query string is kept on every request). It
// makes no request.
func New(baseURL string, opts ...Option) (*Store, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrBaseURL, baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q: want http:// or https:// and a host", ErrBaseURL, baseURL)
	}
	u.Fragment, u.RawFragment = "", ""
	defaults := objstore.DefaultOptions()
	defaults.Retry = objstore.Retry{MaxAttempts: DefaultMaxAttempts, MaxBackoff: DefaultMaxBackoff}
	o := objstore.Build[Option](defaults, opts)
	o.timeouts = o.timeouts.Resolve()
	if o.client == nil {
		t := nethttp.DefaultTransport.(*nethttp.Transport).Clone()
		objstore.ConfigureTransport(t, o.timeouts, o.Concurrency)
		o.client = &nethttp.Client{Transport: t, CheckRedirect: checkRedirect}
	}
	s := &Store{base: u}
	s.d = &driver{base: u, client: objstore.WatchIdle(o.client, o.timeouts.Idle), header: o.header, gate: make(chan struct{}, closingConcurrency)}
	s.os, err = objstore.New(s.d, objstore.Config{Scheme: u.Scheme, Bucket: u.Host, Prefix: "",
		Options: o.Options, Locate: s.URL})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// checkRedirect is the default client's redirect policy: follow up to
// maxRedirects, then fail with ErrTooManyRedirects.
func checkRedirect(req *nethttp.Request, via []*nethttp.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, len(via))
	}
	return nil
}

// URL returns the URL of key.
func (s *Store) URL(key string) string { return s.d.url(key) }

// String returns the base URL.
func (s *Store) String() string { return s.base.String() }

// StoreID implements store.Identifier: the base URL.
func (s *Store) StoreID() string { return s.base.String() }

// RangesIgnored reports whether the server was found to ignore Range
// headers, so that the store now fetches whole values.
func (s *Store) RangesIgnored() bool { return s.d.noRange.Load() }

// Get reads the range r of key. A missing key is store.ErrNotFound; see the
// package doc for ranges and statuses.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return s.os.Get(ctx, key, r)
}

// GetIf implements store.ConditionalReader (objstore's): the range only
// while the value is the version c names, sent as If-Match (ETag) and
// If-Unmodified-Since (time); a 412 answer, or an answer whose ETag or
// Last-Modified disagrees with c, is store.ErrChanged.
func (s *Store) GetIf(ctx context.Context, key string, r store.ByteRange, c store.ReadCondition) ([]byte, error) {
	return s.os.GetIf(ctx, key, r, c)
}

// ReadCondition returns the condition naming key's current version: the
// ETag and Last-Modified of a HEAD answer, for a later GetIf.
func (s *Store) ReadCondition(ctx context.Context, key string) (store.ReadCondition, error) {
	return s.os.ReadCondition(ctx, key)
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key straight into
// dst and returns how many it read: fewer than len(dst) only when the value
// ends first. An empty dst costs a HEAD, to report a missing key.
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	return s.os.ReadInto(ctx, key, offset, dst)
}

// GetRanges reads several ranges of key and returns them in the order of
// ranges. Nearby bounded ranges are coalesced into one request (see
// WithCoalesce); the requests run concurrently, each under the store's
// concurrency limit. Results of overlapping ranges may share memory. It
// fails with the first error; a missing key is store.ErrNotFound.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return s.os.GetRanges(ctx, key, ranges)
}

// Size returns the size of key's value from a HEAD request's Content-Length
// (or, when the server does not send one, by reading the value).
func (s *Store) Size(ctx context.Context, key string) (int64, error) { return s.os.Size(ctx, key) }

// MaxConcurrency implements store.ConcurrencyLimiter: the most requests
// the store runs at once.
func (s *Store) MaxConcurrency() int { return s.os.MaxConcurrency() }

// CoalesceOptions implements store.Coalescer: the knobs GetRanges joins
// ranges with (WithCoalesce; default objstore.DefaultCoalesce()).
func (s *Store) CoalesceOptions() store.CoalesceOptions { return s.os.CoalesceOptions() }

// Capabilities implements store.CapabilityReporter: ranges, sizes, reads
// into a caller's buffer, conditional reads, the coalescing knobs and the
// request limit.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{Into: s, Sizer: s, Ranges: s, CondReader: s, Coalesce: s.os.CoalesceOptions(), MaxConcurrency: s.os.MaxConcurrency()}
}

// driver is the objstore.Driver of a base URL: GET with a Range header,
// HEAD; it has no writes and no listing.
type driver struct {
	base    *url.URL
	client  objstore.Doer
	header  nethttp.Header
	noRange atomic.Bool
	// closing is set once the server answered with its connection closed
	// (HTTP/1.0 or "Connection: close"); from then on at most
	// closingConcurrency requests wait for an answer at once (gate).
	closing atomic.Bool
	gate    chan struct{}
}

// closingConcurrency bounds the requests waiting for an answer from a
// server that closes its connection after each one, as python -m
// http.server does. Every request of such a server opens a new connection,
// and it listens with a short backlog (5 in Python's socketserver): a burst
// of 64 connection attempts gets most SYNs dropped, and each is retried by
// the kernel after 1 s, then 3 s, ... (110 chunks took 31 s; a handful at a
// time take milliseconds). Servers that keep connections alive are not
// affected.
const closingConcurrency = 4

// url returns the URL of name.
func (d *driver) url(name string) string {
	segs := strings.Split(name, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	u := *d.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + name
	u.RawPath = strings.TrimSuffix(d.base.EscapedPath(), "/") + "/" + strings.Join(segs, "/")
	return u.String()
}

// errEmptyRange is a 416 answer.
var errEmptyRange = errors.New("range not satisfiable")

// errChanged is a 412 answer to a conditional read.
var errChanged = errors.New("precondition failed")

// send sends one request for name (a Range header when rng is not "",
// If-Match and If-Unmodified-Since for cond) and returns a 200, 206 or
// 416 answer; any other is an error with the body closed.
func (d *driver) send(ctx context.Context, method, name, rng string, cond store.ReadCondition) (*nethttp.Response, error) {
	u := d.url(name)
	req, err := nethttp.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range d.header {
		req.Header[k] = v
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	if m, u := objstore.HTTPConditions(cond); m != "" || u != "" {
		if m != "" {
			req.Header.Set("If-Match", m)
		}
		if u != "" {
			req.Header.Set("If-Unmodified-Since", u)
		}
	}
	resp, err := d.do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case nethttp.StatusOK, nethttp.StatusPartialContent:
		return resp, nil
	}
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	switch resp.StatusCode {
	case nethttp.StatusRequestedRangeNotSatisfiable:
		return nil, errEmptyRange
	case nethttp.StatusNotFound, nethttp.StatusGone:
		return nil, store.ErrNotFound
	case nethttp.StatusPreconditionFailed:
		if !cond.IsZero() {
			return nil, errChanged
		}
	}
	se := &StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: u}
	if resp.StatusCode == nethttp.StatusTooManyRequests || resp.StatusCode == nethttp.StatusServiceUnavailable {
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return nil, se
}

// do sends req, through the gate once the server is known to close its
// connections; the gate is held until the answer's headers arrive (the
// connection has been accepted by then), not while its body is read.
func (d *driver) do(req *nethttp.Request) (*nethttp.Response, error) {
	if d.closing.Load() {
		select {
		case d.gate <- struct{}{}:
			defer func() { <-d.gate }()
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	resp, err := d.client.Do(req)
	if err == nil && resp.Close {
		d.closing.Store(true)
	}
	return resp, err
}

// Read implements objstore.Driver with one GET: a Range header unless the
// whole value is asked for or the server was found to ignore ranges.
func (d *driver) Read(ctx context.Context, name string, off, n int64, cond store.ReadCondition) (objstore.Object, error) {
	rng := objstore.HTTPRange(off, n)
	ranged := rng != "" && !d.noRange.Load()
	if !ranged {
		rng = ""
	}
	resp, err := d.send(ctx, nethttp.MethodGet, name, rng, cond)
	if err != nil {
		return objstore.Object{}, err
	}
	v := validators(resp.Header)
	o := objstore.Object{Body: resp.Body, Length: resp.ContentLength, Version: v.ETag, Validators: v}
	if resp.StatusCode == nethttp.StatusPartialContent {
		o.ContentRange = resp.Header.Get("Content-Range")
		return o, nil
	}
	// 200: the whole value, of which the layer reads only up to the
	// range's end. A server that sent more than the range asked for
	// ignores ranges: ask it for none from now on.
	o.Whole = off != 0 || n >= 0
	cl := resp.ContentLength
	if ranged && (off > 0 || cl < 0 || (n >= 0 && cl > n) || (off < 0 && cl > -off)) {
		d.noRange.Store(true)
	}
	return o, nil
}

// validators returns an answer's ETag and Last-Modified (zero when absent
// or not an HTTP date).
func validators(h nethttp.Header) objstore.Validators {
	v := objstore.Validators{ETag: h.Get("ETag")}
	if lm := h.Get("Last-Modified"); lm != "" {
		v.LastModified, _ = nethttp.ParseTime(lm)
	}
	return v
}

// Head implements objstore.Driver with a HEAD (under cond, as Read):
// Content-Length (-1 when the server sends none), ETag and Last-Modified.
func (d *driver) Head(ctx context.Context, name string, cond store.ReadCondition) (objstore.Info, error) {
	resp, err := d.send(ctx, nethttp.MethodHead, name, "", cond)
	if err == errEmptyRange || (err == nil && resp.StatusCode != nethttp.StatusOK) {
		// A HEAD sends no Range: a 206 or 416 answer is wrong.
		if resp != nil {
			resp.Body.Close()
		}
		return objstore.Info{}, errPermanent{fmt.Errorf("HEAD of %s: unexpected answer to a request without Range", d.url(name))}
	}
	if err != nil {
		return objstore.Info{}, err
	}
	resp.Body.Close()
	v := validators(resp.Header)
	return objstore.Info{Size: resp.ContentLength, Version: v.ETag, Validators: v}, nil
}

// Put implements objstore.Driver: the store is read-only.
func (d *driver) Put(context.Context, string, []byte, objstore.Condition) error {
	return store.ErrReadOnly
}

// Delete implements objstore.Driver: the store is read-only.
func (d *driver) Delete(context.Context, string) error { return store.ErrReadOnly }

// ListPage implements objstore.Driver: HTTP has no listing.
func (d *driver) ListPage(context.Context, string, string, string) (objstore.Page, error) {
	return objstore.Page{}, errors.ErrUnsupported
}

// Classify implements objstore.Driver: 404 and 410 are a missing key, 416
// an empty range; 429, 500, 502, 503 and 504 answers (a Retry-After up to
// MaxRetryAfter), broken connections and stalled answers are transient.
func (d *driver) Classify(_ context.Context, _ string, err error) (objstore.Kind, error) {
	var se *StatusError
	var perm errPermanent
	switch {
	case errors.Is(err, store.ErrNotFound):
		return objstore.KindNotFound, err
	case errors.Is(err, errEmptyRange):
		return objstore.KindEmptyRange, err
	case errors.Is(err, errChanged):
		return objstore.KindChanged, err
	case errors.As(err, &perm):
		return objstore.KindOther, perm.err
	case errors.As(err, &se):
		switch se.StatusCode {
		case nethttp.StatusTooManyRequests, nethttp.StatusServiceUnavailable:
			if se.RetryAfter <= MaxRetryAfter {
				return objstore.KindTransient, err
			}
		case nethttp.StatusInternalServerError, nethttp.StatusBadGateway, nethttp.StatusGatewayTimeout:
			return objstore.KindTransient, err
		}
		return objstore.KindOther, err
	case errors.Is(err, ErrTooManyRedirects), errors.Is(err, store.ErrBadContentRange), errors.Is(err, store.ErrInvalidRange):
		return objstore.KindOther, err
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, store.ErrStalled) {
		// The request got no (complete) answer: a broken connection, a
		// timeout.
		return objstore.KindTransient, err
	}
	return objstore.KindOther, err
}

// errPermanent marks an answer that retrying cannot fix.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// RetryDelay implements objstore.RetryDelayer: the wait a 429 or 503
// answer's Retry-After asked for.
func (e *StatusError) RetryDelay() time.Duration { return e.RetryAfter }

// parseRetryAfter returns the wait a Retry-After header asks for, in
// seconds or as an HTTP date (relative to now), or 0 when it is absent,
// malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(math.MaxInt64/time.Second))) * time.Second
	}
	if t, err := nethttp.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
