// Package http is a read-only gozarr store over HTTP(S): the key "a/b" is
// the URL "<base>/a/b", read with GET and an HTTP Range header.
//
// A Store implements store.Reader, store.RangesReader (nearby ranges
// coalesced, requests concurrent), store.IntoReader and store.SizeReader
// (HEAD). It is read-only: it has no Set or Delete, and no listing, since
// HTTP has no standard way to list.
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
	"math/rand/v2"
	"net"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/store"
)

// DefaultConcurrency is the default per-store limit of requests in flight.
const DefaultConcurrency = 64

// DefaultMaxAttempts is the default number of attempts per request (the
// first try and up to three retries).
const DefaultMaxAttempts = 4

// DefaultMaxBackoff is the default longest pause between two attempts.
const DefaultMaxBackoff = 2 * time.Second

// DefaultCoalesce are the coalescing knobs GetRanges uses by default: ranges
// less than 1 MiB apart are read with one request, up to
// store.DefaultMaxSize per request.
var DefaultCoalesce = store.CoalesceOptions{MaxGap: 1 << 20, MaxSize: store.DefaultMaxSize}

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
	base        *url.URL
	client      *nethttp.Client
	header      nethttp.Header
	sem         chan struct{}
	noRange     atomic.Bool
	maxAttempts int
	maxBackoff  time.Duration
	coalesce    store.CoalesceOptions
	timeouts    store.Timeouts // resolved
}

var (
	_ store.Reader       = (*Store)(nil)
	_ store.RangesReader = (*Store)(nil)
	_ store.IntoReader   = (*Store)(nil)
	_ store.SizeReader   = (*Store)(nil)
)

// Option configures New.
type Option func(*Store)

// WithClient sends requests through c. By default the store uses its own
// client over a clone of http.DefaultTransport keeping as many idle
// connections per host as the concurrency limit, with the connect and
// header timeouts of WithTimeouts, up to 10 redirects and no overall
// timeout (contexts bound each call). With c, c's own settings apply
// instead, and of the timeouts only the idle one.
func WithClient(c *nethttp.Client) Option { return func(s *Store) { s.client = c } }

// WithTimeouts sets how long the store waits to connect, for an answer's
// headers and for each next part of its body (see store.Timeouts; zero
// fields keep the defaults of store.DefaultTimeouts, negative ones mean no
// limit).
func WithTimeouts(t store.Timeouts) Option { return func(s *Store) { s.timeouts = t } }

// WithHeader adds a header to every request, for instance
// WithHeader("Authorization", "Bearer <token>"). It may be given several
// times.
func WithHeader(key, value string) Option { return func(s *Store) { s.header.Add(key, value) } }

// WithConcurrency sets the per-store limit of requests in flight (default
// DefaultConcurrency, 64). Values below 1 mean 1.
func WithConcurrency(n int) Option {
	return func(s *Store) { s.sem = make(chan struct{}, max(n, 1)) }
}

// WithRetry sets the attempts per request (first try included; default
// DefaultMaxAttempts; 1 disables retries) and the longest pause between
// attempts (default DefaultMaxBackoff).
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return func(s *Store) {
		s.maxAttempts = max(maxAttempts, 1)
		if maxBackoff > 0 {
			s.maxBackoff = maxBackoff
		}
	}
}

// WithCoalesce sets how GetRanges joins nearby bounded ranges into one
// request (default DefaultCoalesce; see store.Coalesce).
func WithCoalesce(opt store.CoalesceOptions) Option { return func(s *Store) { s.coalesce = opt } }

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
	s := &Store{
		base:        u,
		header:      nethttp.Header{},
		sem:         make(chan struct{}, DefaultConcurrency),
		maxAttempts: DefaultMaxAttempts,
		maxBackoff:  DefaultMaxBackoff,
		coalesce:    DefaultCoalesce,
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	s.timeouts = s.timeouts.Resolve()
	if s.client == nil {
		t := nethttp.DefaultTransport.(*nethttp.Transport).Clone()
		t.MaxIdleConnsPerHost = cap(s.sem)
		t.MaxIdleConns = max(t.MaxIdleConns, 2*cap(s.sem))
		t.DialContext = (&net.Dialer{Timeout: s.timeouts.Connect, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = s.timeouts.Connect
		t.ResponseHeaderTimeout = s.timeouts.Header
		s.client = &nethttp.Client{Transport: t, CheckRedirect: checkRedirect}
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
func (s *Store) URL(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	u := *s.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + key
	u.RawPath = strings.TrimSuffix(s.base.EscapedPath(), "/") + "/" + strings.Join(segs, "/")
	return u.String()
}

// String returns the base URL.
func (s *Store) String() string { return s.base.String() }

// RangesIgnored reports whether the server was found to ignore Range
// headers, so that the store now fetches whole values.
func (s *Store) RangesIgnored() bool { return s.noRange.Load() }

// Get reads the range r of key. A missing key is store.ErrNotFound; see the
// package doc for ranges and statuses.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.get(ctx, key, r)
}

func (s *Store) get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	r, empty := store.RequestRange(r)
	if empty {
		if _, err := s.head(ctx, "get", key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	var out []byte
	err := s.do(ctx, "get", key, r, func(resp *nethttp.Response, ranged bool) error {
		switch resp.StatusCode {
		case nethttp.StatusRequestedRangeNotSatisfiable:
			if _, ok := r.IsSuffix(); ok {
				// A non-empty suffix is satisfiable unless the value is
				// empty (or the server wrong): the whole value answers.
				return errRefetchFull
			}
			out = []byte{}
			return nil
		case nethttp.StatusPartialContent:
			limit := store.AnswerLimit(r, true)
			b, more, err := store.ReadBodyUpTo(resp.Body, resp.ContentLength, limit)
			if more {
				return errPermanent{fmt.Errorf("%w: a 206 answer of more than the %d bytes asked for", store.ErrBadContentRange, limit)}
			}
			if err != nil {
				return err
			}
			if err := store.CheckContentRange(resp.Header.Get("Content-Range"), r, len(b)); err != nil {
				return errPermanent{err}
			}
			out = b
			return nil
		}
		// 200: the whole value, of which only up to r's end is needed.
		b, more, err := store.ReadBodyUpTo(resp.Body, resp.ContentLength, store.AnswerLimit(r, false))
		if err != nil {
			return err
		}
		out, err = store.SliceWhole(b, r)
		if err != nil {
			return errPermanent{err}
		}
		if ranged && (more || len(out) != len(b)) {
			s.noRange.Store(true)
		}
		return nil
	})
	if err == errRefetchFull {
		return s.get(ctx, key, store.Full())
	}
	return out, err
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key straight into
// dst and returns how many it read: fewer than len(dst) only when the value
// ends first. An empty dst costs a HEAD, to report a missing key.
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	r := store.OffsetLen(offset, int64(len(dst)))
	if err := store.ValidateRequest("read", key, r); err != nil {
		return 0, err
	}
	if len(dst) == 0 {
		_, err := s.head(ctx, "read", key)
		return 0, err
	}
	var n int
	err := s.do(ctx, "read", key, r, func(resp *nethttp.Response, ranged bool) error {
		n = 0
		body := io.Reader(resp.Body)
		expect := resp.ContentLength
		switch resp.StatusCode {
		case nethttp.StatusRequestedRangeNotSatisfiable:
			return nil
		case nethttp.StatusPartialContent:
			if expect > int64(len(dst)) {
				return errPermanent{fmt.Errorf("%w: a 206 answer of %d bytes for %d asked for", store.ErrBadContentRange, expect, len(dst))}
			}
		case nethttp.StatusOK:
			if ranged {
				s.noRange.Store(true)
			}
			if _, err := io.CopyN(io.Discard, body, offset); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if expect >= 0 {
				expect -= offset
			}
		}
		k, err := io.ReadFull(body, dst)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if expect >= 0 && int64(k) < expect {
				return err // cut short: retry
			}
			err = nil
		}
		if err != nil {
			return err
		}
		if resp.StatusCode == nethttp.StatusPartialContent {
			if k == len(dst) && expect < 0 {
				// No length announced: one byte more says whether
				// the server sends more than asked for.
				if m, _ := io.ReadFull(body, make([]byte, 1)); m > 0 {
					return errPermanent{fmt.Errorf("%w: a 206 answer of more than the %d bytes asked for", store.ErrBadContentRange, len(dst))}
				}
			}
			if err := store.CheckContentRange(resp.Header.Get("Content-Range"), store.OffsetLen(offset, int64(k)), k); err != nil {
				return errPermanent{err}
			}
		}
		n = k
		return nil
	})
	return n, err
}

// GetRanges reads several ranges of key and returns them in the order of
// ranges. Nearby bounded ranges are coalesced into one request (see
// WithCoalesce); the requests run concurrently, each under the store's
// concurrency limit. Results of overlapping ranges may share memory. It
// fails with the first error; a missing key is store.ErrNotFound.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	return store.GetRangesConcurrent(ctx, key, ranges, s.coalesce, s.get)
}

// Size returns the size of key's value from a HEAD request's Content-Length
// (or, when the server does not send one, by reading the value).
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	n, err := s.head(ctx, "size", key)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		b, err := s.get(ctx, key, store.Full())
		return int64(len(b)), err
	}
	return n, nil
}

// head sends a HEAD for key and returns its Content-Length (-1 if unknown).
func (s *Store) head(ctx context.Context, op, key string) (int64, error) {
	var n int64 = -1
	err := s.do(ctx, op, key, headRange, func(resp *nethttp.Response, _ bool) error {
		if resp.StatusCode != nethttp.StatusOK {
			// A HEAD sends no Range: a 206 or 416 answer is wrong.
			return errPermanent{&StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: resp.Request.URL.String()}}
		}
		n = resp.ContentLength
		return nil
	})
	return n, err
}

// headRange marks a HEAD request for do (a From(0) never reaches do).
var headRange = store.From(0)

// errRefetchFull asks get to read the whole value instead.
var errRefetchFull = errors.New("refetch whole value")

// errPermanent marks an answer that retrying cannot fix.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// do sends one request for key (GET with r's Range header, or HEAD when r is
// headRange) with retries, and hands every 200, 206 or 416 answer to handle,
// which reads the body. ranged says whether a Range header was sent. A
// handle error other than errPermanent or errRefetchFull (a body cut short)
// is retried like a broken connection.
func (s *Store) do(ctx context.Context, op, key string, r store.ByteRange,
	handle func(resp *nethttp.Response, ranged bool) error) error {
	u := s.URL(key)
	method := nethttp.MethodGet
	if r == headRange {
		method = nethttp.MethodHead
	}
	var lastErr error
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		if attempt > 0 {
			if err := s.sleep(ctx, attempt, lastErr); err != nil {
				return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w (after %v)", err, lastErr)}
			}
		}
		retry, err := s.once(ctx, method, u, r, handle)
		if err == nil || err == errRefetchFull {
			return err
		}
		if ctx.Err() != nil {
			return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: %w", ctx.Err(), err)}
		}
		if errors.Is(err, store.ErrNotFound) {
			return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w (%s)", store.ErrNotFound, u)}
		}
		lastErr = err
		if !retry {
			break
		}
	}
	return &store.KeyError{Op: op, Key: key, Err: lastErr}
}

// once sends one request. retry reports whether a failure may be retried.
func (s *Store) once(ctx context.Context, method, u string, r store.ByteRange,
	handle func(resp *nethttp.Response, ranged bool) error) (retry bool, err error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s.sem }()
	watch := store.NewIdleWatch(ctx, s.timeouts.Idle)
	defer watch.Stop()
	req, err := nethttp.NewRequestWithContext(watch.Context(), method, u, nil)
	if err != nil {
		return false, err
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	ranged := method == nethttp.MethodGet && !r.IsFull() && !s.noRange.Load()
	if ranged {
		req.Header.Set("Range", r.String())
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return !errors.Is(err, ErrTooManyRedirects), err
	}
	body := resp.Body
	resp.Body = readCloser{watch.Body(body), body}
	defer func() {
		// Drain a little so the connection can be reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
	}()
	switch resp.StatusCode {
	case nethttp.StatusOK, nethttp.StatusPartialContent, nethttp.StatusRequestedRangeNotSatisfiable:
		err := handle(resp, ranged)
		var perm errPermanent
		if errors.As(err, &perm) {
			return false, perm.err
		}
		return err != errRefetchFull, watch.Err(err)
	case nethttp.StatusNotFound, nethttp.StatusGone:
		return false, store.ErrNotFound
	case nethttp.StatusTooManyRequests, nethttp.StatusServiceUnavailable:
		se := &StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: u,
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
		return se.RetryAfter <= MaxRetryAfter, se
	case nethttp.StatusInternalServerError, nethttp.StatusBadGateway, nethttp.StatusGatewayTimeout:
		return true, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: u}
	}
	return false, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: u}
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (rc readCloser) Close() error { return rc.c.Close() }

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

// sleep waits before attempt (1, 2, ...): what the last answer's
// Retry-After asked for, or else full jitter over 50ms·2^attempt, capped
// at maxBackoff.
func (s *Store) sleep(ctx context.Context, attempt int, last error) error {
	d := min(50*time.Millisecond<<min(attempt, 20), s.maxBackoff)
	d = time.Duration(rand.Int64N(int64(d)) + 1)
	var se *StatusError
	if errors.As(last, &se) && se.RetryAfter > 0 {
		d = se.RetryAfter
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MaxConcurrency implements store.ConcurrencyLimiter: the most requests
// the store runs at once.
func (s *Store) MaxConcurrency() int { return cap(s.sem) }
