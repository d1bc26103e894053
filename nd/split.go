package nd

import "slices"

// SplitParts cuts a part of points (with coordinates or placed: Elems)
// into at most n pieces, each made of
// consecutive parts of p.Parts(chunkShape) (every part in exactly one
// piece, the pieces in order, about as many parts in each), so that the
// parts of one chunk (a shard's inner chunks) can be walked by several
// goroutines. A piece is a part of points of p's chunk: its DstStart is
// relative to p's place, like the parts Parts yields, and its own
// Parts(chunkShape) yields exactly its share of p's parts, with
// destinations relative to the piece's place. Pieces share p's points
// (places, elements and runs), never modified. Any other part, a part of points of one
// part or none, and any part when n ≤ 1, is one piece: p itself, at the
// start of its own place (a zero DstStart).
func (p ChunkPart) SplitParts(chunkShape []int, n int) func(yield func(ChunkPart) bool) {
	return func(yield func(ChunkPart) bool) {
		rank := len(p.Count)
		whole := func() { // p, its place relative to its own
			q := p
			q.DstStart = make([]int, len(p.DstStart))
			yield(q)
		}
		if !p.isPoints() || rank == 0 || len(chunkShape) != rank || n <= 1 {
			whole()
			return
		}
		total := p.NumParts(chunkShape)
		if total <= 1 {
			whole()
			return
		}
		n = min(n, total)
		if p.runs != nil && slices.Equal(chunkShape, p.runShape) {
			k0, r0 := 0, 0
			for i := range n {
				r1 := total * (i + 1) / n // > r0: n ≤ total
				k1 := p.runs[r1-1] - p.runBase
				q := p.pointRange(k0, k1)
				q.runs, q.runBase, q.runShape = p.runs[r0:r1:r1], p.runBase+k0, p.runShape
				if p.runCoords != nil {
					q.runCoords = p.runCoords[r0*rank : r1*rank : r1*rank]
				}
				if !yield(q) {
					return
				}
				k0, r0 = k1, r1
			}
			return
		}
		var lo [8]int
		count := p.Count[rank-1]
		k0, parts, i := 0, 0, 0
		for k := 0; k < count; {
			k += p.pointRun(k, count, chunkShape, lo[:])
			parts++
			if parts < total*(i+1)/n && k < count {
				continue
			}
			if !yield(p.pointRange(k0, k)) {
				return
			}
			k0 = k
			i++
		}
	}
}

// pointRange is the part of p's points [k0, k1) (their coordinates, or
// their elements), its place starting at k0 along the last dimension of
// p's.
func (p ChunkPart) pointRange(k0, k1 int) ChunkPart {
	rank := len(p.Count)
	buf := make([]int, 6*rank)
	own := func(i int, s []int) []int { // a copy of s in the ith slice of buf
		if s == nil {
			return nil
		}
		return append(buf[i*rank:i*rank:(i+1)*rank], s...)
	}
	q := ChunkPart{
		Coords: own(0, p.Coords), SrcStart: own(1, p.SrcStart), SrcStep: own(2, p.SrcStep), Count: own(3, p.Count),
		DstStart: buf[4*rank : 5*rank : 5*rank], PointOrigin: own(5, p.PointOrigin),
	}
	switch {
	case p.Elems != nil:
		q.Elems, q.runShape, q.PlaceBase = p.Elems[k0:k1:k1], p.runShape, p.PlaceBase+k0 // runShape: the shape its elements count in
	case p.Places != nil:
		q.Points, q.Places, q.PlaceBase = p.Points[k0*rank:k1*rank:k1*rank], p.Places[k0:k1:k1], p.PlaceBase+k0
	default:
		q.Points = p.Points[k0*rank : k1*rank : k1*rank]
	}
	q.Count[rank-1] = k1 - k0
	q.DstStart[rank-1] = k0
	return q
}
