package objstore

import (
	"time"

	"github.com/gozarr/gozarr/store"
)

// The defaults of the remote stores' Options (store/s3, store/gcs,
// store/azure; store/http keeps fewer and shorter retries of its own).
const (
	// DefaultConcurrency is the default per-store limit of requests in
	// flight.
	DefaultConcurrency = 64
	// DefaultMaxAttempts is the default number of attempts per request
	// (the first try and up to four retries).
	DefaultMaxAttempts = 5
	// DefaultMaxBackoff is the default longest pause between two
	// attempts.
	DefaultMaxBackoff = 5 * time.Second
)

// DefaultCoalesce returns the coalescing knobs remote stores use by
// default: ranges less than 1 MiB apart are read with one request (a
// request to an object store costs tens of milliseconds, more than
// transferring 1 MiB), up to store.DefaultMaxSize per request.
func DefaultCoalesce() store.CoalesceOptions {
	return store.CoalesceOptions{MaxGap: 1 << 20, MaxSize: store.DefaultMaxSize}
}

// Options are the settings every remote store has: its request limit,
// retry policy and coalescing knobs. A backend's options struct embeds
// them, and its Option functions WithConcurrency, WithRetry and
// WithCoalesce are this package's (see WithConcurrency); Config holds
// them.
type Options struct {
	// Concurrency is the most requests in flight (at least 1).
	Concurrency int
	// Retry is the retry policy (the zero value: one attempt).
	Retry Retry
	// Coalesce are GetRanges' knobs (reported to readers, so ranges are
	// joined once).
	Coalesce store.CoalesceOptions
}

// DefaultOptions returns the defaults: DefaultConcurrency requests in
// flight, DefaultMaxAttempts attempts with pauses up to DefaultMaxBackoff,
// and DefaultCoalesce().
func DefaultOptions() Options {
	return Options{Concurrency: DefaultConcurrency, Coalesce: DefaultCoalesce(),
		Retry: Retry{MaxAttempts: DefaultMaxAttempts, MaxBackoff: DefaultMaxBackoff}}
}

// Resolved returns o with at least one request and one attempt, and
// maxBackoff as the longest pause when o sets none.
func (o Options) Resolved(maxBackoff time.Duration) Options {
	o.Concurrency = max(o.Concurrency, 1)
	o.Retry.MaxAttempts = max(o.Retry.MaxAttempts, 1)
	if o.Retry.MaxBackoff <= 0 {
		o.Retry.MaxBackoff = maxBackoff
	}
	return o
}

// layer is how the Option functions below reach the Options a backend's
// options struct embeds: the method is promoted from Options.
func (o *Options) layer() *Options { return o }

// Embedder is the constraint of the Option functions below: a pointer to
// a backend's options struct O, which embeds Options.
type Embedder[O any] interface {
	*O
	layer() *Options
}

// WithConcurrency returns the option of type F (a backend's Option, a
// func(*O) over an options struct embedding Options) that sets the
// per-store limit of requests in flight (default DefaultConcurrency);
// values below 1 mean 1. A backend declares its own as
//
//	func WithConcurrency(n int) Option { return objstore.WithConcurrency[Option](n) }
func WithConcurrency[F ~func(*O), O any, P Embedder[O]](n int) F {
	return F(func(o *O) { P(o).layer().Concurrency = n })
}

// WithRetry returns the option of type F that sets the attempts per
// request (the first included; 1 disables retries) and the longest pause
// between attempts (0: the backend's default), as WithConcurrency.
func WithRetry[F ~func(*O), O any, P Embedder[O]](maxAttempts int, maxBackoff time.Duration) F {
	return F(func(o *O) { P(o).layer().Retry = Retry{MaxAttempts: maxAttempts, MaxBackoff: maxBackoff} })
}

// WithCoalesce returns the option of type F that sets how GetRanges joins
// nearby bounded ranges into one request (default DefaultCoalesce(); see
// store.Coalesce), as WithConcurrency.
func WithCoalesce[F ~func(*O), O any, P Embedder[O]](opt store.CoalesceOptions) F {
	return F(func(o *O) { P(o).layer().Coalesce = opt })
}

// Build returns a backend's options: its Options defaults, then opts
// applied in order (nil ones skipped), then resolved (Resolved, with the
// defaults' longest pause); the other fields of O start at their zero
// values.
func Build[F ~func(*O), O any, P Embedder[O]](defaults Options, opts []F) O {
	var o O
	*P(&o).layer() = defaults
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	l := P(&o).layer()
	*l = l.Resolved(defaults.Retry.MaxBackoff)
	return o
}
