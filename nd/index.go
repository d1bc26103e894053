package nd

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file holds the orthogonal half of selections: index arrays and
// masks normalised into Dims, and the gathers and scatters that move the
// elements of an index-listed part between a chunk and the output.

// maxListPrint is the length up to which a list prints in full.
const maxListPrint = 16

// listString prints n elements as a NumPy list, shortened past maxListPrint.
func listString(n int, elem func(int) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for k := range n {
		if n > maxListPrint && k == maxListPrint-2 {
			fmt.Fprintf(&b, "..., %s (%d)", elem(n-1), n)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(elem(k))
	}
	b.WriteByte(']')
	return b.String()
}

// nestedString prints an array of the given shape (rank other than 1) as
// NumPy's nested lists; past maxListPrint elements, each list shows its
// first two and last elements, and the shape is said.
func nestedString(shape []int, elem func(int) string) string {
	var b strings.Builder
	n := NumElements(shape)
	var rec func(d, off int)
	rec = func(d, off int) {
		if d == len(shape) {
			b.WriteString(elem(off))
			return
		}
		inner := NumElements(shape[d+1:])
		b.WriteByte('[')
		for k := 0; k < shape[d]; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			if n > maxListPrint && shape[d] > 4 && k == 2 {
				b.WriteString("..., ")
				k = shape[d] - 1
			}
			rec(d+1, off+k*inner)
		}
		b.WriteByte(']')
	}
	rec(0, 0)
	if n > maxListPrint {
		fmt.Fprintf(&b, " (shape %s)", tupleString(shape))
	}
	return b.String()
}

// tupleString prints a shape as NumPy's messages do: (2,3), (3,), ().
func tupleString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, n := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// At returns the array index of the dimension's output element k (0 ≤ k <
// Len()).
func (d Dim) At(k int) int {
	if d.Order != nil {
		k = d.Order[k]
	}
	if d.Index != nil {
		return d.Index[k]
	}
	return d.Start + k*d.Step
}

// indexDim normalises an index array against a dimension of length n.
func indexDim(list []int, n int) (Dim, error) {
	idx := make([]int, len(list))
	sorted := true
	for k, i := range list {
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return Dim{}, fmt.Errorf("%w: index %d (position %d of the index array)", ErrOutOfBounds, list[k], k)
		}
		idx[k] = i
		if k > 0 && idx[k-1] >= i {
			sorted = false
		}
	}
	if sorted {
		return listDim(idx, nil), nil
	}
	uniq := slices.Clone(idx)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	order := make([]int, len(idx))
	for k, i := range idx {
		order[k], _ = slices.BinarySearch(uniq, i)
	}
	return listDim(uniq, order), nil
}

// maskDim normalises a boolean mask against a dimension of length n.
func maskDim(mask []bool, n int) (Dim, error) {
	if len(mask) != n {
		return Dim{}, fmt.Errorf("%w: mask of length %d for a dimension of length %d", ErrInvalidSelection, len(mask), n)
	}
	idx := []int{}
	for i, v := range mask {
		if v {
			idx = append(idx, i)
		}
	}
	return listDim(idx, nil), nil
}

// listDim is the Dim of the ascending distinct indices idx (with an output
// order, or nil): a plain slice when they step evenly, so the fast paths of
// boxes (whole chunks decoded in place, vectored reads) still apply.
func listDim(idx, order []int) Dim {
	switch {
	case len(idx) == 0:
		return Dim{Step: 1, Index: idx, Order: order}
	case len(idx) == 1:
		return Dim{Start: idx[0], Count: 1, Step: 1, Order: order}
	}
	step := idx[1] - idx[0]
	for k := 2; k < len(idx); k++ {
		if idx[k]-idx[k-1] != step {
			return Dim{Start: idx[0], Count: len(idx), Step: 1, Index: idx, Order: order}
		}
	}
	return Dim{Start: idx[0], Count: len(idx), Step: step, Order: order}
}

// Gather copies into dst the elements of src that index picks: dst's
// element (j0, j1, ...) is src's element (i0, i1, ...) with id =
// index[d][jd], or id = jd where index[d] is nil (then the dimension has
// the same length in both). Every index must lie inside src.
func Gather(dst, src View, index [][]int) { gatherScatter(dst, src, index, false) }

// Scatter is Gather's inverse: src's element (j0, j1, ...) goes to dst's
// element with id = index[d][jd] (or jd where index[d] is nil). Where
// indices repeat, the element written last in C order of src wins.
func Scatter(dst, src View, index [][]int) { gatherScatter(dst, src, index, true) }

// gatherScatter moves elements between the listed view (src for a gather,
// dst for a scatter) and the dense one.
func gatherScatter(dst, src View, index [][]int, scatter bool) {
	dense, listed := dst, src
	if scatter {
		dense, listed = src, dst
	}
	n := len(dense.Shape)
	if NumElements(dense.Shape) == 0 {
		return
	}
	item := dense.ItemSize
	// offs[d][j] is the byte offset of the listed view's index j of
	// dimension d: index[d] times the stride, or j times it.
	offs := make([][]int, n)
	for d := range n {
		o := make([]int, dense.Shape[d])
		for j := range o {
			i := j
			if index[d] != nil {
				i = index[d][j]
			}
			o[j] = i * listed.Strides[d]
		}
		offs[d] = o
	}
	// The innermost dimension moves as one run when it is contiguous on
	// both sides.
	run := 0
	if n > 0 && index[n-1] == nil && listed.Strides[n-1] == item && dense.Strides[n-1] == item {
		run = dense.Shape[n-1] * item
	}
	if n == 0 {
		moveItem(dst.Data, src.Data, dst.Offset, src.Offset, item)
		return
	}
	pos := make([]int, n)
	for {
		lo, do := listed.Offset, dense.Offset
		for d := range n - 1 {
			lo += offs[d][pos[d]]
			do += pos[d] * dense.Strides[d]
		}
		last := n - 1
		if run > 0 {
			if scatter {
				copy(listed.Data[lo:lo+run], dense.Data[do:do+run])
			} else {
				copy(dense.Data[do:do+run], listed.Data[lo:lo+run])
			}
		} else {
			ol, ds := offs[last], dense.Strides[last]
			for j, o := range ol {
				if scatter {
					moveItem(listed.Data, dense.Data, lo+o, do+j*ds, item)
				} else {
					moveItem(dense.Data, listed.Data, do+j*ds, lo+o, item)
				}
			}
		}
		d := last - 1
		for ; d >= 0; d-- {
			pos[d]++
			if pos[d] < dense.Shape[d] {
				break
			}
			pos[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// moveItem copies one element of item bytes from s[so:] to d[do:].
func moveItem(d, s []byte, do, so, item int) {
	switch item {
	case 1:
		d[do] = s[so]
	case 2:
		copy(d[do:do+2], s[so:so+2])
	case 4:
		copy(d[do:do+4], s[so:so+4])
	case 8:
		copy(d[do:do+8], s[so:so+8])
	default:
		copy(d[do:do+item], s[so:so+item])
	}
}

// Gathers reports whether the part is not a plain strided box: it lists
// indices in some dimension (an orthogonal selection) or points (a
// coordinate selection), so its elements move with CopyOut and CopyIn.
func (p ChunkPart) Gathers() bool { return p.Index != nil || p.isPoints() }

// isPoints reports whether the part is of points: with coordinates
// (Points) or placed (Elems).
func (p ChunkPart) isPoints() bool { return p.Points != nil || p.Elems != nil }

// boxView is chunk sliced to the part's box dimensions; listed dimensions
// stay whole.
func (p ChunkPart) boxView(chunk View) View {
	n := len(p.Count)
	start, count, step := make([]int, n), make([]int, n), make([]int, n)
	for d := range n {
		if p.Index[d] != nil {
			start[d], count[d], step[d] = 0, chunk.Shape[d], 1
			continue
		}
		start[d], count[d], step[d] = p.SrcStart[d], p.Count[d], p.SrcStep[d]
	}
	return chunk.Slice(start, count, step)
}

// CopyOut copies the part's elements from chunk (a view of its decoded
// chunk, with the chunk's shape) into dst (its place, p.DstView(out)):
// Copy(dst, p.SrcView(chunk)) for a box, a gather for listed indices or
// points.
func (p ChunkPart) CopyOut(dst, chunk View) {
	switch {
	case p.Elems != nil:
		p.moveElems(dst, chunk, false)
	case p.Points != nil:
		p.movePoints(dst, chunk, false)
	case p.Index != nil:
		Gather(dst, p.boxView(chunk), p.Index)
	default:
		Copy(dst, p.SrcView(chunk))
	}
}

// CopyIn is CopyOut's inverse, for writes: it copies the part's elements
// from src (its place in the data written, p.DstView(data)) into chunk.
func (p ChunkPart) CopyIn(chunk, src View) {
	switch {
	case p.Elems != nil:
		p.moveElems(src, chunk, true)
	case p.Points != nil:
		p.movePoints(src, chunk, true)
	case p.Index != nil:
		Scatter(p.boxView(chunk), src, p.Index)
	default:
		Copy(p.SrcView(chunk), src)
	}
}

// movePoints moves the part's points between chunk and out (the part's
// place, shape Count: 1, ..., 1, number of points).
func (p ChunkPart) movePoints(out, chunk View, toChunk bool) {
	rank := len(p.Count)
	if rank == 0 {
		return
	}
	item := out.ItemSize
	os := out.Strides[rank-1]
	base := chunk.Offset
	for d, o := range p.PointOrigin {
		base -= o * chunk.Strides[d]
	}
	n := p.Count[rank-1]
	pts := p.Points[:n*rank]
	oo := out.Offset
	if p.Places != nil {
		p.movePlaced(out, chunk, base, toChunk)
		return
	}
	switch {
	case rank == 3 && item == 4 && !toChunk:
		s0, s1, s2 := chunk.Strides[0], chunk.Strides[1], chunk.Strides[2]
		for j := 0; j+2 < len(pts); j += 3 {
			co := base + pts[j]*s0 + pts[j+1]*s1 + pts[j+2]*s2
			copy(out.Data[oo:oo+4], chunk.Data[co:co+4])
			oo += os
		}
	case rank == 2 && item == 4 && !toChunk:
		s0, s1 := chunk.Strides[0], chunk.Strides[1]
		for j := 0; j+1 < len(pts); j += 2 {
			co := base + pts[j]*s0 + pts[j+1]*s1
			copy(out.Data[oo:oo+4], chunk.Data[co:co+4])
			oo += os
		}
	default:
		for j := range n {
			co := base
			for d, c := range pts[j*rank : (j+1)*rank] {
				co += c * chunk.Strides[d]
			}
			if toChunk {
				moveItem(chunk.Data, out.Data, co, oo, item)
			} else {
				moveItem(out.Data, chunk.Data, oo, co, item)
			}
			oo += os
		}
	}
}

// movePlaced is movePoints for a part whose points have Places; base is
// the offset in chunk of the points' frame origin.
func (p ChunkPart) movePlaced(out, chunk View, base int, toChunk bool) {
	rank := len(p.Count)
	item := out.ItemSize
	os := out.Strides[rank-1]
	n := p.Count[rank-1]
	pts, places := p.Points[:n*rank], p.Places[:n]
	oo := out.Offset - p.PlaceBase*os
	if rank == 3 && item == 4 && !toChunk {
		s0, s1, s2 := chunk.Strides[0], chunk.Strides[1], chunk.Strides[2]
		for j, at := range places {
			co := base + pts[3*j]*s0 + pts[3*j+1]*s1 + pts[3*j+2]*s2
			o := oo + at*os
			copy(out.Data[o:o+4], chunk.Data[co:co+4])
		}
		return
	}
	for j, at := range places {
		co := base
		for d, c := range pts[j*rank : (j+1)*rank] {
			co += c * chunk.Strides[d]
		}
		o := oo + at*os
		if toChunk {
			moveItem(chunk.Data, out.Data, co, o, item)
		} else {
			moveItem(out.Data, chunk.Data, o, co, item)
		}
	}
}

// FillPlaces sets every element of the part's place in dst (its place,
// p.DstView(out)) to value, one item: Fill(dst, value), or for points
// with Places (or Elems) the element at each of their places.
func (p ChunkPart) FillPlaces(dst View, value []byte) {
	rank := len(p.Count)
	if p.Elems != nil && rank > 0 {
		os := dst.Strides[rank-1]
		oo := dst.Offset - p.PlaceBase*os
		for _, x := range p.Elems[:p.Count[rank-1]] {
			o := oo + int(x>>ElemBits)*os
			copy(dst.Data[o:o+dst.ItemSize], value)
		}
		return
	}
	if p.Places == nil || rank == 0 {
		Fill(dst, value)
		return
	}
	os := dst.Strides[rank-1]
	oo := dst.Offset - p.PlaceBase*os
	for _, at := range p.Places[:p.Count[rank-1]] {
		o := oo + at*os
		copy(dst.Data[o:o+dst.ItemSize], value)
	}
}

// Parts yields the parts of p that the chunks of shape chunkShape within
// p's chunk serve (an inner grid: a shard's inner chunks), with
// destinations relative to p's own place: for a box or listed part,
// p.Selection().Chunks(chunkShape); for points, each run of consecutive
// points in one inner chunk (points grouped by inner chunk, as
// pipeline.ReadPoints groups them, give one part per inner chunk), sharing
// p's coordinates.
func (p ChunkPart) Parts(chunkShape []int) func(yield func(ChunkPart) bool) {
	if p.Elems != nil {
		return func(yield func(ChunkPart) bool) { p.placedParts(chunkShape, yield) }
	}
	if p.Points == nil {
		return p.Selection().Chunks(chunkShape)
	}
	return func(yield func(ChunkPart) bool) {
		rank := len(p.Count)
		if rank == 0 || len(chunkShape) != rank {
			return
		}
		if p.runs != nil && slices.Equal(chunkShape, p.runShape) {
			k := 0
			slab := partSlab{rank: rank, n: len(p.runs)}
			for _, end := range p.runs {
				end -= p.runBase
				if !yield(p.pointPart(k, end-k, chunkShape, slab.next())) {
					return
				}
				k = end
			}
			return
		}
		var lo [8]int
		n := p.Count[rank-1]
		slab := partSlab{rank: rank, n: -1}
		for k := 0; k < n; {
			m := p.pointRun(k, n, chunkShape, lo[:])
			if !yield(p.pointPart(k, m, chunkShape, slab.next())) {
				return
			}
			k += m
		}
	}
}

// NumParts returns how many parts Parts(chunkShape) yields.
func (p ChunkPart) NumParts(chunkShape []int) int {
	if p.Elems != nil {
		return p.numPlacedParts(chunkShape)
	}
	if p.Points == nil {
		return p.Selection().NumChunks(chunkShape)
	}
	rank := len(p.Count)
	if rank == 0 || len(chunkShape) != rank {
		return 0
	}
	if p.runs != nil && slices.Equal(chunkShape, p.runShape) {
		return len(p.runs)
	}
	var lo [8]int
	parts := 0
	n := p.Count[rank-1]
	for k := 0; k < n; parts++ {
		k += p.pointRun(k, n, chunkShape, lo[:])
	}
	return parts
}

// pointRun returns the length of the run of consecutive points from point
// k (of the part's n points) that lie in the chunk of chunkShape holding
// point k. The chunk's origin (in the frame of the points) is computed
// once (into scratch, when it has room for rank entries); every other
// point costs a comparison per dimension, no division.
func (p ChunkPart) pointRun(k, n int, chunkShape []int, scratch []int) int {
	rank := len(chunkShape)
	pts := p.Points
	lo := scratch
	if len(lo) < rank {
		lo = make([]int, rank)
	}
	lo = lo[:rank]
	for d, c := range chunkShape {
		o := 0
		if p.PointOrigin != nil {
			o = p.PointOrigin[d]
		}
		x := pts[k*rank+d] - o
		lo[d] = o + x - x%c
	}
	m := 1
	if rank == 3 {
		c0, c1, c2 := uint(chunkShape[0]), uint(chunkShape[1]), uint(chunkShape[2])
		l0, l1, l2 := lo[0], lo[1], lo[2]
		for j := (k + 1) * 3; j+2 < n*3; j += 3 {
			if uint(pts[j]-l0) >= c0 || uint(pts[j+1]-l1) >= c1 || uint(pts[j+2]-l2) >= c2 {
				return m
			}
			m++
		}
		return m
	}
	for ; k+m < n; m++ {
		q := pts[(k+m)*rank : (k+m+1)*rank]
		for d, c := range chunkShape {
			if uint(q[d]-lo[d]) >= uint(c) {
				return m
			}
		}
	}
	return m
}

// partSlab hands out the coordinate slices of point parts from one
// allocation for n of them (the parts of one shard, not one allocation
// per inner chunk); n < 0 when their number is not known: the
// allocations then double, from one part to 64.
type partSlab struct {
	rank, n int
	buf     []int
}

// next returns room for one part's six slices of rank entries.
func (s *partSlab) next() []int {
	w := 6 * s.rank
	if len(s.buf) < w {
		n := s.n
		if n < 0 {
			n = -n
			s.n = -min(2*n, 64)
		}
		s.buf = make([]int, w*max(n, 1))
	}
	b := s.buf[:w:w]
	s.buf = s.buf[w:]
	return b
}

// pointPart is the part of the m points of p from point k (all in one
// chunk of chunkShape), whose place starts at k along the last dimension:
// it shares p's coordinates, with the origin of its chunk; buf (6 × rank
// entries, from a partSlab) holds its own slices.
func (p ChunkPart) pointPart(k, m int, chunkShape []int, buf []int) ChunkPart {
	rank := len(chunkShape)
	q := ChunkPart{
		Coords:      buf[0:rank:rank],
		SrcStart:    buf[rank : 2*rank : 2*rank],
		SrcStep:     buf[2*rank : 3*rank : 3*rank],
		Count:       buf[3*rank : 4*rank : 4*rank],
		DstStart:    buf[4*rank : 5*rank : 5*rank],
		PointOrigin: buf[5*rank : 6*rank : 6*rank],
		Points:      p.Points[k*rank : (k+m)*rank : (k+m)*rank],
	}
	if p.Places != nil {
		q.Places, q.PlaceBase = p.Places[k:k+m:k+m], p.PlaceBase+k
	}
	for d, c := range chunkShape {
		o := 0
		if p.PointOrigin != nil {
			o = p.PointOrigin[d]
		}
		q.Coords[d] = (p.Points[k*rank+d] - o) / c
		q.PointOrigin[d] = o + q.Coords[d]*c
		q.SrcStep[d] = 1
		q.Count[d] = 1
	}
	q.Count[rank-1] = m
	q.DstStart[rank-1] = k
	return q
}

// PointParts yields the parts of the points pts (n×rank coordinates in an
// array with chunks of chunkShape; see Points), one per run of consecutive
// points in one chunk: their places are runs of the last dimension of an
// output of shape 1, ..., 1, n. The parts share pts' coordinates.
func PointParts(pts Points, chunkShape []int) func(yield func(ChunkPart) bool) {
	return pts.part().Parts(chunkShape)
}

// NumPointParts returns how many parts PointParts yields.
func NumPointParts(pts Points, chunkShape []int) int { return pts.part().NumParts(chunkShape) }

// GroupedPointParts is PointParts for points whose runs are known: ends
// lists, in order, the end (exclusive) of each run of points of pts in one
// chunk of chunkShape, the last being pts.Len(). When innerShape is not
// nil, innerEnds lists likewise the ends of the runs in one chunk of
// innerShape (the chunks' inner grid: a shard's inner chunks; every end of
// ends is one of them), and the Parts(innerShape) and NumParts(innerShape)
// of each part come from them without a look at any point. Ends that do
// not fit pts (not increasing, past its end) end the parts early; ends
// that do not match the points give parts whose points lie outside their
// chunks, so callers pass the runs they found.
func GroupedPointParts(pts Points, chunkShape []int, ends []int, innerShape []int, innerEnds []int) func(yield func(ChunkPart) bool) {
	return func(yield func(ChunkPart) bool) {
		whole := pts.part()
		n := pts.Len()
		if pts.Rank == 0 || len(chunkShape) != pts.Rank || innerShape != nil && len(innerShape) != pts.Rank {
			return
		}
		k, i := 0, 0
		slab := partSlab{rank: pts.Rank, n: len(ends)}
		for _, end := range ends {
			if end <= k || end > n {
				return
			}
			q := whole.pointPart(k, end-k, chunkShape, slab.next())
			if innerShape != nil {
				i0 := i
				for i < len(innerEnds) && innerEnds[i] <= end {
					if innerEnds[i] <= k || i > i0 && innerEnds[i] <= innerEnds[i-1] {
						return
					}
					i++
				}
				if i == i0 || innerEnds[i-1] != end {
					return
				}
				q.runs, q.runBase, q.runShape = innerEnds[i0:i:i], k, innerShape
			}
			if !yield(q) {
				return
			}
			k = end
		}
	}
}

// part is all of pts as one part, of the whole array.
func (p Points) part() ChunkPart {
	whole := ChunkPart{Count: make([]int, p.Rank), Points: p.Coords}
	if p.Rank > 0 {
		whole.Count[p.Rank-1] = p.Len()
	}
	return whole
}

// Points is a normalised coordinate selection (zarr-python's vindex): a
// list of points of an array of rank Rank, point k at
// Coords[k*Rank : (k+1)*Rank], every coordinate inside the array.
type Points struct {
	Rank   int
	Coords []int
}

// Len returns the number of points.
func (p Points) Len() int {
	if p.Rank == 0 {
		return 0
	}
	return len(p.Coords) / p.Rank
}

// At returns the coordinates of point k (shared, not to be modified).
func (p Points) At(k int) []int { return p.Coords[k*p.Rank : (k+1)*p.Rank] }

// NormalizePoints resolves a coordinate selection against an array shape:
// index[d] lists the coordinates of dimension d of every point. Lists of
// length 1 broadcast to the others' length, as NumPy broadcasts index
// arrays; other lengths must agree. Negative coordinates count from the
// end. A 0-d array has no points to select. Errors wrap ErrOutOfBounds
// (a coordinate outside its dimension) or ErrInvalidSelection.
func NormalizePoints(index [][]int, shape []int) (Points, error) {
	rank := len(shape)
	if rank == 0 {
		return Points{}, fmt.Errorf("%w: a 0-d array has no coordinates to select", ErrInvalidSelection)
	}
	if len(index) != rank {
		return Points{}, fmt.Errorf("%w: %d index arrays for an array of %d dimensions", ErrInvalidSelection, len(index), rank)
	}
	n := 1
	for d, l := range index {
		switch {
		case len(l) == 1:
		case n == 1:
			n = len(l)
		case len(l) != n:
			return Points{}, fmt.Errorf("%w: index arrays of lengths %d and %d do not broadcast (dimension %d)", ErrInvalidSelection, n, len(l), d)
		}
	}
	for _, l := range index {
		if len(l) == 0 {
			n = 0
		}
	}
	pts := Points{Rank: rank, Coords: make([]int, n*rank)}
	if normalizeRows(pts.Coords, index, shape, n) {
		return pts, nil
	}
	for d, l := range index {
		for k := range n {
			i := l[0]
			if len(l) > 1 {
				i = l[k]
			}
			if i < 0 {
				i += shape[d]
			}
			if i < 0 || i >= shape[d] {
				return Points{}, fmt.Errorf("%w: index %d of dimension %d (length %d), point %d", ErrOutOfBounds, l[min(k, len(l)-1)], d, shape[d], k)
			}
			pts.Coords[k*rank+d] = i
		}
	}
	return pts, nil
}

// normalizeRows is NormalizePoints' loop point after point, which writes
// coords in order (the loop by dimension writes it rank times with a
// stride: three passes over 2.4 MB for 100k points of a 3-D array), for
// lists that do not broadcast. It reports false, coords then undefined,
// when a list broadcasts or a coordinate is out of bounds: the loop by
// dimension then runs and reports the first error as it always has.
func normalizeRows(coords []int, index [][]int, shape []int, n int) bool {
	rank := len(shape)
	for _, l := range index {
		if len(l) != n {
			return false
		}
	}
	bad := false
	fix := func(i, d int) int {
		if i < 0 {
			i += shape[d]
		}
		bad = bad || uint(i) >= uint(shape[d])
		return i
	}
	switch rank {
	case 3:
		l0, l1, l2 := index[0][:n], index[1][:n], index[2][:n]
		n0, n1, n2 := uint(shape[0]), uint(shape[1]), uint(shape[2])
		coords = coords[:3*n]
		for k := range n {
			i0, i1, i2 := l0[k], l1[k], l2[k]
			if uint(i0) >= n0 || uint(i1) >= n1 || uint(i2) >= n2 {
				i0, i1, i2 = fix(i0, 0), fix(i1, 1), fix(i2, 2)
			}
			coords[3*k], coords[3*k+1], coords[3*k+2] = i0, i1, i2
		}
	case 2:
		l0, l1 := index[0][:n], index[1][:n]
		n0, n1 := uint(shape[0]), uint(shape[1])
		coords = coords[:2*n]
		for k := range n {
			i0, i1 := l0[k], l1[k]
			if uint(i0) >= n0 || uint(i1) >= n1 {
				i0, i1 = fix(i0, 0), fix(i1, 1)
			}
			coords[2*k], coords[2*k+1] = i0, i1
		}
	default:
		for k := range n {
			for d, l := range index {
				coords[k*rank+d] = fix(l[k], d)
			}
		}
	}
	return !bad
}

// CheckPoints resolves the coordinates of pts (point after point, Rank
// each) against an array shape in place: negative coordinates count from
// the end, and one outside its dimension is an error wrapping
// ErrOutOfBounds (ErrInvalidSelection for a rank that is not the
// shape's). It allocates nothing, for coordinate lists too long to copy.
func CheckPoints(pts Points, shape []int) (Points, error) {
	rank := len(shape)
	if rank == 0 {
		return Points{}, fmt.Errorf("%w: a 0-d array has no coordinates to select", ErrInvalidSelection)
	}
	if pts.Rank != rank || len(pts.Coords)%rank != 0 {
		return Points{}, fmt.Errorf("%w: points of rank %d for an array of rank %d", ErrInvalidSelection, pts.Rank, rank)
	}
	for j, i := range pts.Coords {
		d := j % rank
		if i < 0 {
			i += shape[d]
		}
		if i < 0 || i >= shape[d] {
			return Points{}, fmt.Errorf("%w: index %d of dimension %d (length %d), point %d", ErrOutOfBounds, pts.Coords[j], d, shape[d], j/rank)
		}
		pts.Coords[j] = i
	}
	return pts, nil
}

// MaskPoints returns the points where mask, a boolean array of shape in C
// order, is true, in C order. Errors wrap ErrInvalidSelection.
func MaskPoints(mask []bool, shape []int) (Points, error) {
	rank := len(shape)
	if rank == 0 {
		return Points{}, fmt.Errorf("%w: a 0-d array has no coordinates to select", ErrInvalidSelection)
	}
	if len(mask) != NumElements(shape) {
		return Points{}, fmt.Errorf("%w: mask of %d elements for an array of shape %v", ErrInvalidSelection, len(mask), shape)
	}
	pts := Points{Rank: rank, Coords: []int{}}
	pos := make([]int, rank)
	for _, v := range mask {
		if v {
			pts.Coords = append(pts.Coords, pos...)
		}
		for d := rank - 1; d >= 0; d-- {
			pos[d]++
			if pos[d] < shape[d] {
				break
			}
			pos[d] = 0
		}
	}
	return pts, nil
}

// Sub returns the dimension that selects the output elements [lo, hi) of
// d, in order (0 ≤ lo ≤ hi ≤ d.Len()): a slab of a selection, as a reader
// streaming the output in pieces asks for. A dropped dimension stays
// dropped.
func (d Dim) Sub(lo, hi int) Dim {
	if d.Index == nil && d.Order == nil {
		s := Dim{Start: d.Start + lo*d.Step, Count: hi - lo, Step: d.Step, Drop: d.Drop}
		switch {
		case s.Count == 0:
			s.Start, s.Step = 0, 1
		case s.Count == 1 && s.Step < 0:
			s.Step = -1
		case s.Count == 1:
			s.Step = 1
		}
		return s
	}
	list := make([]int, hi-lo)
	for k := range list {
		list[k] = d.At(lo + k)
	}
	s, _ := indexDim(list, math.MaxInt) // in range: taken from d
	return s
}
