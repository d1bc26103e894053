package store

import (
	"context"
	"errors"
	"fmt"
)

// Capabilities is what a store can do beyond Reader, as readers (the
// pipeline) ask it: each field is the store's implementation of an optional
// interface, or nil, and two properties of its backend. Ask with
// CapabilitiesOf, never with type assertions, so that wrappers (caches,
// counters) keep what they pass through.
type Capabilities struct {
	Into   IntoReader   // reads into a caller's buffer, or nil
	Vec    VectorReader // vectored reads into many buffers, or nil
	Sizer  SizeReader   // value sizes without a read, or nil
	Ranges RangesReader // several ranges of a key in one call, or nil
	Locker KeyLocker    // locks keys against writers in other processes, or nil
	Mapper Mapper       // maps whole values into memory, or nil
	// Conditional replaces values only if unchanged since read, or nil.
	Conditional ConditionalWriter
	// CondReader reads part of a value only while it is the version a
	// ReadCondition names (virtual references with a checksum read
	// through it), or nil. A wrapper that passes reads on forwards it.
	CondReader ConditionalReader
	// Locator tells where values live in other stores (virtual
	// references), or nil: readers then group many keys' values by the
	// object holding them and join neighbouring ranges into one request.
	Locator Locator
	// Coalesce is how the store's GetRanges joins nearby ranges (a
	// Coalescer's knobs; zero: it joins none, or does not say). A reader
	// that joins ranges itself uses these, so ranges are joined once, with
	// the knobs the store owns.
	Coalesce CoalesceOptions
	// MaxConcurrency is the backend's own request limit (S3, HTTP: 64 by
	// default), 0 when it states none.
	MaxConcurrency int
	// Local: reads cost CPU rather than waiting (the filesystem, memory):
	// the store reads into caller's buffers and its backend states no
	// request limit. Readers choose whole reads and fewer concurrent
	// requests for local stores.
	Local bool
}

// Unwrapper is implemented by stores that wrap another store: Unwrap
// returns the wrapped one. CapabilitiesOf follows it for the properties a
// wrapper does not change (the backend's request limit and locality).
type Unwrapper interface {
	Unwrap() Reader
}

// Coalescer is implemented by stores whose GetRanges joins nearby ranges
// into fewer requests: CoalesceOptions returns the knobs it joins with.
type Coalescer interface {
	CoalesceOptions() CoalesceOptions
}

// CapabilityReporter is implemented by wrappers that serve some optional
// interfaces only when the store they wrap does (a cache in front of a
// store with or without sizes): CapabilitiesOf returns what Capabilities
// says instead of probing.
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns what r can do: the optional interfaces it
// implements (or, for a CapabilityReporter, those it reports), and its
// backend's request limit and locality, found through any chain of
// Unwrappers.
func CapabilitiesOf(r Reader) Capabilities {
	if cr, ok := r.(CapabilityReporter); ok {
		return cr.Capabilities()
	}
	var c Capabilities
	c.Into, _ = r.(IntoReader)
	c.Vec, _ = r.(VectorReader)
	c.Sizer, _ = r.(SizeReader)
	c.Ranges, _ = r.(RangesReader)
	c.Locker, _ = r.(KeyLocker)
	c.Mapper, _ = r.(Mapper)
	c.Conditional, _ = r.(ConditionalWriter)
	c.CondReader, _ = r.(ConditionalReader)
	c.Locator, _ = r.(Locator)
	if co, ok := r.(Coalescer); ok {
		c.Coalesce = co.CoalesceOptions()
	}
	c.MaxConcurrency = maxConcurrency(r)
	c.Local = c.Into != nil && c.MaxConcurrency == 0
	return c
}

// maxConcurrency returns the request limit of r's backend, following
// Unwrappers, or 0.
func maxConcurrency(r Reader) int {
	for range 64 { // wrappers nest a few deep; a cycle is a bug, not a hang
		if l, ok := r.(ConcurrencyLimiter); ok {
			return max(l.MaxConcurrency(), 1)
		}
		if cr, ok := r.(CapabilityReporter); ok {
			return cr.Capabilities().MaxConcurrency
		}
		u, ok := r.(Unwrapper)
		if !ok {
			return 0
		}
		r = u.Unwrap()
	}
	return 0
}

// Identifier is implemented by stores that can name the data they hold:
// two stores with one StoreID hold the same data (the filesystem store of
// one directory, the S3 store of one bucket and prefix at one endpoint),
// so caches keyed by it may share their entries; a store whose data is its
// own (memory) names itself uniquely.
type Identifier interface {
	StoreID() string
}

// IDOf returns a name for r's data, for the keys of caches shared by
// arrays and stores: an Identifier's StoreID, else the ID of the store a
// wrapper wraps (Unwrapper: a cache in front of a store serves the same
// data), else a name made of r's type and address, which another store may
// take once r is garbage: implement Identifier when that matters.
func IDOf(r Reader) string {
	for range 64 {
		if id, ok := r.(Identifier); ok {
			return id.StoreID()
		}
		u, ok := r.(Unwrapper)
		if !ok {
			break
		}
		r = u.Unwrap()
	}
	return fmt.Sprintf("%T@%p", r, r)
}

// KeyLocker is implemented by stores that can lock one key against writers
// in other processes (the filesystem store, on one machine): LockKey blocks
// until the caller holds key's lock, or ctx ends, and returns the function
// that releases it. A lock held by a process that dies is released. Writers
// hold it around a read-modify-write, so concurrent writers of one chunk or
// shard in several processes never lose each other's data.
type KeyLocker interface {
	LockKey(ctx context.Context, key string) (unlock func(), err error)
}

// ErrConflict reports a conditional write whose condition failed: the
// value changed (or appeared) since the version the writer read.
var ErrConflict = errors.New("value changed since it was read")

// ConditionalWriter is implemented by stores that can replace a value only
// if it is still the version a writer read (S3's If-Match and
// If-None-Match, a generation in memory): writers in other processes then
// never lose each other's read-modify-writes; the loser gets ErrConflict,
// re-reads and retries.
type ConditionalWriter interface {
	// GetVersion returns the whole value of key and its version (an
	// opaque string); ErrNotFound for a missing key.
	GetVersion(ctx context.Context, key string) (value []byte, version string, err error)
	// SetIfVersion replaces key's value if its version is still version
	// ("": only if key does not exist), else returns an error wrapping
	// ErrConflict. Like Set, it does not keep value.
	SetIfVersion(ctx context.Context, key string, value []byte, version string) error
}
