package loader

import (
	"sync"
	"time"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// Stats is what a loader has done so far. Reads count once done,
// windows read ahead of the batches included, so mid-epoch ratios run
// ahead of the batches delivered; at the end of the loader they are
// exact.
type Stats struct {
	Batches int64 // batches delivered
	Samples int64 // samples delivered
	// FetchedBytes is what the arrays' store answered (Config.Counter):
	// encoded bytes, indexes and coalescing gaps included; -1 without a
	// Counter.
	FetchedBytes int64
	// DecodedBytes is the decoded size of the chunks (inner chunks, for a
	// sharded array) the loader's reads touched, each counted once per
	// read: what the codecs had to produce.
	DecodedBytes int64
	// DeliveredBytes is the data of the batches delivered.
	DeliveredBytes int64
	// ChunkDecodes counts chunk decodes (as DecodedBytes does) and
	// DistinctChunks the different chunks among them, per epoch:
	// ChunkDecodes ÷ DistinctChunks is how often a chunk was decoded again
	// within an epoch (1: never).
	ChunkDecodes, DistinctChunks int64
	// Stall is how long Next waited for batches.
	Stall time.Duration
	// Read is the latency of one array read (its fetches and decodes: the
	// engine overlaps them), Assemble that of filling one batch (its
	// copies, or its reads for the random samplers, and Transform).
	Read, Assemble Latency
	// Fetch is the latency of one store request, as Config.Counter timed
	// it (every request it answered); zero without a Counter.
	Fetch Latency
}

// Amplification returns DecodedBytes ÷ DeliveredBytes: the chunk bytes
// decoded per byte delivered (1 when every chunk row read is used once;
// windows that overlap deliver rows more than once and go below 1).
func (s Stats) Amplification() float64 {
	if s.DeliveredBytes == 0 {
		return 0
	}
	return float64(s.DecodedBytes) / float64(s.DeliveredBytes)
}

// FetchRatio returns FetchedBytes ÷ DeliveredBytes (compressed bytes
// fetched per byte delivered), or -1 without a Counter.
func (s Stats) FetchRatio() float64 {
	if s.FetchedBytes < 0 || s.DeliveredBytes == 0 {
		return -1
	}
	return float64(s.FetchedBytes) / float64(s.DeliveredBytes)
}

// Latency summarises durations: their count and percentiles
// (store.Latency).
type Latency = store.Latency

// hist is store's histogram of durations.
type hist = store.Histogram

// stats is a loader's counters.
type stats struct {
	geo     *geometry
	counter *CountingStore
	fetch0  int64

	mu    sync.Mutex
	s     Stats
	reads hist
	asm   hist
	seen  map[int][][]uint64 // per epoch, per field: chunk rows decoded (bitset)
}

func newStats(geo *geometry, c *CountingStore) *stats {
	st := &stats{geo: geo, counter: c, seen: map[int][][]uint64{}}
	if c != nil {
		st.fetch0 = c.Bytes()
	}
	return st
}

// read counts a read of sel from field f in epoch e.
func (st *stats) read(e, f int, sel nd.Selection, d time.Duration) {
	fg := &st.geo.fields[f]
	chunks := int64(sel.NumChunks(fg.unitShape))
	unit := fg.unitShape[0]
	// The chunk rows the read touches along axis 0.
	var rowChunks []int
	if rows := sel[0]; rows.Index != nil {
		for _, r := range rows.Index {
			if c := r / unit; len(rowChunks) == 0 || rowChunks[len(rowChunks)-1] != c {
				rowChunks = append(rowChunks, c)
			}
		}
	} else if rows.Count > 0 {
		lo, hi := rows.Start, rows.Start+(rows.Count-1)*rows.Step
		for c := min(lo, hi) / unit; c <= max(lo, hi)/unit; c++ {
			rowChunks = append(rowChunks, c)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reads.Add(d)
	st.s.DecodedBytes += chunks * fg.unitBytes
	st.s.ChunkDecodes += chunks
	bs := st.seen[e]
	if bs == nil {
		bs = make([][]uint64, len(st.geo.fields))
		st.seen[e] = bs
		for k := range st.seen {
			if k < e-2 {
				delete(st.seen, k)
			}
		}
	}
	if bs[f] == nil {
		bs[f] = make([]uint64, (fg.Array.Shape()[0]/unit+64)/64)
	}
	perRow := chunks / int64(max(len(rowChunks), 1))
	for _, c := range rowChunks {
		if w := &bs[f][c/64]; *w&(1<<(c%64)) == 0 {
			*w |= 1 << (c % 64)
			st.s.DistinctChunks += perRow
		}
	}
}

func (st *stats) assembled(d time.Duration) {
	st.mu.Lock()
	st.asm.Add(d)
	st.mu.Unlock()
}

func (st *stats) stall(d time.Duration) {
	st.mu.Lock()
	st.s.Stall += d
	st.mu.Unlock()
}

func (st *stats) delivered(b *Batch) {
	var n int64
	for _, d := range b.Data {
		n += int64(len(d))
	}
	st.mu.Lock()
	st.s.Batches++
	st.s.Samples += int64(len(b.Samples))
	st.s.DeliveredBytes += n
	st.mu.Unlock()
}

// Stats returns the loader's counters so far.
func (l *Loader) Stats() Stats {
	st := l.stats
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Read, s.Assemble = st.reads.Summary(), st.asm.Summary()
	s.FetchedBytes = -1
	if st.counter != nil {
		s.FetchedBytes = st.counter.Bytes() - st.fetch0
		s.Fetch = st.counter.Latency()
	}
	return s
}
