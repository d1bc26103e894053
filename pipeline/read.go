package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Read reads the elements sel selects into out, in C order of sel's output
// shape. out must hold exactly that many elements (len(out) ==
// NumElements(sel.Shape()) × item size). Chunks that are not stored read as
// the fill value. Read returns the first error any chunk met, with the
// chunk's key; on error or cancellation every goroutine it started has
// returned before it does. It plans sel and executes the plan
// (ExecuteRead).
func Read(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, out []byte, opt Options) error {
	fullShape := sel.FullShape()
	item := g.itemSize()
	if want := nd.NumElements(fullShape) * item; len(out) != want {
		return fmt.Errorf("pipeline: output holds %d bytes, selection needs %d", len(out), want)
	}
	return ExecuteRead(ctx, r, NewPlan(g, sel), nd.Contiguous(out, fullShape, item), opt)
}

// ReadView is Read into any strided view of shape sel.FullShape() with the
// array's item size: part of a larger buffer, a transposed layout. Views
// of distinct concurrent reads must not overlap.
func ReadView(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, out nd.View, opt Options) error {
	return ExecuteRead(ctx, r, NewPlan(g, sel), out, opt)
}

// ExecuteRead reads the selection p plans from r into out, a view of
// shape p.Selection().FullShape() with the array's item size (Read and
// ReadView plan their selection and call it). The plan's write units go
// to a pool of fetchers; each lists its unit's read units with the walker
// Plan.ReadUnits lists them with, resolving shard indexes (the grid's
// index cache, one range request per cold shard or inner shard), fetches
// their bytes (the ranges of one shard coalesced into as few requests as
// the store wants) and hands each unit to a pool of decode workers, which
// alone write out: a missing unit's fill and a chunk-cache hit are units
// like any other. The first error any unit meets ends the iteration of
// the plan and every stage, and is returned with the unit's key; on error
// or cancellation every goroutine ExecuteRead started has returned before
// it does. A read of few units runs on the calling goroutine, with no
// goroutine at all.
//
// A selection that reorders (index arrays out of order or with repeats)
// reads its compact form, each touched element once, into a temporary
// buffer of that size and gathers the output from it.
func ExecuteRead(ctx context.Context, r store.Reader, p *Plan, out nd.View, opt Options) error {
	if err := checkView(p.g, p.sel, out); err != nil {
		return err
	}
	if nd.NumElements(out.Shape) == 0 {
		return ctx.Err()
	}
	if p.sel.Reorders() {
		return readReordered(ctx, r, p.g, p.sel, out, opt)
	}
	return p.read(ctx, r, out, opt)
}

// runSelection reads sel (which does not reorder) into out: it plans sel
// and runs the plan (Plan.read).
func runSelection(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, out nd.View, opt Options) error {
	return NewPlan(g, sel).read(ctx, r, out, opt)
}

// read runs p (whose selection does not reorder) into out: on the calling
// goroutine when it touches few read units (runsInline), else through the
// concurrent engine.
func (p *Plan) read(ctx context.Context, r store.Reader, out nd.View, opt Options) error {
	g := p.g
	if g.Rect != nil {
		return g.readRect(ctx, r, p.sel, out, opt)
	}
	if g.cachedBox(p.sel, out) {
		return nil
	}
	if g.runsInline(r, p.sel.NumChunks(g.unitShape())) {
		e := inlineEngine(r, g, out, opt)
		defer e.release()
		return e.runInline(ctx, writeUnitsOf(g, p.sel, nil)) // p.WriteUnits, not moving p to the heap
	}
	return newEngine(r, g, out, opt).run(ctx, *p)
}

// checkView reports a view that does not fit sel.
func checkView(g *Grid, sel nd.Selection, out nd.View) error {
	full := sel.FullShape()
	if out.ItemSize != g.itemSize() || len(out.Shape) != len(full) || len(out.Strides) != len(full) {
		return fmt.Errorf("pipeline: a %d-d view of %d-byte items for a %d-d selection of %d-byte items", len(out.Shape), out.ItemSize, len(full), g.itemSize())
	}
	for d, n := range full {
		if out.Shape[d] != n {
			return fmt.Errorf("pipeline: view of shape %v, selection has shape %v", out.Shape, full)
		}
	}
	return nil
}

// engine is one read, the state its stages share. A read is one straight
// path whatever the layout: the selection's chunks (write units) go to a
// pool of fetchers, which resolve shard indexes and fetch the read units'
// bytes (a chunk, or an inner chunk of a shard, through nested shards);
// a pool of decode workers places every unit with one place function.
type engine struct {
	r        store.Reader
	caps     store.Capabilities
	g        *Grid
	out      nd.View
	opt      Options
	inflight *Budget // nil for an inline read
	ready    chan unit
	// wholeSlots bounds the whole shards of a local store held at once
	// to DecodeConcurrency: more only keeps more large pooled buffers
	// out (which the garbage collector then drops) for no speed.
	wholeSlots chan struct{}

	// Unsharded arrays.
	chunkBytes int
	maxEnc     int
	cost       int64 // bytes one fetched chunk holds against the cap
	direct     bool  // chunks are stored as they decode: read them into the output
	useVec     bool  // ... with vectored reads where their place is many runs

	// An inline read (small.go) runs on the caller's goroutine: its one
	// fetcher hands every unit straight to its one worker.
	inline   bool
	placeErr error // the error the worker met, reported as errPlaced
	f        fetcher
	w        worker
	h        hold // the hold of the shard being read

	placed func(unit) // tests: sees every unit a worker places
}

func newEngine(r store.Reader, g *Grid, out nd.View, opt Options) *engine {
	e := &engine{}
	e.init(r, g, out, opt)
	e.inflight = e.opt.budget()
	e.wholeSlots = make(chan struct{}, e.opt.DecodeConcurrency)
	return e
}

// init sets up e for a read of g from r into out, without the concurrency
// bounds (newEngine adds them).
func (e *engine) init(r store.Reader, g *Grid, out nd.View, opt Options) {
	e.r, e.caps, e.g, e.out = r, store.CapabilitiesOf(r), g, out
	e.w.e = e
	e.opt = opt.withCaps(e.caps)
	if g.Shard == nil {
		e.chunkBytes = g.chunkBytes()
		e.maxEnc = g.Chain.MaxEncodedSize()
		e.cost = min(int64(e.chunkBytes)+int64(e.maxEnc), e.opt.MaxBytesInFlight)
		e.direct = g.Cache == nil && g.Chain.Identity() && e.caps.Local && (e.caps.Into != nil || e.caps.Vec != nil)
		run := nd.View{Shape: g.ChunkShape, Strides: out.Strides, ItemSize: g.itemSize()}.RunLen()
		e.useVec = e.direct && e.caps.Vec != nil && vecread.Worth(run, e.chunkBytes)
	}
}

// acquire reserves n bytes against the in-flight cap (nothing for an
// inline read, which holds one unit at a time).
func (e *engine) acquire(ctx context.Context, n int64) error {
	if e.inflight == nil {
		return nil
	}
	return e.inflight.acquire(ctx, n)
}

// release gives back n bytes acquire reserved.
func (e *engine) releaseBytes(n int64) {
	if e.inflight != nil {
		e.inflight.release(n)
	}
}

// run executes plan p, whose places are in e.out: producer (the plan's
// write units) → fetchers (their read units' bytes) → decode workers. (p
// is a copy: a read that runs inline never moves its plan to the heap.)
func (e *engine) run(ctx context.Context, p Plan) error {
	n := p.NumWriteUnits()
	if n == 0 {
		return ctx.Err()
	}
	if e.located() {
		return e.runBatches(ctx, p.WriteUnits(), n)
	}
	fetchers := min(e.opt.IOConcurrency, n)
	if e.g.Shard != nil && e.caps.Local {
		// A local store's reads cost CPU, not waiting: more shards in
		// flight than decode workers only interleave their buffers in the
		// CPU caches (measured on 4 shards and 2 workers: 0.21 s against
		// 0.27 s).
		fetchers = min(n, e.opt.DecodeConcurrency)
	}
	eg, ctx := errgroup.WithContext(ctx)
	queue := make(chan WriteUnit)
	e.ready = make(chan unit, e.opt.DecodeConcurrency)
	eg.Go(func() error {
		defer close(queue)
		for u := range p.WriteUnits() {
			if err := ctx.Err(); err != nil {
				return err // the first error ends the plan's iteration
			}
			select {
			case queue <- u:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	var running sync.WaitGroup
	for range fetchers {
		running.Add(1)
		eg.Go(func() error {
			defer running.Done()
			f := newFetcher(e)
			defer f.close()
			for u := range queue {
				if err := ctx.Err(); err != nil {
					return err // no fetch after the first error
				}
				var err error
				if e.g.Shard != nil {
					err = f.readShard(ctx, &u)
				} else {
					err = f.readChunk(ctx, &u)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	eg.Go(func() error { running.Wait(); close(e.ready); return nil })
	e.decodeWorkers(ctx, eg)
	return e.wait(eg)
}

// wait waits for the stages of a read in eg and returns its first error.
// The units the decode workers did not take, when one of them failed,
// are given back (their buffers, and their bytes to the budget, which
// other reads may share).
func (e *engine) wait(eg *errgroup.Group) error {
	err := eg.Wait()
	for u := range e.ready { // closed once every fetcher has returned
		e.done(&u)
	}
	return err
}

// decodeWorkers starts the decode workers in eg: they place the units
// of e.ready until it is closed.
func (e *engine) decodeWorkers(ctx context.Context, eg *errgroup.Group) {
	for range e.opt.DecodeConcurrency {
		eg.Go(func() error {
			w := worker{e: e}
			defer w.close()
			for u := range e.ready {
				err := w.place(ctx, &u)
				e.done(&u)
				if err != nil {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			return nil
		})
	}
}

// send hands u to the decode workers; it gives u's resources back when
// ctx ends first.
func (e *engine) send(ctx context.Context, u unit) error {
	if u.hold != nil {
		u.hold.refs.Add(1)
	}
	if e.inline {
		return e.placeInline(ctx, &u)
	}
	select {
	case e.ready <- u:
		return nil
	case <-ctx.Done():
		e.done(&u)
		return ctx.Err()
	}
}

// done releases what u held once it is placed (or dropped): for a
// batch, what each of its units held.
func (e *engine) done(u *unit) {
	if u.batch != nil {
		b := *u.batch
		for i := range b {
			e.done(&b[i])
		}
		clear(b)
		*u.batch = b[:0]
		batchPool.Put(u.batch)
		u.batch = nil
	}
	if u.buf != nil {
		bufpool.Put(u.buf)
		u.buf = nil
	}
	if u.cost > 0 {
		e.releaseBytes(u.cost)
		u.cost = 0
	}
	if u.hold != nil {
		e.unref(u.hold)
		u.hold = nil
	}
}

// Batches: the units of one shard whose bytes are in memory go to the
// decode workers batchUnits at a time, batchMaxBytes of decoded chunks at
// most, so that a shard of many small inner chunks costs a few hand-offs,
// not one channel send (and wake-up) per inner chunk; a shard's units are
// split into at least batchSplit × DecodeConcurrency batches, so that
// every worker gets some of them. Chunks of batchMaxBytes or more go one by
// one, as before.
const (
	batchUnits    = 64
	batchMaxBytes = 512 << 10
	batchSplit    = 2
)

// batchPool holds batches' unit slices, grown to the largest batch they
// took (a batch of 2 large chunks keeps no room for 64).
var batchPool = sync.Pool{New: func() any { return new([]unit) }}

// batchSize returns how many units of n, each decoding to unitBytes, one
// batch of a shard read takes (1: no batching).
func (e *engine) batchSize(n, unitBytes int) int {
	if e.inline {
		return 1
	}
	return max(1, min(batchUnits, batchMaxBytes/max(unitBytes, 1), n/(batchSplit*e.opt.DecodeConcurrency)))
}

// queue hands u to the decode workers in the fetcher's current batch
// (of f.batchMax units), which it sends once full.
func (f *fetcher) queue(ctx context.Context, u unit) error {
	if f.batchMax <= 1 {
		return f.e.send(ctx, u)
	}
	if u.hold != nil {
		u.hold.refs.Add(1)
	}
	if f.batch == nil {
		f.batch = batchPool.Get().(*[]unit)
	}
	*f.batch = append(*f.batch, u)
	if len(*f.batch) >= f.batchMax {
		return f.flush(ctx)
	}
	return nil
}

// flush sends the fetcher's current batch, if any.
func (f *fetcher) flush(ctx context.Context) error {
	if f.batch == nil {
		return nil
	}
	b := f.batch
	f.batch = nil
	return f.e.send(ctx, unit{kind: unitBatch, batch: b})
}

// drop gives back the units of the fetcher's current batch, unsent.
func (f *fetcher) drop() {
	if f.batch != nil {
		f.e.done(&unit{batch: f.batch})
		f.batch = nil
	}
}

// hold is what one shard read holds while its units are decoded: the
// pooled buffers their bytes live in and the bytes reserved against the
// in-flight cap, released when the last unit (and the fetcher) is done.
type hold struct {
	refs atomic.Int32
	cost int64
	bufs []*[]byte // appended by the fetcher only, before it drops its reference
	slot bool      // holds one of engine.wholeSlots
	// unmap unmaps the shard its units read from mapped pages (mapped.go),
	// nil for none; set by the fetcher like bufs.
	unmap func()
}

// unref drops one reference to h.
func (e *engine) unref(h *hold) {
	if h.refs.Add(-1) != 0 {
		return
	}
	for _, b := range h.bufs {
		bufpool.Put(b)
	}
	clear(h.bufs)
	h.bufs = h.bufs[:0]
	if h.unmap != nil {
		h.unmap()
		h.unmap = nil
	}
	e.releaseBytes(h.cost)
	if h.slot {
		<-e.wholeSlots
	}
}

// fetcher is one I/O goroutine's private state.
type fetcher struct {
	e *engine
	// The units of an in-memory shard not sent yet (queue), and how many
	// one batch takes.
	batch    *[]unit
	batchMax int
	runs     *[][]byte // the output runs of one chunk, reused
	sink     []byte    // the byte past an uncompressed chunk (vectored reads)
	one      [1]byte   // sink's byte
}

func newFetcher(e *engine) *fetcher {
	f := &fetcher{e: e}
	f.sink = f.one[:]
	f.runs = vecread.GetRuns()
	return f
}

func (f *fetcher) close() { vecread.PutRuns(f.runs) }

// exactSizeAbove is the largest encoded-size bound for which fetchChunk
// reads into a buffer of that bound without asking the store for the
// chunk's size first.
const exactSizeAbove = 8 << 20

// fetchChunk reads a whole chunk. Through an IntoReader it reads into a
// pooled buffer (internal/bufpool: a steady read then allocates almost
// nothing per chunk, where the garbage of fresh buffers would let the heap,
// and RSS, grow well past the output), sized by the store's SizeReader for
// large chunks, else one byte longer than the largest valid encoding, so
// one request both reads the chunk and tells an oversized one
// (ErrCorrupt); otherwise it uses Get.
func fetchChunk(ctx context.Context, r store.Reader, caps store.Capabilities, key string, maxEnc int) (data []byte, buf *[]byte, err error) {
	if caps.Into == nil {
		data, err = r.Get(ctx, key, store.Full())
		if err == nil && len(data) > maxEnc {
			err = oversized(maxEnc)
		}
		return data, nil, err
	}
	want := maxEnc + 1
	if caps.Sizer != nil && maxEnc > exactSizeAbove {
		// A large chunk is sized exactly: no buffer bigger than the chunk
		// as stored. (For small ones the extra stat costs more than the
		// spare bytes.)
		size, err := caps.Sizer.Size(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		want = int(min(size, int64(want)))
	}
	buf = bufpool.Get(want)
	n, err := caps.Into.ReadInto(ctx, key, 0, *buf)
	if err == nil && n > maxEnc {
		err = oversized(maxEnc)
	}
	if err != nil {
		bufpool.Put(buf)
		return nil, nil, err
	}
	return (*buf)[:n], buf, nil
}

// readChunk fetches one chunk of an unsharded array and hands it to the
// decode workers. A chunk of a local store stored as it decodes and wanted
// whole is a unit the worker reads straight into the output.
func (f *fetcher) readChunk(ctx context.Context, w *WriteUnit) error {
	e := f.e
	key, p := w.Key, w.Part
	if e.g.Cache != nil {
		return f.readCached(ctx, key, p)
	}
	dst := p.DstView(e.out)
	u := unit{kind: unitDecode, key: key, chain: e.g.Chain, shape: e.g.ChunkShape, part: p, dst: dst}
	if e.direct && p.IsWhole(e.g.ChunkShape) {
		if _, ok := dst.IsContiguous(); (ok && e.caps.Into != nil) || e.useVec {
			// Stored as it decodes and wanted whole: read straight into
			// its place in the output, holding no buffer (so nothing
			// counts against the cap).
			u.kind, u.size = unitInto, e.chunkBytes
			return e.send(ctx, u)
		}
	}
	if err := e.acquire(ctx, e.cost); err != nil {
		return err
	}
	u.cost = e.cost
	data, buf, err := fetchChunk(ctx, e.r, e.caps, key, e.maxEnc)
	switch {
	case errors.Is(err, store.ErrNotFound):
		e.done(&u)
		return e.sendFill(ctx, key, p, dst, e.g.fill())
	case err != nil:
		e.done(&u)
		return fmt.Errorf("chunk %q: %w", key, err)
	}
	u.data, u.buf = data, buf
	return e.send(ctx, u)
}

// sendFill hands the decode workers a unit that fills dst, the place of
// part p, with the fill value fill: the chunk (or shard) at key, which is
// not stored.
func (e *engine) sendFill(ctx context.Context, key string, p nd.ChunkPart, dst nd.View, fill []byte) error {
	return e.send(ctx, unit{kind: unitFill, key: key, part: p, dst: dst, data: fill})
}

// readCached reads one chunk of an unsharded array through g.Cache: a hit
// is a unit the workers copy into place; a miss is fetched and decoded (on
// the decode pool, which also places it) once for all concurrent readers
// of it (cache.GetOrLoadElem) into a new buffer the cache keeps; the
// readers that shared another's load copy it. Missing chunks are not
// cached.
func (f *fetcher) readCached(ctx context.Context, key string, p nd.ChunkPart) error {
	e := f.e
	dst := p.DstView(e.out)
	hit := unit{kind: unitCopy, key: key, shape: e.g.ChunkShape, part: p, dst: dst}
	ckey := e.g.cacheKey(key)
	if v, ok := e.g.Cache.Get(ckey); ok && len(v) == e.chunkBytes {
		hit.data = v
		return e.send(ctx, hit)
	}
	if err := e.acquire(ctx, e.cost); err != nil {
		return err
	}
	defer e.releaseBytes(e.cost)
	placed := false
	v, err := cache.GetOrLoadElem(ctx, e.g.Cache, ckey, e.g.itemSize(), func(ctx context.Context) ([]byte, error) {
		data, buf, err := fetchChunk(ctx, e.r, e.caps, key, e.maxEnc)
		if err != nil {
			return nil, err
		}
		reply := make(chan decoded, 1)
		if err := e.send(ctx, unit{kind: unitKeep, key: key, chain: e.g.Chain, shape: e.g.ChunkShape, part: p, dst: dst, data: data, buf: buf, reply: reply}); err != nil {
			return nil, err
		}
		select {
		case d := <-reply:
			placed = d.err == nil
			return d.v, d.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return e.sendFill(ctx, key, p, dst, e.g.fill())
	case err != nil:
		return fmt.Errorf("chunk %q: %w", key, err)
	case placed:
		return nil
	case len(v) != e.chunkBytes:
		return fmt.Errorf("chunk %q: cached value of %d bytes, chunks have %d", key, len(v), e.chunkBytes)
	}
	hit.data = v
	return e.send(ctx, hit)
}

// readInto reads an identity-encoded chunk straight into dst. It reports a
// missing chunk, and a stored chunk of the wrong size as ErrCorrupt.
func readInto(ctx context.Context, into store.IntoReader, sizer store.SizeReader, key string, dst []byte) (missing bool, err error) {
	if sizer != nil {
		n, err := sizer.Size(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if n != int64(len(dst)) {
			return false, fmt.Errorf("%w: %d bytes stored, %d expected", codecs.ErrCorrupt, n, len(dst))
		}
	}
	n, err := into.ReadInto(ctx, key, 0, dst)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if n != len(dst) {
		return false, fmt.Errorf("%w: %d bytes stored, %d expected", codecs.ErrCorrupt, n, len(dst))
	}
	return false, nil
}

// readVec reads an identity-encoded chunk of want bytes straight into
// runs, whose last run is a 1-byte sink past the chunk's bytes: a chunk
// that fills it is larger than want, one that ends before it shorter, and
// both are ErrCorrupt. It reports a missing chunk.
func readVec(ctx context.Context, vec store.VectorReader, key string, runs [][]byte, want int) (missing bool, err error) {
	n, err := vec.ReadVec(ctx, key, 0, runs)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err == nil:
		return false, oversized(want)
	case errors.Is(err, io.ErrUnexpectedEOF) && n == want:
		return false, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return false, fmt.Errorf("%w: %d bytes stored, %d expected", codecs.ErrCorrupt, n, want)
	}
	return false, err
}

// shardCost returns the bytes that reading part p of a shard of layout l
// holds at once, at most: the index and the part's share of the shard's
// largest encoding; or, when the inner chunks p covers whole are read in
// place (vectored reads into the output), the index and the inner chunks p
// covers in part, each with the coalescing gap that may join it to the
// next.
func shardCost(l *sharding.Layout, p nd.ChunkPart, inPlace bool, co store.CoalesceOptions) int64 {
	index := int64(l.IndexSize())
	shardElems := int64(nd.NumElements(l.Shard().Shape))
	share := index + int64(l.MaxEncodedSize())*int64(p.NumElements())/max(shardElems, 1)
	if p.Gathers() {
		// Listed indices or points: the inner chunks touched are fetched
		// whole, however few elements they give.
		perChunk := int64(l.Inner().MaxEncodedSize()) + max(co.MaxGap, store.DefaultMaxGap)
		touched := int64(p.NumParts(l.ChunkShape()))
		return min(index+int64(l.MaxEncodedSize()), index+touched*perChunk)
	}
	if !inPlace {
		return share
	}
	touched, whole := int64(1), int64(1)
	for d, c := range l.ChunkShape() {
		n, step := p.Count[d], p.SrcStep[d]
		lo := p.SrcStart[d]
		if step < 0 {
			lo += (n - 1) * step
		}
		hi := lo + (n-1)*max(step, -step) // last index taken
		touched *= int64(hi/c - lo/c + 1)
		if n > 1 && step != 1 {
			whole = 0
			continue
		}
		// Inner chunks wholly inside [lo, hi].
		whole *= int64(max(0, (hi+1)/c-(lo+c-1)/c))
	}
	gap := co.MaxGap
	if gap == 0 {
		gap = store.DefaultMaxGap
	}
	perChunk := int64(l.Inner().MaxEncodedSize()) + max(gap, 0)
	return min(share, index+(touched-whole)*perChunk)
}

// oversized is the error of a stored chunk longer than maxEnc, the largest
// encoding the array's codecs produce: ErrCorrupt with a
// *codecs.LimitError (for variable-length data the bound is a limit a
// valid chunk may exceed).
func oversized(maxEnc int) error {
	return fmt.Errorf("%w: %w, the largest encoding of the array's codecs: the chunk is damaged, or the metadata does not give the codecs it was written with",
		codecs.ErrCorrupt, &codecs.LimitError{What: "stored chunk", Limit: maxEnc})
}
