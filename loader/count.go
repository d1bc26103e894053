package loader

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/store"
)

// CountingStore wraps a store.Reader and counts the bytes and requests it
// answers, and times them, through every way the pipeline reads (Get,
// ReadInto, vectored and ranged reads: its Capabilities pass the wrapped
// store's on, counted). Open the loader's arrays through it and set
// Config.Counter to report fetched bytes and fetch latency in Stats. It is
// safe for concurrent use.
type CountingStore struct {
	r        store.Reader
	caps     store.Capabilities
	bytes    atomic.Int64
	requests atomic.Int64

	mu   sync.Mutex
	hist hist
}

// NewCountingStore returns a CountingStore over r.
func NewCountingStore(r store.Reader) *CountingStore {
	c := &CountingStore{r: r}
	caps := store.CapabilitiesOf(r)
	c.caps = caps
	if caps.Into != nil {
		c.caps.Into = countInto{c, caps.Into}
	}
	if caps.Vec != nil {
		c.caps.Vec = countVec{c, caps.Vec}
	}
	if caps.Ranges != nil {
		c.caps.Ranges = countRanges{c, caps.Ranges}
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
	return c.hist.summary()
}

func (c *CountingStore) count(n int, start time.Time) {
	d := time.Since(start)
	c.bytes.Add(int64(n))
	c.requests.Add(1)
	c.mu.Lock()
	c.hist.add(d)
	c.mu.Unlock()
}

// Get implements store.Reader.
func (c *CountingStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	start := time.Now()
	b, err := c.r.Get(ctx, key, r)
	c.count(len(b), start)
	return b, err
}

// Capabilities implements store.CapabilityReporter: the wrapped store's,
// with its reads counted.
func (c *CountingStore) Capabilities() store.Capabilities { return c.caps }

// Unwrap implements store.Unwrapper.
func (c *CountingStore) Unwrap() store.Reader { return c.r }

// StoreID implements store.Identifier: the wrapped store's, so caches of
// both share entries.
func (c *CountingStore) StoreID() string { return store.IDOf(c.r) }

type countInto struct {
	c *CountingStore
	r store.IntoReader
}

func (w countInto) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	start := time.Now()
	n, err := w.r.ReadInto(ctx, key, off, dst)
	w.c.count(n, start)
	return n, err
}

type countVec struct {
	c *CountingStore
	r store.VectorReader
}

func (w countVec) ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error) {
	start := time.Now()
	n, err := w.r.ReadVec(ctx, key, off, bufs)
	w.c.count(n, start)
	return n, err
}

type countRanges struct {
	c *CountingStore
	r store.RangesReader
}

func (w countRanges) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	start := time.Now()
	bs, err := w.r.GetRanges(ctx, key, ranges)
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	w.c.count(n, start)
	return bs, err
}
