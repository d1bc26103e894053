package store

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// CountingStore wraps a Reader and counts the bytes and requests it
// answers, and times them, through every way the pipeline reads (Get,
// ReadInto, vectored, ranged and conditional reads: its Capabilities pass
// the wrapped store's on, counted). Open the loader's arrays through it and set
// the loader's Config.Counter to report fetched bytes and fetch latency
// in its Stats. It is safe for concurrent use.
type CountingStore struct {
	r        Reader
	caps     Capabilities
	bytes    atomic.Int64
	requests atomic.Int64

	mu   sync.Mutex
	hist Histogram
}

// NewCountingStore returns a CountingStore over r.
func NewCountingStore(r Reader) *CountingStore {
	c := &CountingStore{r: r}
	caps := CapabilitiesOf(r)
	c.caps = caps
	w := counted{c, caps}
	if caps.Into != nil {
		c.caps.Into = w
	}
	if caps.Vec != nil {
		c.caps.Vec = w
	}
	if caps.Ranges != nil {
		c.caps.Ranges = w
	}
	if caps.CondReader != nil {
		c.caps.CondReader = w
	}
	if caps.Mapper != nil {
		c.caps.Mapper = w
	}
	c.caps.Locker, c.caps.Conditional = nil, nil // a reader: it writes nothing
	return c
}

// Bytes returns the bytes answered so far.
func (c *CountingStore) Bytes() int64 { return c.bytes.Load() }

// Requests returns the reads answered so far (a vectored or ranged read
// counts once).
func (c *CountingStore) Requests() int64 { return c.requests.Load() }

// Latency returns the latency of the requests answered so far.
func (c *CountingStore) Latency() Latency {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hist.Summary()
}

func (c *CountingStore) count(n int, start time.Time) {
	d := time.Since(start)
	c.bytes.Add(int64(n))
	c.requests.Add(1)
	c.mu.Lock()
	c.hist.Add(d)
	c.mu.Unlock()
}

// Get implements Reader.
func (c *CountingStore) Get(ctx context.Context, key string, r ByteRange) ([]byte, error) {
	start := time.Now()
	b, err := c.r.Get(ctx, key, r)
	c.count(len(b), start)
	return b, err
}

// Capabilities implements CapabilityReporter: the wrapped store's,
// with its reads counted.
func (c *CountingStore) Capabilities() Capabilities { return c.caps }

// Unwrap implements Unwrapper.
func (c *CountingStore) Unwrap() Reader { return c.r }

// StoreID implements Identifier: the wrapped store's, so caches of
// both share entries.
func (c *CountingStore) StoreID() string { return IDOf(c.r) }

// counted serves the wrapped store's optional reads (those its
// capabilities have), each counted.
type counted struct {
	c    *CountingStore
	caps Capabilities
}

// since returns a function that counts n bytes read in a request started
// at start and passes n and err on: w.since(time.Now())(read(...)) times
// read, as the function value is evaluated before its arguments.
func (w counted) since(start time.Time) func(n int, err error) (int, error) {
	return func(n int, err error) (int, error) {
		w.c.count(n, start)
		return n, err
	}
}

func (w counted) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	return w.since(time.Now())(w.caps.Into.ReadInto(ctx, key, off, dst))
}

func (w counted) ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error) {
	return w.since(time.Now())(w.caps.Vec.ReadVec(ctx, key, off, bufs))
}

func (w counted) GetRanges(ctx context.Context, key string, ranges []ByteRange) ([][]byte, error) {
	start := time.Now()
	bs, err := w.caps.Ranges.GetRanges(ctx, key, ranges)
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	w.c.count(n, start)
	return bs, err
}

// Map counts a mapped value as one request of its whole length.
func (w counted) Map(ctx context.Context, key string) ([]byte, func(), error) {
	start := time.Now()
	b, unmap, err := w.caps.Mapper.Map(ctx, key)
	w.c.count(len(b), start)
	return b, unmap, err
}

func (w counted) GetIf(ctx context.Context, key string, r ByteRange, cond ReadCondition) ([]byte, error) {
	start := time.Now()
	b, err := w.caps.CondReader.GetIf(ctx, key, r, cond)
	w.c.count(len(b), start)
	return b, err
}

// Latency summarises durations: their count and percentiles (to within
// 10%: a histogram of logarithmic buckets).
type Latency struct {
	N                  int64
	P50, P90, P99, Max time.Duration
}

// Histogram is a logarithmic histogram of durations: bucket i holds
// durations in [base^i, base^(i+1)) microseconds, base = 2^(1/8). The zero
// value is empty; it is not safe for concurrent use.
type Histogram struct {
	n   int64
	max time.Duration
	b   [256]int64
}

// Add counts the duration d.
func (h *Histogram) Add(d time.Duration) {
	h.n++
	h.max = max(h.max, d)
	us := max(d.Seconds()*1e6, 1)
	i := min(int(math.Log2(us)*8), len(h.b)-1)
	h.b[i]++
}

// Summary returns the count, percentiles and maximum of the durations
// added.
func (h *Histogram) Summary() Latency {
	l := Latency{N: h.n, Max: h.max}
	at := func(q float64) time.Duration {
		want := int64(math.Ceil(q * float64(h.n)))
		var seen int64
		for i, c := range h.b {
			if seen += c; seen >= want && c > 0 {
				// The bucket's geometric middle, clamped to the maximum.
				us := math.Exp2((float64(i) + 0.5) / 8)
				return min(time.Duration(us*1e3), h.max)
			}
		}
		return h.max
	}
	if h.n > 0 {
		l.P50, l.P90, l.P99 = at(0.5), at(0.9), at(0.99)
	}
	return l
}
