package loader

import (
	"math"
	"sync"
	"time"

	"github.com/gozarr/gozarr/nd"
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

// Latency summarises durations: their count and percentiles (to within
// 10%: a histogram of logarithmic buckets).
type Latency struct {
	N                  int64
	P50, P90, P99, Max time.Duration
}

// hist is a logarithmic histogram of durations: bucket i holds durations
// in [base^i, base^(i+1)) microseconds, base = 2^(1/8).
type hist struct {
	n   int64
	max time.Duration
	b   [256]int64
}

func (h *hist) add(d time.Duration) {
	h.n++
	h.max = max(h.max, d)
	us := max(d.Seconds()*1e6, 1)
	i := min(int(math.Log2(us)*8), len(h.b)-1)
	h.b[i]++
}

func (h *hist) summary() Latency {
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
	st.reads.add(d)
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
	st.asm.add(d)
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
	s.Read, s.Assemble = st.reads.summary(), st.asm.summary()
	s.FetchedBytes = -1
	if st.counter != nil {
		s.FetchedBytes = st.counter.Bytes() - st.fetch0
		s.Fetch = st.counter.Latency()
	}
	return s
}
