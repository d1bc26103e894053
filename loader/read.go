package loader

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/nd"
)

// budget is a byte semaphore with one escape: a window the current batch
// needs is admitted when every byte held is the current batch's, so a
// batch spanning windows larger than the budget still makes progress.
type budget struct {
	mu   sync.Mutex
	cap  int64
	used int64
	peak int64 // the most used at once
	wake chan struct{}

	free      []winBuf // buffers of released windows
	freeBytes int64
}

func newBudget(n int64) *budget { return &budget{cap: n, wake: make(chan struct{})} }

// acquire takes n bytes; mine is what the current batch already holds.
func (b *budget) acquire(ctx context.Context, n, mine int64) error {
	for {
		b.mu.Lock()
		if b.used+n <= b.cap || b.used <= mine {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return nil
		}
		w := b.wake
		b.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryAcquire takes n bytes if they fit, without waiting.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.cap {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// changed returns a channel closed when bytes are next released.
func (b *budget) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.wake
}

// get returns a buffer of n bytes, a freed window's when one is large
// enough (the smallest such), so that a loader at work allocates nothing
// once its windows have been read: the garbage collector would otherwise
// let the heap grow to twice the budget.
func (b *budget) get(n int) winBuf {
	b.mu.Lock()
	best := -1
	for i, f := range b.free {
		if cap(f.b) >= n && (best < 0 || cap(f.b) < cap(b.free[best].b)) {
			best = i
		}
	}
	if best >= 0 {
		f := b.free[best]
		b.free = slices.Delete(b.free, best, best+1)
		b.freeBytes -= int64(cap(f.b))
		b.mu.Unlock()
		f.b = f.b[:n]
		return f
	}
	b.mu.Unlock()
	if m := mapBytes(n); m != nil {
		return winBuf{b: m, mapped: true}
	}
	return winBuf{b: make([]byte, n)}
}

// winBuf is a window's buffer, from mapBytes or the heap.
type winBuf struct {
	b      []byte
	mapped bool
}

// unmap frees w if mapBytes made it (a heap buffer is left to the GC).
func (w winBuf) unmap() {
	if w.mapped {
		unmapBytes(w.b)
	}
}

// put keeps a window's buffer for get, while the free ones and the bytes
// in use fit in the budget; it unmaps the others (no window refers to a
// buffer put back).
func (b *budget) put(w winBuf) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freeBytes+int64(cap(w.b))+b.used <= max(b.cap, b.peak) {
		b.free = append(b.free, w)
		b.freeBytes += int64(cap(w.b))
		return
	}
	w.unmap()
}

// drain unmaps the free buffers (Close, once every window is released).
func (b *budget) drain() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.free {
		f.unmap()
	}
	b.free, b.freeBytes = nil, 0
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// gkey names a read window: its epoch and index in the epoch's order.
type gkey struct{ epoch, g int }

// span is one read of a window: rows [lo, hi) of a field at byte off of the
// window's buffer.
type span struct{ lo, hi, off int }

// group is a read window: the blocks of one window of a window sampler,
// read once into one buffer per field (sorted by block, adjacent blocks in
// one read) and shared by every batch that takes rows from it.
type group struct {
	key    gkey
	bytes  int64
	blocks []int    // sorted
	spanOf [][]int  // per field, the span of each block
	spans  [][]span // per field
	bufs   [][]byte // per field
	mem    []winBuf // behind bufs
	refs   int      // guarded by Loader.mu
	ready  chan struct{}
	err    error
}

// planned is the planner's own view of the windows: those the previous
// batch used (held, which the next batch may share) and those read ahead
// of the batches (ahead), each with one reference of the planner's.
type planned struct {
	l          *Loader
	held       []*group
	ahead      map[gkey]*group
	aheadBytes int64
	next       gkey   // the next window to read ahead; epoch -1: not yet known
	cand       *group // next, laid out, waiting for budget
	maxAhead   int
}

func newPlanned(l *Loader) *planned {
	// Enough windows ahead to keep twice Reads reads going.
	k := l.k()
	return &planned{l: l, ahead: map[gkey]*group{}, next: gkey{-1, 0}, maxAhead: (2*l.cfg.Reads+k-1)/k + 1}
}

// release drops the planner's references.
func (w *planned) release() {
	for _, g := range w.held {
		w.l.unref(g)
	}
	for _, g := range w.ahead {
		w.l.unref(g)
	}
	w.held, w.ahead = nil, nil
}

// start begins reading window g with n references.
func (w *planned) start(ctx context.Context, g *group, n int) {
	g.refs = n
	w.l.wg.Go(func() { w.l.readGroup(ctx, g) })
}

// readAhead starts reading the windows after the last one begun, in order,
// while they fit in the budget as it is (it never waits) and up to
// maxAhead of them.
func (w *planned) readAhead(ctx context.Context) {
	l := w.l
	for w.next.epoch >= 0 && w.next.epoch < l.cfg.Epochs && len(w.ahead) < w.maxAhead {
		p := l.epochPlan(w.next.epoch)
		if p.groupStart == nil {
			return
		}
		if w.next.g >= p.numGroups() {
			w.next = gkey{w.next.epoch + 1, 0}
			continue
		}
		g := w.cand
		if g == nil || g.key != w.next {
			g = l.newGroup(p, w.next.g)
		}
		if !l.budget.tryAcquire(g.bytes) {
			w.cand = g // laid out once, however often the budget is tried
			return
		}
		w.cand = nil
		w.start(ctx, g, 1)
		w.ahead[g.key] = g
		w.aheadBytes += g.bytes
		w.next.g++
	}
}

// windows returns the read windows positions [lo, hi) of p take rows from,
// with a reference each for the batch: those the previous batch held or
// read ahead, and new ones (waiting for budget).
func (w *planned) windows(ctx context.Context, p *epochPlan, lo, hi int) ([]*group, error) {
	l := w.l
	var ids []int
	for pos := lo; pos < hi; pos++ {
		gi := p.groupOf(p.logical(pos))
		if !slices.Contains(ids, gi) {
			ids = append(ids, gi)
		}
	}
	// Keep the previous batch's windows this batch shares, let go of the
	// others before waiting for budget.
	var gs, keep []*group
	var mine int64
	for _, g := range w.held {
		if g.key.epoch == p.epoch && slices.Contains(ids, g.key.g) {
			keep = append(keep, g)
			mine += g.bytes
		} else {
			l.unref(g)
		}
	}
	w.held = keep
	for _, gi := range ids {
		key := gkey{p.epoch, gi}
		if w.next.epoch < key.epoch || w.next.epoch == key.epoch && w.next.g <= key.g {
			w.next = gkey{key.epoch, key.g + 1} // read ahead from here on
		}
		if i := slices.IndexFunc(keep, func(g *group) bool { return g.key == key }); i >= 0 {
			l.ref(keep[i])
			gs = append(gs, keep[i])
			continue
		}
		if g, ok := w.ahead[key]; ok { // the planner's reference moves to held
			delete(w.ahead, key)
			w.aheadBytes -= g.bytes
			l.ref(g)
			gs = append(gs, g)
			w.held = append(w.held, g)
			mine += g.bytes
			continue
		}
		g := l.newGroup(p, gi)
		// Windows read ahead are needed by the batches after this one: they
		// count as this batch's for the budget's escape, or they could hold
		// the budget this batch waits for.
		if err := l.budget.acquire(ctx, g.bytes, mine+w.aheadBytes); err != nil {
			for _, g := range gs {
				l.unref(g)
			}
			return nil, err
		}
		mine += g.bytes
		w.start(ctx, g, 2) // the batch's and the planner's
		gs = append(gs, g)
		w.held = append(w.held, g)
	}
	return gs, nil
}

func (l *Loader) ref(g *group) {
	l.mu.Lock()
	g.refs++
	l.mu.Unlock()
}

// unref drops a reference; the last one gives the window's bytes back.
func (l *Loader) unref(g *group) {
	l.mu.Lock()
	g.refs--
	last := g.refs == 0
	l.mu.Unlock()
	if last {
		<-g.ready // its read has ended (reads end on cancellation too)
		for _, b := range g.mem {
			l.budget.put(b)
		}
		g.bufs, g.mem = nil, nil
		l.budget.release(g.bytes)
	}
}

// newGroup lays out window gi of p: its blocks sorted, adjacent ones
// merged into one read, each field's rows with the halo its offsets need.
func (l *Loader) newGroup(p *epochPlan, gi int) *group {
	geo := l.geo
	k := l.k()
	g := &group{key: gkey{p.epoch, gi}, ready: make(chan struct{})}
	g.blocks = slices.Clone(p.blocks[gi*k : min(gi*k+k, len(p.blocks))])
	slices.Sort(g.blocks)
	g.spanOf = make([][]int, len(geo.fields))
	g.spans = make([][]span, len(geo.fields))
	for f, fg := range geo.fields {
		g.spanOf[f] = make([]int, len(g.blocks))
		off := 0
		for i, b := range g.blocks {
			slo, shi := geo.blockSamples(b)
			lo, hi := geo.row(slo)+fg.minOff, geo.row(shi-1)+fg.maxOff+1
			n := len(g.spans[f])
			if i > 0 && g.blocks[i-1] == b-1 && lo <= g.spans[f][n-1].hi {
				s := &g.spans[f][n-1]
				off += (hi - s.hi) * fg.rowBytes
				s.hi = hi
			} else {
				g.spans[f] = append(g.spans[f], span{lo: lo, hi: hi, off: off})
				off += (hi - lo) * fg.rowBytes
			}
			g.spanOf[f][i] = len(g.spans[f]) - 1
		}
		g.bytes += int64(off)
	}
	return g
}

// readGroup reads window g, Reads at a time over the whole loader.
func (l *Loader) readGroup(ctx context.Context, g *group) {
	defer close(g.ready)
	g.bufs = make([][]byte, len(g.spans))
	for f, ss := range g.spans {
		last := ss[len(ss)-1]
		w := l.budget.get(last.off + (last.hi-last.lo)*l.geo.fields[f].rowBytes)
		g.mem = append(g.mem, w)
		g.bufs[f] = w.b
	}
	eg, ctx := errgroup.WithContext(ctx)
	for f, ss := range g.spans {
		fg := &l.geo.fields[f]
		for _, s := range ss {
			out := g.bufs[f][s.off : s.off+(s.hi-s.lo)*fg.rowBytes]
			if err := l.startRead(ctx, len(out)); err != nil {
				g.err = eg.Wait()
				if g.err == nil {
					g.err = err
				}
				return
			}
			eg.Go(func() error {
				defer l.endRead(len(out))
				return l.read(ctx, g.key.epoch, f, out, nd.Range(s.lo, s.hi))
			})
		}
	}
	g.err = eg.Wait()
}

// read reads the rows rows selects (an nd.Range or nd.IndexArray) of field f
// into out, counting it.
func (l *Loader) read(ctx context.Context, epoch, f int, out []byte, rows nd.Item) error {
	fg := &l.geo.fields[f]
	sel, err := fg.Array.Selection(append([]nd.Item{rows}, fg.Rest...)...)
	if err != nil {
		return fmt.Errorf("field %q: %w", fg.Name, err)
	}
	start := time.Now()
	if err := fg.Array.ReadSelection(ctx, out, sel); err != nil {
		return fmt.Errorf("field %q rows %v: %w", fg.Name, sel[0], err)
	}
	l.stats.read(epoch, f, sel, time.Since(start))
	return nil
}

// fill assembles j's batch: rows copied from its windows, or, for the
// random samplers, read straight into it.
func (l *Loader) fill(ctx context.Context, j *job) error {
	b := j.batch
	if j.groups == nil {
		for f := range l.geo.fields {
			if err := l.readSamples(ctx, j.epoch, f, b.Samples, b.Data[f]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, g := range j.groups {
		select {
		case <-g.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if g.err != nil {
			return g.err
		}
	}
	geo := l.geo
	first := geo.row(0) / geo.block
	for i, k := range b.Samples {
		blk := geo.row(k)/geo.block - first
		var g *group
		var bi int
		for _, c := range j.groups {
			if n, ok := slices.BinarySearch(c.blocks, blk); ok {
				g, bi = c, n
				break
			}
		}
		if g == nil {
			return fmt.Errorf("loader: sample %d not in the windows of batch %d (a bug)", k, j.index)
		}
		for f := range geo.fields {
			fg := &geo.fields[f]
			s := g.spans[f][g.spanOf[f][bi]]
			dst := b.Data[f][i*fg.sampleBytes : (i+1)*fg.sampleBytes]
			src := g.bufs[f]
			r := geo.row(k) - s.lo
			if fg.consecutive {
				at := s.off + (r+fg.offsets[0])*fg.rowBytes
				copy(dst, src[at:at+fg.sampleBytes])
				continue
			}
			for t, o := range fg.offsets {
				at := s.off + (r+o)*fg.rowBytes
				copy(dst[t*fg.rowBytes:(t+1)*fg.rowBytes], src[at:at+fg.rowBytes])
			}
		}
	}
	return nil
}

// readSamples reads field f of samples (any order, repeats) into out:
// each sample's rows (its window's offsets) in order.
func (l *Loader) readSamples(ctx context.Context, epoch, f int, samples []int, out []byte) error {
	fg := &l.geo.fields[f]
	rows := make([]int, 0, len(samples)*len(fg.offsets))
	for _, k := range samples {
		r := l.geo.row(k)
		for _, o := range fg.offsets {
			rows = append(rows, r+o)
		}
	}
	return l.readRows(ctx, epoch, f, rows, out)
}

// readRows reads rows of field f (any order, repeats) into out, one row
// after another, with one orthogonal read (nd.IndexArray): every chunk the
// rows touch is fetched and decoded once.
func (l *Loader) readRows(ctx context.Context, epoch, f int, rows []int, out []byte) error {
	if err := l.startRead(ctx, len(out)); err != nil {
		return err
	}
	defer l.endRead(len(out))
	return l.read(ctx, epoch, f, out, nd.IndexArray(rows...))
}

// startRead waits for a read of n output bytes to be let in: one of the
// Reads slots, and n of the bytes reads may fill at once (a quarter of the
// budget; a read larger than that runs alone), so a few huge reads — a
// window of whole shards — do not hold the budget's worth of encoded bytes
// and decoding at once. endRead gives them back.
func (l *Loader) startRead(ctx context.Context, n int) error {
	if err := l.readBytes.Acquire(ctx, l.readWeight(n)); err != nil {
		return err
	}
	select {
	case l.reads <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.readBytes.Release(l.readWeight(n))
		return ctx.Err()
	}
}

func (l *Loader) endRead(n int) {
	<-l.reads
	l.readBytes.Release(l.readWeight(n))
}

func (l *Loader) readWeight(n int) int64 { return min(int64(n), l.readCap) }
