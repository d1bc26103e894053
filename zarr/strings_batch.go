package zarr

// Sparse string reads in batches: the arena holds every decoded chunk a
// read touches until the handles are resolved, so a read of a few
// elements of many chunks (every 100th string) would hold all of their
// text. Such a read runs as consecutive reads of a few chunk rows each
// (along the first dimension), each resolved, its chunks dropped, before
// the next: the arena holds about vlenBatchBytes at a time.

import (
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
)

// vlenBatchBytes is the decoded text a batch of a sparse read aims at.
var vlenBatchBytes int64 = 32 << 20

// vlenInPlace: reads place handles in the output's headers (64-bit
// platforms; tests turn it off to run the other path).
var vlenInPlace = codecs.InPlace

// vlenBatchHook, when set (tests), is told the decoded bytes of each
// batch.
var vlenBatchHook func(decoded int64)

// denseEnough: a selection using at least this share of the elements of
// the decode units it touches reads in one go (its chunks are, nearly,
// its output).
const denseNum, denseDen = 7, 8

// unitShape returns the shape of what a read decodes whole (Units).
func (a *Array) unitShape() []int { return a.grid.DecodeUnit() }

// touchedExtent returns the number of indices of dimension d (length n,
// chunks of c) inside the chunks that dim selects.
func touchedExtent(dim nd.Dim, n, c int) int64 {
	if dim.Count == 0 {
		return 0
	}
	extent := func(k int) int64 { return int64(min((k+1)*c, n) - k*c) }
	if dim.Index != nil {
		var sum int64
		last := -1
		for _, i := range dim.Index {
			if k := i / c; k != last {
				sum, last = sum+extent(k), k
			}
		}
		return sum
	}
	first, lastIdx := dim.Start, dim.Start+(dim.Count-1)*dim.Step
	lo, hi := min(first, lastIdx)/c, max(first, lastIdx)/c
	if step := max(dim.Step, -dim.Step); step >= c {
		// Every selected index in a chunk of its own.
		var sum int64
		for k := range dim.Count {
			sum += extent((dim.Start + k*dim.Step) / c)
		}
		return sum
	}
	return int64(min((hi+1)*c, n) - lo*c)
}

// sparse reports whether sel uses less than denseNum/denseDen of the
// elements of the decode units it touches.
func (a *Array) sparse(sel nd.Selection) bool {
	unit := a.unitShape()
	used, touched := 1.0, 1.0
	for d, dim := range sel {
		used *= float64(dim.Count)
		touched *= float64(touchedExtent(dim, a.meta.Shape[d], unit[d]))
	}
	return used*denseDen < touched*denseNum
}

// inBatches runs op on sel whole, or, when sel is sparse and its first
// dimension a plain range, on consecutive batches of k runs of that
// dimension (the indices in one row of decode units each, cut as Split
// cuts), k sized from what the previous batch decoded into arena: the
// batches are bounded by the text they decode, which no output size
// tells. op gets the batch's selection and the range [lo,
// hi) of sel's elements (C order) it covers.
func (a *Array) inBatches(sel nd.Selection, arena *codecs.VLenArena, op func(sub nd.Selection, lo, hi int) error) error {
	rows, perRow := 1, sel.NumElements()
	var x *unitAxis // the decode units along the first dimension, when batching
	if len(sel) > 0 && sel[0].Index == nil && sel[0].Order == nil && sel[0].Count > 1 && a.sparse(sel) {
		axes := a.unitAxes()
		rows, x = sel[0].Count, &axes[len(axes)-2][0] // the last level is single elements
		perRow /= rows
	}
	k := 1
	for i := 0; i < rows; {
		sub, j := sel, rows
		if x != nil {
			// k runs of the first dimension's indices, each in one unit: the
			// splitter's cut (split.go).
			j = i
			for range k {
				if j = x.runEnd(sel[0], j); j >= rows {
					break
				}
			}
			sub = slices.Clone(sel)
			sub[0] = sel[0].Sub(i, j)
		}
		before := arena.Bytes()
		if err := op(sub, i*perRow, j*perRow); err != nil {
			return err
		}
		decoded := arena.Bytes() - before
		if vlenBatchHook != nil {
			vlenBatchHook(decoded)
		}
		if perUnitRow := decoded / int64(k); perUnitRow > 0 {
			k = int(max(1, min(vlenBatchBytes/perUnitRow, int64(rows))))
		}
		i = j
	}
	return nil
}
