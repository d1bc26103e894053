package pipeline

import (
	"context"
	"errors"
	"fmt"
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

// readShard reads the part p of one shard of the array.
func (f *fetcher) readShard(ctx context.Context, p nd.ChunkPart) error {
	e := f.e
	key := e.g.Key(p.Coords)
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
	if err := f.shard(ctx, h, shardRef{l: l, key: key}, p, p.DstView(e.out), true); err != nil {
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

// shard reads sel, a part of the shard ref (its box, listed indices or
// points within the shard; its destination is dst), into dst. top is set
// for a shard that is a whole stored value (its inner chunks may live in
// the chunk cache).
func (f *fetcher) shard(ctx context.Context, h *hold, ref shardRef, sel nd.ChunkPart, dst nd.View, top bool) error {
	e := f.e
	l := ref.l
	var hits []bool
	if top && e.g.Cache != nil && l.Nested() == nil {
		var all bool
		var err error
		if hits, all, err = f.cachedInner(ctx, ref.key, l, sel, dst); all || err != nil {
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
	// sel covers whole straight into dst.
	if (ix == nil || e.caps.Local) && !(f.innerVec(l) && !sel.Gathers() && sel.Selection().Forward()) &&
		sel.NumParts(l.ChunkShape()) == l.NumChunks() && hits == nil {
		return f.readWhole(ctx, h, ref, sel, dst)
	}
	if ix == nil {
		var err error
		if ix, err = f.loadIndex(ctx, ref); err != nil {
			return err
		}
		if ix == nil { // no such shard
			return e.sendFill(ctx, dst, l.Fill())
		}
	}
	return f.readInner(ctx, h, ref, ix, sel, dst, hits)
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

// loadIndex fetches and decodes ref's index with one request, through the
// index cache (and its single-flight) when there is one. It returns nil,
// nil for a missing shard.
func (f *fetcher) loadIndex(ctx context.Context, ref shardRef) (*sharding.Index, error) {
	e := f.e
	l := ref.l
	fetch := func(ctx context.Context) (*sharding.Index, error) {
		size := ref.size
		if size == 0 && e.caps.Local && e.caps.Sizer != nil {
			// A local store tells a shard's size for the price of a stat:
			// then every entry of the index is checked against it, not only
			// those a read needs.
			n, err := e.caps.Sizer.Size(ctx, ref.key)
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
		b, err := e.r.Get(ctx, ref.key, br)
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
	if e.g.IndexCache == nil {
		return fetch(ctx)
	}
	return e.g.IndexCache.Load(ctx, e.g.StoreID, ref.key, ref.base, ref.size, fetch)
}

// readWhole reads all of ref with one request and hands sel's inner
// chunks to the decode workers from memory.
func (f *fetcher) readWhole(ctx context.Context, h *hold, ref shardRef, sel nd.ChunkPart, dst nd.View) error {
	e := f.e
	l := ref.l
	br := store.Full()
	switch {
	case ref.size > 0:
		br = store.OffsetLen(ref.base, ref.size)
	case ref.base > 0:
		br = store.From(ref.base)
	}
	var b []byte
	var err error
	if e.caps.Local && ref.base == 0 && ref.size <= 0 {
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
		var bp *[]byte
		b, bp, err = readLocal(ctx, e.caps, ref.key, l.MaxEncodedSize())
		if bp != nil {
			h.bufs = append(h.bufs, bp)
		}
	} else {
		b, err = e.r.Get(ctx, ref.key, br)
	}
	if errors.Is(err, store.ErrNotFound) {
		return e.sendFill(ctx, dst, l.Fill())
	}
	if err != nil {
		return err
	}
	if ref.size > 0 && int64(len(b)) != ref.size {
		return fmt.Errorf("%w: read %d bytes of a %d-byte shard", sharding.ErrCorruptIndex, len(b), ref.size)
	}
	ix, err := l.IndexOf(b)
	if err != nil {
		return err
	}
	if e.g.IndexCache != nil {
		e.g.IndexCache.Add(e.g.StoreID, ref.key, ref.base, ref.size, ix)
	}
	return f.sendMem(ctx, h, ref, ix, b, sel, dst)
}

// cachesInner reports whether the inner chunks of ref go through the chunk
// cache: those of a whole stored shard of plain inner chunks.
func (f *fetcher) cachesInner(ref shardRef) bool {
	return f.e.g.Cache != nil && ref.base == 0 && ref.size == 0 && ref.l.Nested() == nil
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

// sendMem hands the inner chunks sel needs of the in-memory shard b
// (index ix) to the decode workers.
func (f *fetcher) sendMem(ctx context.Context, h *hold, ref shardRef, ix *sharding.Index, b []byte, sel nd.ChunkPart, dst nd.View) error {
	l := ref.l
	kept := f.cachesInner(ref)
	for p := range sel.Parts(l.ChunkShape()) {
		lin := l.Linear(p.Coords)
		off, n, ok := ix.Entry(lin)
		out := p.DstView(dst)
		if !ok {
			if err := f.e.sendFill(ctx, out, l.Fill()); err != nil {
				return err
			}
			continue
		}
		u := innerUnit(ref, p, out, b[off:off+n:off+n], h)
		if kept {
			u.cacheKey, u.kept = cache.Key(f.e.g.StoreID, ref.key, 0, lin), f.e.g.Cache
		}
		if err := f.e.send(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// innerUnit is the read unit of inner chunk p of a shard of layout l, with
// its encoded bytes: decoded with the inner chain, or read as an inner
// shard from memory when l nests shards.
func innerUnit(ref shardRef, p nd.ChunkPart, out nd.View, enc []byte, h *hold) unit {
	l := ref.l
	u := unit{kind: unitDecode, key: ref.key, inner: p.Coords, path: ref.path, chain: l.Inner(), shape: l.ChunkShape(), part: p, dst: out, data: enc, hold: h}
	if l.Nested() != nil {
		u.kind, u.layout = unitNested, l.Nested()
	}
	return u
}

// pathPrefix names the inner shards leading to a nested shard in errors.
func pathPrefix(path [][]int) string {
	var b strings.Builder
	for _, c := range path {
		fmt.Fprintf(&b, "inner shard %v: ", c)
	}
	return b.String()
}

// Kinds of work on one inner chunk once its index entry is known.
const (
	jobWhole  uint8 = iota // fetch the whole encoded chunk (or inner shard), then decode
	jobRuns                // fetch the byte runs a part needs of an uncompressed chunk
	jobNested              // fetch an inner shard's index, then read it as a shard
	jobVec                 // read an uncompressed chunk straight into the output
)

// job is the work on one stored inner chunk.
type job struct {
	kind     uint8
	part     nd.ChunkPart
	lin      int   // C-order index of the inner chunk within the shard
	off, n   int64 // the chunk's bytes within the shard
	s0, s1   int   // its spans: spans[s0:s1]
	lo       int64 // jobRuns: first byte of the runs, relative to the chunk
	nestedIx *sharding.Index
}

// maxRuns bounds the byte runs one partially read uncompressed inner chunk
// is split into; beyond it the reader fetches the runs' bounding range.
const maxRuns = 1024

// readInner reads sel from the stored shard ref whose index is ix: it
// lists the inner chunks sel touches, fetches their bytes with one batched
// call and hands them to the decode workers. hits marks inner chunks
// already placed from the chunk cache.
func (f *fetcher) readInner(ctx context.Context, h *hold, ref shardRef, ix *sharding.Index, sel nd.ChunkPart, dst nd.View, hits []bool) error {
	e := f.e
	l := ref.l
	var jobs []job
	var spans []store.Span
	vec := f.innerVec(l)
	cacheInner := f.cachesInner(ref)
	for p := range sel.Parts(l.ChunkShape()) {
		lin := l.Linear(p.Coords)
		if hits != nil && hits[lin] {
			continue // placed from the chunk cache
		}
		off, n, ok := ix.Entry(lin)
		if !ok {
			if err := e.sendFill(ctx, p.DstView(dst), l.Fill()); err != nil {
				return err
			}
			continue
		}
		j := job{kind: jobWhole, part: p, lin: lin, off: off, n: n, s0: len(spans)}
		whole := p.IsWhole(l.ChunkShape())
		switch {
		case vec && whole:
			if n != int64(l.InnerBytes()) {
				return fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					sharding.ErrCorruptIndex, p.Coords, n, l.InnerBytes())
			}
			j.kind = jobVec
		case whole:
			spans = append(spans, store.Span{Offset: off, Length: n})
		case l.Nested() != nil:
			if p.NumParts(l.Nested().ChunkShape()) == l.Nested().NumChunks() {
				spans = append(spans, store.Span{Offset: off, Length: n})
				break
			}
			j.kind = jobNested
			sub := shardRef{l: l.Nested(), key: ref.key, base: ref.base + off, size: n}
			if e.g.IndexCache != nil {
				j.nestedIx, _ = e.g.IndexCache.Get(e.g.StoreID, sub.key, sub.base, sub.size)
			}
			if j.nestedIx == nil {
				br, err := sub.l.IndexRangeIn(sub.base, sub.size)
				if err != nil {
					return fmt.Errorf("%sinner shard %v: %w", pathPrefix(ref.path), p.Coords, err)
				}
				o, k, _ := br.Bounded()
				spans = append(spans, store.Span{Offset: o - ref.base, Length: k})
			}
		case l.Identity() && !cacheInner && !p.Gathers(): // with a chunk cache, read whole chunks to cache them
			if n != int64(l.InnerBytes()) {
				return fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					sharding.ErrCorruptIndex, p.Coords, n, l.InnerBytes())
			}
			j.kind = jobRuns
			spans, j.lo = appendRuns(spans, l, p, off)
		default:
			spans = append(spans, store.Span{Offset: off, Length: n})
		}
		j.s1 = len(spans)
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil
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
		out := j.part.DstView(dst)
		switch j.kind {
		case jobVec:
			u := unit{kind: unitVec, key: ref.key, inner: j.part.Coords, path: ref.path, part: j.part, dst: out, off: ref.base + j.off, size: int(j.n)}
			if err := e.send(ctx, u); err != nil {
				return err
			}
			continue
		case jobNested:
			sub := shardRef{l: l.Nested(), key: ref.key, base: ref.base + j.off, size: j.n, path: append(slices.Clone(ref.path), j.part.Coords)}
			nix := j.nestedIx
			if nix == nil {
				if nix, err = sub.l.DecodeIndex(data[j.s0], j.n); err != nil {
					return fmt.Errorf("%sinner shard %v: %w", pathPrefix(ref.path), j.part.Coords, err)
				}
				if e.g.IndexCache != nil {
					e.g.IndexCache.Add(e.g.StoreID, sub.key, sub.base, sub.size, nix)
				}
			}
			if err := f.readInner(ctx, h, sub, nix, j.part, out, nil); err != nil {
				return err
			}
			continue
		}
		u := innerUnit(ref, j.part, out, data[j.s0], h)
		if j.kind == jobRuns {
			u.kind = unitRuns
			u.pieces, u.spans, u.off, u.lo = data[j.s0:j.s1], spans[j.s0:j.s1], j.off, j.lo
		} else if cacheInner {
			u.cacheKey, u.kept = cache.Key(e.g.StoreID, ref.key, 0, j.lin), e.g.Cache
		}
		if err := e.send(ctx, u); err != nil {
			return err
		}
	}
	return nil
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
