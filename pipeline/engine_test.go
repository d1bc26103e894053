package pipeline_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// failSet fails every Set of key, and counts the Sets begun after their
// context ended.
type failSet struct {
	*hookStore
	key  string
	late *atomic.Int64
}

var errSetFailed = errors.New("set refused")

func (f failSet) Set(ctx context.Context, key string, v []byte) error {
	if ctx.Err() != nil {
		f.late.Add(1)
	}
	if key == f.key {
		return errSetFailed
	}
	return f.hookStore.Set(ctx, key, v)
}

// TestFailedReadReleasesBudget: a read whose decode fails early (the
// first chunk or inner chunk is damaged) gives every byte it held back to
// the budget it shares with other reads, on every layout, from a local
// store and a remote-like one, with and without the chunk cache; so does
// a write whose store refuses one chunk. Units the decode workers had not
// taken when one of them failed stayed held before: a budget shared by a
// loader's reads shrank with every failed read (5 failed reads of nested
// shards held 58,600 bytes for ever) until reads waited on it for ever.
func TestFailedReadReleasesBudget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range layouts(t, []int{16, 16}) {
		st, _ := makeArray(t, []int{256, 256}, []int{32, 32}, tc.specs)
		b, err := st.Get(ctx, "a/c/0/0", store.Full())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			b[i] ^= 0xff // the zstd frame of the first (inner) chunk
		}
		if err := st.Set(ctx, "a/c/0/0", b); err != nil {
			t.Fatal(err)
		}
		var late atomic.Int64
		hs := &hookStore{Store: st}
		for _, r := range []store.Reader{hs, getOnly{hs}} {
			for _, cached := range []bool{false, true} {
				name := fmt.Sprintf("%s/%T/cache=%v", tc.name, r, cached)
				budget := pipeline.NewBudget(64 << 20)
				opts := []zarr.Option{zarr.WithBudget(budget), zarr.WithConcurrency(4, 2)}
				if cached {
					opts = append(opts, zarr.WithCache(cache.NewLRU(64<<20)))
				}
				a, err := zarr.OpenArray(ctx, r, "a", opts...)
				if err != nil {
					t.Fatal(err)
				}
				for range 5 {
					if _, _, err := a.ReadBytes(ctx); !errors.Is(err, codecs.ErrCorrupt) {
						t.Fatalf("%s: read: %v, want ErrCorrupt", name, err)
					}
				}
				if n := budget.InUse(); n != 0 {
					t.Errorf("%s: %d bytes held against the budget after the failed reads", name, n)
				}
			}
		}

		budget := pipeline.NewBudget(64 << 20)
		a, err := zarr.OpenArray(ctx, failSet{hs, "a/c/0/0", &late}, "a", zarr.WithBudget(budget), zarr.WithConcurrency(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		ones := make([]float32, 256*256)
		for i := range ones {
			ones[i] = 1 // not the fill value: every chunk is stored
		}
		if err := zarr.Write(ctx, a, ones); !errors.Is(err, errSetFailed) {
			t.Fatalf("%s: write: %v, want %v", tc.name, err, errSetFailed)
		}
		if n := budget.InUse(); n != 0 {
			t.Errorf("%s: %d bytes held against the budget after the failed write", tc.name, n)
		}
		if n := late.Load(); n > 1 {
			// One writer may have passed its check when the other failed.
			t.Errorf("%s: %d units written after the write's context ended, want at most 1", tc.name, n)
		}
	}
}

// TestErrorEndsThePlan: once a unit of a read fails, no further unit of
// its plan is handed out or fetched. A store that takes a moment per
// fetch and does not look at the context itself fails chunk (8, 8), the
// 137th of 256 in the plan's order: a read fetches the 136 before it, it,
// and at most one more per other fetcher (taken before the error), and
// begins no fetch once its context has ended. (The engine before the
// plan was its input met this too: 137 fetches a read, measured.)
func TestErrorEndsThePlan(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("disk on fire")
	for _, tc := range layouts(t, []int{8, 8})[:2] {
		st, _ := makeArray(t, []int{256, 256}, []int{16, 16}, tc.specs)
		var late, fetches atomic.Int64
		hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
			if !strings.Contains(key, "/c/") {
				return nil
			}
			if ctx.Err() != nil {
				late.Add(1)
			}
			fetches.Add(1)
			if key == "a/c/8/8" {
				return boom
			}
			time.Sleep(200 * time.Microsecond)
			return nil
		}}
		const fetchers, reads = 4, 10
		a, err := zarr.OpenArray(ctx, getOnly{hs}, "a", zarr.WithConcurrency(fetchers, 2))
		if err != nil {
			t.Fatal(err)
		}
		for range reads {
			if _, _, err := a.ReadBytes(ctx); !errors.Is(err, boom) {
				t.Fatalf("%s: read: %v, want %v", tc.name, err, boom)
			}
		}
		t.Logf("%s: %d reads, %d fetches, %d begun after the context ended", tc.name, reads, fetches.Load(), late.Load())
		if n, most := fetches.Load(), int64(reads*(137+fetchers-1)); n > most {
			t.Errorf("%s: %d fetches in %d reads, want at most %d", tc.name, n, reads, most)
		}
		if n := late.Load(); n > reads*(fetchers-1) {
			t.Errorf("%s: %d fetches begun after the context ended in %d reads", tc.name, n, reads)
		}
	}
}

// recorder is a store read like a remote one (Get only) that records every
// request as "key [off, end)".
type recorder struct {
	store.Reader
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	if strings.Contains(key, "/c/") {
		r.mu.Lock()
		r.reqs = append(r.reqs, fmt.Sprintf("%s %v", key, br))
		r.mu.Unlock()
	}
	return r.Reader.Get(ctx, key, br)
}

// take returns the requests recorded so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.reqs
	r.reqs = nil
	return q
}

// TestExecuteRead: a plan built by the caller is what runs. ExecuteRead of
// a.Plan(items) gives zarr.Read's values on chunks, shards and nested
// shards, for boxes, strided and reversed slices and index lists out of
// order with repeats, each run on its own concurrently (the plan is
// immutable). Walking the plan's read units first (Plan.ReadUnits)
// resolves every shard and inner-shard index with one request each, never
// twice; the execution that follows asks for no index again, only unit
// bytes.
func TestExecuteRead(t *testing.T) {
	ctx := context.Background()
	for _, tc := range layouts(t, []int{4, 8}) {
		st, _ := makeArray(t, []int{40, 48}, []int{16, 16}, tc.specs)
		for _, items := range [][]nd.Item{
			{nd.Slice(0, 40, 1), nd.Slice(0, 48, 1)},
			{nd.Slice(3, 37, 2), nd.Slice(-1, 5, -3)},
			{nd.Slice(1, 30, 1), nd.IndexArray(40, 2, 17, 2, 18)},
		} {
			name := fmt.Sprintf("%s/%v", tc.name, items)
			rec := &recorder{Reader: st}
			a, err := zarr.OpenArray(ctx, rec, "a", zarr.WithIndexCache(sharding.NewIndexCache(1<<20)))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := zarr.Read[float32](ctx, a, items...)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := a.Plan(items...)
			if err != nil {
				t.Fatal(err)
			}
			var eg errgroup.Group
			for range 3 {
				eg.Go(func() error {
					got := make([]byte, 4*len(want))
					if err := pipeline.ExecuteRead(ctx, rec, plan, nd.Contiguous(got, plan.Selection().FullShape(), 4), pipeline.Options{}); err != nil {
						return err
					}
					for i, v := range want {
						if g := f32At(got, i); g != v {
							return fmt.Errorf("element %d: ExecuteRead gives %v, zarr.Read %v", i, g, v)
						}
					}
					return nil
				})
			}
			if err := eg.Wait(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}

			if a.Sharding() == nil {
				continue
			}
			// A cold index cache: the plan's walk reads the indexes.
			a, err = zarr.OpenArray(ctx, rec, "a", zarr.WithIndexCache(sharding.NewIndexCache(1<<20)))
			if err != nil {
				t.Fatal(err)
			}
			if plan, err = a.Plan(items...); err != nil {
				t.Fatal(err)
			}
			rec.take()
			for _, err := range plan.ReadUnits(ctx, rec) {
				if err != nil {
					t.Fatal(err)
				}
			}
			index := map[string]bool{}
			for _, q := range rec.take() {
				if index[q] {
					t.Errorf("%s: index %s read twice by the plan's walk", name, q)
				}
				index[q] = true
			}
			if len(index) < plan.NumWriteUnits() {
				t.Errorf("%s: %d index reads for %d shards", name, len(index), plan.NumWriteUnits())
			}
			got := make([]byte, 4*len(want))
			if err := pipeline.ExecuteRead(ctx, rec, plan, nd.Contiguous(got, plan.Selection().FullShape(), 4), pipeline.Options{}); err != nil {
				t.Fatal(err)
			}
			for _, q := range rec.take() {
				if index[q] {
					t.Errorf("%s: the read after the plan's walk read index %s again", name, q)
				}
			}
		}
	}
}

// TestBatchedShard: the inner chunks of a shard read whole go to the
// decode workers in batches (256 inner chunks of 1 KiB: 64 a batch); a
// read of all of it and a gather of points through it give the array's
// values, and a damaged inner chunk in the middle of a batch (the 101st)
// fails the read with its name while every byte held goes back to the
// budget, whatever the decode concurrency.
func TestBatchedShard(t *testing.T) {
	ctx := context.Background()
	shape := []int{256, 256}
	st, vals := makeArray(t, shape, shape, shardSpecs(t, []int{16, 16}))
	for _, workers := range []int{1, 2, 4} {
		a, err := zarr.OpenArray(ctx, st, "a", zarr.WithConcurrency(4, workers))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := a.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if g := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); g != v {
				t.Fatalf("workers %d: element %d = %v, want %v", workers, i, g, v)
			}
		}
		coords := [][]int{make([]int, 3000), make([]int, 3000)}
		for k := range coords[0] {
			coords[0][k], coords[1][k] = (k*7919)%256, (k*104729+k/256)%256
		}
		pts, err := zarr.ReadPoints[float32](ctx, a, coords)
		if err != nil {
			t.Fatal(err)
		}
		for k, g := range pts {
			if want := vals[coords[0][k]*256+coords[1][k]]; g != want {
				t.Fatalf("workers %d: point %d = %v, want %v", workers, k, g, want)
			}
		}
	}
	damageInnerChunk(t, st, 100) // inner chunk (6, 4)
	for _, workers := range []int{1, 2, 4} {
		budget := pipeline.NewBudget(64 << 20)
		a, err := zarr.OpenArray(ctx, st, "a", zarr.WithConcurrency(4, workers), zarr.WithBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			_, _, err := a.ReadBytes(ctx)
			if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "inner chunk [6 4]") {
				t.Fatalf("workers %d: read: %v, want ErrCorrupt naming inner chunk [6 4]", workers, err)
			}
		}
		if n := budget.InUse(); n != 0 {
			t.Errorf("workers %d: %d bytes held against the budget after the failed reads", workers, n)
		}
	}
}

// TestPointsGoToTheirPlaces: random points, asked out of order and with
// repeats, go straight to their places from their grouped order
// (nd.ChunkPart.Places) from every source a read has: inner chunks
// decoded in batches from shards read whole, inner chunks fetched by
// range (a remote-like store), chunk-cache hits, and the fill value of
// an inner chunk missing from a stored shard and of a missing shard.
func TestPointsGoToTheirPlaces(t *testing.T) {
	ctx := context.Background()
	shape := []int{64, 64, 32}
	fill := int32(-7)
	zstd, err := codecs.NewZstd(1, false)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeInt32, []int{4, 4, 4}, zarr.Shards(32, 32, 32), zarr.FillValue(fill), zarr.Compress(zstd))
	if err != nil {
		t.Fatal(err)
	}
	st := mem.New()
	a, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int32, nd.NumElements(shape))
	for i := range want {
		want[i] = int32(i)
	}
	// Rows [32, 64) of dimension 0 and the first column of inner chunks
	// of shard (0, 0, 0) stay the fill value: shards (1, *, 0) missing,
	// and missing inner chunks in a stored shard.
	for i := range want {
		if i0, i1 := i/(64*32), (i/32)%64; i0 >= 32 || i0 < 32 && i1 < 32 && i%32 < 4 {
			want[i] = fill
		}
	}
	if err := zarr.Write(ctx, a, want); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	coords := [][]int{make([]int, 50000), make([]int, 50000), make([]int, 50000)}
	for k := range coords[0] {
		for d := range 3 {
			coords[d][k] = r.IntN(shape[d])
		}
		if k%5 == 4 { // a repeat of a point asked before
			j := r.IntN(k)
			for d := range 3 {
				coords[d][k] = coords[d][j]
			}
		}
	}
	for _, tc := range []struct {
		name string
		r    store.Reader
		opts []zarr.Option
	}{
		{"local", st, nil},
		{"remote-like", getOnly{st}, nil},
		{"cached", st, []zarr.Option{zarr.WithCache(cache.NewLRU(64 << 20))}},
	} {
		a, err := zarr.OpenArray(ctx, tc.r, "a", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // the second time, the cache holds every chunk
			got, err := zarr.ReadPoints[int32](ctx, a, coords)
			if err != nil {
				t.Fatal(err)
			}
			for k, g := range got {
				if w := want[(coords[0][k]*64+coords[1][k])*32+coords[2][k]]; g != w {
					t.Fatalf("%s, round %d: point %d %v = %d, want %d", tc.name, round, k, []int{coords[0][k], coords[1][k], coords[2][k]}, g, w)
				}
			}
		}
	}
}
