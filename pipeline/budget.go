package pipeline

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Budget caps the bytes in flight (encoded chunks and shards fetched and
// not yet placed, encode scratch of writes) of every read and write that
// runs with it (Options.Budget, zarr.WithBudget), together: a loader, a
// copy or an iteration running many reads at once holds them within one
// cap instead of one cap per read. A unit larger than the whole budget
// still runs, alone. A Budget is safe for concurrent use; its zero value
// is not usable (NewBudget).
//
// Small reads that run on the caller's goroutine (one unit, or a few
// cached or local ones) hold one unit at a time outside any budget.
type Budget struct {
	max  int64
	sem  *semaphore.Weighted
	used atomic.Int64
	peak atomic.Int64
}

// NewBudget returns a budget of maxBytes (DefaultMaxBytesInFlight when
// maxBytes ≤ 0).
func NewBudget(maxBytes int64) *Budget {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytesInFlight
	}
	return &Budget{max: maxBytes, sem: semaphore.NewWeighted(maxBytes)}
}

// Max returns the budget's size in bytes.
func (b *Budget) Max() int64 { return b.max }

// InUse returns the bytes held against the budget now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Peak returns the most bytes held against the budget at once so far.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// acquire waits for n bytes (at most Max: callers clip their costs to
// it) or for ctx to end.
func (b *Budget) acquire(ctx context.Context, n int64) error {
	if err := b.sem.Acquire(ctx, n); err != nil {
		return err
	}
	u := b.used.Add(n)
	for p := b.peak.Load(); u > p && !b.peak.CompareAndSwap(p, u); p = b.peak.Load() {
	}
	return nil
}

// release gives back n bytes acquire took.
func (b *Budget) release(n int64) {
	b.used.Add(-n)
	b.sem.Release(n)
}

// budget returns the budget a read or write with o (defaults applied)
// holds its bytes against: o.Budget, or one of its own.
func (o Options) budget() *Budget {
	if o.Budget != nil {
		return o.Budget
	}
	return NewBudget(o.MaxBytesInFlight)
}
