package pipeline

import (
	"cmp"
	"context"
	"fmt"
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

// gatherParallel is nd.Gather(dst, src, index) on up to workers
// goroutines, each gathering a slab of dst's first dimension.
func gatherParallel(dst, src nd.View, index [][]int, workers int) {
	n := 0
	if len(dst.Shape) > 0 {
		n = dst.Shape[0]
	}
	bytes := nd.NumElements(dst.Shape) * dst.ItemSize
	workers = min(workers, n, bytes/gatherMinBytes)
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
// elements. Points are sorted by chunk, shard and inner chunk and
// deduplicated, so each touched inner chunk is fetched and decoded once
// however many points it serves; the values then go back in the order
// asked.
func ReadPoints(ctx context.Context, r store.Reader, g *Grid, pts nd.Points, out []byte, opt Options) error {
	item := g.itemSize()
	if err := checkPoints(g, pts); err != nil {
		return err
	}
	if want := pts.Len() * item; len(out) != want {
		return fmt.Errorf("pipeline: output holds %d bytes, %d points need %d", len(out), pts.Len(), want)
	}
	if pts.Len() == 0 || ctx.Err() != nil {
		return ctx.Err()
	}
	if g.cachedPoints(pts, out) {
		return nil
	}
	sorted, order := sortPoints(g, pts, false)
	dst := out // the sorted points' values: out itself when pts is sorted
	if order != nil {
		buf := bufpool.Get(sorted.Len() * item)
		defer bufpool.Put(buf)
		dst = (*buf)[:sorted.Len()*item]
	}
	view := nd.Contiguous(dst, pointsShape(pts.Rank, sorted.Len()), item)
	parts := nd.PointParts(sorted, g.ChunkShape)
	var err error
	// Counting the read units is a pass over the points: only worth it
	// where few points may make few units.
	if sorted.Len() <= inlinePoints && g.runsInline(r, nd.NumPointParts(sorted, g.unitShape())) {
		e := inlineEngine(r, g, view, opt)
		err = e.runInline(ctx, parts)
		e.release()
	} else {
		err = newEngine(r, g, view, opt).runParts(ctx, parts, nd.NumPointParts(sorted, g.ChunkShape))
	}
	if err != nil {
		return err
	}
	if order != nil {
		gatherParallel(nd.Contiguous(out, []int{pts.Len()}, item), nd.Contiguous(dst, []int{sorted.Len()}, item), [][]int{order}, opt.WithDefaults().DecodeConcurrency)
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

// sortPoints returns the distinct points of pts sorted by the chunk
// hierarchy of g (grid chunk, then inner chunk at every level, then C
// order within the innermost chunk), and order, the position in the
// sorted points of each point asked (nil when pts already is sorted and
// distinct). For a write (last set), the position of each sorted point in
// pts is returned instead: its last occurrence, whose value wins.
func sortPoints(g *Grid, pts nd.Points, last bool) (nd.Points, []int) {
	n := pts.Len()
	type keyed struct {
		key uint64
		pos int
	}
	ks := make([]keyed, n)
	for k := range n {
		key, ok := hierKey(g, pts.At(k))
		if !ok {
			return sortPointsByTuple(g, pts, last)
		}
		ks[k] = keyed{key, k}
	}
	inOrder := true
	for k := 1; k < n && inOrder; k++ {
		inOrder = ks[k-1].key < ks[k].key
	}
	if inOrder {
		return pts, nil
	}
	ks = radixSort(ks, func(k keyed) uint64 { return k.key })
	return collectSorted(pts, n, func(i int) int { return ks[i].pos }, func(i int) bool { return ks[i-1].key == ks[i].key }, last)
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

// hierKey is the rank of point p in the hierarchical order of g as one
// integer: the linear index of its grid chunk, then of its inner chunk
// within that at every level, then of p within the innermost chunk. ok is
// false when it does not fit 64 bits.
func hierKey(g *Grid, p []int) (key uint64, ok bool) {
	mul := func(k uint64, m, add int) (uint64, bool) {
		hi, lo := bits.Mul64(k, uint64(m))
		if hi != 0 || lo+uint64(add) < lo {
			return 0, false
		}
		return lo + uint64(add), true
	}
	parent := g.ChunkShape
	for d, c := range parent { // the grid chunk
		grid := (g.Shape[d] + c - 1) / c
		if key, ok = mul(key, grid, p[d]/c); !ok {
			return 0, false
		}
	}
	for l := g.Shard; l != nil; l = l.Nested() { // the inner chunk at each level
		child := l.ChunkShape()
		for d, c := range child {
			if key, ok = mul(key, parent[d]/c, (p[d]%parent[d])/c); !ok {
				return 0, false
			}
		}
		parent = child
	}
	for d, c := range parent { // the point within its innermost chunk
		if key, ok = mul(key, c, p[d]%c); !ok {
			return 0, false
		}
	}
	return key, true
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
