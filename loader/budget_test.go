package loader

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// slowStore is a Get-only store that keeps each Get a moment and counts
// the Gets in progress at once.
type slowStore struct {
	store.Reader
	active, peak atomic.Int64
}

func (s *slowStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	n := s.active.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	time.Sleep(time.Millisecond)
	defer s.active.Add(-1)
	return s.Reader.Get(ctx, key, r)
}

// TestReadsWithinBudget: the loader's reads, Reads of them at once, hold
// their chunks in flight within the loader's Budget (the eighth of it
// their shared pipeline budget has). Before, each read had its array's
// own 256 MiB: eight reads of four chunks fetched 32 chunks at once,
// twice what that eighth holds.
func TestReadsWithinBudget(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	const rows, width = 4096, 64 // rows of 256 bytes, chunks of 16 rows: 4 KiB
	const chunkBytes = 16 * width * 4
	meta, err := zarr.NewArrayMetadata([]int{rows, width}, dtype.TypeFloat32, []int{16, width})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "x", meta)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, rows*width*4)
	for i := 0; i < len(data); i += 4 {
		data[i+2], data[i+3] = 0x80, 0x3f // 1.0: no chunk is all fill value
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		t.Fatal(err)
	}
	slow := &slowStore{Reader: st}
	x, err := zarr.OpenArray(ctx, slow, "x")
	if err != nil {
		t.Fatal(err)
	}
	const budget = 512 << 10
	l := newLoader(t, Dataset{Fields: []Field{{Name: "x", Array: x}}}, Config{BatchSize: 64, Reads: 8, Budget: budget})
	for range 20 {
		b, err := l.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	t.Logf("%d chunks fetched at once at most", slow.peak.Load())
	if got := slow.peak.Load() * chunkBytes; got > budget/8 {
		t.Errorf("%d bytes of chunks fetched at once (%d chunks), want ≤ %d (an eighth of the budget)", got, slow.peak.Load(), budget/8)
	}
	if p := l.pipe.Peak(); p == 0 || p > budget/8 {
		t.Errorf("the reads' pipeline budget peaked at %d bytes, want 1 to %d", p, budget/8)
	}
}
