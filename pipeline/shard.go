package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// This file is the sharded half of a fetcher: it resolves a shard's index
// (index cache, single-flight, one range request per cold shard), lists the
// read units a selection needs in it (inner chunks, through nested
// shards), fetches their bytes (coalesced once: by the store when it
// batches ranges itself, else here) and hands them to the decode workers.
// Package sharding only locates; all I/O and policy is here.

// shardRef is where one shard's bytes are: the whole value of key
// (base 0, size 0) or size bytes at base of it (a shard nested in an
// outer shard).
type shardRef struct {
	l          *sharding.Layout
	key        string
	base, size int64
	path       [][]int // coordinates of the inner shards leading to it (nested shards)
}

// readShard reads the part of one shard of the array that w, a write
// unit of the read's plan, covers.
func (f *fetcher) readShard(ctx context.Context, w *WriteUnit) error {
	e := f.e
	key, p := w.Key, w.Part
	l := e.g.Shard
	var cost int64
	if !e.inline {
		cost = min(e.opt.MaxBytesInFlight, shardCost(l, p, f.innerVec(l), e.opt.Coalesce))
		if err := e.acquire(ctx, cost); err != nil {
			return err
		}
	}
	var h *hold
	if e.inline {
		// One shard at a time: the engine's own hold, its buffer list reused.
		h = &e.h
		h.cost, h.slot = 0, false
	} else {
		h = &hold{cost: cost}
	}
	h.refs.Store(1) // the fetcher's own, dropped when it has sent every unit
	defer e.unref(h)
	if err := f.shard(ctx, h, shardRef{l: l, key: key}, p); err != nil {
		return fmt.Errorf("shard %q: %w", key, err)
	}
	return nil
}

// innerVec reports whether the uncompressed inner chunks of layout l that
// a read covers whole are best read straight into their place in the
// output with one vectored read each: a store with vectored reads, no
// chunk cache (which keeps whole decoded chunks of its own), and places
// in the output made of runs long enough (vecread.Worth).
func (f *fetcher) innerVec(l *sharding.Layout) bool {
	e := f.e
	if e.caps.Vec == nil || !l.Identity() || l.Nested() != nil || e.g.Cache != nil {
		return false
	}
	run := nd.View{Shape: l.ChunkShape(), Strides: e.out.Strides, ItemSize: l.ItemSize()}.RunLen()
	return vecread.Worth(run, l.InnerBytes())
}

// shard reads p, the part of the stored shard ref that a read wants (its
// box, listed indices or points within the shard; p.DstStart is where it
// starts in the output).
func (f *fetcher) shard(ctx context.Context, h *hold, ref shardRef, p nd.ChunkPart) error {
	e := f.e
	l := ref.l
	dst := p.DstView(e.out)
	var hits []bool
	if e.g.Cache != nil && l.Nested() == nil {
		var all bool
		var err error
		if hits, all, err = f.cachedInner(ctx, ref.key, l, p, dst); all || err != nil {
			return err
		}
	}
	var ix *sharding.Index
	if e.g.IndexCache != nil {
		ix, _ = e.g.IndexCache.Get(e.g.StoreID, ref.key, ref.base, ref.size)
	}
	// A selection that needs every inner chunk reads the whole shard with
	// one request: when the index is not cached, and always from a local
	// store (one read, into one pooled buffer). A store with vectored
	// reads instead reads the index, then the uncompressed inner chunks
	// p covers whole straight into the output.
	if (ix == nil || e.caps.Local) && !(f.innerVec(l) && !p.Gathers() && p.Selection().Forward()) &&
		p.NumParts(l.ChunkShape()) == l.NumChunks() && hits == nil {
		return f.readWhole(ctx, h, ref, p)
	}
	if ix == nil {
		var err error
		if ix, err = loadIndex(ctx, e.r, e.caps, e.g, ref); err != nil {
			return err
		}
		if ix == nil { // no such shard
			return e.sendFill(ctx, ref.key, p, dst, l.Fill())
		}
	}
	return f.readInner(ctx, h, ref, ix, nil, p, p.DstStart, hits)
}

// cachedInner hands the decode workers the inner chunks of sel the chunk
// cache holds, as units they copy into place, and returns which (by
// C-order index; nil when none) and whether every inner chunk sel needs
// was a hit.
func (f *fetcher) cachedInner(ctx context.Context, key string, l *sharding.Layout, sel nd.ChunkPart, dst nd.View) ([]bool, bool, error) {
	e := f.e
	var hit []bool
	all := true
	for p := range sel.Parts(l.ChunkShape()) {
		lin := l.Linear(p.Coords)
		v, ok := e.g.Cache.Get(cache.Key(e.g.StoreID, key, 0, lin))
		if !ok || len(v) != l.InnerBytes() {
			all = false
			continue
		}
		if err := e.send(ctx, unit{kind: unitCopy, key: key, inner: p.Coords, shape: l.ChunkShape(), part: p, dst: p.DstView(dst), data: v}); err != nil {
			return nil, false, err
		}
		if hit == nil {
			hit = make([]bool, l.NumChunks())
		}
		hit[lin] = true
	}
	return hit, all, nil
}

// loadIndex fetches and decodes the index of ref (a shard of g in r, whose
// capabilities are caps) with one request, through g's index cache (and
// its single-flight) when there is one. It returns nil, nil for a missing
// shard.
func loadIndex(ctx context.Context, r store.Reader, caps store.Capabilities, g *Grid, ref shardRef) (*sharding.Index, error) {
	l := ref.l
	fetch := func(ctx context.Context) (*sharding.Index, error) {
		size := ref.size
		if size == 0 && caps.Local && caps.Sizer != nil {
			// A local store tells a shard's size for the price of a stat:
			// then every entry of the index is checked against it, not only
			// those a read needs.
			n, err := caps.Sizer.Size(ctx, ref.key)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			size = n
			if size == 0 {
				return nil, fmt.Errorf("%w: shard of 0 bytes is shorter than its %d-byte index", sharding.ErrCorruptIndex, l.IndexSize())
			}
		}
		br, err := l.IndexRangeIn(ref.base, size)
		if err != nil {
			return nil, err
		}
		b, err := r.Get(ctx, ref.key, br)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) != l.IndexSize() {
			return nil, fmt.Errorf("%w: read %d bytes of the %d-byte index (the shard is shorter than its index)", sharding.ErrCorruptIndex, len(b), l.IndexSize())
		}
		if size > 0 {
			return l.DecodeIndex(b, size)
		}
		return l.DecodeIndex(b, -1)
	}
	if g.IndexCache == nil {
		return fetch(ctx)
	}
	return g.IndexCache.Load(ctx, g.StoreID, ref.key, ref.base, ref.size, fetch)
}

// readWhole reads all of ref with one request and hands p's inner chunks
// to the decode workers from memory.
func (f *fetcher) readWhole(ctx context.Context, h *hold, ref shardRef, p nd.ChunkPart) error {
	e := f.e
	l := ref.l
	var b []byte
	var ix *sharding.Index
	var err error
	if e.caps.Local {
		if !h.slot && e.wholeSlots != nil {
			select {
			case e.wholeSlots <- struct{}{}:
				h.slot = true
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// A whole top-level shard in a local store: read it into a pooled
		// buffer one byte longer than any valid shard, held only while its
		// chunks decode (fresh buffers would be garbage that lets the
		// heap, and RSS, grow well past the output). A remote store gets
		// one plain GET of the whole object.
		mapped := false
		if f.mapsWhole(ref) { // mapped.go: its pages, not a copy
			b, ix, err = f.mapWhole(ctx, h, ref)
			mapped = err == nil || errors.Is(err, store.ErrNotFound)
		}
		if !mapped { // or a mapping that failed: read as unmapped
			var bp *[]byte
			b, bp, err = readLocal(ctx, e.caps, ref.key, l.MaxEncodedSize())
			if bp != nil {
				h.bufs = append(h.bufs, bp)
			}
		}
	} else {
		b, err = e.r.Get(ctx, ref.key, store.Full())
	}
	if errors.Is(err, store.ErrNotFound) {
		return e.sendFill(ctx, ref.key, p, p.DstView(e.out), l.Fill())
	}
	if err != nil {
		return err
	}
	if ix == nil {
		if ix, err = l.IndexOf(b); err != nil {
			return err
		}
	}
	if e.g.IndexCache != nil {
		e.g.IndexCache.Add(e.g.StoreID, ref.key, ref.base, ref.size, ix)
	}
	return f.readInner(ctx, h, ref, ix, b, p, p.DstStart, nil)
}

// cachesInner reports whether the inner chunks of ref go through the chunk
// cache: those of a whole stored shard of plain inner chunks.
func (e *engine) cachesInner(ref shardRef) bool {
	return e.g.Cache != nil && ref.base == 0 && ref.size == 0 && ref.l.Nested() == nil
}

// readLocal reads a whole value of a local store into a pooled buffer:
// sized by the store's SizeReader when it has one, else one byte longer
// than maxSize, so one read both reads it and tells an oversized value. A
// value over maxSize is ErrCorruptIndex.
func readLocal(ctx context.Context, caps store.Capabilities, key string, maxSize int) ([]byte, *[]byte, error) {
	n := maxSize + 1
	if caps.Sizer != nil {
		size, err := caps.Sizer.Size(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		if size > int64(maxSize) {
			return nil, nil, fmt.Errorf("%w: shard of %d bytes, larger than any valid one (%d)", sharding.ErrCorruptIndex, size, maxSize)
		}
		n = int(size)
	}
	bp := bufpool.Get(n)
	k, err := caps.Into.ReadInto(ctx, key, 0, *bp)
	if err == nil && k > maxSize {
		err = fmt.Errorf("%w: shard larger than any valid one (%d bytes)", sharding.ErrCorruptIndex, maxSize)
	}
	if err != nil {
		bufpool.Put(bp)
		return nil, nil, err
	}
	return (*bp)[:k], bp, nil
}

// pathPrefix names the inner shards leading to a nested shard in errors.
func pathPrefix(path [][]int) string {
	var b strings.Builder
	for _, c := range path {
		fmt.Fprintf(&b, "inner shard %v: ", c)
	}
	return b.String()
}

// Kinds of work on one read unit (or inner shard) of a shard read.
const (
	jobFetch  uint8 = iota // fetch the whole encoded chunk, then decode
	jobMem                 // its bytes are in memory: decode
	jobFill                // not stored: fill
	jobRuns                // fetch the byte runs a part needs of an uncompressed chunk
	jobVec                 // read an uncompressed chunk straight into the output
	jobIndex               // an inner shard: fetch its index, then read it as a shard
	jobNested              // an inner shard read whole: fetch it, then read it from memory
)

// job is the work on one read unit, or on one inner shard whose index is
// not known yet, of a shard read.
type job struct {
	walked
	kind   uint8
	s0, s1 int   // its spans: spans[s0:s1]
	lo     int64 // jobRuns: first byte of the runs, relative to the chunk
}

// maxRuns bounds the byte runs one partially read uncompressed inner chunk
// is split into; beyond it the reader fetches the runs' bounding range.
const maxRuns = 1024

// readInner reads sel from the stored shard ref whose index is ix (its
// bytes mem, when in memory; dst0 where sel's box starts in the output):
// it walks the
// read units sel needs (walkShard, through nested shards whose indexes
// are cached or in memory), fetches the bytes of those not in memory, and
// of the indexes of inner shards not known yet, with one batched call, and
// hands the units to the decode workers; then it reads those inner shards
// the same way. hits marks inner chunks already sent from the chunk cache.
func (f *fetcher) readInner(ctx context.Context, h *hold, ref shardRef, ix *sharding.Index, mem []byte, sel nd.ChunkPart, dst0 []int, hits []bool) error {
	e := f.e
	var jobs []job
	var spans []store.Span
	span := func(off, n int64) { spans = append(spans, store.Span{Offset: off - ref.base, Length: n}) }
	nested := func(sub shardRef) (*sharding.Index, bool, error) {
		if e.g.IndexCache != nil {
			if ix, ok := e.g.IndexCache.Get(e.g.StoreID, sub.key, sub.base, sub.size); ok {
				return ix, true, nil
			}
		}
		return nil, false, nil
	}
	var err error
	// The units of a shard in memory (with no inner shards) go to the
	// decode workers as they are walked, in batches; those of points, in
	// pieces of the shard that the workers walk themselves.
	batched := mem != nil && ref.l.Nested() == nil
	if batched && (sel.Points != nil || sel.Elems != nil) && !e.inline {
		return f.sendWalks(ctx, h, ref, ix, mem, sel, dst0)
	}
	if batched {
		f.batchMax = e.batchSize(sel.NumParts(ref.l.ChunkShape()), ref.l.InnerBytes())
		defer func() {
			f.drop() // after an error: the units not sent are given back
			f.batchMax = 0
		}()
	}
	walkShard(ref, ix, mem, sel, dst0, nested, func(w *walked) bool {
		if w.err != nil {
			err = w.err
			return false
		}
		if hits != nil && hits[w.lin] {
			return true // sent from the chunk cache (hits: a shard of plain inner chunks)
		}
		if batched {
			if !w.stored {
				err = f.queue(ctx, e.fillUnit(w))
			} else {
				err = f.queue(ctx, e.decodeUnit(h, ref, w, w.enc))
			}
			return err == nil
		}
		j := job{walked: *w, kind: jobFetch, s0: len(spans)}
		l := w.ref.l
		part := w.part
		whole := part.IsWhole(l.ChunkShape())
		switch {
		case !w.stored:
			j.kind = jobFill
		case w.pending:
			if part.NumParts(l.Nested().ChunkShape()) == l.Nested().NumChunks() {
				j.kind = jobNested
				span(w.off, w.n)
				break
			}
			j.kind = jobIndex
			br, berr := l.Nested().IndexRangeIn(w.off, w.n)
			if berr != nil {
				err = fmt.Errorf("%sinner shard %v: %w", pathPrefix(w.ref.path), part.Coords, berr)
				return false
			}
			o, k, _ := br.Bounded()
			span(o, k)
		case w.enc != nil:
			j.kind = jobMem
		case whole && f.innerVec(l):
			if w.n != int64(l.InnerBytes()) {
				err = fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					sharding.ErrCorruptIndex, part.Coords, w.n, l.InnerBytes())
				return false
			}
			j.kind = jobVec
		case whole:
			span(w.off, w.n)
		case l.Identity() && !e.cachesInner(w.ref) && !part.Gathers(): // with a chunk cache, read whole chunks to cache them
			if w.n != int64(l.InnerBytes()) {
				err = fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					sharding.ErrCorruptIndex, part.Coords, w.n, l.InnerBytes())
				return false
			}
			j.kind = jobRuns
			spans, j.lo = appendRuns(spans, l, part, w.off-ref.base)
		default:
			span(w.off, w.n)
		}
		j.s1 = len(spans)
		jobs = append(jobs, j)
		return true
	})
	if batched && err == nil {
		err = f.flush(ctx) // the last batch
	}
	if err != nil || len(jobs) == 0 {
		return err
	}
	data, err := f.fetchSpans(ctx, h, ref, spans)
	if err != nil {
		return err
	}
	for i, s := range spans {
		if int64(len(data[i])) != s.Length {
			return fmt.Errorf("%w: bytes [%d, %d) lie past the end of the shard", sharding.ErrCorruptIndex, s.Offset, s.End())
		}
	}
	for i := range jobs {
		j := &jobs[i]
		l := j.ref.l
		part := j.part
		out := j.dst(e.out)
		switch j.kind {
		case jobFill:
			err = e.send(ctx, unit{kind: unitFill, key: ref.key, inner: part.Coords, path: j.ref.path, part: part, dst: out, data: l.Fill()})
		case jobVec:
			err = e.send(ctx, unit{kind: unitVec, key: ref.key, inner: part.Coords, path: j.ref.path, part: part, dst: out, off: j.off, size: int(j.n)})
		case jobIndex, jobNested:
			sub := shardRef{l: l.Nested(), key: ref.key, base: j.off, size: j.n, path: append(slices.Clone(j.ref.path), part.Coords)}
			var nix *sharding.Index
			var b []byte
			if j.kind == jobNested {
				b = data[j.s0]
				nix, err = sub.l.IndexOf(b)
			} else if nix, err = sub.l.DecodeIndex(data[j.s0], j.n); err == nil && e.g.IndexCache != nil {
				e.g.IndexCache.Add(e.g.StoreID, sub.key, sub.base, sub.size, nix)
			}
			if err != nil {
				return fmt.Errorf("%sinner shard %v: %w", pathPrefix(j.ref.path), part.Coords, err)
			}
			err = f.readInner(ctx, h, sub, nix, b, part, j.subDst0(), nil)
		case jobRuns:
			u := unit{kind: unitRuns, key: ref.key, inner: part.Coords, path: j.ref.path, shape: l.ChunkShape(), part: part, dst: out, hold: h}
			u.pieces, u.spans, u.off, u.lo = data[j.s0:j.s1], spans[j.s0:j.s1], j.off-ref.base, j.lo
			err = e.send(ctx, u)
		case jobMem:
			err = e.send(ctx, e.decodeUnit(h, ref, &j.walked, j.enc))
		default:
			err = e.send(ctx, e.decodeUnit(h, ref, &j.walked, data[j.s0]))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeUnit returns the unit that decodes the walked read unit w of the
// shard ref (held by h) from its encoded bytes enc, kept in the chunk
// cache when the shard's inner chunks are cached.
func (e *engine) decodeUnit(h *hold, ref shardRef, w *walked, enc []byte) unit {
	l := w.ref.l
	u := unit{kind: unitDecode, key: ref.key, inner: w.part.Coords, path: w.ref.path, chain: l.Inner(), shape: l.ChunkShape(),
		part: w.part, dst: w.dst(e.out), data: enc, hold: h}
	if e.cachesInner(w.ref) {
		u.cacheKey, u.kept = cache.Key(e.g.StoreID, ref.key, 0, w.lin), e.g.Cache
	}
	return u
}

// fillUnit returns the unit that fills the place of the walked read unit
// w, which its shard's index does not list.
func (e *engine) fillUnit(w *walked) unit {
	return unit{kind: unitFill, key: w.ref.key, inner: w.part.Coords, path: w.ref.path, part: w.part, dst: w.dst(e.out), data: w.ref.l.Fill()}
}

// shardWalk is an in-memory shard of plain inner chunks whose parts of
// points the decode workers walk themselves (unitWalk units).
type shardWalk struct {
	ref shardRef
	ix  *sharding.Index
	mem []byte
}

// sendWalks hands the decode workers sel, a part of points (with
// coordinates or placed) of the
// in-memory shard ref of plain inner chunks (whose index is ix; dst0
// where sel's place starts in the output), cut into pieces of about a
// batch of inner chunks each (engine.batchSize) that they walk and place
// themselves (worker.placeWalk): the fetcher looks at no inner chunk and
// no point, and an inner chunk costs no unit sent, no reference to the
// hold and no copy of a unit, only its walk and its decode on the worker
// that reads its points anyway.
func (f *fetcher) sendWalks(ctx context.Context, h *hold, ref shardRef, ix *sharding.Index, mem []byte, sel nd.ChunkPart, dst0 []int) error {
	e := f.e
	l := ref.l
	n := sel.NumParts(l.ChunkShape())
	per := e.batchSize(n, l.InnerBytes())
	sw := &shardWalk{ref: ref, ix: ix, mem: mem}
	for piece := range sel.SplitParts(l.ChunkShape(), (n+per-1)/per) {
		for d, s := range dst0 { // the piece's own DstStart, relative to sel's place
			piece.DstStart[d] += s
		}
		if err := e.send(ctx, unit{kind: unitWalk, key: ref.key, path: ref.path, part: piece, hold: h, walk: sw}); err != nil {
			return err
		}
	}
	return nil
}

// placeWalk walks the piece u of an in-memory shard (sendWalks: its part,
// whose DstStart is where it starts in the output) and places its inner
// chunks one after the other, decoded from the shard's bytes or filled,
// under u's hold; the first error ends it. Plain inner chunks decode
// straight into place, with no unit: those of mapped pages under one
// guard against memory faults for the whole piece (decodeMapped's).
func (w *worker) placeWalk(ctx context.Context, u *unit) (err error) {
	e := w.e
	sw, h := u.walk, u.hold // (the walk captures no u, which stays where it is)
	l := sw.ref.l
	direct := !e.cachesInner(sw.ref) && e.placed == nil
	var cur []int // the inner chunk being decoded
	named := false
	if direct && h.unmap != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { // after recoverFault: a fault's error names its inner chunk
			if err != nil && !named && cur != nil {
				err = fmt.Errorf("shard %q: %sinner chunk %v: %w", sw.ref.key, pathPrefix(sw.ref.path), cur, err)
			}
		}()
		defer recoverFault(&err, sw.mem)
	}
	chain, shape := l.Inner(), l.ChunkShape()
	first := true
	walkShard(sw.ref, sw.ix, sw.mem, u.part, u.part.DstStart, nil, func(wu *walked) bool {
		if wu.err != nil {
			err, named = wu.err, true
			return false
		}
		if !first {
			if err = ctx.Err(); err != nil {
				named = true
				return false
			}
		}
		first = false
		if !wu.stored || !direct {
			var v unit
			if wu.stored {
				v = e.decodeUnit(h, sw.ref, wu, wu.enc)
			} else {
				v = e.fillUnit(wu)
			}
			err = w.placeUnit(ctx, &v)
			named = true
			return err == nil
		}
		cur = wu.part.Coords
		if err = w.decodeInto(chain, shape, wu.enc, wu.part, wu.dst(e.out)); err != nil {
			err, named = fmt.Errorf("shard %q: %sinner chunk %v: %w", sw.ref.key, pathPrefix(sw.ref.path), cur, err), true
			return false
		}
		return true
	})
	// The fetcher that sends the pieces, woken onto this worker's
	// processor by the receive, runs now rather than when some worker
	// finds no piece left: it maps and splits the next shard while the
	// workers decode (on two cores a worker otherwise waited up to the
	// next shard's map, ~0.5 ms a gather).
	runtime.Gosched()
	return err
}

// fetchSpans returns the bytes of spans (offsets relative to the shard
// start) of ref. Ranges are joined once, here, with Options.Coalesce or,
// when it is zero, the knobs the store's own GetRanges joins with
// (store.Capabilities.Coalesce: S3 and HTTP join across gaps up to 1 MiB),
// so a store that joins again finds nothing left to join. A local store
// reads each joined range into a pooled buffer the hold keeps; others get
// one batched call. Results may be short where the shard ends first.
func (f *fetcher) fetchSpans(ctx context.Context, h *hold, ref shardRef, spans []store.Span) ([][]byte, error) {
	return f.e.fetchSpansOf(ctx, h, f.e.r, f.e.caps, ref.key, ref.base, spans)
}

// fetchSpansOf is fetchSpans for the spans at base of key in store r
// (whose capabilities are caps): a shard of the array's store, or the
// object that virtual references of a batch point into.
func (e *engine) fetchSpansOf(ctx context.Context, h *hold, r store.Reader, caps store.Capabilities, key string, base int64, spans []store.Span) ([][]byte, error) {
	if len(spans) == 0 {
		return nil, nil
	}
	co := e.opt.Coalesce
	if co == (store.CoalesceOptions{}) {
		co = caps.Coalesce
	}
	groups, err := store.Coalesce(spans, co)
	if err != nil {
		return nil, err
	}
	data := make([][]byte, len(groups))
	if caps.Local {
		for i, g := range groups {
			if err := ctx.Err(); err != nil {
				return nil, err // a local store may not look at ctx itself
			}
			bp := bufpool.Get(int(g.Span.Length))
			h.bufs = append(h.bufs, bp)
			n, err := caps.Into.ReadInto(ctx, key, base+g.Span.Offset, *bp)
			if err != nil {
				return nil, err
			}
			data[i] = (*bp)[:n]
		}
	} else {
		ranges := make([]store.ByteRange, len(groups))
		for i, g := range groups {
			ranges[i] = store.OffsetLen(base+g.Span.Offset, g.Span.Length)
		}
		if data, err = store.GetRanges(ctx, r, key, ranges); err != nil {
			return nil, err
		}
		if len(data) != len(groups) {
			return nil, fmt.Errorf("store returned %d ranges for %d requested", len(data), len(groups))
		}
	}
	out := make([][]byte, len(spans))
	for i, g := range groups {
		for _, m := range g.Members {
			out[m] = g.Extract(data[i], spans[m])
		}
	}
	return out, nil
}
