package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

const cols = 6

// makeArray writes a rows×cols int32 array whose element (r, c) is
// r·1000 + c, in shards of shardRows rows holding inner chunks of innerRows
// rows and 3 columns (zstd inside); innerRows 0: unsharded chunks of
// shardRows rows.
func makeArray(t testing.TB, st *mem.Store, name string, rows, shardRows, innerRows int) *zarr.Array {
	t.Helper()
	ctx := context.Background()
	zs, _ := codecs.NewZstd(1, false)
	opts := []zarr.MetadataOption{zarr.Compress(zs)}
	chunks := []int{shardRows, cols}
	if innerRows > 0 {
		opts = append(opts, zarr.Shards(chunks...))
		chunks = []int{innerRows, 3}
	}
	meta, err := zarr.NewArrayMetadata([]int{rows, cols}, dtype.TypeInt32, chunks, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, name, meta)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]int32, rows*cols)
	for i := range vals {
		vals[i] = int32(i/cols*1000 + i%cols)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	a, err = zarr.OpenArray(ctx, st, name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// rowOf returns the array row a sample's data holds (checking the row is
// whole and consistent).
func rowOf(t testing.TB, b []byte) int {
	t.Helper()
	r := int(int32(binary.LittleEndian.Uint32(b))) / 1000
	for c := range len(b) / 4 {
		if v := int32(binary.LittleEndian.Uint32(b[4*c:])); int(v) != r*1000+c {
			t.Fatalf("row data %d at column %d, want %d", v, c, r*1000+c)
		}
	}
	return r
}

// batchRec is a delivered batch, copied.
type batchRec struct {
	epoch, index int
	samples      []int
	data         [][]byte
}

func (r batchRec) equal(o batchRec) bool {
	if r.epoch != o.epoch || r.index != o.index || !slices.Equal(r.samples, o.samples) || len(r.data) != len(o.data) {
		return false
	}
	for f := range r.data {
		if !bytes.Equal(r.data[f], o.data[f]) {
			return false
		}
	}
	return true
}

// collect runs l to the end (or n batches when n ≥ 0) and closes it.
func collect(t testing.TB, l *Loader, n int) []batchRec {
	t.Helper()
	ctx := context.Background()
	var out []batchRec
	for n < 0 || len(out) < n {
		b, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		r := batchRec{epoch: b.Epoch, index: b.Index, samples: slices.Clone(b.Samples)}
		for _, d := range b.Data {
			r.data = append(r.data, slices.Clone(d))
		}
		out = append(out, r)
		b.Release()
	}
	return out
}

func newLoader(t testing.TB, ds Dataset, cfg Config) *Loader {
	t.Helper()
	l, err := New(context.Background(), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

var kinds = []SamplerKind{Sequential, ChunkShuffle, BlockShuffle, Permutation}

// testData is a 1000-row array in shards of 64 rows with inner chunks of
// 16, and a 1-D label array in chunks of 32 beside it (the blocks: 32 rows).
func testData(t testing.TB) (Dataset, *mem.Store) {
	st := mem.New()
	x := makeArray(t, st, "x", 1000, 64, 16)
	meta, err := zarr.NewArrayMetadata([]int{1000}, dtype.TypeInt64, []int{32})
	if err != nil {
		t.Fatal(err)
	}
	y, err := zarr.CreateArray(context.Background(), st, "y", meta)
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]int64, 1000)
	for i := range labels {
		labels[i] = int64(i) * 7
	}
	if err := zarr.Write(context.Background(), y, labels); err != nil {
		t.Fatal(err)
	}
	return Dataset{Fields: []Field{{Name: "x", Array: x}, {Name: "y", Array: y}}}, st
}

// checkBatch checks that every row of b holds its sample's data.
func checkBatch(t testing.TB, r batchRec, ds Dataset) {
	t.Helper()
	for i, k := range r.samples {
		if got := rowOf(t, r.data[0][i*cols*4:(i+1)*cols*4]); got != ds.Start+k*max(ds.Stride, 1) {
			t.Fatalf("batch %d/%d row %d: sample %d holds row %d", r.epoch, r.index, i, k, got)
		}
		if len(r.data) > 1 {
			if y := int64(binary.LittleEndian.Uint64(r.data[1][i*8:])); y != int64(k)*7 {
				t.Fatalf("batch %d/%d row %d: label %d for sample %d", r.epoch, r.index, i, y, k)
			}
		}
	}
}

func TestEverySampleOnce(t *testing.T) {
	ds, _ := testData(t)
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			l := newLoader(t, ds, Config{BatchSize: 48, Sampler: Sampler{Kind: k, K: 4}, Seed: 7})
			got := collect(t, l, -1)
			seen := make([]int, 1000)
			for i, r := range got {
				checkBatch(t, r, ds)
				want := 48
				if i == len(got)-1 {
					want = 1000 - 48*(len(got)-1)
				}
				if len(r.samples) != want || r.index != i {
					t.Fatalf("batch %d: index %d, %d samples, want %d", i, r.index, len(r.samples), want)
				}
				for _, s := range r.samples {
					seen[s]++
				}
			}
			for s, n := range seen {
				if n != 1 {
					t.Fatalf("sample %d delivered %d times", s, n)
				}
			}
			for _, r := range got {
				if bs := l.BatchSamples(0, r.index); !slices.Equal(bs, r.samples) {
					t.Fatalf("batch %d holds %v, BatchSamples says %v", r.index, r.samples, bs)
				}
			}
			if l.BatchSamples(0, len(got)) != nil || l.BatchSamples(0, -1) != nil {
				t.Fatal("BatchSamples past the epoch")
			}
			if len(got) != l.NumBatches(0) {
				t.Fatalf("%d batches, NumBatches %d", len(got), l.NumBatches(0))
			}
			if k == Sequential {
				for i, r := range got {
					if r.samples[0] != 48*i || !slices.IsSorted(r.samples) {
						t.Fatalf("sequential batch %d: %v", i, r.samples)
					}
				}
			}
			st := l.Stats()
			if st.Samples != 1000 || st.DeliveredBytes != 1000*(cols*4+8) {
				t.Fatalf("stats %+v", st)
			}
			// Every chunk once: the last ones end at rows 1008 and 1024.
			if k != Permutation && st.DecodedBytes != 1008*cols*4+1024*8 {
				t.Fatalf("%v: amplification %v, want 1 (every chunk decoded once): %+v", k, st.Amplification(), st)
			}
			if k != Permutation && st.ChunkDecodes != st.DistinctChunks {
				t.Fatalf("%v: %d decodes of %d chunks", k, st.ChunkDecodes, st.DistinctChunks)
			}
			if k == Permutation && st.Amplification() <= 1.5 {
				t.Fatalf("permutation: amplification %v, expected chunks decoded for a few rows each", st.Amplification())
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	ds, _ := testData(t)
	for _, k := range kinds[1:] {
		t.Run(k.String(), func(t *testing.T) {
			cfg := Config{BatchSize: 32, Sampler: Sampler{Kind: k, K: 3}, Seed: 11, Epochs: 2}
			a := collect(t, newLoader(t, ds, cfg), -1)
			cfg.Workers, cfg.Reads, cfg.Prefetch, cfg.Budget = 7, 1, 5, 1<<10
			b := collect(t, newLoader(t, ds, cfg), -1)
			if len(a) != len(b) {
				t.Fatalf("%d and %d batches", len(a), len(b))
			}
			for i := range a {
				if !a[i].equal(b[i]) {
					t.Fatalf("batch %d differs with other workers and budget", i)
				}
			}
			var e0, e1 []int
			for _, r := range a {
				if r.epoch == 0 {
					e0 = append(e0, r.samples...)
				} else {
					e1 = append(e1, r.samples...)
				}
			}
			if slices.Equal(e0, e1) {
				t.Fatal("epochs 0 and 1 in the same order")
			}
			if slices.IsSorted(e0) {
				t.Fatal("shuffled epoch in order")
			}
			cfg.Seed = 12
			c := collect(t, newLoader(t, ds, cfg), -1)
			if slices.Equal(c[0].samples, a[0].samples) && slices.Equal(c[1].samples, a[1].samples) {
				t.Fatal("seeds 11 and 12 give the same first batches")
			}
		})
	}
}

func TestResume(t *testing.T) {
	ds, _ := testData(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range append(kinds, Weighted) {
		t.Run(k.String(), func(t *testing.T) {
			cfg := Config{BatchSize: 40, Sampler: Sampler{Kind: k, K: 3}, Seed: 5, Epochs: 3, Last: Pad}
			if k == Weighted {
				cfg.Sampler.Weights = make([]float64, 1000)
				for i := range cfg.Sampler.Weights {
					cfg.Sampler.Weights[i] = float64(i % 5)
				}
			}
			full := collect(t, newLoader(t, ds, cfg), -1)
			for _, w := range []int{1, 2, 8} {
				at := rng.IntN(len(full))
				c1 := cfg
				c1.Workers, c1.Reads = w, w
				l := newLoader(t, ds, c1)
				head := collect(t, l, at)
				st := l.State()
				l.Close()
				blob, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				var st2 State
				if err := json.Unmarshal(blob, &st2); err != nil {
					t.Fatal(err)
				}
				c2 := cfg
				c2.Workers, c2.Reads, c2.From = 9-w, 3, st2
				tail := collect(t, newLoader(t, ds, c2), -1)
				got := append(head, tail...)
				if len(got) != len(full) {
					t.Fatalf("workers %d, stopped at %d: %d batches, want %d", w, at, len(got), len(full))
				}
				for i := range full {
					if !got[i].equal(full[i]) {
						t.Fatalf("workers %d, stopped at %d (%s): batch %d differs", w, at, blob, i)
					}
				}
			}
		})
	}
	cfg := Config{BatchSize: 40, Seed: 5}
	other := cfg
	other.Seed = 6
	l := newLoader(t, ds, other)
	collect(t, l, 1)
	cfg.From = l.State()
	if _, err := New(context.Background(), ds, cfg); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("resuming another seed's state: %v", err)
	}
}

func TestRanks(t *testing.T) {
	ds, _ := testData(t)
	const world = 3
	for _, k := range kinds {
		for _, last := range []Last{Short, DropLast, Pad} {
			t.Run(fmt.Sprintf("%v/%d", k, last), func(t *testing.T) {
				owner := map[int]int{} // shard (partition unit) → rank
				seen := make([]int, 1000)
				var counts []int
				for r := range world {
					cfg := Config{BatchSize: 30, Sampler: Sampler{Kind: k, K: 2}, Seed: 3, Rank: r, World: world, Last: last, Epochs: 1}
					got := collect(t, newLoader(t, ds, cfg), -1)
					counts = append(counts, len(got))
					for _, b := range got {
						checkBatch(t, b, ds)
						if last != Short && len(b.samples) != 30 {
							t.Fatalf("rank %d: batch of %d", r, len(b.samples))
						}
						for _, s := range b.samples {
							seen[s]++
							if o, ok := owner[s/64]; ok && o != r {
								t.Fatalf("shard %d read by ranks %d and %d", s/64, o, r)
							}
							owner[s/64] = r
						}
					}
				}
				for s, n := range seen {
					switch {
					case last == Short && n != 1:
						t.Fatalf("sample %d delivered %d times", s, n)
					case last == DropLast && n > 1, last == Pad && n < 1:
						t.Fatalf("%v: sample %d delivered %d times", last, s, n)
					}
				}
				if last != Short && (counts[0] != counts[1] || counts[1] != counts[2]) {
					t.Fatalf("%v: ranks deliver %v batches", last, counts)
				}
			})
		}
	}
}

func TestWindowsAtEdges(t *testing.T) {
	st := mem.New()
	x := makeArray(t, st, "x", 203, 20, 5)
	ds := Dataset{Fields: []Field{{Name: "x", Array: x, Offsets: []int{-2, 0, 3}, Rest: []nd.Item{nd.Range(1, 4)}},
		{Name: "x2", Array: x, Offsets: []int{-1, 0, 1}, Rest: []nd.Item{nd.Index(5)}},
		// No window: the rows of adjacent blocks do not touch (stride 2),
		// so this field's blocks are separate reads where the others' merge.
		{Name: "x3", Array: x, Rest: []nd.Item{nd.Index(2)}}}, Start: 1, Stride: 2}
	for _, k := range kinds {
		l := newLoader(t, ds, Config{BatchSize: 7, Sampler: Sampler{Kind: k, K: 2}, Seed: 1})
		// Rows r = 1 + 2k with r−2 ≥ 0 and r+3 < 203: r from 3 to 199.
		if n := l.NumSamples(); n != 99 {
			t.Fatalf("%d samples, want 99", n)
		}
		seen := map[int]bool{}
		for _, b := range collect(t, l, -1) {
			for i, s := range b.samples {
				r := 3 + 2*s
				seen[r] = true
				for j, o := range []int{-2, 0, 3} {
					for c := range 3 {
						at := ((i*3+j)*3 + c) * 4
						if v := int(binary.LittleEndian.Uint32(b.data[0][at:])); v != (r+o)*1000+c+1 {
							t.Fatalf("%v: sample %d offset %d column %d: %d", k, s, o, c, v)
						}
					}
				}
				for j, o := range []int{-1, 0, 1} {
					if v := int(binary.LittleEndian.Uint32(b.data[1][(i*3+j)*4:])); v != (r+o)*1000+5 {
						t.Fatalf("%v: sample %d field 2 offset %d: %d", k, s, o, v)
					}
				}
				if v := int(binary.LittleEndian.Uint32(b.data[2][i*4:])); v != r*1000+2 {
					t.Fatalf("%v: sample %d field 3: %d", k, s, v)
				}
			}
		}
		if len(seen) != 99 || !seen[3] || !seen[199] {
			t.Fatalf("%v: %d distinct rows delivered", k, len(seen))
		}
	}
	l := newLoader(t, ds, Config{BatchSize: 7})
	b, err := l.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Shape(0); !slices.Equal(got, []int{7, 3, 3}) {
		t.Fatalf("shape %v", got)
	}
	if got := b.Shape(1); !slices.Equal(got, []int{7, 3}) {
		t.Fatalf("shape %v", got)
	}
}

// settle waits for the goroutine count to fall to n.
func settle(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancel(t *testing.T) {
	ds, _ := testData(t)
	base := runtime.NumGoroutine()
	for _, k := range kinds {
		ctx, cancel := context.WithCancel(context.Background())
		l, err := New(ctx, ds, Config{BatchSize: 16, Sampler: Sampler{Kind: k}, Epochs: 100})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			b, err := l.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		cancel()
		var err2 error
		for range 10 {
			b, err := l.Next(context.Background())
			if err != nil {
				err2 = err
				break
			}
			b.Release()
		}
		if !errors.Is(err2, context.Canceled) {
			t.Fatalf("%v: after cancel, Next: %v", k, err2)
		}
		l.Close()
		settle(t, base)
		if _, err := l.Next(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	}
	// Close in the middle, with batches held and reads in flight.
	l := newLoader(t, ds, Config{BatchSize: 16, Sampler: Sampler{Kind: BlockShuffle}, Epochs: 100, Prefetch: 4})
	b, err := l.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	settle(t, base)
	b.Release()
	// Next's own context: a deadline gives up on a batch, not on the
	// loader; the next call gets that batch.
	gate := make(chan struct{})
	l = newLoader(t, ds, Config{BatchSize: 16, Transform: func(ctx context.Context, b *Batch) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with a deadline: %v", err)
	}
	close(gate)
	if b, err := l.Next(context.Background()); err != nil || b.Index != 0 {
		t.Fatalf("Next after a deadline: %v", err)
	}
	l.Close()
	settle(t, base)
}

func TestBoundedMemory(t *testing.T) {
	ds, _ := testData(t)
	for _, k := range kinds {
		var inTransform atomic.Int64
		var windowBytes int64
		cfg := Config{BatchSize: 20, Sampler: Sampler{Kind: k, K: 4}, Epochs: 2, Prefetch: 2, Workers: 4, Reads: 4,
			Transform: func(context.Context, *Batch) error { inTransform.Add(1); return nil }}
		probe := newLoader(t, ds, cfg)
		batchBytes := int64(20 * (cols*4 + 8))
		if k != Permutation {
			windowBytes = probe.newGroup(probe.epochPlan(0), 0).bytes
		}
		probe.Close()
		inTransform.Store(0)
		// Room for the batches and two windows.
		cfg.Budget = 2*batchBytes + 2*windowBytes
		l := newLoader(t, ds, cfg)
		var peak int64
		for n := 0; ; n++ {
			b, err := l.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // a slow consumer
			l.budget.mu.Lock()
			peak = max(peak, l.budget.used)
			l.budget.mu.Unlock()
			// One batch held here, the others in the loader's buffers.
			if got := inTransform.Load(); got > int64(n+l.total) {
				t.Fatalf("%v: %d batches assembled with %d delivered", k, got, n+1)
			}
			b.Release()
		}
		if peak > 2*windowBytes {
			t.Fatalf("%v: %d window bytes held, budget leaves %d", k, peak, 2*windowBytes)
		}
		if l.budget.used != 0 {
			t.Fatalf("%v: %d bytes still held at the end", k, l.budget.used)
		}
	}
	// A consumer that releases nothing is told so, not hung.
	l := newLoader(t, ds, Config{BatchSize: 20, Prefetch: 1})
	for range 2 {
		if _, err := l.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Next(context.Background()); !errors.Is(err, ErrBatchesHeld) {
		t.Fatalf("third batch held: %v", err)
	}
}

func TestWeighted(t *testing.T) {
	ds, _ := testData(t)
	w := make([]float64, 1000)
	for i := range w {
		if i%2 == 1 {
			w[i] = float64(1 + i%3)
		}
	}
	l := newLoader(t, ds, Config{BatchSize: 100, Sampler: Sampler{Kind: Weighted, Weights: w, Samples: 30000}, Seed: 9})
	hits := make([]int, 3)
	n := 0
	for _, b := range collect(t, l, -1) {
		checkBatch(t, b, ds)
		for _, s := range b.samples {
			if s%2 == 0 {
				t.Fatalf("sample %d of weight 0 drawn", s)
			}
			hits[s%3]++
			n++
		}
	}
	if n != 30000 {
		t.Fatalf("%d draws", n)
	}
	// Odd samples by i%3: weights 1, 2, 3 for residues 0, 1, 2.
	for r, want := range []float64{1.0 / 6, 2.0 / 6, 3.0 / 6} {
		if got := float64(hits[r]) / float64(n); got < want-0.02 || got > want+0.02 {
			t.Fatalf("residue %d drawn %.3f of the time, want %.3f", r, got, want)
		}
	}
	if _, err := New(context.Background(), ds, Config{BatchSize: 1, Sampler: Sampler{Kind: Weighted, Weights: []float64{1}}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("one weight for 1000 samples: %v", err)
	}
}

func TestCountingStore(t *testing.T) {
	_, st := testData(t)
	cs := NewCountingStore(st)
	x, err := zarr.OpenArray(context.Background(), cs, "x")
	if err != nil {
		t.Fatal(err)
	}
	l := newLoader(t, Dataset{Fields: []Field{{Array: x}}}, Config{BatchSize: 100, Sampler: Sampler{Kind: BlockShuffle}, Counter: cs})
	collect(t, l, -1)
	s := l.Stats()
	if s.FetchedBytes <= 0 || s.FetchRatio() <= 0 || s.Read.N == 0 || s.Assemble.N != 10 || s.Read.P50 > s.Read.Max ||
		s.Fetch.N != cs.Requests() || s.Fetch.N == 0 || s.Fetch.P99 > s.Fetch.Max {
		t.Fatalf("stats %+v", s)
	}
}

func TestInvalid(t *testing.T) {
	ds, _ := testData(t)
	for _, c := range []struct {
		ds  Dataset
		cfg Config
	}{
		{Dataset{}, Config{BatchSize: 1}},
		{ds, Config{}},
		{ds, Config{BatchSize: 1, Rank: 1}},
		{ds, Config{BatchSize: 1, Sampler: Sampler{Kind: 99}}},
		{ds, Config{BatchSize: 1, Last: 7}},
		{ds, Config{BatchSize: 1, Workers: -1}},
		{Dataset{Fields: []Field{{Name: "nil"}}}, Config{BatchSize: 1}},
		{Dataset{Fields: []Field{{Array: ds.Fields[0].Array, Rest: []nd.Item{nd.All(), nd.All()}}}}, Config{BatchSize: 1}},
		{Dataset{Fields: ds.Fields, Stride: -1}, Config{BatchSize: 1}},
	} {
		if _, err := New(context.Background(), c.ds, c.cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c.cfg, err)
		}
	}
}

func TestFeistel(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 64, 1000, 4097} {
		f := newFeistel(n, 42)
		seen := make([]bool, n)
		for i := range n {
			j := f.at(i)
			if j < 0 || j >= n || seen[j] {
				t.Fatalf("n=%d: %d → %d twice or out of range", n, i, j)
			}
			seen[j] = true
		}
	}
}

// FuzzLoader runs loaders of arbitrary configurations over a small array:
// New refuses them or they deliver exactly their batches (every batch full
// but a Short epoch's last, rows holding their samples' data, a Short
// single-rank sampler's epoch covering the dataset once), and never panic
// or hang.
func FuzzLoader(f *testing.F) {
	f.Add(uint8(7), uint8(2), uint8(3), uint8(1), uint8(0), uint8(0), uint8(1), uint8(0), int8(0), int8(0), uint8(0), uint8(0))
	f.Add(uint8(5), uint8(1), uint8(2), uint8(3), uint8(2), uint8(2), uint8(2), uint8(1), int8(-1), int8(2), uint8(5), uint8(3))
	f.Add(uint8(64), uint8(3), uint8(0), uint8(2), uint8(1), uint8(1), uint8(0), uint8(3), int8(-5), int8(5), uint8(1), uint8(1))
	f.Add(uint8(1), uint8(4), uint8(9), uint8(1), uint8(0), uint8(0), uint8(3), uint8(0), int8(0), int8(0), uint8(200), uint8(0))
	st := mem.New()
	x := makeArray(f, st, "x", 130, 20, 5)
	f.Fuzz(func(t *testing.T, batch, kind, k, world, rank, last, stride, start uint8, off0, off1 int8, blockRows, workers uint8) {
		ds := Dataset{Fields: []Field{{Array: x, Offsets: []int{int(off0), int(off1)}}}, Stride: int(stride), Start: int(start)}
		cfg := Config{BatchSize: int(batch), Sampler: Sampler{Kind: SamplerKind(kind), K: int(k)}, World: int(world),
			Rank: int(rank), Last: Last(last), BlockRows: int(blockRows), Workers: int(workers % 5), Reads: 2, Epochs: 2, Seed: 3}
		if cfg.Sampler.Kind == Weighted {
			g, err := resolve(ds, 0)
			if err != nil {
				return
			}
			cfg.Sampler.Weights = make([]float64, g.n)
			for i := range cfg.Sampler.Weights {
				cfg.Sampler.Weights[i] = float64(i % 3)
			}
		}
		l, err := New(context.Background(), ds, cfg)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New: %v", err)
			}
			return
		}
		defer l.Close()
		seen := map[int]int{}
		for _, r := range collect(t, l, -1) {
			if r.epoch == 0 {
				for _, s := range r.samples {
					seen[s]++
				}
			}
			if len(r.samples) != cfg.BatchSize && (cfg.Last != Short || r.index != l.NumBatches(r.epoch)-1) {
				t.Fatalf("batch %d/%d of %d samples", r.epoch, r.index, len(r.samples))
			}
			for i, s := range r.samples {
				row := l.geo.row(s)
				for j, o := range []int{int(off0), int(off1)} {
					at := (i*2 + j) * cols * 4
					if got := rowOf(t, r.data[0][at:at+cols*4]); got != row+o {
						t.Fatalf("sample %d offset %d: row %d", s, o, got)
					}
				}
			}
		}
		if cfg.Last == Short && cfg.World <= 1 && cfg.Sampler.Kind != Weighted {
			if len(seen) != l.NumSamples() {
				t.Fatalf("%d of %d samples in epoch 0", len(seen), l.NumSamples())
			}
			for s, n := range seen {
				if n != 1 {
					t.Fatalf("sample %d delivered %d times", s, n)
				}
			}
		}
	})
}

// TestReadAhead: windows are read ahead of the batches as the budget
// allows, not only as far as the batch buffers reach, and no further.
func TestReadAhead(t *testing.T) {
	ds, _ := testData(t)
	cfg := Config{BatchSize: 8, Sampler: Sampler{Kind: BlockShuffle, K: 2}, Prefetch: 1, Reads: 8}
	probe := newLoader(t, ds, cfg)
	win := probe.newGroup(probe.epochPlan(0), 0).bytes
	probe.Close()
	cfg.Budget = 2*int64(8*(cols*4+8)) + 4*win
	cfg.Budget += cfg.Budget / 7 // the eighth the reads' pipeline budget takes
	l := newLoader(t, ds, cfg)
	b, err := l.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.budget.mu.Lock()
		used := l.budget.used
		l.budget.mu.Unlock()
		if used > l.budget.cap {
			t.Fatalf("%d bytes of windows held, budget %d", used, l.budget.cap)
		}
		// Windows of 64 rows (one at the end shorter): the 2 batch
		// buffers of 8 rows reach into one; the budget holds 4.
		if used >= 3*win {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of windows read ahead, want ≥ %d", used, 3*win)
		}
		time.Sleep(time.Millisecond)
	}
	b.Release()
}
