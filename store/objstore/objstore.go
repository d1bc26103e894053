// Package objstore is the one layer under gozarr's remote object stores
// (store/s3, store/http, store/gcs, store/azure): a backend implements the
// small Driver interface (a ranged read with the object's size and
// version, a put with an optional condition, delete, one page of a
// listing, head), and Store gives every backend the same store.Store on
// top of it: key and range validation, the request limiter, retries with
// backoff, bounded body reading with Content-Range checks, coalesced and
// concurrent GetRanges with knobs it reports, ReadInto, conditional writes
// (store.ConditionalWriter) when the driver has them, listings checked for
// progress and order, a stable identity (StoreID from scheme, bucket and
// prefix, never an address) and its capabilities.
//
// It follows the split of go-cloud's blob and blob/driver: the driver is
// thin and knows its protocol or SDK; everything portable is done once,
// here, so the backends cannot drift apart.
//
// # Retries
//
// A request that fails with a transient error (the driver classifies it
// KindTransient: throttling, 5xx answers, broken connections, stalled
// answers) or whose body breaks off while the layer reads it is sent
// again, up to Config.Retry.MaxAttempts attempts in all, with full-jitter
// exponential backoff (or the wait the server asked for, see RetryDelayer)
// and never past the context. Every operation is idempotent except a
// conditional Put: one is sent again only after a Head shows that its
// condition still holds (so a write whose answer was lost is never applied
// twice over another writer's). Backends whose SDK retries by itself (GCS,
// Azure) configure one attempt.
//
// # Timeouts
//
// The drivers over net/http (S3, HTTP) send through WatchIdle, which fails
// an answer whose body stops arriving for the idle timeout with
// store.ErrStalled (transient, so retried), and set their transports'
// connect and header timeouts with ConfigureTransport.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gozarr/gozarr/store"
)

// Kind classifies a driver's error.
type Kind int

// The kinds of driver errors the layer tells apart.
const (
	// KindOther is any other error, reported as it is.
	KindOther Kind = iota
	// KindNotFound: the object does not exist (store.ErrNotFound).
	KindNotFound
	// KindConflict: a Put's condition failed (store.ErrConflict).
	KindConflict
	// KindEmptyRange: the range asked for holds no byte of the object
	// (HTTP 416): the read yields an empty value (a suffix: the whole
	// value, read again without a range).
	KindEmptyRange
	// KindTransient: the request may succeed when sent again (throttled,
	// a 5xx answer, a broken connection, a stalled answer).
	KindTransient
	// KindChanged: a read's condition failed (HTTP 412 to a Read or Head
	// with a store.ReadCondition): the object is no longer the version it
	// names (store.ErrChanged).
	KindChanged
)

// Condition is the condition of a Put: none (the zero value), the object
// still at version IfMatch, or (IfNoneMatch) the object absent.
type Condition struct {
	IfMatch     string
	IfNoneMatch bool
}

// IsZero reports an unconditional Put.
func (c Condition) IsZero() bool { return c.IfMatch == "" && !c.IfNoneMatch }

// Validators are what an answer says about the object's version, for
// conditional reads: its ETag and its last modification time ("" and zero
// when the answer does not say).
type Validators struct {
	ETag         string
	LastModified time.Time
}

// Info is what a Head tells: the object's size (-1 when the backend does
// not say), its version (as in Object) and its validators.
type Info struct {
	Size    int64
	Version string
	Validators
}

// Object is an open read of an object: Body holds the bytes asked for
// (Length of them, -1 when unknown), Version the object's version (S3 and
// Azure ETag, GCS generation; "" when the backend has none), and the
// answer's validators (ETag, Last-Modified) where the protocol gives them.
//
// A driver over HTTP reports what the server answered: ContentRange, the
// Content-Range of a partial (206) answer, which the layer checks against
// the range asked for; Whole, a 200 answer with the whole object to a
// ranged read (a server that ignores Range headers), which the layer
// slices itself, reading no further than the range's end.
type Object struct {
	Body    io.ReadCloser
	Length  int64
	Version string
	Validators
	ContentRange string
	Whole        bool
}

// Page is one page of a listing: object names (full names, the driver's
// root included) and, with a delimiter, common prefixes (ending in it);
// Next is the token of the next page, "" after the last.
type Page struct {
	Keys, Dirs []string
	Next       string
}

// Driver is what a backend implements. Names are full object names (the
// Store adds its prefix); they are valid store keys. Every method honours
// ctx. Errors are the backend's; Classify tells their kind.
type Driver interface {
	// Read opens name for reading n bytes from off (n < 0: to the end;
	// off < 0: the last -off bytes, the whole object when shorter). A
	// range past the end may be an error of KindEmptyRange or an empty
	// body. A non-zero cond is sent with the read (If-Match for its ETag,
	// If-Unmodified-Since for its time, or the backend's equivalent): an
	// object of another version is an error of KindChanged. The layer
	// checks the answer's Validators against cond as well, for servers
	// that ignore the condition.
	Read(ctx context.Context, name string, off, n int64, cond store.ReadCondition) (Object, error)
	// Head returns name's size, version and validators with one metadata
	// request, under cond as Read.
	Head(ctx context.Context, name string, cond store.ReadCondition) (Info, error)
	// Put replaces name's value with value under cond (a failed
	// condition is an error of KindConflict). It does not keep value.
	Put(ctx context.Context, name string, value []byte, cond Condition) error
	// Delete removes name (a missing one may be an error of
	// KindNotFound, which the Store ignores).
	Delete(ctx context.Context, name string) error
	// ListPage returns the page of names starting with prefix after
	// token ("" for the first), with delim ("" or "/") grouping names
	// into Dirs.
	ListPage(ctx context.Context, prefix, delim, token string) (Page, error)
	// Classify returns err's kind and the error to report in its place
	// (err itself, or err wrapped in a backend sentinel such as a missing
	// bucket's). op is "get", "set", "delete", "list" or "size". It is
	// also asked about the layer's own errors (a malformed answer), which
	// are KindOther.
	Classify(ctx context.Context, op string, err error) (Kind, error)
}

// RetryDelayer is implemented by errors that say how long to wait before
// the next attempt (an HTTP Retry-After); the layer waits that instead of
// its backoff.
type RetryDelayer interface {
	RetryDelay() time.Duration
}

// Retry is the layer's retry policy.
type Retry struct {
	// MaxAttempts is the most attempts per request, the first included
	// (at least 1: no retries).
	MaxAttempts int
	// MaxBackoff is the longest pause between two attempts (0:
	// DefaultMaxBackoff).
	MaxBackoff time.Duration
}

// Config describes a Store over a Driver.
type Config struct {
	// Scheme, Bucket and Prefix name the store's data ("gs", "bucket",
	// "a/b"): StoreID is made of them (and Host), so two Stores over one
	// bucket and prefix share caches and write locks; String and error
	// messages show them as scheme://bucket/prefix.
	Scheme, Bucket, Prefix string
	// Host is whatever else tells two buckets of one name apart (an
	// account, an endpoint), in StoreID only; "" when nothing does.
	Host string
	// Options are the request limit, retry policy and coalescing knobs.
	Options
	// Conditional: the driver honours Put conditions, so the Store is a
	// store.ConditionalWriter.
	Conditional bool
	// Locate, when set, names where a key lives in error messages (a
	// URL); by default scheme://bucket/prefix/key.
	Locate func(key string) string
}

// Store is a store.Store over a Driver. It is safe for concurrent use.
type Store struct {
	d      Driver
	cfg    Config
	prefix string // "" or ending in "/"
	lim    *limiter
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.RangesReader       = (*Store)(nil)
	_ store.IntoReader         = (*Store)(nil)
	_ store.SizeReader         = (*Store)(nil)
	_ store.ConcurrencyLimiter = (*Store)(nil)
	_ store.Coalescer          = (*Store)(nil)
	_ store.Identifier         = (*Store)(nil)
	_ store.CapabilityReporter = (*Store)(nil)
)

// New returns a Store over d. The prefix is normalised
// (normalizePrefix).
func New(d Driver, cfg Config) (*Store, error) {
	if d == nil {
		return nil, errors.New("objstore: nil driver")
	}
	p, err := normalizePrefix(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	cfg.Prefix = p
	cfg.Options = cfg.Resolved(DefaultMaxBackoff)
	return &Store{d: d, cfg: cfg, prefix: p, lim: newLimiter(cfg.Concurrency)}, nil
}

// Driver returns the store's driver.
func (s *Store) Driver() Driver { return s.d }

// Prefix returns the key prefix: "" or ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// String describes the store as a URL: scheme://bucket/prefix.
func (s *Store) String() string { return s.cfg.Scheme + "://" + s.cfg.Bucket + "/" + s.prefix }

// StoreID implements store.Identifier: scheme://[host/]bucket/prefix, so
// Stores over one bucket and prefix have one identity.
func (s *Store) StoreID() string {
	if s.cfg.Host != "" {
		return s.cfg.Scheme + "://" + s.cfg.Host + "/" + s.cfg.Bucket + "/" + s.prefix
	}
	return s.String()
}

// MaxConcurrency implements store.ConcurrencyLimiter.
func (s *Store) MaxConcurrency() int { return s.lim.Slots() }

// CoalesceOptions implements store.Coalescer: the knobs GetRanges joins
// nearby ranges with.
func (s *Store) CoalesceOptions() store.CoalesceOptions { return s.cfg.Coalesce }

// Capabilities implements store.CapabilityReporter: ranges, sizes,
// reads into a caller's buffer and conditional reads, the coalescing
// knobs, the request limit, and conditional writes when the driver has
// them.
func (s *Store) Capabilities() store.Capabilities {
	c := store.Capabilities{Into: s, Sizer: s, Ranges: s, CondReader: s, Coalesce: s.cfg.Coalesce, MaxConcurrency: s.lim.Slots()}
	if s.cfg.Conditional {
		c.Conditional = s
	}
	return c
}

// locate names key's object in error messages.
func (s *Store) locate(key string) string {
	if s.cfg.Locate != nil {
		return s.cfg.Locate(key)
	}
	return s.String() + key
}

// fail turns an error of op on key into a *store.KeyError: a done
// context's error is wrapped in, a missing object is store.ErrNotFound, a
// failed condition store.ErrConflict.
func (s *Store) fail(ctx context.Context, op, key string, err error) error {
	var ke *store.KeyError
	if errors.As(err, &ke) && ke.Key == key {
		return err
	}
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	kind, out := s.d.Classify(ctx, op, err)
	switch kind {
	case KindNotFound:
		out = fmt.Errorf("%w (%s)", store.ErrNotFound, s.locate(key))
	case KindConflict:
		out = fmt.Errorf("%w: %w", store.ErrConflict, out)
	case KindChanged:
		out = fmt.Errorf("%w: %s is not the version the read's condition names (%w)", store.ErrChanged, s.locate(key), out)
	}
	return &store.KeyError{Op: op, Key: key, Err: out}
}

// kind classifies err for op.
func (s *Store) kind(ctx context.Context, op string, err error) Kind {
	k, _ := s.d.Classify(ctx, op, err)
	return k
}

// Size implements store.SizeReader with one metadata request (and, for a
// backend that tells no size, a read of the value).
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	in, err := s.head(ctx, "size", key, store.ReadCondition{})
	n := in.Size
	if err == nil && n < 0 {
		var b []byte
		b, _, err = s.read(ctx, "size", key, store.Full(), store.ReadCondition{})
		n = int64(len(b))
	}
	return n, err
}

// head sends one Head under cond (with retries) under a request slot; a
// non-zero cond is also checked against the answer's validators.
func (s *Store) head(ctx context.Context, op, key string, cond store.ReadCondition) (in Info, err error) {
	err = s.do(ctx, op, nil, func(ctx context.Context) (err error) {
		if in, err = s.d.Head(ctx, s.prefix+key, cond); err == nil {
			err = checkCondition(in.Validators, cond)
		}
		return err
	})
	if err != nil {
		return Info{}, s.fail(ctx, op, key, err)
	}
	return in, nil
}

// Set stores value under key with one upload. A done context writes
// nothing.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	return s.put(ctx, key, value, Condition{})
}

// put uploads value under cond. A conditional put is sent again after a
// transient failure only while a Head shows the condition still holds:
// otherwise the object changed (another writer's, or this write's own
// landing, whose answer was lost), which is store.ErrConflict.
func (s *Store) put(ctx context.Context, key string, value []byte, cond Condition) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	var recheck func(ctx context.Context, last error) error
	if !cond.IsZero() {
		recheck = func(ctx context.Context, last error) error {
			if err := s.lim.Acquire(ctx); err != nil {
				return err
			}
			in, err := s.d.Head(ctx, s.prefix+key, store.ReadCondition{})
			s.lim.Release()
			v := in.Version
			switch {
			case err != nil && s.kind(ctx, "set", err) == KindNotFound:
				if cond.IfNoneMatch {
					return nil
				}
			case err != nil:
				return last
			case v == cond.IfMatch && !cond.IfNoneMatch:
				return nil
			}
			return fmt.Errorf("%w: the object changed (the write was cut off: %w)", store.ErrConflict, last)
		}
	}
	err := s.do(ctx, "set", recheck, func(ctx context.Context) error {
		return s.d.Put(ctx, s.prefix+key, value, cond)
	})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return &store.KeyError{Op: "set", Key: key, Err: err}
		}
		if cond.IfMatch != "" && ctx.Err() == nil && s.kind(ctx, "set", err) == KindNotFound {
			// The object is gone (S3 answers If-Match on a missing key
			// 404): it is not at the version the condition names.
			return &store.KeyError{Op: "set", Key: key, Err: fmt.Errorf("%w: the object no longer exists (%w)", store.ErrConflict, err)}
		}
		return s.fail(ctx, "set", key, err)
	}
	return nil
}

// GetVersion implements store.ConditionalWriter (when the driver has
// conditions): the whole value of key and its version, read with one
// request.
func (s *Store) GetVersion(ctx context.Context, key string) ([]byte, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", err
	}
	b, v, err := s.read(ctx, "get", key, store.Full(), store.ReadCondition{})
	if err == nil && v == "" {
		// An empty object read as an empty range carries no version.
		var in Info
		in, err = s.head(ctx, "get", key, store.ReadCondition{})
		v = in.Version
	}
	if err == nil && v == "" {
		err = &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: the server gave no version", errors.ErrUnsupported)}
	}
	if err != nil {
		return nil, "", err
	}
	return b, v, nil
}

// SetIfVersion implements store.ConditionalWriter: key's value replaced
// only if its version is still version ("": only if key does not exist),
// else an error wrapping store.ErrConflict.
func (s *Store) SetIfVersion(ctx context.Context, key string, value []byte, version string) error {
	if !s.cfg.Conditional {
		return &store.KeyError{Op: "set", Key: key, Err: errors.New("objstore: the backend has no conditional writes")}
	}
	return s.put(ctx, key, value, Condition{IfMatch: version, IfNoneMatch: version == ""})
}

// Delete removes key. Deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	err := s.do(ctx, "delete", nil, func(ctx context.Context) error {
		return s.d.Delete(ctx, s.prefix+key)
	})
	if err != nil && (ctx.Err() != nil || s.kind(ctx, "delete", err) != KindNotFound) {
		return s.fail(ctx, "delete", key, err)
	}
	return nil
}
