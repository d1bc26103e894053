package pipeline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// ReadWriter is the store a write needs: reads for read-modify-write of
// partly covered chunks, writes and deletes.
type ReadWriter interface {
	store.Reader
	store.Writer
}

// Write stores data (C order, sel's output shape) into the elements sel
// selects. Chunks the selection covers whole are encoded straight from data;
// chunks it covers in part are read, modified and rewritten. A chunk that
// ends equal to the fill value everywhere is deleted rather than stored,
// as zarr-python does by default. Each chunk (or shard) is replaced by one
// atomic Set (or Delete); chunks are written concurrently, so an error can
// leave some chunks of the selection written and others not.
//
// The inner chunks of a shard are encoded on a pool of DecodeConcurrency
// workers, a few at a time per shard, and appended to the shard in write
// order: a whole-shard write holds the inner chunks in flight and the
// encoded shard, never a decoded copy of it; a write touching some inner
// chunks of a stored shard re-encodes only those.
//
// Writes of one chunk or shard (store key) by concurrent Writes in this
// process are serialised, so writers of disjoint regions that share a
// chunk never lose each other's data; so are writes by other processes
// when the store locks keys (store.KeyLocker: the filesystem store, for
// processes on one machine).
//
// A selection that reorders (index arrays out of order or with repeats)
// writes each element once: where an index repeats, the value written
// last in C order of data wins, as in NumPy.
//
// Write plans sel and executes the plan (ExecuteWrite).
func Write(ctx context.Context, s ReadWriter, g *Grid, sel nd.Selection, data []byte, opt Options) error {
	return ExecuteWrite(ctx, s, NewPlan(g, sel), data, opt)
}

// ExecuteWrite stores data (C order, the output shape of p's selection)
// into the elements p selects, as Write does: each of the plan's write
// units goes to a writer, which encodes it (inner chunks on the decode
// workers) and replaces it with one Set. The first error ends the plan's
// iteration; units already handed out finish first.
func ExecuteWrite(ctx context.Context, s ReadWriter, p *Plan, data []byte, opt Options) error {
	g, sel := p.g, p.sel
	fullShape := sel.FullShape()
	item := g.itemSize()
	if want := nd.NumElements(fullShape) * item; len(data) != want {
		return fmt.Errorf("pipeline: data holds %d bytes, selection needs %d", len(data), want)
	}
	if len(data) == 0 {
		return ctx.Err()
	}
	src := nd.Contiguous(data, fullShape, item)
	if sel.Reorders() {
		compact := sel.Compact()
		buf := bufpool.Get(compact.NumElements() * item)
		defer bufpool.Put(buf)
		dst := nd.Contiguous((*buf)[:compact.NumElements()*item], compact.FullShape(), item)
		nd.Gather(dst, src, sel.LastOrders())
		sel, src = compact, dst
		p = NewPlan(g, sel)
	}
	if g.Rect != nil {
		return g.writeRect(ctx, s, sel, src, opt)
	}
	return writeUnits(ctx, s, g, p.WriteUnits(), src, opt)
}

// writeUnits writes the write units units, whose places are in src.
func writeUnits(ctx context.Context, s ReadWriter, g *Grid, units iter.Seq[WriteUnit], src nd.View, opt Options) error {
	caps := store.CapabilitiesOf(s) // asked once per write
	opt = opt.withCaps(caps)
	w := &writeRun{s: s, g: g, src: src, opt: opt, locker: caps.Locker, cond: caps.Conditional}
	w.inflight = opt.budget()
	eg, gctx := errgroup.WithContext(ctx)
	if g.Shard != nil {
		w.jobs = make(chan *encodeJob)
		var workers sync.WaitGroup
		for range opt.DecodeConcurrency {
			workers.Add(1)
			go func() { defer workers.Done(); w.encodeWorker() }()
		}
		defer func() { close(w.jobs); workers.Wait() }()
	}
	writers := max(1, opt.DecodeConcurrency+opt.IOConcurrency)
	eg.SetLimit(writers)
	for u := range units {
		cost := min(w.unitCost(u), opt.MaxBytesInFlight)
		if err := w.inflight.acquire(gctx, cost); err != nil {
			break
		}
		eg.Go(func() error {
			defer w.inflight.release(cost)
			if err := gctx.Err(); err != nil {
				return err // no unit written after the first error
			}
			return w.writeUnit(gctx, u)
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// writeRun is one Write, the state its goroutines share.
type writeRun struct {
	s        ReadWriter
	g        *Grid
	src      nd.View
	opt      Options
	inflight *Budget
	jobs     chan *encodeJob         // inner chunks to encode (sharded arrays)
	locker   store.KeyLocker         // the store's cross-process key lock, or nil
	cond     store.ConditionalWriter // the store's conditional writes, or nil
}

// window is how many inner chunks of one shard are encoded at once, per
// decode worker.
const window = 2

// unitCost returns the bytes writing part p of one chunk (or shard) holds
// at most: the chunk and its encoding, the old encoding when p covers the
// chunk in part; for a shard, the encoded shard (and the old one) and the
// inner chunks in flight.
func (w *writeRun) unitCost(u WriteUnit) int64 {
	g := w.g
	covers := u.Whole
	if l := g.Shard; l != nil {
		enc := int64(l.MaxEncodedSize())
		cost := enc + int64(window*w.opt.DecodeConcurrency)*int64(l.InnerBytes()+l.Inner().MaxEncodedSize())
		if !covers {
			cost += enc
		}
		return cost
	}
	cost := int64(g.chunkBytes()) + int64(g.Chain.MaxEncodedSize())
	if !covers {
		cost += int64(g.Chain.MaxEncodedSize())
	}
	return cost
}

// writeUnit writes one chunk or shard, holding its key's lock.
func (w *writeRun) writeUnit(ctx context.Context, u WriteUnit) error {
	key, p := u.Key, u.Part
	unlock := lockKey(w.g.StoreID, key)
	defer unlock()
	if w.locker != nil {
		// Writers in other processes: the store's own lock (the
		// filesystem's flock), held around the read-modify-write.
		unlockStore, err := w.locker.LockKey(ctx, key)
		if err != nil {
			return err
		}
		defer unlockStore()
	}
	defer w.g.forget(key) // drop cached decoded chunks, even if the write failed midway
	for attempt := 0; ; attempt++ {
		// A read-modify-write without a lock is conditional where the
		// store can (store.ConditionalWriter): it replaces the unit only
		// if no other writer did since it was read, else re-reads and
		// retries, boundedly.
		io := unitIO{s: w.s, key: key}
		if !u.Whole && w.locker == nil {
			io.cond = w.cond
		}
		var err error
		if w.g.Shard != nil {
			if err = w.writeShard(ctx, &io, p, u.Whole); err != nil {
				err = fmt.Errorf("shard %q: %w", key, err)
			}
		} else if err = w.writeChunk(ctx, &io, p, u.Whole); err != nil {
			err = fmt.Errorf("chunk %q: %w", key, err)
		}
		if !errors.Is(err, store.ErrConflict) || attempt >= w.opt.ConflictRetries {
			return err
		}
		select {
		case <-time.After(time.Duration(1+rand.IntN(1<<min(attempt, 6))) * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// unitIO reads and replaces one write unit's value: plainly, or, with
// cond, only if it is still the version read (writers in other processes
// then lose no update: the loser gets store.ErrConflict).
type unitIO struct {
	s       ReadWriter
	key     string
	cond    store.ConditionalWriter
	version string // the version get read ("" for a missing key)
}

// get reads the unit's whole value; store.ErrNotFound when missing.
func (io *unitIO) get(ctx context.Context) ([]byte, error) {
	if io.cond == nil {
		return io.s.Get(ctx, io.key, store.Full())
	}
	v, version, err := io.cond.GetVersion(ctx, io.key)
	io.version = version
	return v, err
}

// put stores the unit's new encoding enc, or deletes it when empty (all
// fill value). A conditional put stores an empty unit's encoding instead
// (a valid all-fill chunk or index-only shard: conditional deletes are not
// offered by the stores), unless the unit was missing and stays so.
func (io *unitIO) put(ctx context.Context, enc []byte, empty bool) error {
	if io.cond != nil {
		if empty && io.version == "" {
			return nil
		}
		return io.cond.SetIfVersion(ctx, io.key, enc, io.version)
	}
	if empty {
		return io.s.Delete(ctx, io.key)
	}
	return io.s.Set(ctx, io.key, enc)
}

// writeChunk assembles, encodes and stores one chunk of an unsharded array.
func (w *writeRun) writeChunk(ctx context.Context, io *unitIO, p nd.ChunkPart, whole bool) error {
	g := w.g
	// The chunk and its encoding live in pooled buffers: stores do not keep
	// a value after Set returns (store.Writer).
	chunkBuf := bufpool.Get(g.chunkBytes())
	defer bufpool.Put(chunkBuf)
	chunk := *chunkBuf
	chunkView := nd.Contiguous(chunk, g.ChunkShape, g.itemSize())
	if whole {
		// Past the array's edge a chunk holds the fill value.
		if !inside(p.Coords, g.ChunkShape, g.Shape) {
			nd.Fill(chunkView, g.fill())
		}
	} else {
		old, err := io.get(ctx)
		switch {
		case errors.Is(err, store.ErrNotFound):
			nd.Fill(chunkView, g.fill())
		case err != nil:
			return err
		default:
			if err := g.Chain.Decode(chunk, old); err != nil {
				return fmt.Errorf("read-modify-write: %w", err)
			}
		}
	}
	p.CopyIn(chunkView, p.DstView(w.src))
	empty := !w.opt.WriteEmptyChunks && nd.IsFilled(chunk, g.fill())
	if empty && io.cond == nil {
		return io.put(ctx, nil, true)
	}
	encBuf := bufpool.Get(g.Chain.MaxEncodedSize())
	defer bufpool.Put(encBuf)
	enc, err := g.Chain.Encode((*encBuf)[:0], chunk)
	if err != nil {
		return err
	}
	return io.put(ctx, enc, empty)
}

// encodeJob is one inner chunk of a shard to build and encode on the
// worker pool: stored (its old encoding, or nil) updated with src in part
// part's place.
type encodeJob struct {
	l      *sharding.Layout
	stored []byte
	part   nd.ChunkPart
	src    nd.View
	done   chan struct{}
	enc    []byte  // the result: nil when the chunk ends all fill
	buf    *[]byte // the pooled buffer enc lives in
	err    error
}

// encodeWorker encodes inner chunks until the jobs channel closes.
func (w *writeRun) encodeWorker() {
	var scratch *[]byte
	defer func() {
		if scratch != nil {
			bufpool.Put(scratch)
		}
	}()
	for j := range w.jobs {
		l := j.l
		if scratch == nil {
			scratch = bufpool.Get(l.InnerBytes())
		}
		var chunk []byte
		if src, ok := j.src.IsContiguous(); ok && j.part.IsWhole(l.ChunkShape()) {
			chunk = src // the caller's data is the chunk: no copy
			if l.IsFill(chunk) {
				chunk = nil
			}
		} else {
			chunk, j.err = l.UpdateInner(*scratch, j.stored, j.part, j.src)
		}
		if chunk != nil && j.err == nil {
			j.buf = bufpool.Get(l.Inner().MaxEncodedSize())
			j.enc, j.err = l.Inner().Encode((*j.buf)[:0], chunk)
		}
		close(j.done)
	}
}

// pending is one inner chunk on its way into a shard: encoding (job), or
// kept verbatim from the old shard (enc).
type pending struct {
	lin int
	job *encodeJob
	enc []byte
}

// writeShard writes the part p of one shard: the inner chunks p touches
// are built and encoded on the worker pool (window × DecodeConcurrency at
// a time), the others kept verbatim from the stored shard, and all of
// them appended in write order to the new shard, which is stored (or
// deleted, when no inner chunk is left) with one call.
func (w *writeRun) writeShard(ctx context.Context, io *unitIO, p nd.ChunkPart, whole bool) error {
	l := w.g.Shard
	var old []byte
	var ix *sharding.Index
	if !whole {
		var err error
		old, err = io.get(ctx)
		switch {
		case errors.Is(err, store.ErrNotFound):
			old = nil
		case err != nil:
			return err
		default:
			if ix, err = l.IndexOf(old); err != nil {
				return fmt.Errorf("read-modify-write: %w", err)
			}
		}
	}
	// The inner chunks p touches, by C-order index.
	touched := make(map[int]nd.ChunkPart)
	shardSrc := p.DstView(w.src)
	for q := range p.Parts(l.ChunkShape()) {
		touched[l.Linear(q.Coords)] = q
	}
	outBuf := bufpool.Get(l.MaxEncodedSize())
	defer bufpool.Put(outBuf)
	b := l.NewBuilder((*outBuf)[:0])
	var queue []pending
	defer func() { // on error: wait for the jobs in flight, then recycle
		for _, q := range queue {
			if q.job != nil {
				<-q.job.done
				bufpool.Put(q.job.buf)
			}
		}
	}()
	// flush appends the oldest pending chunk to the shard.
	flush := func() error {
		q := queue[0]
		queue = queue[1:]
		if q.job == nil {
			b.Append(q.lin, q.enc)
			return nil
		}
		<-q.job.done
		defer func() {
			if q.job.buf != nil {
				bufpool.Put(q.job.buf)
			}
		}()
		if q.job.err != nil {
			return q.job.err
		}
		if q.job.enc != nil {
			b.Append(q.lin, q.job.enc)
		}
		return nil
	}
	limit := window * w.opt.DecodeConcurrency
	for _, lin32 := range l.WriteOrder() {
		lin := int(lin32)
		var stored []byte
		if ix != nil {
			if off, n, ok := ix.Entry(lin); ok {
				stored = old[off : off+n]
			}
		}
		q, ok := touched[lin]
		if !ok {
			if stored != nil {
				queue = append(queue, pending{lin: lin, enc: stored})
			}
		} else {
			j := &encodeJob{l: l, stored: stored, part: q, src: q.DstView(shardSrc), done: make(chan struct{})}
			select {
			case w.jobs <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
			queue = append(queue, pending{lin: lin, job: j})
		}
		for len(queue) > limit || (len(queue) > 0 && queue[0].job == nil) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for len(queue) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	enc, empty, err := b.Finish()
	if err != nil {
		return err
	}
	return io.put(ctx, enc, empty && !w.opt.WriteEmptyChunks)
}

// inside reports whether the chunk at coords lies wholly inside the array.
func inside(coords, chunkShape, shape []int) bool {
	for d, c := range coords {
		if (c+1)*chunkShape[d] > shape[d] {
			return false
		}
	}
	return true
}

// keyLocks serialises writes of one store key within the process.
var keyLocks = struct {
	mu sync.Mutex
	m  map[string]*keyLock
}{m: map[string]*keyLock{}}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// lockKey locks key of the store storeID for a read-modify-write and
// returns the unlock function.
func lockKey(storeID, key string) func() {
	k := storeID + "\x00" + key
	keyLocks.mu.Lock()
	l := keyLocks.m[k]
	if l == nil {
		l = &keyLock{}
		keyLocks.m[k] = l
	}
	l.refs++
	keyLocks.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		keyLocks.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(keyLocks.m, k)
		}
		keyLocks.mu.Unlock()
	}
}
