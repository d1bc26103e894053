package main

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// defaultBudget is the memory a streaming command aims to stay within
// unless --budget says otherwise: 256 MiB.
const defaultBudget = 256 << 20

// varBlocks cuts sel of a variable-length array a into blocks of about
// blockBytes(budget) of values, reckoning vlenItemBytes per element.
func varBlocks(a *zarr.Array, sel nd.Selection, budget int64) iter.Seq[nd.Selection] {
	item := int64(a.Metadata().DataType.Size())
	return a.Split(sel, max(1, blockBytes(budget)*item/vlenItemBytes))
}

// readUnits returns the edges streaming aligns its blocks to: the array's
// decode units (its chunks, or the innermost chunks of its shards).
func readUnits(a *zarr.Array) []int {
	_, u := a.Units()
	return u
}

// streamBlock is one block of a stream: its sub-selection of the whole and
// its values, valid until the callback returns. More holds the same block
// of the other arrays of streamAll.
type streamBlock struct {
	Sel  nd.Selection
	Data []byte
	More [][]byte
}

// stream reads sel in blocks of zarr.Array.Split (blockBytes each), in
// order, reading the next block while use works on the current one: at
// most two blocks are held. It stops at the first error of a read or of
// use, and leaves no goroutine behind when it returns.
func stream(ctx context.Context, a *zarr.Array, sel nd.Selection, blockBytes int64, use func(streamBlock) error) error {
	return streamAll(ctx, []*zarr.Array{a}, sel, blockBytes, use)
}

// streamAll is stream over several arrays of one shape at once: each block
// is read from every array (blocks cut and aligned for the first), so use
// sees the same elements of each side by side.
func streamAll(ctx context.Context, as []*zarr.Array, sel nd.Selection, blockBytes int64, use func(streamBlock) error) error {
	a := as[0]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		b   streamBlock
		buf int
		err error
	}
	results := make(chan result, 1)
	free := make(chan int, 2)
	free <- 0
	free <- 1
	bufs := [2][][]byte{make([][]byte, len(as)), make([][]byte, len(as))}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		defer close(results)
		for sub := range a.Split(sel, blockBytes) {
			var i int
			select {
			case i = <-free:
			case <-ctx.Done():
				return
			}
			datas := make([][]byte, len(as))
			var err error
			for k, b := range as {
				size := sub.NumElements() * b.Metadata().DataType.Size()
				if cap(bufs[i][k]) < size {
					bufs[i][k] = make([]byte, size)
				}
				datas[k] = bufs[i][k][:size]
				if err == nil {
					if err = b.ReadSelection(ctx, datas[k], sub); err != nil && len(as) > 1 {
						err = &sideError{side: k, err: err}
					}
				}
			}
			results <- result{streamBlock{sub, datas[0], datas[1:]}, i, err}
			if err != nil {
				return
			}
		}
	})
	for r := range results {
		err := r.err
		if err == nil {
			err = use(r.b)
		}
		if err != nil {
			cancel()
			for range results {
			}
			return err
		}
		free <- r.buf
	}
	return ctx.Err()
}

// sideError is an error of reading the array as[side] of streamAll, so
// that a command comparing several says which one failed.
type sideError struct {
	side int
	err  error
}

func (e *sideError) Error() string { return e.err.Error() }
func (e *sideError) Unwrap() error { return e.err }

// blockBytes is the size of a streaming command's blocks within budget:
// an eighth, as two blocks and the read in flight (another eighth) leave
// the Go collector room under a soft limit of the whole budget.
func blockBytes(budget int64) int64 { return max(budget/8, 1) }

// listed reports whether a dimension of sel lists its indices (an index
// array or mask): chunkBoxes leaves such selections to zarr.Array.Split.
func listed(sel nd.Selection) bool {
	for _, d := range sel {
		if d.Index != nil || d.Order != nil {
			return true
		}
	}
	return false
}

// chunkBoxes cuts sel (no listed dimension) into boxes aligned to a's
// decode units (readUnits), each within one unit along
// every dimension after the first and a run of whole units along the
// first, as many as fit in target bytes of output. A unit's part in such
// a box is one contiguous run of the box's output when the box covers the
// unit whole along the later dimensions, so the engine decodes it straight
// into place. Boxes of one unit that still exceed target are cut further
// by zarr.Array.Split. The boxes tile sel in a fixed order (C order of the
// unit grid); their outputs concatenated are not sel's C order.
func chunkBoxes(a *zarr.Array, sel nd.Selection, target int64) iter.Seq[nd.Selection] {
	item, units := a.Metadata().DataType.Size(), readUnits(a)
	return func(yield func(nd.Selection) bool) {
		n := len(sel)
		if sel.NumElements() == 0 {
			return
		}
		if n == 0 {
			yield(slices.Clone(sel))
			return
		}
		// rest: the most bytes one unit holds along the later dimensions
		// and the first; k: units per box along the first.
		rest, first := int64(item), int64(0)
		for d := range n {
			step := max(sel[d].Step, -sel[d].Step)
			u := int64(min(sel[d].Count, (max(units[d], 1)+step-1)/step))
			if d == 0 {
				first = u
			} else {
				rest *= u
			}
		}
		k := max(1, int(target/(rest*first)))
		pos := make([]int, n)  // position along sel[d] of the current box
		next := make([]int, n) // and of the next one
		box := make(nd.Selection, n)
		for {
			for d := range n {
				count := 1
				if d == 0 {
					count = k
				}
				box[d], next[d] = unitRun(sel[d], pos[d], max(units[d], 1), count)
			}
			for sub := range a.Split(box, target) {
				if !yield(sub) {
					return
				}
			}
			d := n - 1
			for ; d >= 0; d-- {
				if pos[d] = next[d]; pos[d] < sel[d].Count {
					break
				}
				pos[d] = 0
			}
			if d < 0 {
				return
			}
		}
	}
}

// unitRun returns the part of dim from its k-th index on that lies within
// count consecutive units of the given edge (the unit of the k-th index
// first), and the position after it.
func unitRun(dim nd.Dim, k, unit, count int) (nd.Dim, int) {
	first := dim.Start + k*dim.Step
	c := first / unit
	var j int
	if dim.Step > 0 {
		end := (c + count) * unit // first index past the units
		j = (end - dim.Start + dim.Step - 1) / dim.Step
	} else {
		lo := (c - count + 1) * unit // lowest index within the units
		j = (dim.Start-lo)/-dim.Step + 1
	}
	j = min(j, dim.Count)
	sub := dim
	sub.Start, sub.Count = first, j-k
	if sub.Count == 1 {
		sub.Step = 1
	}
	return sub, j
}
