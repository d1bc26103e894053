package nd

import (
	"iter"
	"math"
)

// ChunkPart is the part of a selection that one chunk of a regular chunk
// grid serves. Element j = (j0, j1, ...) of the part, 0 ≤ jd < Count[d], is
// at chunk-local coordinates SrcStart[d] + jd*SrcStep[d] and at output
// coordinates DstStart[d] + jd, in the selection's FullShape (dropped
// dimensions present with size 1). Every slice has one entry per array
// dimension. A part owns its slices: callers may keep it or hand it to
// another goroutine.
type ChunkPart struct {
	// Coords are the chunk's grid coordinates.
	Coords []int
	// SrcStart and SrcStep give the first chunk-local index and the step
	// (negative for a backward slice) of the part in each dimension.
	SrcStart, SrcStep []int
	// Count is the number of elements per dimension (1 for dropped ones).
	Count []int
	// DstStart is where the part starts in the output, in FullShape
	// coordinates.
	DstStart []int
	// Index, when not nil, lists for each dimension selected by an index
	// array the part's chunk-local indices, ascending (nil entries for the
	// dimensions that are boxes): then element j takes index Index[d][jd]
	// in that dimension (SrcStart[d] is its first, SrcStep[d] 1). The lists
	// are shared, never modified.
	Index [][]int
	// Points, when not nil, holds the coordinates of the part's points (a
	// coordinate selection): point j at Points[j*rank : (j+1)*rank], in
	// the frame of PointOrigin: its chunk-local coordinate in dimension d
	// is Points[j*rank+d] - PointOrigin[d] (chunk-local when PointOrigin
	// is nil). Count is then 1, ..., 1, number of points, and point j goes
	// to DstStart + (0, ..., 0, j). The parts of a part of points (Parts)
	// share its coordinates, with their own origin: they are never
	// modified.
	Points      []int
	PointOrigin []int
	// Places, when not nil (points), sends point j to DstStart + (0, ...,
	// 0, Places[j] - PlaceBase) instead: points grouped by chunk go
	// straight to their places in the order they were asked in. The parts
	// of such a part share the list, each with its own PlaceBase (the
	// position of its first point in the list it was cut from).
	Places    []int
	PlaceBase int
	// Elems, when not nil, stands for Points and Places (Points is then
	// nil): the part's points were grouped by the chunk that serves them
	// (PlacedPoints), and entry j holds point j's place (as Places[j]
	// would, counted with PlaceBase) in its high bits and the C-order
	// offset of its element within its chunk, of the PlacedPoints'
	// ElemShape, in its low ElemBits bits. Count is 1, ..., 1, number of
	// points. Such a part's Parts are those of the inner chunks its runs
	// were made for (PlacedPoints.InnerEnds), nothing for another chunk
	// shape. The list is shared, never modified.
	Elems []uint64
	// runs, when not nil, are the ends of the runs of the part's points
	// in one chunk of runShape each (positions in the points runs were
	// made for, counted from runBase): Parts(runShape) and
	// NumParts(runShape) use them and look at no point
	// (GroupedPointParts).
	runs     []int
	runBase  int
	runShape []int
	// runCoords, with runs and Elems, holds the coordinates of each run's
	// chunk (rank each): placed points have no coordinates to find them
	// from. With Elems, runShape is the shape of the chunks the elements
	// are counted in (PlacedPoints.ElemShape), runs or not.
	runCoords []int
}

// segment is one chunk's share of one dimension of a selection: its
// chunk-local indices are listed in index for a listed dimension.
type segment struct {
	chunk, srcStart, count, dstStart int
	index                            []int
}

// dimSegments lists, in ascending chunk order, the chunks of size c that
// dimension d of a selection touches, and which of its indices each serves.
func dimSegments(d Dim, c int) []segment {
	if d.Count == 0 {
		return nil
	}
	segs := make([]segment, 0, dimChunkCount(d, c))
	if d.Index != nil {
		local := make([]int, len(d.Index))
		for k := 0; k < len(d.Index); {
			ch := d.Index[k] / c
			m := k
			for ; m < len(d.Index) && d.Index[m]/c == ch; m++ {
				local[m] = d.Index[m] - ch*c
			}
			segs = append(segs, segment{chunk: ch, srcStart: local[k], count: m - k, dstStart: k, index: local[k:m:m]})
			k = m
		}
		return segs
	}
	k := 0
	for k < d.Count {
		idx := d.Start + k*d.Step
		ch := idx / c
		var n int
		if d.Step > 0 {
			n = ((ch+1)*c-idx-1)/d.Step + 1
		} else {
			n = (idx-ch*c)/(-d.Step) + 1
		}
		n = min(n, d.Count-k)
		segs = append(segs, segment{chunk: ch, srcStart: idx - ch*c, count: n, dstStart: k})
		k += n
	}
	if d.Step < 0 {
		for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
			segs[i], segs[j] = segs[j], segs[i]
		}
	}
	return segs
}

// dimChunkCount returns how many chunks of size c dimension d touches.
func dimChunkCount(d Dim, c int) int {
	if d.Count == 0 {
		return 0
	}
	if d.Index != nil {
		n := 0
		for k, i := range d.Index {
			if k == 0 || i/c != d.Index[k-1]/c {
				n++
			}
		}
		return n
	}
	if d.Step >= c || d.Step <= -c {
		return d.Count // consecutive indices always fall in different chunks
	}
	first, last := d.Start/c, (d.Start+(d.Count-1)*d.Step)/c
	if first > last {
		first, last = last, first
	}
	return last - first + 1 // a step shorter than a chunk misses no chunk between
}

// validChunkShape reports whether chunkShape fits the selection.
func (s Selection) validChunkShape(chunkShape []int) bool {
	if len(chunkShape) != len(s) {
		return false
	}
	for _, c := range chunkShape {
		if c <= 0 {
			return false
		}
	}
	return true
}

// NumChunks returns how many chunks of the regular grid with the given
// chunk shape hold at least one selected element (saturating at
// math.MaxInt). It is 0 when chunkShape does not have one positive entry
// per dimension. It does not allocate.
func (s Selection) NumChunks(chunkShape []int) int {
	if !s.validChunkShape(chunkShape) {
		return 0
	}
	n := 1
	for d, dim := range s {
		k := dimChunkCount(dim, chunkShape[d])
		if k == 0 {
			return 0
		}
		if n > math.MaxInt/k {
			n = math.MaxInt
		} else {
			n *= k
		}
	}
	return n
}

// Chunks yields, for every chunk of the regular grid with the given chunk
// shape that holds at least one selected element, the part of the selection
// it serves, in C order of chunk coordinates. Parts are disjoint and
// together cover every selected element once. The work per dimension is
// done once up front, so iterating costs one allocation per part. A 0-d
// selection yields one part with empty slices (the single chunk of a 0-d
// array). Nothing is yielded when chunkShape does not have one positive
// entry per dimension. The sequence may be iterated more than once.
func (s Selection) Chunks(chunkShape []int) iter.Seq[ChunkPart] {
	return func(yield func(ChunkPart) bool) {
		if !s.validChunkShape(chunkShape) {
			return
		}
		n := len(s)
		segs := make([][]segment, n)
		for d, dim := range s {
			segs[d] = dimSegments(dim, chunkShape[d])
			if len(segs[d]) == 0 {
				return
			}
		}
		listed := false
		for _, dim := range s {
			listed = listed || dim.Index != nil
		}
		pos := make([]int, n)
		for {
			buf := make([]int, 5*n)
			p := ChunkPart{
				Coords:   buf[0:n:n],
				SrcStart: buf[n : 2*n : 2*n],
				SrcStep:  buf[2*n : 3*n : 3*n],
				Count:    buf[3*n : 4*n : 4*n],
				DstStart: buf[4*n : 5*n : 5*n],
			}
			for d := range n {
				sg := segs[d][pos[d]]
				p.Coords[d] = sg.chunk
				p.SrcStart[d] = sg.srcStart
				p.SrcStep[d] = s[d].Step
				p.Count[d] = sg.count
				p.DstStart[d] = sg.dstStart
			}
			if listed {
				p.Index = make([][]int, n)
				for d := range n {
					p.Index[d] = segs[d][pos[d]].index
				}
			}
			if !yield(p) || !advance(pos, func(d int) int { return len(segs[d]) }) {
				return
			}
		}
	}
}

// NumElements returns the number of elements of the part.
func (p ChunkPart) NumElements() int { return NumElements(p.Count) }

// CoversChunk reports whether the part covers its whole chunk, so a write
// can replace the chunk without reading it first. Edge chunks are clipped to
// arrayShape: a part covers an edge chunk when it covers the chunk's part
// inside the array. A part covers a dimension when it holds every index of
// it with step 1 or -1 (a reversed slice also writes every element).
func (p ChunkPart) CoversChunk(chunkShape, arrayShape []int) bool {
	if len(chunkShape) != len(p.Count) || len(arrayShape) != len(p.Count) {
		return false
	}
	if p.isPoints() {
		// Points are distinct: as many as the chunk holds cover it.
		inside := 1
		for d, c := range chunkShape {
			inside *= max(0, min(c, arrayShape[d]-p.Coords[d]*c))
		}
		return inside > 0 && p.NumElements() == inside
	}
	for d, n := range p.Count {
		extent := min(chunkShape[d], arrayShape[d]-p.Coords[d]*chunkShape[d])
		if n != extent || extent <= 0 {
			return false
		}
		if n == 1 || p.Index != nil && p.Index[d] != nil {
			continue // distinct indices, as many as the extent: all of them
		}
		switch p.SrcStep[d] {
		case 1:
			if p.SrcStart[d] != 0 {
				return false
			}
		case -1:
			if p.SrcStart[d] != extent-1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// SrcView returns the view of the part's elements inside chunk, a view of
// the decoded chunk with the chunk's shape (or at least the part's extent).
// The result has the part's Count as its shape and shares chunk's Data.
func (p ChunkPart) SrcView(chunk View) View {
	return chunk.Slice(p.SrcStart, p.Count, p.SrcStep)
}

// DstView returns the view of the part's place inside out, a view of the
// whole selection output with the selection's FullShape. The result has the
// part's Count as its shape and shares out's Data, so
// Copy(p.DstView(out), p.SrcView(chunk)) places a decoded chunk's share.
func (p ChunkPart) DstView(out View) View {
	v := View{Data: out.Data, Offset: out.Offset, ItemSize: out.ItemSize,
		Shape: append([]int(nil), p.Count...), Strides: append([]int(nil), out.Strides...)}
	for d, s := range p.DstStart {
		v.Offset += s * out.Strides[d]
	}
	return v
}

// IsWhole reports whether the part takes every element of its chunk (of
// shape chunkShape), in order: then a chunk decodes exactly into the part's
// place when that place is one contiguous run.
func (p ChunkPart) IsWhole(chunkShape []int) bool {
	if len(chunkShape) != len(p.Count) || p.isPoints() {
		return false
	}
	for d, n := range chunkShape {
		if p.SrcStart[d] != 0 || p.Count[d] != n || (n > 1 && p.SrcStep[d] != 1) {
			return false
		}
		// A listed dimension of n distinct indices in [0, n) has them all,
		// in order.
	}
	return true
}

// Selection returns the part as a selection within its chunk: one Dim per
// dimension (SrcStart, Count, SrcStep, or its listed indices; no dimension
// dropped). A part of points is no selection of this kind: use Parts.
func (p ChunkPart) Selection() Selection {
	sel := make(Selection, len(p.Count))
	for d := range sel {
		sel[d] = Dim{Start: p.SrcStart[d], Count: p.Count[d], Step: p.SrcStep[d]}
		if p.Index != nil && p.Index[d] != nil {
			sel[d].Index = p.Index[d]
		}
	}
	return sel
}

// Forward reports whether s steps by 1 wherever it takes more than one
// index, so that it may cover chunks whole (a listed dimension does not).
func (s Selection) Forward() bool {
	for _, d := range s {
		if d.Count > 1 && (d.Step != 1 || d.Index != nil) {
			return false
		}
	}
	return true
}

// advance moves pos to the next position in C order of a grid of n(d)
// positions per dimension, and reports false after the last.
func advance(pos []int, n func(d int) int) bool {
	for d := len(pos) - 1; d >= 0; d-- {
		if pos[d]++; pos[d] < n(d) {
			return true
		}
		pos[d] = 0
	}
	return false
}
