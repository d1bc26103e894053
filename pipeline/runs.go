package pipeline

import (
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// appendRuns appends to spans the byte runs that part p needs of the
// uncompressed inner chunk at offset off of a shard of layout l, in C
// order, and returns the first run's offset relative to the chunk. Too
// many runs (over maxRuns) become their one bounding span.
func appendRuns(spans []store.Span, l *sharding.Layout, p nd.ChunkPart, off int64) ([]store.Span, int64) {
	shape := l.ChunkShape()
	nd_ := len(p.Count)
	strides := nd.CStrides(shape, l.ItemSize())
	lo := make([]int, nd_) // normalised (ascending) box
	step := make([]int, nd_)
	for d := range nd_ {
		lo[d], step[d] = p.SrcStart[d], p.SrcStep[d]
		if step[d] < 0 {
			lo[d] += (p.Count[d] - 1) * step[d]
			step[d] = -step[d]
		}
		if p.Count[d] == 1 {
			step[d] = 1
		}
	}
	// Trailing dimensions the part covers whole, then one it covers with
	// step 1, form contiguous runs; dimensions [0, outer) are walked.
	outer := nd_
	for d := nd_ - 1; d >= 0; d-- {
		if p.Count[d] == shape[d] {
			outer = d
			continue
		}
		if step[d] == 1 {
			outer = d
		}
		break
	}
	runLen := int64(l.ItemSize())
	base := int64(0)
	for d := outer; d < nd_; d++ {
		runLen *= int64(p.Count[d])
		base += int64(lo[d] * strides[d])
	}
	nruns := 1
	for d := range outer {
		nruns *= p.Count[d]
	}
	first := base
	for d := range outer {
		first += int64(lo[d] * strides[d])
	}
	if nruns > maxRuns {
		last := first
		for d := range outer {
			last += int64((p.Count[d] - 1) * step[d] * strides[d])
		}
		return append(spans, store.Span{Offset: off + first, Length: last + runLen - first}), first
	}
	idx := make([]int, outer)
	for {
		o := base
		for d := range outer {
			o += int64((lo[d] + idx[d]*step[d]) * strides[d])
		}
		spans = append(spans, store.Span{Offset: off + o, Length: runLen})
		d := outer - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < p.Count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			break
		}
	}
	return spans, first
}
