package nd

import (
	"encoding/binary"
	"slices"
)

// This file holds the parts of placed points: points grouped by the chunk
// that serves them (innermost chunk, for shards) whose place in the output
// and element in their chunk are known, so moving one is a load and a
// store (ChunkPart.Elems), with no coordinates looked at.

// ElemBits is the number of low bits of an entry of ChunkPart.Elems that
// hold the element's offset in its chunk; the high bits hold its place.
const ElemBits = 32

// elemMask picks an Elems entry's element offset.
const elemMask = 1<<ElemBits - 1

// PlacedPoints lists points grouped by the chunks of a regular grid (and,
// for shards, by their inner chunks: one level, not nested ones), each
// with its place and its element in its chunk: the parts a read of
// points grouped by chunk yields (Parts).
type PlacedPoints struct {
	Rank int
	// Elems holds, per grouped point, its place (its position in the
	// output) in the high 64 - ElemBits bits and its element's C-order
	// offset, in items, within its chunk of shape ElemShape in the low
	// ElemBits bits.
	Elems     []uint64
	ElemShape []int
	// Ends lists, in order, the end (exclusive) of each run of grouped
	// points in one chunk of the grid, the last being len(Elems); Coords
	// holds the grid coordinates of each such chunk (Rank each).
	Ends, Coords []int
	// InnerEnds and InnerCoords, when the grid's chunks are shards whose
	// inner chunks have shape ElemShape, are the same per run of points in
	// one inner chunk (coordinates within its shard); every end of Ends is
	// one of InnerEnds. Both are nil for a grid whose chunks are the
	// chunks of shape ElemShape.
	InnerEnds, InnerCoords []int
}

// Parts yields one part per run of pp.Ends: its points' entries of Elems
// (ChunkPart.Elems), its place (shape Count 1, ..., 1, number of points,
// at DstStart (0, ..., 0, start of the run) of an output of shape 1, ...,
// 1, len(Elems)), and for shards the runs of its inner chunks, which its
// Parts(ElemShape) yields without a look at any point. Lists that do not
// fit (ends not increasing or past len(Elems), coordinates short, inner
// ends that do not split the runs) end the parts early.
func (pp PlacedPoints) Parts() func(yield func(ChunkPart) bool) {
	return func(yield func(ChunkPart) bool) {
		rank, n := pp.Rank, len(pp.Elems)
		if rank <= 0 || len(pp.ElemShape) != rank || len(pp.Coords) < rank*len(pp.Ends) ||
			pp.InnerEnds != nil && len(pp.InnerCoords) < rank*len(pp.InnerEnds) {
			return
		}
		buf := make([]int, 5*rank*len(pp.Ends))
		k, i := 0, 0
		for c, end := range pp.Ends {
			if end <= k || end > n {
				return
			}
			q := placedPart(pp.Coords[c*rank:(c+1)*rank], k, end-k, buf[5*rank*c:5*rank*(c+1)])
			q.Elems, q.runShape, q.PlaceBase = pp.Elems[k:end:end], pp.ElemShape, k
			if pp.InnerEnds != nil {
				i0 := i
				for i < len(pp.InnerEnds) && pp.InnerEnds[i] <= end {
					if pp.InnerEnds[i] <= k || i > i0 && pp.InnerEnds[i] <= pp.InnerEnds[i-1] {
						return
					}
					i++
				}
				if i == i0 || pp.InnerEnds[i-1] != end {
					return
				}
				q.runs, q.runBase = pp.InnerEnds[i0:i:i], k
				q.runCoords = pp.InnerCoords[i0*rank : i*rank : i*rank]
			}
			if !yield(q) {
				return
			}
			k = end
		}
	}
}

// placedPart is the part of m placed points of a chunk at coords whose
// place starts at k along the last dimension, its slices in buf (5 ×
// rank entries).
func placedPart(coords []int, k, m int, buf []int) ChunkPart {
	rank := len(coords)
	q := ChunkPart{
		Coords:   buf[0:rank:rank],
		SrcStart: buf[rank : 2*rank : 2*rank],
		SrcStep:  buf[2*rank : 3*rank : 3*rank],
		Count:    buf[3*rank : 4*rank : 4*rank],
		DstStart: buf[4*rank : 5*rank : 5*rank],
	}
	copy(q.Coords, coords)
	for d := range rank {
		q.SrcStep[d], q.Count[d] = 1, 1
	}
	q.Count[rank-1] = m
	q.DstStart[rank-1] = k
	return q
}

// placedParts is Parts for a part with Elems: the runs of its inner
// chunks, or nothing when chunkShape is not theirs (the points' elements
// are known in one chunk shape only).
func (p ChunkPart) placedParts(chunkShape []int, yield func(ChunkPart) bool) {
	rank := len(p.Count)
	if p.runs == nil || !slices.Equal(chunkShape, p.runShape) || len(p.runCoords) < rank*len(p.runs) {
		return
	}
	buf := make([]int, 5*rank*len(p.runs))
	k := 0
	for i, end := range p.runs {
		end -= p.runBase
		if end <= k || end > len(p.Elems) {
			return
		}
		q := placedPart(p.runCoords[i*rank:(i+1)*rank], k, end-k, buf[5*rank*i:5*rank*(i+1)])
		q.Elems, q.runShape, q.PlaceBase = p.Elems[k:end:end], p.runShape, p.PlaceBase+k
		if !yield(q) {
			return
		}
		k = end
	}
}

// numPlacedParts is NumParts for a part with Elems.
func (p ChunkPart) numPlacedParts(chunkShape []int) int {
	if p.runs == nil || !slices.Equal(chunkShape, p.runShape) {
		return 0
	}
	return len(p.runs)
}

// moveElems copies the part's placed points (Elems) from chunk, a view of
// its decoded chunk (of the shape its elements are counted in, runShape),
// to their places in out (the part's place, p.DstView of the output), or
// back when toChunk is set: a load and a store per point where chunk is
// C-contiguous, as decoded chunks are.
func (p ChunkPart) moveElems(out, chunk View, toChunk bool) {
	rank := len(p.Count)
	if rank == 0 {
		return
	}
	item := out.ItemSize
	os := out.Strides[rank-1]
	elems := p.Elems[:p.Count[rank-1]]
	oo := out.Offset - p.PlaceBase*os // the output's origin
	od, cd, co := out.Data, chunk.Data, chunk.Offset
	if !toChunk && os == item && chunk.ItemSize == item && chunk.cContiguous(p.runShape) {
		switch item {
		case 4:
			for _, x := range elems {
				o, c := oo+int(x>>ElemBits)*4, co+int(x&elemMask)*4
				binary.LittleEndian.PutUint32(od[o:o+4], binary.LittleEndian.Uint32(cd[c:c+4]))
			}
		case 8:
			for _, x := range elems {
				o, c := oo+int(x>>ElemBits)*8, co+int(x&elemMask)*8
				binary.LittleEndian.PutUint64(od[o:o+8], binary.LittleEndian.Uint64(cd[c:c+8]))
			}
		case 2:
			for _, x := range elems {
				o, c := oo+int(x>>ElemBits)*2, co+int(x&elemMask)*2
				binary.LittleEndian.PutUint16(od[o:o+2], binary.LittleEndian.Uint16(cd[c:c+2]))
			}
		case 1:
			for _, x := range elems {
				od[oo+int(x>>ElemBits)] = cd[co+int(x&elemMask)]
			}
		default:
			for _, x := range elems {
				o, c := oo+int(x>>ElemBits)*item, co+int(x&elemMask)*item
				copy(od[o:o+item], cd[c:c+item])
			}
		}
		return
	}
	// Any other view of the chunk: the element's coordinates from its
	// offset, then chunk's strides.
	for _, x := range elems {
		e, c := int(x&elemMask), co
		for d := rank - 1; d >= 0; d-- {
			n := p.runShape[d]
			c += e % n * chunk.Strides[d]
			e /= n
		}
		if toChunk {
			moveItem(cd, od, c, oo+int(x>>ElemBits)*os, item)
		} else {
			moveItem(od, cd, oo+int(x>>ElemBits)*os, c, item)
		}
	}
}

// cContiguous reports whether v has shape shape and C-order strides with
// no gaps.
func (v View) cContiguous(shape []int) bool {
	if !slices.Equal(v.Shape, shape) || len(v.Strides) != len(shape) {
		return false
	}
	s := v.ItemSize
	for d := len(shape) - 1; d >= 0; d-- {
		if v.Strides[d] != s && shape[d] > 1 {
			return false
		}
		s *= shape[d]
	}
	return true
}
