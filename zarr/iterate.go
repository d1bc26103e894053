package zarr

import (
	"context"
	"iter"
	"math"
	"sync"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
)

// DefaultIterBudget is the memory budget Blocks uses for a non-positive
// budget: 128 MiB.
const DefaultIterBudget int64 = 128 << 20

// Block is one block of an iteration by Array.Blocks: the box
// [Start[d], Stop[d]) of the array in every dimension d, and its elements
// in C order (memory representation) in Data, of shape Shape.
//
// Data is one of two buffers the iteration alternates between: it is valid
// until the loop body returns, and overwritten by a later block after
// that. Copy what must outlive the iteration step.
type Block struct {
	Start, Stop []int
	Shape       []int
	Data        []byte
}

// BlockShape returns the shape of the blocks Blocks(ctx, budget) yields
// (those at the array's far edges may be smaller): half the budget per
// block (the iteration holds two), as many whole rows along axis 0 as fit
// with every other dimension whole, rounded down to whole chunks along
// axis 0 (shards, for a sharded array) where at least one chunk row fits.
// When even that does not fit, blocks become chunk-aligned boxes: one
// chunk along the leading dimensions and as many chunks as fit along the
// next; then the same with inner chunks of a sharded array (at every
// level of nesting, down to the innermost chunks); and last, for
// chunks larger than the budget, boxes smaller than one chunk. Every
// block has at least one element.
func (a *Array) BlockShape(budget int64) []int {
	if budget <= 0 {
		budget = DefaultIterBudget
	}
	units := a.grid.UnitLevels() // chunks, then inner chunks at every level of nesting
	ones := make([]int, len(a.meta.Shape))
	for d := range ones {
		ones[d] = 1
	}
	units = append(units, ones)
	return blockShape(a.meta.Shape, units, int64(a.meta.DataType.Size()), max(budget/2, 1))
}

// blockShape picks a block of at most target bytes: for the first unit
// (chunk shape) and dimension d that fit, one unit along dimensions before
// d, as many units along d as fit, dimensions after d whole.
func blockShape(shape []int, units [][]int, item, target int64) []int {
	n := len(shape)
	for _, u := range units {
		for d := range n {
			base := item
			for j := range n {
				switch {
				case j < d:
					base = mulSat(base, int64(max(1, min(u[j], shape[j]))))
				case j > d:
					base = mulSat(base, int64(max(1, shape[j])))
				}
			}
			unit := int64(max(1, min(u[d], shape[d])))
			if mulSat(base, unit) > target {
				continue
			}
			b := make([]int, n)
			for j := range n {
				switch {
				case j < d:
					b[j] = max(1, min(u[j], shape[j]))
				case j > d:
					b[j] = max(1, shape[j])
				default:
					k := target / (base * unit)
					b[j] = int(min(int64(max(1, shape[d])), k*unit))
				}
			}
			return b
		}
	}
	b := make([]int, n)
	for d := range b {
		b[d] = 1
	}
	return b
}

// mulSat returns a*b for positive a and b, or math.MaxInt64 when that
// overflows: the sizes blockShape multiplies only fit an int64 when the
// array has elements, and an empty array may have huge other dimensions.
func mulSat(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// Blocks iterates over the whole array in blocks of BlockShape(budget)
// (DefaultIterBudget when budget ≤ 0), in C order of the blocks; along
// axis 0 first when whole rows fit. While the loop body works on one
// block, a goroutine reads the next into the other of two buffers, so the
// iteration holds at most two blocks (≤ budget) plus what one read has in
// flight (the array's pipeline options, with MaxBytesInFlight lowered to
// a quarter of the budget when it is larger).
//
// A read error is yielded once (with a zero Block) and ends the iteration;
// so does ctx ending. Breaking out of the loop, or ctx ending, stops the
// prefetch: when the loop statement returns, no goroutine of the
// iteration is left. See Block for how long Data stays valid. An array
// with no elements yields nothing.
//
//	for b, err := range a.Blocks(ctx, 256<<20) {
//		if err != nil {
//			return err
//		}
//		use(b.Start, b.Shape, b.Data)
//	}
func (a *Array) Blocks(ctx context.Context, budget int64) iter.Seq2[Block, error] {
	if budget <= 0 {
		budget = DefaultIterBudget
	}
	shape := a.meta.Shape
	bshape := a.BlockShape(budget)
	item := a.meta.DataType.Size()
	opt := a.opts.pipe
	if opt.MaxBytesInFlight <= 0 || opt.MaxBytesInFlight > budget/4 {
		opt.MaxBytesInFlight = max(budget/4, 1)
	}
	return func(yield func(Block, error) bool) {
		if nd.NumElements(shape) == 0 {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		type result struct {
			b   Block
			buf int
			err error
		}
		results := make(chan result)
		free := make(chan int, 2)
		free <- 0
		free <- 1
		var bufs [2][]byte
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
		}()
		wg.Go(func() {
			defer close(results)
			for start, stop := range blockBoxes(shape, bshape) {
				var i int
				select {
				case i = <-free:
				case <-ctx.Done():
					return
				}
				sel := make(nd.Selection, len(shape))
				bs := make([]int, len(shape))
				for d := range sel {
					bs[d] = stop[d] - start[d]
					sel[d] = nd.Dim{Start: start[d], Count: bs[d], Step: 1}
				}
				n := nd.NumElements(bs) * item
				if cap(bufs[i]) < n {
					bufs[i] = make([]byte, nd.NumElements(bshape)*item)
				}
				data := bufs[i][:n]
				err := a.readWith(ctx, sel, data, opt)
				r := result{b: Block{Start: start, Stop: stop, Shape: bs, Data: data}, buf: i, err: err}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		})
		for r := range results {
			if r.err != nil {
				yield(Block{}, r.err)
				return
			}
			if !yield(r.b, nil) {
				return
			}
			free <- r.buf
		}
		if err := ctx.Err(); err != nil {
			yield(Block{}, err)
		}
	}
}

// blockBoxes yields the [start, stop) boxes of a grid of blocks of shape
// bshape over shape, in C order. The slices are new for every box.
func blockBoxes(shape, bshape []int) iter.Seq2[[]int, []int] {
	return func(yield func([]int, []int) bool) {
		n := len(shape)
		idx := make([]int, n)
		for {
			start, stop := make([]int, n), make([]int, n)
			for d := range n {
				start[d] = idx[d] * bshape[d]
				stop[d] = min(shape[d], start[d]+bshape[d])
			}
			if !yield(start, stop) {
				return
			}
			d := n - 1
			for ; d >= 0; d-- {
				idx[d]++
				if idx[d]*bshape[d] < shape[d] {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				return
			}
		}
	}
}

// readWith is ReadSelection with other pipeline options.
func (a *Array) readWith(ctx context.Context, sel nd.Selection, out []byte, opt pipeline.Options) error {
	b := *a
	b.opts.pipe = opt
	return b.ReadSelection(ctx, sel, out)
}
