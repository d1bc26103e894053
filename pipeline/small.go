package pipeline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// This file is the small-read fast path. A read that touches few read
// units runs on the calling goroutine: one fetcher hands each unit
// straight to one worker, with no goroutines, channels, errgroup or
// semaphores, and the engine, its fetcher, worker and scratch come from a
// pool. A read of one element (ReadElement) or of a few points whose
// chunks the chunk cache holds is a key built in a reused buffer, one
// lookup and a copy, with no selection, plan or engine at all.

// Inline thresholds: a read runs on the calling goroutine when it touches
// at most one read unit or, from a local store (where a unit costs CPU,
// not a round trip), at most inlineMaxBytes of decoded read units or, with
// a chunk cache (where a unit is mostly a copy of a cached chunk), at most
// inlineMaxCached units. Beyond them, decoding on all cores pays for the
// goroutines (a few µs); a remote store's requests always overlap.
const (
	inlineMaxBytes  = 128 << 10
	inlineMaxCached = 4
	// inlinePoints is the number of points ReadPoints first tries to
	// serve from the chunk cache one by one, before sorting them.
	inlinePoints = 64
)

// unitShape returns the shape of g's read units: its chunks, or the
// innermost chunks of its shards.
func (g *Grid) unitShape() []int {
	s := g.ChunkShape
	for l := g.Shard; l != nil; l = l.Nested() {
		s = l.ChunkShape()
	}
	return s
}

// unitBytes returns the decoded size of one read unit.
func (g *Grid) unitBytes() int {
	if g.Shard == nil {
		return g.chunkBytes()
	}
	l := g.Shard
	for l.Nested() != nil {
		l = l.Nested()
	}
	return l.InnerBytes()
}

// runsInline reports whether a read of n read units from r runs on the
// calling goroutine.
func (g *Grid) runsInline(r store.Reader, n int) bool {
	switch {
	case n <= 1:
		return true
	case !store.CapabilitiesOf(r).Local:
		return false
	case g.Cache != nil && n <= inlineMaxCached:
		return true
	}
	return n <= inlineMaxBytes/max(g.unitBytes(), 1)
}

var enginePool = sync.Pool{New: func() any {
	e := &engine{inline: true}
	e.f.e = e
	e.f.sink = e.f.one[:]
	e.f.runs = new([][]byte)
	return e
}}

// inlineEngine returns a pooled engine for a read on the calling goroutine.
func inlineEngine(r store.Reader, g *Grid, out nd.View, opt Options) *engine {
	e := enginePool.Get().(*engine)
	e.init(r, g, out, opt)
	return e
}

// release returns e to the pool, keeping its scratch buffers.
func (e *engine) release() {
	f, w, bufs := e.f, e.w, e.h.bufs
	clear(*f.runs)
	*f.runs = (*f.runs)[:0]
	*e = engine{inline: true, f: fetcher{e: e, runs: f.runs}, w: w}
	e.f.sink = e.f.one[:]
	e.h.bufs = bufs[:0]
	enginePool.Put(e)
}

// errPlaced tells an inline read's fetcher that its worker failed: the
// worker's error, which names the unit, is in engine.placeErr.
var errPlaced = errors.New("pipeline: unit failed")

// placeInline places u on the calling goroutine (an inline read's send).
func (e *engine) placeInline(ctx context.Context, u *unit) error {
	err := e.w.place(ctx, u)
	e.done(u)
	if err != nil {
		e.placeErr = err
		return errPlaced
	}
	return nil
}

// runInline executes the read of units (write units of a plan) on the
// calling goroutine.
func (e *engine) runInline(ctx context.Context, units iter.Seq[WriteUnit]) error {
	for u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if e.g.Shard != nil {
			err = e.f.readShard(ctx, &u)
		} else {
			err = e.f.readChunk(ctx, &u)
		}
		if errors.Is(err, errPlaced) {
			return e.placeErr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pointScratch is the reused state of one element lookup.
type pointScratch struct {
	chunk, local, inner []int
	key, ckey           []byte
}

var pointPool = sync.Pool{New: func() any { return &pointScratch{key: make([]byte, 0, 64), ckey: make([]byte, 0, 96)} }}

func getPointScratch(rank int) *pointScratch {
	s := pointPool.Get().(*pointScratch)
	if cap(s.chunk) < rank {
		s.chunk, s.local, s.inner = make([]int, rank), make([]int, rank), make([]int, rank)
	}
	s.chunk, s.local, s.inner = s.chunk[:rank], s.local[:rank], s.inner[:rank]
	return s
}

// cachedElement copies the element at p (in bounds) from the chunk cache
// into out and reports whether the cache held its chunk (inner chunk).
// Nested shards are not cached per inner chunk: always false.
func (g *Grid) cachedElement(s *pointScratch, p []int, out []byte) bool {
	if g.Cache == nil || g.Shard != nil && g.Shard.Nested() != nil {
		return false
	}
	for d, c := range g.ChunkShape {
		s.chunk[d], s.local[d] = p[d]/c, p[d]%c
	}
	s.key = g.appendKey(s.key[:0], s.chunk)
	inner, shape, want := -1, g.ChunkShape, 0
	if l := g.Shard; l != nil {
		shape = l.ChunkShape()
		for d, c := range shape {
			s.inner[d], s.local[d] = s.local[d]/c, s.local[d]%c
		}
		inner, want = l.Linear(s.inner), l.InnerBytes()
	} else {
		want = g.chunkBytes()
	}
	s.ckey = cache.AppendKey(s.ckey[:0], g.StoreID, s.key, 0, inner)
	v, ok := cache.GetBytes(g.Cache, s.ckey)
	if !ok || len(v) != want {
		return false
	}
	off := 0
	for d, c := range shape {
		off = off*c + s.local[d]
	}
	item := len(out)
	copy(out, v[off*item:off*item+item])
	return true
}

// ReadElement reads the one element at coords (one in-bounds coordinate
// per dimension) into out, which holds exactly one element. It is the
// small-read fast path: a chunk the chunk cache holds costs a lookup and a
// copy (no selection, plan or goroutine), any other is read on the calling
// goroutine like a one-unit Read. The result is Read's for the
// one-element selection.
func ReadElement(ctx context.Context, r store.Reader, g *Grid, coords []int, out []byte, opt Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(out) != g.itemSize() {
		return fmt.Errorf("pipeline: output holds %d bytes, an element has %d", len(out), g.itemSize())
	}
	if len(coords) != len(g.Shape) {
		return fmt.Errorf("%w: a point of rank %d for an array of rank %d", nd.ErrInvalidSelection, len(coords), len(g.Shape))
	}
	for d, c := range coords {
		if c < 0 || c >= g.Shape[d] {
			return fmt.Errorf("%w: coordinate %d in dimension %d of length %d", nd.ErrOutOfBounds, c, d, g.Shape[d])
		}
	}
	if g.Rect != nil {
		return g.readElementRect(ctx, r, coords, out, opt)
	}
	s := getPointScratch(len(coords))
	defer pointPool.Put(s)
	if g.cachedElement(s, coords, out) {
		return nil
	}
	return readOnePoint(ctx, r, g, coords, out, opt)
}

// readOnePoint reads the element at p (in bounds) into out with an inline
// engine.
func readOnePoint(ctx context.Context, r store.Reader, g *Grid, p []int, out []byte, opt Options) error {
	rank := len(p)
	buf := make([]int, 5*rank)
	part := nd.ChunkPart{Coords: buf[:rank:rank], SrcStart: buf[rank : 2*rank : 2*rank], SrcStep: buf[2*rank : 3*rank : 3*rank],
		Count: buf[3*rank : 4*rank : 4*rank], DstStart: buf[4*rank : 5*rank : 5*rank]}
	for d, c := range g.ChunkShape {
		part.Coords[d], part.SrcStart[d], part.SrcStep[d], part.Count[d] = p[d]/c, p[d]%c, 1, 1
	}
	e := inlineEngine(r, g, nd.Contiguous(out, part.Count, len(out)), opt)
	defer e.release()
	return e.runInline(ctx, func(yield func(WriteUnit) bool) { yield(g.writeUnit(part)) })
}

// cachedPoints serves the n points of pts from the chunk cache into out
// when it holds the chunks of all of them, and reports whether it did.
func (g *Grid) cachedPoints(pts nd.Points, out []byte) bool {
	if g.Cache == nil || pts.Len() > inlinePoints {
		return false
	}
	item := g.itemSize()
	s := getPointScratch(pts.Rank)
	defer pointPool.Put(s)
	for k := range pts.Len() {
		if !g.cachedElement(s, pts.At(k), out[k*item:(k+1)*item]) {
			return false
		}
	}
	return true
}

// boxScratch is the reused state of one cached box read.
type boxScratch struct {
	pointScratch
	lo, hi, u, first, last, a, shape, ustr, oshape, ostr []int
}

var boxPool = sync.Pool{New: func() any {
	return &boxScratch{pointScratch: pointScratch{key: make([]byte, 0, 64), ckey: make([]byte, 0, 96)}}
}}

// getBoxScratch returns pooled box scratch for rank dimensions.
func getBoxScratch(rank int) *boxScratch {
	s := boxPool.Get().(*boxScratch)
	all := [...]*[]int{&s.chunk, &s.local, &s.inner, &s.lo, &s.hi, &s.u, &s.first, &s.last, &s.a, &s.shape, &s.ustr, &s.oshape, &s.ostr}
	if cap(s.lo) < rank {
		buf := make([]int, len(all)*rank)
		for i, p := range all {
			*p = buf[i*rank : (i+1)*rank : (i+1)*rank]
		}
	}
	for _, p := range all {
		*p = (*p)[:rank]
	}
	return s
}

// inlineMaxBox bounds the read units a box read tries to copy from the
// chunk cache on the calling goroutine.
const inlineMaxBox = 16

// ReadCachedBox reads the box selection sel (every dimension an integer
// index or a step-1 slice, as nd.BoxInto gives) into out, in C order,
// from g's chunk cache, and reports whether it did: false when g has no
// chunk cache, the cache lacks a read unit sel touches, sel touches more
// than 16 read units or is no such box, or out does not hold exactly
// sel's elements. After false, out holds nothing defined: read sel with
// Read. It builds no plan and, with the cache an LRU, allocates nothing:
// per read unit a key built in pooled scratch, a lookup and a strided
// copy. It keeps no reference to sel or out.
func ReadCachedBox(g *Grid, sel nd.Selection, out []byte) bool {
	rank := len(sel)
	if g.Cache == nil || rank == 0 || rank != len(g.Shape) {
		return false
	}
	s := getBoxScratch(rank)
	defer boxPool.Put(s)
	item, n := g.itemSize(), 1
	for d := rank - 1; d >= 0; d-- {
		s.oshape[d], s.ostr[d] = sel[d].Len(), n*item
		n *= s.oshape[d]
	}
	if n*item != len(out) {
		return false
	}
	return g.cachedBoxIn(s, sel, nd.View{Data: out, Shape: s.oshape, Strides: s.ostr, ItemSize: item})
}

// cachedBox is cachedBoxIn with pooled scratch, for a box read into any
// view.
func (g *Grid) cachedBox(sel nd.Selection, out nd.View) bool {
	if g.Cache == nil || len(sel) == 0 {
		return false
	}
	s := getBoxScratch(len(sel))
	defer boxPool.Put(s)
	return g.cachedBoxIn(s, sel, out)
}

// cachedBoxIn copies the box selection sel (every dimension an integer or a
// step-1 slice) into out from the chunk cache when the cache holds every
// read unit it touches (at most inlineMaxBox), and reports whether it did.
// It builds no plan: a key per unit, a lookup, a strided copy. s is
// scratch of sel's rank (getBoxScratch); out may live in it.
func (g *Grid) cachedBoxIn(s *boxScratch, sel nd.Selection, out nd.View) bool {
	rank := len(sel)
	if g.Cache == nil || rank == 0 || g.Rect != nil || g.Shard != nil && g.Shard.Nested() != nil {
		return false
	}
	unit := g.unitShape()
	n := 1
	for _, d := range sel {
		if d.Index != nil || d.Order != nil || d.Count == 0 || d.Count > 1 && d.Step != 1 {
			return false
		}
	}
	for d, dim := range sel {
		s.lo[d], s.hi[d] = dim.Start, dim.Start+dim.Count
		s.first[d], s.last[d] = s.lo[d]/unit[d], (s.hi[d]-1)/unit[d]
		n *= s.last[d] - s.first[d] + 1
		if n > inlineMaxBox {
			return false
		}
	}
	item := out.ItemSize
	st := item
	for d := rank - 1; d >= 0; d-- {
		s.ustr[d] = st
		st *= unit[d]
	}
	copy(s.u, s.first)
	want := g.unitBytes()
	for {
		// The unit's chunk (shard) and, for a shard, its inner chunk.
		inner := -1
		so, do := 0, out.Offset
		for d, c := range g.ChunkShape {
			org := s.u[d] * unit[d]
			s.chunk[d], s.inner[d] = org/c, (org%c)/unit[d]
			s.a[d] = max(s.lo[d], org)
			s.shape[d] = min(s.hi[d], org+unit[d]) - s.a[d]
			so += (s.a[d] - org) * s.ustr[d]
			do += (s.a[d] - s.lo[d]) * out.Strides[d]
		}
		s.key = g.appendKey(s.key[:0], s.chunk)
		if g.Shard != nil {
			inner = g.Shard.Linear(s.inner)
		}
		s.ckey = cache.AppendKey(s.ckey[:0], g.StoreID, s.key, 0, inner)
		v, ok := cache.GetBytes(g.Cache, s.ckey)
		if !ok || len(v) != want {
			return false
		}
		nd.Copy(nd.View{Data: out.Data, Offset: do, Shape: s.shape, Strides: out.Strides, ItemSize: item},
			nd.View{Data: v, Offset: so, Shape: s.shape, Strides: s.ustr, ItemSize: item})
		d := rank - 1
		for ; d >= 0; d-- {
			if s.u[d]++; s.u[d] <= s.last[d] {
				break
			}
			s.u[d] = s.first[d]
		}
		if d < 0 {
			return true
		}
	}
}
