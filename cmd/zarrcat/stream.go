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

// splitSelection cuts sel into consecutive sub-selections of at most
// maxBytes of output each (at least one element), whose outputs
// concatenated in order are sel's output in C order: one index along the
// dimensions before some d, a run of indices along d, the dimensions after
// d whole. Along d, runs of a step-1 selection start and end on multiples
// of units[d] (the chunk edge) where a whole unit fits, so no chunk is
// decoded for two blocks.
func splitSelection(sel nd.Selection, item int, units []int, maxBytes int64) iter.Seq[nd.Selection] {
	return func(yield func(nd.Selection) bool) {
		n := len(sel)
		if sel.NumElements() == 0 {
			return
		}
		// d: the first dimension where a run fits with the later dimensions whole.
		d, rest := n, int64(item)
		for d > 0 && int64(sel[d-1].Count) <= maxBytes/rest {
			rest *= int64(sel[d-1].Count)
			d--
		}
		if d == 0 {
			yield(slices.Clone(sel))
			return
		}
		d-- // split along d; dimensions after d are whole
		run := max(1, int(maxBytes/rest))
		aligned := sel[d].Step == 1 && units[d] > 1 && run >= units[d]
		if aligned {
			run -= run % units[d]
		}
		idx := make([]int, d) // position along the dimensions before d
		for {
			for i := 0; i < sel[d].Count; {
				j := min(sel[d].Count, i+run)
				if aligned {
					// End on a chunk boundary of the array's coordinates.
					end := sel[d].Start + j
					if end < sel[d].Start+sel[d].Count {
						end -= end % units[d]
						j = max(i+1, end-sel[d].Start)
					}
				}
				sub := slices.Clone(sel)
				for k := range d {
					sub[k].Start = sel[k].Start + idx[k]*sel[k].Step
					sub[k].Count = 1
				}
				sub[d].Start = sel[d].Start + i*sel[d].Step
				sub[d].Count = j - i
				if !yield(sub) {
					return
				}
				i = j
			}
			k := d - 1
			for ; k >= 0; k-- {
				idx[k]++
				if idx[k] < sel[k].Count {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				return
			}
		}
	}
}

// readUnits returns the edges streaming aligns its blocks to: the array's
// inner chunks when sharded (a block reads the inner chunks it needs of a
// shard), else its chunks.
func readUnits(a *zarr.Array) []int {
	if l := a.Sharding(); l != nil {
		return l.ChunkShape()
	}
	return a.ChunkShape()
}

// streamBlock is one block of a stream: its sub-selection of the whole and
// its values, valid until the callback returns. More holds the same block
// of the other arrays of streamAll.
type streamBlock struct {
	Sel  nd.Selection
	Data []byte
	More [][]byte
}

// stream reads sel in blocks of splitSelection (blockBytes each), in
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
	item := a.Metadata().DataType.Size()
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
		for sub := range splitSelection(sel, item, readUnits(a), blockBytes) {
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
					err = b.ReadSelection(ctx, sub, datas[k])
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

// blockBytes is the size of a streaming command's blocks within budget:
// an eighth, as two blocks and the read in flight (another eighth) leave
// the Go collector room under a soft limit of the whole budget.
func blockBytes(budget int64) int64 { return max(budget/8, 1) }
