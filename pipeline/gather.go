package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// This file holds the gathers: selections that are not boxes. An
// orthogonal selection (index arrays, masks) is a Selection whose listed
// dimensions the chunk grid splits like any other (nd.Selection.Chunks);
// a coordinate selection (points) is sorted by the chunk hierarchy, so
// that every chunk, shard and inner chunk it touches holds one run of
// consecutive points. Either way every touched (inner) chunk is fetched
// and decoded once, by the one engine, and the values are put back in the
// order asked at the end. Cost and memory grow with the chunks touched and
// the indices given, never with the chunk grid.

// readReordered reads a selection that reorders: its compact form into a
// temporary buffer, then the output gathered from it.
func readReordered(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, out nd.View, opt Options) error {
	compact := sel.Compact()
	item := g.itemSize()
	n := compact.NumElements() * item
	buf := bufpool.Get(n)
	defer bufpool.Put(buf)
	tmp := nd.Contiguous((*buf)[:n], compact.FullShape(), item)
	if err := runSelection(ctx, r, g, compact, tmp, opt); err != nil {
		return err
	}
	gatherParallel(out, tmp, sel.Orders(), opt.WithDefaults().DecodeConcurrency)
	return nil
}

// gatherMinBytes is the output size below which a gather runs on one
// goroutine.
const gatherMinBytes = 4 << 20

// gatherPointsMinBytes is gatherMinBytes for the values of points put
// back in the order asked: each is a load at random, not a run, so two
// goroutines pay for themselves from 16k float32 points on.
const gatherPointsMinBytes = 64 << 10

// gatherParallel is nd.Gather(dst, src, index) on up to workers
// goroutines, each gathering a slab of dst's first dimension.
func gatherParallel(dst, src nd.View, index [][]int, workers int) {
	gatherParallelMin(dst, src, index, workers, gatherMinBytes)
}

// gatherParallelMin is gatherParallel with one goroutine per minBytes of
// output at most.
func gatherParallelMin(dst, src nd.View, index [][]int, workers, minBytes int) {
	n := 0
	if len(dst.Shape) > 0 {
		n = dst.Shape[0]
	}
	bytes := nd.NumElements(dst.Shape) * dst.ItemSize
	workers = min(workers, n, bytes/minBytes)
	if workers <= 1 {
		nd.Gather(dst, src, index)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() {
			d := dst
			d.Shape = slices.Clone(dst.Shape)
			d.Shape[0] = hi - lo
			d.Offset += lo * dst.Strides[0]
			idx := slices.Clone(index)
			s := src
			if idx[0] != nil {
				idx[0] = idx[0][lo:hi]
			} else {
				s.Shape = slices.Clone(src.Shape)
				s.Shape[0] = hi - lo
				s.Offset += lo * src.Strides[0]
			}
			nd.Gather(d, s, idx)
		})
	}
	wg.Wait()
}

// pointsShape is the shape the engine places n points in: 1, ..., 1, n.
func pointsShape(rank, n int) []int {
	s := make([]int, rank)
	for d := range s {
		s[d] = 1
	}
	s[rank-1] = n
	return s
}

// ReadPoints reads the elements at the points pts (a coordinate selection,
// zarr-python's vindex: normalised against g's shape by nd.NormalizePoints
// or nd.MaskPoints) into out, in the order of pts; out holds pts.Len()
// elements. Points are grouped by chunk, shard and inner chunk
// (groupPoints), so each touched inner chunk is fetched and decoded once
// however many points it serves; the values then go back in the order
// asked.
func ReadPoints(ctx context.Context, r store.Reader, g *Grid, pts nd.Points, out []byte, opt Options) error {
	item := g.itemSize()
	if pts.Rank != len(g.Shape) || pts.Rank == 0 || len(pts.Coords)%pts.Rank != 0 {
		return checkPoints(g, pts)
	}
	if want := pts.Len() * item; len(out) != want {
		return fmt.Errorf("pipeline: output holds %d bytes, %d points need %d", len(out), pts.Len(), want)
	}
	if pts.Len() == 0 || ctx.Err() != nil {
		return ctx.Err()
	}
	if g.Rect != nil || pts.Len() <= inlinePoints {
		if err := checkPoints(g, pts); err != nil {
			return err
		}
		if g.Rect != nil {
			return g.readPointsRect(ctx, r, pts, out, opt)
		}
		if g.cachedPoints(pts, out) {
			return nil
		}
	}
	workers := opt.WithDefaults().DecodeConcurrency
	gr, err := groupPoints(g, pts, workers)
	if err != nil {
		return err
	}
	return readGrouped(ctx, r, g, &gr, out, opt, workers)
}

// ReadPointLists is ReadPoints of the points whose coordinates in
// dimension d are lists[d] (the index arrays of zarr-python's vindex, as
// nd.NormalizePoints takes them: negative coordinates count from the end,
// lists of length 1 broadcast). Where the points are placed as they are
// grouped (groupLists), the lists are normalised in the grouping's first
// pass, and the points are never copied into an nd.Points; otherwise, and
// for errors, they go through nd.NormalizePoints and ReadPoints.
func ReadPointLists(ctx context.Context, r store.Reader, g *Grid, lists [][]int, out []byte, opt Options) error {
	rank := len(g.Shape)
	n := -1
	if len(lists) == rank && rank > 0 && g.Rect == nil {
		n = len(lists[0])
		for _, l := range lists {
			if len(l) != n {
				n = -1 // lists that broadcast, or do not agree
				break
			}
		}
	}
	if n > inlinePoints {
		if want := n * g.itemSize(); len(out) != want {
			return fmt.Errorf("pipeline: output holds %d bytes, %d points need %d", len(out), n, want)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		workers := opt.WithDefaults().DecodeConcurrency
		gr, ok, err := groupLists(g, lists, n, workers)
		if err != nil {
			return err
		}
		if ok {
			return readGrouped(ctx, r, g, &gr, out, opt, workers)
		}
	}
	pts, err := nd.NormalizePoints(lists, g.Shape)
	if err != nil {
		return err
	}
	return ReadPoints(ctx, r, g, pts, out, opt)
}

// readGrouped reads the points gr grouped into out (in the order the
// points were asked in) and releases gr.
func readGrouped(ctx context.Context, r store.Reader, g *Grid, gr *grouping, out []byte, opt Options, workers int) error {
	defer gr.release()
	item := g.itemSize()
	order, grouped := gr.order, gr.len()
	dst := out // the grouped points' values: out itself unless sorted and merged
	if order != nil {
		buf := bufpool.Get(grouped * item)
		defer bufpool.Put(buf)
		dst = (*buf)[:grouped*item]
	}
	view := nd.Contiguous(dst, pointsShape(len(g.Shape), grouped), item)
	parts, nparts, nunits := gr.parts(g) // with places: straight to out
	plan := partsPlan(g, parts, nparts)
	var err error
	if grouped <= inlinePoints && g.runsInline(r, nunits) {
		e := inlineEngine(r, g, view, opt)
		err = e.runInline(ctx, plan.WriteUnits())
		e.release()
	} else {
		err = newEngine(r, g, view, opt).run(ctx, plan)
	}
	if err != nil {
		return err
	}
	if order != nil {
		gatherParallelMin(nd.Contiguous(out, []int{len(order)}, item), nd.Contiguous(dst, []int{grouped}, item), [][]int{order}, workers, gatherPointsMinBytes)
	}
	return nil
}

// WritePoints stores data (one element per point, in the order of pts)
// at the points pts. Where a point repeats, its last value wins, as in
// NumPy. Chunks (shards) are written as Write writes them: each touched
// one once, read-modify-write unless the points cover it.
func WritePoints(ctx context.Context, s ReadWriter, g *Grid, pts nd.Points, data []byte, opt Options) error {
	item := g.itemSize()
	if err := checkPoints(g, pts); err != nil {
		return err
	}
	if want := pts.Len() * item; len(data) != want {
		return fmt.Errorf("pipeline: data holds %d bytes, %d points need %d", len(data), pts.Len(), want)
	}
	if pts.Len() == 0 {
		return ctx.Err()
	}
	if g.Rect != nil {
		return g.writePointsRect(ctx, s, pts, data, opt)
	}
	sorted, order := sortPoints(g, pts, true)
	src := nd.Contiguous(data, pointsShape(pts.Rank, pts.Len()), item)
	if order != nil {
		n := sorted.Len() * item
		buf := bufpool.Get(n)
		defer bufpool.Put(buf)
		src = nd.Contiguous((*buf)[:n], pointsShape(pts.Rank, sorted.Len()), item)
		nd.Gather(nd.Contiguous(src.Data, []int{sorted.Len()}, item), nd.Contiguous(data, []int{pts.Len()}, item), [][]int{order})
	}
	units := func(yield func(WriteUnit) bool) {
		for p := range nd.PointParts(sorted, g.ChunkShape) {
			if !yield(WriteUnit{Key: g.Key(p.Coords), Coords: p.Coords, Part: p, Whole: p.CoversChunk(g.ChunkShape, g.Shape)}) {
				return
			}
		}
	}
	return writeUnits(ctx, s, g, units, src, opt)
}

// checkPoints reports points that do not fit g.
func checkPoints(g *Grid, pts nd.Points) error {
	if pts.Rank != len(g.Shape) || pts.Rank == 0 || len(pts.Coords)%pts.Rank != 0 {
		return fmt.Errorf("%w: points of rank %d for an array of rank %d", nd.ErrInvalidSelection, pts.Rank, len(g.Shape))
	}
	for k := range pts.Len() {
		for d, c := range pts.At(k) {
			if c < 0 || c >= g.Shape[d] {
				return fmt.Errorf("%w: point %d has coordinate %d in dimension %d of length %d", nd.ErrOutOfBounds, k, c, d, g.Shape[d])
			}
		}
	}
	return nil
}

// levels returns the chunk shapes of g's hierarchy, outermost first: the
// grid's chunks (shards), then the inner chunks of every level of nesting.
func (g *Grid) levels() [][]int {
	lv := [][]int{g.ChunkShape}
	for l := g.Shard; l != nil; l = l.Nested() {
		lv = append(lv, l.ChunkShape())
	}
	return lv
}

// grouping is groupPoints' result: the points grouped by read unit and
// the runs they make at each level of the chunk hierarchy.
type grouping struct {
	pts nd.Points // the points grouped; none where placed
	// placed, when set, stands for pts and places: the points grouped
	// (nd.PlacedPoints.Elems), each with its place in the points asked
	// and its element in its read unit; then chunkAt and innerAt hold the
	// coordinates of the chunk of each run of chunks and inner.
	placed           []uint64
	elemShape        []int
	chunkAt, innerAt []int
	// places is the position among the points asked of each grouped
	// point, where the points were regrouped with their repeats (their
	// values then go straight to their places: nd.ChunkPart.Places);
	// order, where the points were sorted and their repeats merged
	// (sortPoints' fallback), is the position in pts of each point asked.
	// Both are nil when the points asked were grouped.
	places, order []int
	// The ends of the runs of pts in one grid chunk, in one chunk of the
	// first inner level (sharded grids), and the number of runs in one
	// read unit; chunks is nil when the runs are not known (sortPoints'
	// fallback, for hierarchies whose keys do not fit 64 bits).
	chunks, inner []int
	units         int
	// The read unit of each run of chunks and inner, while grouping.
	chunkUnits, innerUnits []uint64
	s                      *gatherScratch // where the slices live; nil: allocated
}

// len returns the number of points grouped.
func (gr *grouping) len() int {
	if gr.placed != nil {
		return len(gr.placed)
	}
	return gr.pts.Len()
}

// gatherScratch is the reused memory of one grouping.
type gatherScratch struct {
	count          []int    // the counting sort's counts, per worker (units+1 each)
	tab            []uint64 // hierKeyer.fillUnits' tables
	places, coords []int
	xs, tmp        []uint64
	chunks, inner  []int
	placed         []uint64
	chunkUnits     []uint64 // the read unit of each run, per level
	innerUnits     []uint64
	chunkAt        []int // the coordinates of each run's chunk, per level
	innerAt        []int
}

var gatherPool = sync.Pool{New: func() any { return new(gatherScratch) }}

// sized returns s with length n, reallocated when its capacity is short.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// release gives the grouping's memory back: its slices must not be used
// after.
func (gr *grouping) release() {
	if gr.s != nil {
		gr.s.chunks, gr.s.inner = gr.chunks[:0], gr.inner[:0]
		gr.s.chunkUnits, gr.s.innerUnits = gr.chunkUnits[:0], gr.innerUnits[:0]
		gr.s.chunkAt, gr.s.innerAt = gr.chunkAt[:0], gr.innerAt[:0]
		gatherPool.Put(gr.s)
		gr.s = nil
	}
}

// parts returns the grouped points' parts of g's grid, how many, and the
// number of read units they touch.
func (gr *grouping) parts(g *Grid) (iter.Seq[nd.ChunkPart], int, int) {
	if gr.chunks == nil {
		return nd.PointParts(gr.pts, g.ChunkShape), nd.NumPointParts(gr.pts, g.ChunkShape), nd.NumPointParts(gr.pts, g.unitShape())
	}
	if gr.placed != nil {
		pp := nd.PlacedPoints{Rank: len(g.Shape), Elems: gr.placed, ElemShape: gr.elemShape, Ends: gr.chunks, Coords: gr.chunkAt}
		if g.Shard != nil {
			pp.InnerEnds, pp.InnerCoords = gr.inner, gr.innerAt
		}
		return pp.Parts(), len(gr.chunks), gr.units
	}
	var inner []int
	if g.Shard != nil {
		inner = g.Shard.ChunkShape()
	}
	parts := nd.GroupedPointParts(gr.pts, g.ChunkShape, gr.chunks, inner, gr.inner)
	if places := gr.places; places != nil {
		grouped := parts
		parts = func(yield func(nd.ChunkPart) bool) {
			for p := range grouped {
				// The part's points are grouped points [k, k+n): their
				// places are places[k:k+n] (the parts of its shard inherit
				// them).
				k, n := p.DstStart[len(p.DstStart)-1], p.Count[len(p.Count)-1]
				p.Places, p.PlaceBase = places[k:k+n:k+n], k
				if !yield(p) {
					return
				}
			}
		}
	}
	return parts, len(gr.chunks), gr.units
}

// runEnds collects the runs of grouped points at each level from the runs
// of their read units.
type runEnds struct {
	gr                 *grouping
	perChunk, perInner divider // read units per grid chunk, per first-level inner chunk
	sharded            bool
	lastChunk, lastIn  uint64
}

func newRunEnds(kr *hierKeyer, gr *grouping, sharded bool) runEnds {
	per := func(from int) divider {
		p := uint64(1)
		for _, r := range kr.radix[from:] {
			p *= r
		}
		return newDivider64(p)
	}
	re := runEnds{gr: gr, perChunk: per(kr.rank), sharded: sharded}
	if sharded {
		re.perInner = per(2 * kr.rank)
	}
	return re
}

// add records the run of unit u ending at end (runs come in order of u).
func (re *runEnds) add(u uint64, end int) {
	gr := re.gr
	c := re.perChunk.div(u)
	if gr.units > 0 && c == re.lastChunk {
		gr.chunks[len(gr.chunks)-1] = end
	} else {
		gr.chunks = append(gr.chunks, end)
		gr.chunkUnits = append(gr.chunkUnits, u)
	}
	if re.sharded {
		i := re.perInner.div(u)
		if gr.units > 0 && i == re.lastIn {
			gr.inner[len(gr.inner)-1] = end
		} else {
			gr.inner = append(gr.inner, end)
			gr.innerUnits = append(gr.innerUnits, u)
		}
		re.lastIn = i
	}
	re.lastChunk = c
	gr.units++
}

// groupPoints groups the points of pts (checked against g's shape here)
// by read unit (innermost chunk) in the chunk hierarchy's order — grid
// chunk, then inner chunk at every level — and returns them with order,
// the position in the grouped points of each point asked (nil when pts
// already is grouped), and the runs the grouped points make at each level.
// Points keep their order within a unit and repeats are kept: a read
// places each from its unit's decoded values, which costs no more than
// finding it again. Each point costs a bounds check and its unit's index
// once (multiplications, no division) and two linear passes: a counting
// sort when the units of the grid are few for the points, else a radix
// sort of the units' indices. From groupParallelMin points on, the passes
// run on a crew of up to workers goroutines (newCrew): the first in blocks
// taken by whoever is free, the counting sort on a fixed slice of the
// points per worker (counts per worker, offset so that each places its
// points after those of the workers before it: the result is the one
// goroutine's). With the counting sort, for grids of chunks or of shards
// of one level, the points are placed (grouping.placed): the first pass
// finds each point's element in its unit with its unit, and the second
// moves one word per point, its place and element, not its coordinates.
// The memory is pooled: release the grouping when done.
func groupPoints(g *Grid, pts nd.Points, workers int) (grouping, error) {
	kr, ok := newHierKeyer(g)
	if !ok {
		if err := checkPoints(g, pts); err != nil {
			return grouping{}, err
		}
		sorted, order := sortPoints(g, pts, false)
		return grouping{pts: sorted, order: order}, nil
	}
	n, rank := pts.Len(), pts.Rank
	s := gatherPool.Get().(*gatherScratch)
	gr := grouping{s: s, chunks: s.chunks[:0], inner: s.inner[:0], chunkUnits: s.chunkUnits[:0], innerUnits: s.innerUnits[:0]}
	re := newRunEnds(&kr, &gr, g.Shard != nil)
	bad := func(k int) error {
		gr.release()
		for d, c := range pts.At(k) {
			if c < 0 || c >= g.Shape[d] {
				return fmt.Errorf("%w: point %d has coordinate %d in dimension %d of length %d", nd.ErrOutOfBounds, k, c, d, g.Shape[d])
			}
		}
		return nil
	}
	coords := pts.Coords[:n*rank]
	placed := kr.placeable(g, n)
	// Pass 1: every point's read unit (and element), checked against the
	// shape.
	xs := sized(s.xs, n)
	s.xs = xs
	if n < groupParallelMin {
		workers = 1
	}
	c := newCrew(min(workers, maxGroupWorkers))
	defer c.close()
	if k := kr.fillUnitsOn(xs, coords, g.Shape, s, c, placed); k >= 0 {
		return grouping{}, bad(k)
	}
	return gr.sortUnits(g, &kr, &re, xs, pts, placed, c)
}

// groupLists is groupPoints for the points whose coordinates in
// dimension d are lists[d] (n each, not broadcast; negative ones count
// from the end), where they are placed (hierKeyer.placeable): the first
// pass normalises and checks the coordinates as it finds their units and
// elements, reading the lists in order, and the points are never copied.
// ok is false, and nothing done, where they would not be placed; a
// coordinate out of bounds is nd.NormalizePoints' error.
func groupLists(g *Grid, lists [][]int, n, workers int) (gr grouping, ok bool, err error) {
	kr, ok := newHierKeyer(g)
	if !ok || !kr.placeable(g, n) || len(g.Shape) > 8 {
		return grouping{}, false, nil
	}
	s := gatherPool.Get().(*gatherScratch)
	gr = grouping{s: s, chunks: s.chunks[:0], inner: s.inner[:0], chunkUnits: s.chunkUnits[:0], innerUnits: s.innerUnits[:0]}
	re := newRunEnds(&kr, &gr, g.Shard != nil)
	xs := sized(s.xs, n)
	s.xs = xs
	if n < groupParallelMin {
		workers = 1
	}
	c := newCrew(min(workers, maxGroupWorkers))
	defer c.close()
	if kr.fillListUnitsOn(xs, lists, g.Shape, s, c) >= 0 {
		gr.release()
		if _, err := nd.NormalizePoints(lists, g.Shape); err != nil {
			return grouping{}, false, err
		}
		return grouping{}, false, fmt.Errorf("%w: a coordinate outside the array", nd.ErrOutOfBounds) // not reached: NormalizePoints finds it
	}
	gr, err = gr.sortUnits(g, &kr, &re, xs, nd.Points{Rank: len(g.Shape)}, true, c)
	return gr, err == nil, err
}

// fillListUnitsOn is fillUnitsOn (with elements) for the points whose
// coordinates in dimension d are lists[d], negative ones counting from
// the end: the tables span [-shape[d], shape[d]) where the dimensions
// are short beside the points (rank ≤ 8).
func (kr *hierKeyer) fillListUnitsOn(us []uint64, lists [][]int, shape []int, s *gatherScratch, c *crew) int {
	rank, n := kr.rank, len(us)
	shape = shape[:rank]
	total := 0
	for _, l := range shape {
		total += 2 * l
	}
	var bad firstBad
	bad.init()
	if total > n {
		c.claim(n, func(w, lo, hi int) {
			var rem [8]uint64
			var q [8]int
			p := q[:rank]
			for k := lo; k < hi; k++ {
				for d, l := range lists {
					c := l[k]
					if c < 0 {
						c += shape[d]
					}
					p[d] = c
				}
				u, ok := kr.checkedUnit(p, shape, rem[:rank])
				if !ok {
					bad.add(w, k)
					return
				}
				us[k] = u<<nd.ElemBits | kr.elem(p)
			}
		})
		return bad.first()
	}
	tab := sized(s.tab, total)
	s.tab = tab
	var rem [8]uint64
	var tabs [8][]uint64
	for d, l := range shape {
		t := tab[: 2*l : 2*l]
		tab = tab[2*l:]
		var q [8]int
		for c := range l {
			q[d] = c
			u := kr.unit(q[:rank], rem[:rank])<<nd.ElemBits | rem[d]*kr.istride[d]
			t[c], t[l+c] = u, u // c - l, then c: entry c + l
		}
		tabs[d] = t
	}
	c.claim(n, func(w, lo, hi int) { bad.add(w, fillFromListTables(us, lists, tabs[:rank], shape, lo, hi)) })
	return bad.first()
}

// fillFromListTables is fillFromTables for coordinates in lists (one
// per dimension), each in [-shape[d], shape[d]) and the tables indexed
// from -shape[d].
func fillFromListTables(us []uint64, lists [][]int, tabs [][]uint64, shape []int, lo, hi int) int {
	switch len(tabs) {
	case 3:
		t0, t1, t2 := tabs[0], tabs[1], tabs[2]
		n0, n1, n2 := shape[0], shape[1], shape[2]
		l0, l1, l2 := lists[0][lo:hi], lists[1][lo:hi], lists[2][lo:hi]
		us = us[lo:hi]
		for k := range us {
			c0, c1, c2 := uint(l0[k]+n0), uint(l1[k]+n1), uint(l2[k]+n2)
			if c0 >= uint(len(t0)) || c1 >= uint(len(t1)) || c2 >= uint(len(t2)) {
				return lo + k
			}
			us[k] = t0[c0] + t1[c1] + t2[c2]
		}
	case 2:
		t0, t1 := tabs[0], tabs[1]
		n0, n1 := shape[0], shape[1]
		l0, l1 := lists[0][lo:hi], lists[1][lo:hi]
		us = us[lo:hi]
		for k := range us {
			c0, c1 := uint(l0[k]+n0), uint(l1[k]+n1)
			if c0 >= uint(len(t0)) || c1 >= uint(len(t1)) {
				return lo + k
			}
			us[k] = t0[c0] + t1[c1]
		}
	default:
		for k := lo; k < hi; k++ {
			var u uint64
			for d, l := range lists {
				c := uint(l[k] + shape[d])
				if c >= uint(len(tabs[d])) {
					return k
				}
				u += tabs[d][c]
			}
			us[k] = u
		}
	}
	return -1
}

// counting reports whether groupPoints sorts n points by unit with a
// counting sort: the units are few for the points.
func (kr *hierKeyer) counting(n int) bool { return kr.units <= uint64(2*n+4096) && kr.units < 1<<32 }

// placeable reports whether groupPoints places n points of g: they sort
// with a counting sort, a unit and an element fit one word each (places
// fit 64 - nd.ElemBits bits), and the runs of every level are known (no
// nested shards).
func (kr *hierKeyer) placeable(g *Grid, n int) bool {
	return kr.counting(n) && (g.Shard == nil || g.Shard.Nested() == nil) && kr.units <= 1<<(64-nd.ElemBits) &&
		kr.unitElems() <= 1<<nd.ElemBits && uint64(n) <= 1<<(64-nd.ElemBits)
}

// sortUnits is groupPoints after its first pass: xs holds the unit of
// every point of pts (shifted left by nd.ElemBits, with its element, where
// placed; then pts is not read and may be empty).
func (gr *grouping) sortUnits(g *Grid, kr *hierKeyer, re *runEnds, xs []uint64, pts nd.Points, placed bool, c *crew) (grouping, error) {
	n, rank, s := len(xs), len(g.Shape), gr.s
	coords := pts.Coords
	var shift uint // xs[k] >> shift is point k's unit
	if placed {
		shift = nd.ElemBits
	}
	grouped := true
	for k := 1; k < n; k++ {
		if xs[k]>>shift < xs[k-1]>>shift {
			grouped = false
			break
		}
	}
	if grouped {
		for k := 1; k <= n; k++ {
			if k == n || xs[k]>>shift != xs[k-1]>>shift {
				re.add(xs[k-1]>>shift, k)
			}
		}
		if !placed {
			gr.pts = pts
			return *gr, nil
		}
		// Each point's place is its own.
		gr.placed = sized(s.placed, n)
		s.placed = gr.placed
		for k, x := range xs {
			gr.placed[k] = uint64(k)<<nd.ElemBits | x&(1<<nd.ElemBits-1)
		}
		gr.placedCoords(kr)
		return *gr, nil
	}
	if kr.counting(n) {
		// A counting sort: the units are few for the points. In
		// parallel only where the counts per worker cost little beside
		// the points.
		units := int(kr.units)
		workers := c.workers()
		if units*workers > n {
			workers, c = 1, nil
		}
		count := sized(s.count, workers*(units+1))
		s.count = count
		clear(count)
		countsOf := func(w int) []int { return count[w*(units+1) : (w+1)*(units+1)] }
		c.split(n, func(w, lo, hi int) {
			cnt := countsOf(w)
			for _, x := range xs[lo:hi] {
				cnt[x>>shift+1]++
			}
		})
		// Worker w's points of unit u go after those of unit u's workers
		// before it: counts become starts.
		at := 0
		for u := range units {
			for w := range workers {
				c := countsOf(w)
				m := c[u+1]
				c[u] = at
				at += m
			}
		}
		// Pass 2: each point's place, with its element (placed) or its
		// coordinates scattered there (the points asked are read in
		// order; writes at random cost less than reads at random).
		if placed {
			gr.placed = sized(s.placed, n)
			s.placed = gr.placed
			c.split(n, func(w, lo, hi int) { placeElems(countsOf(w), xs, gr.placed, lo, hi) })
		} else {
			s.coords = sized(s.coords, n*rank)
			places := sized(s.places, n)
			s.places = places
			gr.places = places
			gr.pts = nd.Points{Rank: rank, Coords: s.coords}
			c.split(n, func(w, lo, hi int) {
				placePoints(countsOf(w), xs, places, coords, s.coords, rank, lo, hi)
			})
		}
		// The last worker's count of unit u is now the end of its run.
		prev := 0
		for u, end := range countsOf(workers - 1)[:units] {
			if end > prev {
				re.add(uint64(u), end)
				prev = end
			}
		}
		if placed {
			gr.placedCoords(kr)
		}
		return *gr, nil
	}
	unitBits, posBits := uint(bits.Len64(kr.units-1)), uint(bits.Len(uint(n)))
	if unitBits+posBits > 64 {
		gr.release()
		sorted, order := sortPoints(g, pts, false)
		return grouping{pts: sorted, order: order}, nil // not placed: pts holds the points
	}
	s.coords = sized(s.coords, n*rank)
	places := sized(s.places, n)
	s.places = places
	gr.places = places
	gr.pts = nd.Points{Rank: rank, Coords: s.coords}
	for k, u := range xs {
		xs[k] = u<<posBits | uint64(k)
	}
	s.tmp = sized(s.tmp, n)
	xs = radixSortBits(xs, s.tmp, posBits, posBits+unitBits)
	for k := 1; k <= n; k++ {
		if k == n || xs[k]>>posBits != xs[k-1]>>posBits {
			re.add(xs[k-1]>>posBits, k)
		}
	}
	mask := uint64(1)<<posBits - 1
	// The coordinates gathered in grouped order (many units: the points
	// are few beside them).
	src, dst := coords, s.coords
	for i, x := range xs {
		k := int(x & mask)
		places[i] = k
		copy(dst[i*rank:(i+1)*rank], src[k*rank:(k+1)*rank])
	}
	return *gr, nil
}

// placedCoords sets the coordinates of the chunk of every run of a placed
// grouping (grid coordinates, then those within the shard) from the runs'
// units, and the shape its elements are counted in.
func (gr *grouping) placedCoords(kr *hierKeyer) {
	s, rank := gr.s, kr.rank
	gr.elemShape = kr.unitShape
	var digits [16]int
	dig := digits[:]
	if len(kr.div) > len(dig) {
		dig = make([]int, len(kr.div))
	}
	dig = dig[:len(kr.div)]
	gr.chunkAt = s.chunkAt[:0]
	for _, u := range gr.chunkUnits {
		kr.digits(u, dig)
		gr.chunkAt = append(gr.chunkAt, dig[:rank]...)
	}
	gr.innerAt = s.innerAt[:0]
	if len(dig) > rank {
		for _, u := range gr.innerUnits {
			kr.digits(u, dig)
			gr.innerAt = append(gr.innerAt, dig[rank:2*rank]...)
		}
	}
}

// placeElems is placePoints for placed points: point k of unit xs[k] >>
// nd.ElemBits takes the next place i of its unit, and placed[i] records k
// with its element (xs[k]'s low bits).
func placeElems(count []int, xs, placed []uint64, lo, hi int) {
	const mask = 1<<nd.ElemBits - 1
	for k := lo; k < hi; k++ {
		x := xs[k]
		u := x >> nd.ElemBits
		i := count[u]
		count[u] = i + 1
		placed[i] = uint64(k)<<nd.ElemBits | x&mask
	}
}

// groupParallelMin is the number of points from which groupPoints runs
// on more than one goroutine.
const groupParallelMin = 1 << 14

// maxGroupWorkers bounds the goroutines of one grouping.
const maxGroupWorkers = 64

// firstBad is, per worker of a grouping's first pass, the first point
// found outside the array (-1 for none).
type firstBad [maxGroupWorkers]int

func (b *firstBad) init() {
	for w := range b {
		b[w] = -1
	}
}

// add records k (-1: none) found by worker w.
func (b *firstBad) add(w, k int) {
	if k >= 0 && (b[w] < 0 || k < b[w]) {
		b[w] = k
	}
}

// first returns the first point any worker found outside, or -1.
func (b *firstBad) first() int {
	k := -1
	for _, x := range b {
		if x >= 0 && (k < 0 || x < k) {
			k = x
		}
	}
	return k
}

// placePoints is the counting sort's second pass over points [lo, hi):
// point k of unit xs[k] takes the next place i of its unit (count[u]),
// places[i] records k, and its coordinates (rank each, from src) go there
// in dst.
func placePoints(count []int, xs []uint64, places, src, dst []int, rank, lo, hi int) {
	switch rank {
	case 2:
		for k := lo; k < hi; k++ {
			u := xs[k]
			i := count[u]
			count[u] = i + 1
			places[i] = k
			dst[2*i], dst[2*i+1] = src[2*k], src[2*k+1]
		}
	case 3:
		for k := lo; k < hi; k++ {
			u := xs[k]
			i := count[u]
			count[u] = i + 1
			places[i] = k
			dst[3*i], dst[3*i+1], dst[3*i+2] = src[3*k], src[3*k+1], src[3*k+2]
		}
	default:
		for k := lo; k < hi; k++ {
			u := xs[k]
			i := count[u]
			count[u] = i + 1
			places[i] = k
			copy(dst[i*rank:(i+1)*rank], src[k*rank:(k+1)*rank])
		}
	}
}

// sortPoints returns the distinct points of pts sorted by the chunk
// hierarchy of g (grid chunk, then inner chunk at every level, then C
// order within the innermost chunk), and order, the position in the
// sorted points of each point asked (nil when pts already is sorted and
// distinct). For a write (last set), the position of each sorted point in
// pts is returned instead: its last occurrence, whose value wins.
func sortPoints(g *Grid, pts nd.Points, last bool) (nd.Points, []int) {
	n := pts.Len()
	kr, ok := newHierKeyer(g)
	if !ok {
		return sortPointsByTuple(g, pts, last)
	}
	var buf [8]uint64
	rem := kr.scratch(buf[:])
	keyBits, posBits := uint(bits.Len64(kr.span-1)), uint(bits.Len(uint(n)))
	if keyBits+posBits <= 64 {
		// Key and position packed in one word: half the bytes to move per
		// pass of the sort, and equal keys stay in position order.
		xs := make([]uint64, n)
		inOrder := true
		for k := range n {
			xs[k] = kr.key(pts.At(k), rem)<<posBits | uint64(k)
			inOrder = inOrder && (k == 0 || xs[k-1]>>posBits < xs[k]>>posBits)
		}
		if inOrder {
			return pts, nil
		}
		xs = radixSortBits(xs, nil, posBits, posBits+keyBits)
		mask := uint64(1)<<posBits - 1
		return kr.collect(pts.Rank, n, func(i int) (uint64, int) { return xs[i] >> posBits, int(xs[i] & mask) }, last)
	}
	type keyed struct {
		key uint64
		pos int
	}
	ks := make([]keyed, n)
	inOrder := true
	for k := range n {
		ks[k] = keyed{kr.key(pts.At(k), rem), k}
		inOrder = inOrder && (k == 0 || ks[k-1].key < ks[k].key)
	}
	if inOrder {
		return pts, nil
	}
	ks = radixSort(ks, func(k keyed) uint64 { return k.key })
	return kr.collect(pts.Rank, n, func(i int) (uint64, int) { return ks[i].key, ks[i].pos }, last)
}

// radixSortBits sorts xs by their bits [lo, hi), stably, with a
// least-significant-digit radix sort of digits up to 11 bits wide (count
// tables that stay in the L1 cache), through tmp (as long as xs; nil:
// allocated). It returns xs or tmp, whichever holds the result.
func radixSortBits(xs, tmp []uint64, lo, hi uint) []uint64 {
	if hi <= lo || len(xs) < 2 {
		return xs
	}
	passes := (hi - lo + 10) / 11
	width := (hi - lo + passes - 1) / passes
	if len(tmp) != len(xs) {
		tmp = make([]uint64, len(xs))
	}
	count := make([]int, 1<<width+1)
	for shift := lo; shift < hi; shift += width {
		mask := uint64(1)<<min(width, hi-shift) - 1
		clear(count)
		for _, x := range xs {
			count[(x>>shift)&mask+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, x := range xs {
			d := (x >> shift) & mask
			tmp[count[d]] = x
			count[d]++
		}
		xs, tmp = tmp, xs
	}
	return xs
}

// radixSort sorts xs by key, stably (equal keys keep their order), with a
// least-significant-digit radix sort of bytes up to the largest key's
// length: a few linear passes, where a comparison sort of 100k points was
// most of a gather of small chunks. It may return a new slice.
func radixSort[T any](xs []T, key func(T) uint64) []T {
	var most uint64
	for _, x := range xs {
		most |= key(x)
	}
	if len(xs) < 256 {
		slices.SortStableFunc(xs, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
		return xs
	}
	tmp := make([]T, len(xs))
	for shift := uint(0); shift < 64 && most>>shift != 0; shift += 8 {
		var count [257]int
		for _, x := range xs {
			count[(key(x)>>shift)&0xff+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, x := range xs {
			d := (key(x) >> shift) & 0xff
			tmp[count[d]] = x
			count[d]++
		}
		xs, tmp = tmp, xs
	}
	return xs
}

// collectSorted builds the distinct sorted points from a sorted
// permutation (at(i): the i-th point in sorted order; same(i): it equals
// the one before), with sortPoints' second result.
func collectSorted(pts nd.Points, n int, at func(int) int, same func(int) bool, last bool) (nd.Points, []int) {
	sorted := nd.Points{Rank: pts.Rank, Coords: make([]int, 0, n*pts.Rank)}
	order := make([]int, n) // read: point asked → sorted position
	var from []int          // write: sorted position → last point asked
	for i := range n {
		k := at(i)
		if i == 0 || !same(i) {
			sorted.Coords = append(sorted.Coords, pts.At(k)...)
			from = append(from, k)
		} else {
			from[len(from)-1] = k // equal points sort by position: the later wins
		}
		order[k] = sorted.Len() - 1
	}
	if last {
		return sorted, from
	}
	return sorted, order
}

// hierKeyer computes hierKey for the points of one grid with the products
// checked once: the key of every point in bounds then fits 64 bits, and
// its digits come from multiplications by reciprocals, not divisions.
type hierKeyer struct {
	rank int
	// Per level (grid chunks, then the inner chunks of each level of
	// nesting) and dimension, flattened level-major: the chunk size that
	// splits the remainder of the coordinate, and the number of such
	// chunks along the dimension within the parent (the digit's radix).
	div   []divider
	radix []uint64
	inner []uint64 // the innermost chunk shape: the last digits' radices
	// unitShape is the innermost chunk shape (read units), and istride
	// its C-order strides in elements.
	unitShape []int
	istride   []uint64
	// Dividers by the radices and the inner shape (coords), and the
	// product of every radix: keys lie in [0, span).
	rdiv, idiv []divider
	span       uint64
	units      uint64 // the product of the radices: units lie in [0, units)
	// Where every chunk size and inner radix is a power of two (pow2),
	// unit's digits are shifts and masks of the coordinates and the unit
	// their sum weighted by the radices after them (unitPow2): no chain
	// of remainders.
	pow2         bool
	dims         []int // the dimension of each digit
	shift        []uint
	mask, weight []uint64
}

// newHierKeyer returns g's keyer; ok is false when keys do not fit 64 bits.
func newHierKeyer(g *Grid) (kr hierKeyer, ok bool) {
	rank := len(g.Shape)
	kr.rank = rank
	span := uint64(1)
	grow := func(m int) bool {
		hi, lo := bits.Mul64(span, uint64(m))
		span = lo
		return hi == 0 && m > 0
	}
	parent := g.ChunkShape
	for d, c := range parent {
		grid := (g.Shape[d] + c - 1) / c
		kr.div, kr.radix = append(kr.div, newDivider(c)), append(kr.radix, uint64(grid))
		if !grow(grid) {
			return kr, false
		}
	}
	for l := g.Shard; l != nil; l = l.Nested() {
		child := l.ChunkShape()
		for d, c := range child {
			kr.div, kr.radix = append(kr.div, newDivider(c)), append(kr.radix, uint64(parent[d]/c))
			if !grow(parent[d] / c) {
				return kr, false
			}
		}
		parent = child
	}
	kr.units = span
	kr.unitShape = parent
	for _, c := range parent {
		kr.inner = append(kr.inner, uint64(c))
		kr.idiv = append(kr.idiv, newDivider(c))
		if !grow(c) {
			return kr, false
		}
	}
	kr.istride = make([]uint64, rank)
	st := uint64(1)
	for d := rank - 1; d >= 0; d-- {
		kr.istride[d] = st
		st *= kr.inner[d]
	}
	for _, r := range kr.radix {
		kr.rdiv = append(kr.rdiv, newDivider(int(r)))
	}
	kr.span = span
	kr.pow2 = true
	w := uint64(1)
	kr.weight = make([]uint64, len(kr.div))
	for i := len(kr.div) - 1; i >= 0; i-- {
		v, r := kr.div[i], kr.radix[i]
		if v.d&(v.d-1) != 0 || i >= rank && r&(r-1) != 0 {
			kr.pow2 = false
		}
		mask := ^uint64(0) // the grid level: coordinates are in bounds
		if i >= rank {
			mask = r - 1
		}
		kr.dims = append(kr.dims, i%rank)
		kr.shift = append(kr.shift, v.shift)
		kr.mask = append(kr.mask, mask)
		kr.weight[i] = w
		w *= r
	}
	slices.Reverse(kr.dims)
	slices.Reverse(kr.shift)
	slices.Reverse(kr.mask)
	return kr, true
}

// checkedUnit returns the unit of p, and false when p lies outside shape.
func (kr *hierKeyer) checkedUnit(p, shape []int, rem []uint64) (uint64, bool) {
	shape = shape[:len(p)]
	for d, c := range p {
		if uint(c) >= uint(shape[d]) {
			return 0, false
		}
	}
	if kr.pow2 {
		return kr.unitPow2(p), true
	}
	return kr.unit(p, rem), true
}

// fillUnits sets us[k] to the read unit of point k of coords (rank
// coordinates each) and returns -1, or the first point outside shape.
// A unit is a sum of one term per dimension (each digit of the unit's
// index comes from one coordinate, and the index is linear in the
// digits), so where the dimensions are short beside the number of points
// the terms come from a table per dimension, made once (in s.tab): a
// point then costs rank loads and a bounds check on the tables' lengths.
func (kr *hierKeyer) fillUnits(us []uint64, coords, shape []int, s *gatherScratch) int {
	return kr.fillUnitsOn(us, coords, shape, s, nil, false)
}

// fillUnitsOn is fillUnits on the crew c (nil: the calling goroutine),
// its workers taking the points in blocks. With elems, us[k] is the unit
// shifted left by nd.ElemBits, plus the element of point k in its unit
// (kr.elem): the terms of both are sums of one per dimension, which share
// the tables (units and elements must fit their bits: kr.units ≤
// 2^(64-ElemBits), kr.unitElems() ≤ 2^ElemBits).
func (kr *hierKeyer) fillUnitsOn(us []uint64, coords, shape []int, s *gatherScratch, c *crew, elems bool) int {
	rank, n := kr.rank, len(us)
	shape = shape[:rank]
	total := 0
	for _, l := range shape {
		total += l
	}
	var bad firstBad
	bad.init()
	if total > n || rank > 8 {
		c.claim(n, func(w, lo, hi int) {
			var buf [8]uint64
			rem := kr.scratch(buf[:])
			for k := lo; k < hi; k++ {
				p := coords[k*rank : (k+1)*rank]
				u, ok := kr.checkedUnit(p, shape, rem)
				if !ok {
					bad.add(w, k)
					return
				}
				if elems {
					u = u<<nd.ElemBits | kr.elem(p)
				}
				us[k] = u
			}
		})
		return bad.first()
	}
	tab := sized(s.tab, total)
	s.tab = tab
	var rem [8]uint64
	var tabs [8][]uint64
	for d, l := range shape {
		t := tab[:l:l]
		tab = tab[l:]
		var q [8]int
		for c := range t {
			q[d] = c
			t[c] = kr.unit(q[:rank], rem[:rank])
			if elems {
				t[c] = t[c]<<nd.ElemBits | rem[d]*kr.istride[d]
			}
		}
		tabs[d] = t
	}
	c.claim(n, func(w, lo, hi int) { bad.add(w, fillFromTables(us, coords, tabs[:rank], lo, hi)) })
	return bad.first()
}

// fillFromTables sets us[k] for the points k in [lo, hi) of coords from
// the unit tables, one per dimension, and returns -1, or the first point
// outside them.
func fillFromTables(us []uint64, coords []int, tabs [][]uint64, lo, hi int) int {
	switch len(tabs) {
	case 2:
		t0, t1 := tabs[0], tabs[1]
		for k := lo; k < hi; k++ {
			c0, c1 := uint(coords[2*k]), uint(coords[2*k+1])
			if c0 >= uint(len(t0)) || c1 >= uint(len(t1)) {
				return k
			}
			us[k] = t0[c0] + t1[c1]
		}
	case 3:
		t0, t1, t2 := tabs[0], tabs[1], tabs[2]
		for k := lo; k < hi; k++ {
			c0, c1, c2 := uint(coords[3*k]), uint(coords[3*k+1]), uint(coords[3*k+2])
			if c0 >= uint(len(t0)) || c1 >= uint(len(t1)) || c2 >= uint(len(t2)) {
				return k
			}
			us[k] = t0[c0] + t1[c1] + t2[c2]
		}
	default:
		rank := len(tabs)
		for k := lo; k < hi; k++ {
			var u uint64
			for d, c := range coords[k*rank : (k+1)*rank] {
				if uint(c) >= uint(len(tabs[d])) {
					return k
				}
				u += tabs[d][c]
			}
			us[k] = u
		}
	}
	return -1
}

// unitElems returns the number of elements of a read unit (saturating).
func (kr *hierKeyer) unitElems() uint64 {
	n := uint64(1)
	for _, c := range kr.inner {
		hi, lo := bits.Mul64(n, c)
		if hi != 0 {
			return math.MaxUint64
		}
		n = lo
	}
	return n
}

// elem returns the C-order offset of p (in bounds) within its read unit.
func (kr *hierKeyer) elem(p []int) uint64 {
	var e uint64
	for d, c := range p[:len(kr.idiv)] {
		x := uint64(c)
		e += (x - kr.idiv[d].div(x)*kr.inner[d]) * kr.istride[d]
	}
	return e
}

// digits sets dig (one entry per digit: len(kr.div)) to the digits of
// unit u: its chunk coordinates at every level, outermost first.
func (kr *hierKeyer) digits(u uint64, dig []int) {
	for i := len(kr.rdiv) - 1; i >= 0; i-- {
		q := kr.rdiv[i].div(u)
		dig[i] = int(u - q*kr.rdiv[i].d)
		u = q
	}
}

// unitPow2 is unit for a hierarchy of powers of two (kr.pow2), without
// the remainders.
func (kr *hierKeyer) unitPow2(p []int) uint64 {
	var u uint64
	dims, shift, mask, weight := kr.dims, kr.shift[:len(kr.dims)], kr.mask[:len(kr.dims)], kr.weight[:len(kr.dims)]
	for i, d := range dims {
		u += (uint64(p[d]) >> shift[i] & mask[i]) * weight[i]
	}
	return u
}

// unit returns the linear index of the read unit (innermost chunk) of p
// (in bounds) in the hierarchical order: its grid chunk, then its inner
// chunk within that at every level. rem (rank entries) receives p's
// coordinates within that unit.
func (kr *hierKeyer) unit(p []int, rem []uint64) uint64 {
	for d, c := range p {
		rem[d] = uint64(c)
	}
	var u uint64
	radix := kr.radix[:len(kr.div)]
	d := 0 // i % rank, without a division
	for i, v := range kr.div {
		if d == len(rem) {
			d = 0
		}
		var q uint64
		switch {
		case v.shift > 0:
			q = rem[d] >> v.shift
		case v.m != 0 && rem[d] < 1<<32:
			q, _ = bits.Mul64(v.m, rem[d])
		default:
			q = v.div(rem[d])
		}
		rem[d] -= q * v.d
		u = u*radix[i] + q
		d++
	}
	return u
}

// key returns hierKey of p (in bounds): the linear index of its grid
// chunk, then of its inner chunk within that at every level, then of p
// within the innermost chunk. rem is scratch of rank entries.
func (kr *hierKeyer) key(p []int, rem []uint64) uint64 {
	key := kr.unit(p, rem)
	for d, c := range kr.inner {
		key = key*c + rem[d]
	}
	return key
}

// scratch returns room for rank remainders: buf when it is large enough.
func (kr *hierKeyer) scratch(buf []uint64) []uint64 {
	if len(buf) >= kr.rank {
		return buf[:kr.rank]
	}
	return make([]uint64, kr.rank)
}

// coords appends to dst the point whose key is key: the inverse of key,
// digit by digit from the least significant.
func (kr *hierKeyer) coords(dst []int, key uint64) []int {
	base := len(dst)
	for range kr.rank {
		dst = append(dst, 0)
	}
	p := dst[base:]
	for d := kr.rank - 1; d >= 0; d-- {
		q := kr.idiv[d].div(key)
		p[d] = int(key - q*kr.idiv[d].d)
		key = q
	}
	for i := len(kr.div) - kr.rank; i >= 0; i -= kr.rank {
		for d := kr.rank - 1; d >= 0; d-- {
			q := kr.rdiv[i+d].div(key)
			p[d] += int(key-q*kr.rdiv[i+d].d) * int(kr.div[i+d].d)
			key = q
		}
	}
	return dst
}

// collect builds sortPoints' results from the n points in sorted order,
// at(i) giving the key and the position in the points asked of the i-th:
// distinct points are rebuilt from their keys (in order, where gathering
// them from the points asked would read memory at random).
func (kr *hierKeyer) collect(rank, n int, at func(int) (uint64, int), last bool) (nd.Points, []int) {
	sorted := nd.Points{Rank: rank, Coords: make([]int, 0, n*rank)}
	order := make([]int, n) // read: point asked → sorted position
	var from []int          // write: sorted position → last point asked
	prev := uint64(0)
	for i := range n {
		key, k := at(i)
		if i == 0 || key != prev {
			sorted.Coords = kr.coords(sorted.Coords, key)
			if last {
				from = append(from, k)
			}
		} else if last {
			from[len(from)-1] = k // equal points sort by position: the later wins
		}
		prev = key
		order[k] = sorted.Len() - 1
	}
	if last {
		return sorted, from
	}
	return sorted, order
}

// divider divides by d with a multiplication by its reciprocal where the
// dividend fits 32 bits (Lemire, Kaser and Kurz, "Faster remainder by
// direct computation", 2019: q = ⌊m·n / 2⁶⁴⌋ with m = ⌊(2⁶⁴−1)/d⌋ + 1 is
// exact for every 32-bit n and d), by a plain division otherwise.
type divider struct {
	d, m  uint64 // m is 0 for d = 1 (no reciprocal needed) and d ≥ 2³²
	shift uint   // log₂ d for a power of two d > 1, else 0
}

func newDivider(d int) divider { return newDivider64(uint64(d)) }

func newDivider64(d uint64) divider {
	v := divider{d: d}
	if d > 1 && d < 1<<32 {
		v.m = ^uint64(0)/v.d + 1
	}
	if d > 1 && d&(d-1) == 0 {
		v.shift = uint(bits.TrailingZeros64(v.d))
	}
	return v
}

// div returns n / d.
func (v divider) div(n uint64) uint64 {
	switch {
	case v.shift > 0:
		return n >> v.shift
	case v.m != 0 && n < 1<<32:
		q, _ := bits.Mul64(v.m, n)
		return q
	case v.d == 1:
		return n
	}
	return n / v.d
}

// sortPointsByTuple is sortPoints for hierarchies whose rank does not fit
// 64 bits: points compare by their chunk coordinates at every level, then
// their own.
func sortPointsByTuple(g *Grid, pts nd.Points, last bool) (nd.Points, []int) {
	rank, n := pts.Rank, pts.Len()
	lv := g.levels()
	width := (len(lv) + 1) * rank
	keys := make([]int, n*width)
	for k := range n {
		p := pts.At(k)
		key := keys[k*width : (k+1)*width]
		for i, shape := range lv {
			for d, c := range shape {
				key[i*rank+d] = p[d] / c
			}
		}
		copy(key[len(lv)*rank:], p)
	}
	keyOf := func(k int) []int { return keys[k*width : (k+1)*width] }
	perm := make([]int, n)
	for k := range perm {
		perm[k] = k
	}
	slices.SortFunc(perm, func(a, b int) int {
		if c := slices.Compare(keyOf(a), keyOf(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	same := func(i int) bool { return slices.Equal(keyOf(perm[i-1]), keyOf(perm[i])) }
	if sortedDistinct(perm, same) {
		return pts, nil
	}
	return collectSorted(pts, n, func(i int) int { return perm[i] }, same, last)
}

// sortedDistinct reports whether perm is the identity and no two points
// are equal: the points were already in order.
func sortedDistinct(perm []int, same func(int) bool) bool {
	for i, k := range perm {
		if k != i || i > 0 && same(i) {
			return false
		}
	}
	return true
}
