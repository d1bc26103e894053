package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/gozarr/gozarr/pipeline"
)

// Config tunes a Loader. BatchSize is required; every other zero field
// means its default.
type Config struct {
	// BatchSize is the number of samples per batch.
	BatchSize int
	// Sampler orders the samples of each epoch.
	Sampler Sampler
	// Seed keys every shuffle.
	Seed uint64
	// Epochs is how many epochs the loader delivers, from epoch 0 (or the
	// resumed State's); default 1. Next returns io.EOF after the last.
	Epochs int
	// Rank and World split each epoch's samples among World ranks
	// (processes, or machines) at partition-unit granularity: a chunk
	// (a shard, for a sharded array) of field 0 along the sample axis, so
	// no two ranks fetch the same chunk in an epoch. Default 0 of 1.
	Rank, World int
	// Last says how epochs end (default Short).
	Last Last
	// BlockRows overrides the block, the unit that shuffling samplers
	// move: default the decode unit of field 0 along axis 0 (its chunk,
	// or inner chunk when sharded), the smallest read that wastes nothing,
	// or the least common multiple of every field's when that fits in a
	// partition unit.
	BlockRows int
	// Workers is how many goroutines assemble batches (copy rows into
	// them and run Transform); default GOMAXPROCS.
	Workers int
	// Reads is how many array reads run at once, each with the array's
	// own fetch and decode concurrency; default 8. Over a distant store,
	// more reads hide its latency (32 hide S3's 20 ms in the bench). The
	// reads running fill at most a quarter of the Budget at once (a larger
	// read runs alone). The window samplers read windows ahead, as far as
	// the Budget allows and at most enough to keep 2×Reads block reads
	// going.
	Reads int
	// Prefetch is how many batches the loader prepares ahead of the
	// consumer (default 2); the loader owns Prefetch+1 batch buffers and
	// the consumer returns each with Batch.Release.
	Prefetch int
	// Budget caps the bytes held for batches in flight: the Prefetch batch
	// buffers and the read windows being read, read ahead or used
	// (default 256 MiB). A window larger than what is left still runs
	// when the batch being assembled needs it, so a Budget too small slows
	// the loader down but never stalls it. Window buffers are pooled
	// anonymous mappings outside the Go heap (on Unix), so they do not
	// raise the garbage collector's heap goal. An eighth of the Budget is
	// what the reads running hold beyond their output (encoded chunks and
	// scratch): one pipeline.Budget they all share, in place of their
	// arrays' own pipeline MaxBytesInFlight each.
	Budget int64
	// Transform, if set, runs on the loader's workers on each batch once it
	// is assembled, before the consumer gets it; it may change the batch's
	// data in place and set Batch.Aux. An error ends the loader with it.
	// It must return once ctx ends: Close waits for it.
	Transform func(ctx context.Context, b *Batch) error
	// Counter, if set, is the store the arrays were opened through; its
	// bytes count as fetched in Stats.
	Counter *CountingStore
	// From resumes at a State (the zero State is the start).
	From State
}

// DefaultBudget is Config.Budget's default.
const DefaultBudget int64 = 256 << 20

// A Loader delivers a dataset's batches in a deterministic order, reading
// ahead on goroutines of its own within a byte budget. Next is called by one
// consumer goroutine; Stats and State may be called from any.
type Loader struct {
	cfg Config
	geo *geometry
	fp  uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	queue     chan *job           // batches in delivery order
	work      chan *job           // batches to assemble
	free      chan *Batch         // returned batch buffers
	reads     chan struct{}       // the Reads slots
	readBytes *semaphore.Weighted // output bytes of the reads running
	readCap   int64
	budget    *budget
	pipe      *pipeline.Budget // the reads' bytes in flight beyond their output
	total     int              // batch buffers the loader owns
	planErr   error
	pending   *job // taken from the queue by a Next that gave up waiting

	mu          sync.Mutex
	state       State
	outstanding int // batches handed to the consumer, not yet released
	err         error
	closed      bool
	stats       *stats
	plans       map[int]*epochPlan
}

// State is the position of a Loader: the next batch it would deliver. It
// is a small comparable value; JSON or any encoding of its fields keeps
// it. Resuming from it (Config.From) delivers exactly the batches the
// original loader would have delivered after it, byte for byte, whatever
// the workers, reads and budget of either loader.
type State struct {
	Epoch int `json:"epoch"`
	Batch int `json:"batch"` // the next batch's index in the epoch
	// Key identifies the loader's dataset geometry, sampler, seed, batch
	// size and rank; 0 in the zero State (the start of any loader).
	Key uint64 `json:"key,string"`
}

// Batch is one batch: BatchSize samples (fewer in a Short last batch), each
// field's data in C order of the shape Shape(f): the number of samples, then
// len(Offsets) when the field has offsets, then its row's shape.
type Batch struct {
	Epoch int // the epoch
	Index int // the batch's index within the epoch
	// Samples lists the dataset sample of each of the batch's rows.
	Samples []int
	// Data holds each field's bytes (little-endian elements).
	Data [][]byte
	// Aux is the Transform's to set, nil otherwise.
	Aux any

	l    *Loader
	bufs [][]byte // full-size buffers behind Data
	smp  []int
}

// Len returns the number of samples in b.
func (b *Batch) Len() int { return len(b.Samples) }

// Shape returns the shape of field f's data in b.
func (b *Batch) Shape(f int) []int {
	fg := b.l.geo.fields[f]
	s := []int{len(b.Samples)}
	if len(fg.Offsets) > 0 {
		s = append(s, len(fg.offsets))
	}
	return append(s, fg.rowShape...)
}

// Release gives b's buffers back to the loader, for a later batch: b must
// not be used after. Releasing a batch twice, or after Close, does nothing.
func (b *Batch) Release() {
	l := b.l
	if l == nil {
		return
	}
	b.l = nil
	l.mu.Lock()
	l.outstanding--
	l.mu.Unlock()
	nb := &Batch{l: l, bufs: b.bufs, smp: b.smp}
	select {
	case l.free <- nb:
	default: // closed loaders drop it
	}
}

// job is one batch on its way.
type job struct {
	epoch, index int
	plan         *epochPlan
	batch        *Batch
	groups       []*group // the read windows it takes rows from
	done         chan struct{}
	err          error
	ready        time.Time
}

// New starts a loader of ds. Its goroutines run until the last batch is
// assembled, ctx ends, or Close; Close must be called in any case.
func New(ctx context.Context, ds Dataset, cfg Config) (*Loader, error) {
	geo, err := resolve(ds, cfg.BlockRows)
	if err != nil {
		return nil, err
	}
	if cfg.BatchSize <= 0 {
		return nil, fmt.Errorf("%w: BatchSize %d", ErrInvalidConfig, cfg.BatchSize)
	}
	if cfg.World == 0 {
		cfg.World = 1
	}
	if cfg.World < 0 || cfg.Rank < 0 || cfg.Rank >= cfg.World {
		return nil, fmt.Errorf("%w: rank %d of %d", ErrInvalidConfig, cfg.Rank, cfg.World)
	}
	if cfg.Sampler.Kind < Sequential || cfg.Sampler.Kind > Weighted {
		return nil, fmt.Errorf("%w: unknown sampler %v", ErrInvalidConfig, cfg.Sampler.Kind)
	}
	if cfg.Sampler.Kind == Weighted {
		if err := checkWeights(cfg.Sampler, geo.n); err != nil {
			return nil, err
		}
	}
	if cfg.Last < Short || cfg.Last > Pad {
		return nil, fmt.Errorf("%w: unknown Last %d", ErrInvalidConfig, cfg.Last)
	}
	if cfg.Sampler.K < 0 || cfg.Workers < 0 || cfg.Reads < 0 || cfg.Prefetch < 0 || cfg.Budget < 0 || cfg.Epochs < 0 {
		return nil, fmt.Errorf("%w: negative K, Workers, Reads, Prefetch, Budget or Epochs", ErrInvalidConfig)
	}
	cfg.Epochs = max(cfg.Epochs, 1)
	cfg.Workers = cmpOr(cfg.Workers, runtime.GOMAXPROCS(0))
	cfg.Reads = cmpOr(cfg.Reads, 8)
	cfg.Prefetch = cmpOr(cfg.Prefetch, 2)
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	l := &Loader{cfg: cfg, geo: geo, plans: map[int]*epochPlan{}}
	l.fp = mix(geo.fingerprint(), cfg.Seed, uint64(cfg.BatchSize), uint64(cfg.Sampler.Kind), uint64(l.k()),
		uint64(cfg.Rank), uint64(cfg.World), uint64(cfg.Last), uint64(cfg.Sampler.Samples))
	if cfg.Sampler.Kind == Weighted {
		for _, w := range cfg.Sampler.Weights {
			l.fp = mix(l.fp, uint64(w*(1<<32)))
		}
	}
	st := cfg.From
	if st != (State{}) {
		if st.Key != l.fp {
			return nil, fmt.Errorf("%w: key %#x, this loader's %#x", ErrStateMismatch, st.Key, l.fp)
		}
		if st.Epoch < 0 || st.Batch < 0 {
			return nil, fmt.Errorf("%w: %+v", ErrStateMismatch, st)
		}
	}
	st.Key = l.fp
	l.state = st
	var batchBytes int64
	for _, f := range geo.fields {
		batchBytes += int64(f.sampleBytes) * int64(cfg.BatchSize)
	}
	l.total = cfg.Prefetch + 1
	// The reads' own bytes in flight (encoded chunks, scratch) come out
	// of the Budget too: one pipeline budget all of them share.
	pipeBytes := max(cfg.Budget/8, 1)
	l.budget = newBudget(cfg.Budget - int64(cfg.Prefetch)*batchBytes - pipeBytes)
	l.pipe = pipeline.NewBudget(pipeBytes)
	for i := range geo.fields {
		geo.fields[i].Array = geo.fields[i].Array.WithBudget(l.pipe)
	}
	l.stats = newStats(geo, cfg.Counter)
	l.ctx, l.cancel = context.WithCancel(ctx)
	l.queue = make(chan *job, l.total)
	l.work = make(chan *job, l.total)
	l.free = make(chan *Batch, l.total)
	l.reads = make(chan struct{}, cfg.Reads)
	l.readCap = max(cfg.Budget/4, 1)
	l.readBytes = semaphore.NewWeighted(l.readCap)
	l.wg.Go(l.plan)
	for range cfg.Workers {
		l.wg.Go(l.assemble)
	}
	return l, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// k returns the blocks per read window.
func (l *Loader) k() int { return cmpOr(l.cfg.Sampler.K, 8) }

// NumSamples returns the dataset's sample count.
func (l *Loader) NumSamples() int { return l.geo.n }

// NumBatches returns how many batches this rank delivers in epoch e.
func (l *Loader) NumBatches(e int) int {
	p := l.epochPlan(e)
	return (p.length + l.cfg.BatchSize - 1) / l.cfg.BatchSize
}

// BatchSamples returns the dataset samples of batch index of epoch e, in
// the order the batch holds them, without reading anything: the order is a
// pure function of the seed, the epoch, the rank and world size and the
// position. It returns nil past the epoch's last batch.
func (l *Loader) BatchSamples(e, index int) []int {
	p := l.epochPlan(e)
	bs := l.cfg.BatchSize
	lo, hi := index*bs, min((index+1)*bs, p.length)
	if index < 0 || lo >= hi {
		return nil
	}
	out := make([]int, hi-lo)
	for i := range out {
		out[i] = l.sampleAt(p, p.logical(lo+i))
	}
	return out
}

// epochPlan returns the plan of epoch e, keeping the two latest.
func (l *Loader) epochPlan(e int) *epochPlan {
	l.mu.Lock()
	p := l.plans[e]
	l.mu.Unlock()
	if p != nil {
		return p
	}
	p = l.planEpoch(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.plans[e] = p
	for k := range l.plans {
		if k < e-1 || k > e+1 {
			delete(l.plans, k)
		}
	}
	return p
}

// State returns the loader's position: the batch after the last one Next
// returned.
func (l *Loader) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// Next returns the next batch, waiting for it (the wait counts as stall
// time in Stats); when ctx ends first it returns ctx's error, and a later
// call waits for the same batch. After the last batch it returns io.EOF;
// after an error of the loader it returns that error again. Release the
// batch when done with it: the loader reuses its buffers, and has
// Prefetch+1 of them. Next is for one goroutine at a time.
func (l *Loader) Next(ctx context.Context) (*Batch, error) {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return nil, ErrClosed
	case l.err != nil:
		err := l.err
		l.mu.Unlock()
		return nil, err
	case l.outstanding >= l.total:
		l.mu.Unlock()
		return nil, fmt.Errorf("%w (%d): Release batches before asking for more", ErrBatchesHeld, l.total)
	}
	l.mu.Unlock()
	start := time.Now()
	j := l.pending
	l.pending = nil
	if j == nil {
		select {
		case j = <-l.queue:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if j == nil { // the queue is closed: the end, or the planner's error
		err := l.planErr
		switch {
		case err == nil:
			err = io.EOF
		case errors.Is(err, context.Canceled) && l.isClosed():
			err = ErrClosed
		}
		l.fail(err)
		return nil, err
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		l.pending = j // the next call waits for it again
		l.stats.stall(time.Since(start))
		return nil, ctx.Err()
	}
	l.stats.stall(time.Since(start))
	if j.err != nil {
		l.fail(j.err)
		return nil, j.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outstanding++
	l.state.Epoch, l.state.Batch = j.epoch, j.index+1
	if j.index+1 >= (j.plan.length+l.cfg.BatchSize-1)/l.cfg.BatchSize {
		l.state.Epoch, l.state.Batch = j.epoch+1, 0
	}
	l.stats.delivered(j.batch)
	return j.batch, nil
}

// fail records the loader's first error.
func (l *Loader) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
}

func (l *Loader) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close stops the loader and waits for its goroutines: when it returns,
// none is left. Batches the consumer holds stay valid.
func (l *Loader) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
	l.budget.drain() // every window has been released
	return nil
}

// plan walks the batches in order from the State: it takes a batch
// buffer, makes sure the read windows the batch needs are being read
// (within the budget), and hands the batch to the workers and the queue.
func (l *Loader) plan() {
	defer close(l.queue)
	defer close(l.work)
	ctx := l.ctx
	w := newPlanned(l)
	defer w.release()
	allocated := 0
	bs := l.cfg.BatchSize
	st := l.State()
	for e := st.Epoch; e < l.cfg.Epochs; e++ {
		p := l.epochPlan(e)
		nb := (p.length + bs - 1) / bs
		b0 := 0
		if e == st.Epoch {
			b0 = st.Batch
		}
		for b := b0; b < nb; b++ {
			var batch *Batch
			select {
			case batch = <-l.free:
			default:
				if allocated < l.total {
					allocated++
					batch = l.newBatch()
				}
			}
			for batch == nil {
				// Waiting for the consumer: read windows ahead as the
				// budget frees up.
				w.readAhead(ctx)
				select {
				case batch = <-l.free:
				case <-l.budget.changed():
				case <-ctx.Done():
					l.planErr = ctx.Err()
					return
				}
			}
			j := &job{epoch: e, index: b, plan: p, batch: batch, done: make(chan struct{})}
			lo, hi := b*bs, min((b+1)*bs, p.length)
			batch.Epoch, batch.Index, batch.Aux = e, b, nil
			batch.Samples = batch.smp[:hi-lo]
			for i := range batch.Samples {
				batch.Samples[i] = l.sampleAt(p, p.logical(lo+i)) // as BatchSamples
			}
			batch.Data = batch.Data[:0]
			for f, fg := range l.geo.fields {
				batch.Data = append(batch.Data, batch.bufs[f][:(hi-lo)*fg.sampleBytes])
			}
			if p.groupStart != nil {
				var err error
				if j.groups, err = w.windows(ctx, p, lo, hi); err != nil {
					l.planErr = err
					return
				}
				w.readAhead(ctx)
			}
			select {
			case l.work <- j:
			case <-ctx.Done():
				for _, g := range j.groups {
					l.unref(g)
				}
				l.planErr = ctx.Err()
				return
			}
			l.queue <- j // never blocks: the queue holds every buffer's batch
		}
	}
}

// newBatch allocates a batch buffer.
func (l *Loader) newBatch() *Batch {
	b := &Batch{l: l, smp: make([]int, l.cfg.BatchSize)}
	for _, f := range l.geo.fields {
		b.bufs = append(b.bufs, make([]byte, l.cfg.BatchSize*f.sampleBytes))
	}
	return b
}

// assemble is a worker: it fills batches from their windows (or reads
// their rows, for the random samplers) and runs Transform.
func (l *Loader) assemble() {
	ctx := l.ctx
	for j := range l.work {
		start := time.Now()
		j.err = l.fill(ctx, j)
		if j.err == nil && l.cfg.Transform != nil {
			j.err = l.cfg.Transform(ctx, j.batch)
		}
		for _, g := range j.groups {
			l.unref(g)
		}
		j.batch.l = l
		l.stats.assembled(time.Since(start))
		close(j.done)
	}
}
