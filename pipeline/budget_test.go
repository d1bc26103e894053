package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/zarr"
)

// TestBudgetShared: four reads running at once with one Budget hold no
// more chunks in flight together than the budget has room for; each with
// a cap of its own of the same size, they hold up to four times that. The
// fetches in progress (a store that keeps each Get a moment) are counted
// in chunk bytes, a lower bound of what the engine holds.
func TestBudgetShared(t *testing.T) {
	ctx := context.Background()
	st, _ := makeArray(t, []int{256, 512}, []int{64, 64}, zstdSpecs(t))
	const chunkBytes = 64 * 64 * 4
	const budgetBytes = 8 * chunkBytes
	var active, peak atomic.Int64
	hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		active.Add(-1)
		return nil
	}}
	run := func(opts ...zarr.Option) {
		t.Helper()
		a, err := zarr.OpenArray(ctx, hs, "a", append(opts, zarr.WithConcurrency(16, 2))...)
		if err != nil {
			t.Fatal(err)
		}
		var eg errgroup.Group
		for range 4 {
			eg.Go(func() error { _, _, err := a.ReadBytes(ctx); return err })
		}
		if err := eg.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b := pipeline.NewBudget(budgetBytes)
	peak.Store(0)
	run(zarr.WithBudget(b))
	shared := peak.Load()
	if shared*chunkBytes > budgetBytes {
		t.Errorf("one budget of %d bytes: %d chunks of %d bytes fetched at once", budgetBytes, shared, chunkBytes)
	}
	if b.Peak() > budgetBytes || b.InUse() != 0 || b.Peak() == 0 {
		t.Errorf("budget peak %d, in use %d after the reads; want ≤ %d and 0", b.Peak(), b.InUse(), budgetBytes)
	}
	// Through WithPipeline too, and as a copy of an array opened without.
	a, err := zarr.OpenArray(ctx, hs, "a")
	if err != nil {
		t.Fatal(err)
	}
	b2 := pipeline.NewBudget(budgetBytes)
	if _, _, err := a.WithBudget(b2).ReadBytes(ctx); err != nil || b2.Peak() == 0 {
		t.Errorf("Array.WithBudget: read %v, budget peak %d", err, b2.Peak())
	}
	peak.Store(0)
	run(zarr.WithPipeline(pipeline.Options{MaxBytesInFlight: budgetBytes}))
	t.Logf("chunks fetched at once: %d under one budget, %d with a cap per read", shared, peak.Load())
}
