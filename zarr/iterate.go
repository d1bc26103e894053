package zarr

import (
	"context"
	"iter"
	"math"
	"sync"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
)

// DefaultIterBudget is the memory budget Tiles uses for a non-positive
// budget: 128 MiB.
const DefaultIterBudget int64 = 128 << 20

// Tile is one tile of an iteration by Array.Tiles: the box
// [Start[d], Stop[d]) of the array in every dimension d, and its elements
// in C order (memory representation) in Data, of shape Shape.
//
// Data is one of two buffers the iteration alternates between: it is valid
// until the loop body returns, and overwritten by a later tile after
// that. Copy what must outlive the iteration step.
type Tile struct {
	Start, Stop []int
	Shape       []int
	Data        []byte
}

// TileShape returns the shape of the tiles Tiles(ctx, budget) yields
// (those at the array's far edges may be smaller): half the budget per
// tile (the iteration holds two), as many whole rows along axis 0 as fit
// with every other dimension whole, rounded down to whole chunks along
// axis 0 (shards, for a sharded array) where at least one chunk row fits.
// When even that does not fit, tiles become chunk-aligned boxes: one
// chunk along the leading dimensions and as many chunks as fit along the
// next; then the same with inner chunks of a sharded array (at every
// level of nesting, down to the innermost chunks); and last, for
// chunks larger than the budget, boxes smaller than one chunk. Every
// tile has at least one element. The tiles are SplitTiles' tiles of the
// whole array for half the budget.
func (a *Array) TileShape(budget int64) []int {
	if budget <= 0 {
		budget = DefaultIterBudget
	}
	for t := range a.SplitTiles(a.whole(), max(budget/2, 1)) {
		b := make([]int, len(t))
		for d := range t {
			b[d] = t[d].Count
		}
		return b
	}
	b := make([]int, len(a.meta.Shape)) // no elements
	for d := range b {
		b[d] = 1
	}
	return b
}

// whole returns the selection of the whole array.
func (a *Array) whole() nd.Selection {
	sel := make(nd.Selection, len(a.meta.Shape))
	for d, n := range a.meta.Shape {
		sel[d] = nd.Dim{Count: n, Step: 1}
	}
	return sel
}

// mulSat returns a*b for positive a and b, or math.MaxInt64 when that
// overflows: the sizes the splitter multiplies only fit an int64 when the
// array has elements, and an empty array may have huge other dimensions.
func mulSat(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// Tiles iterates over the whole array in tiles of TileShape(budget)
// (DefaultIterBudget when budget ≤ 0), in C order of the tiles; along
// axis 0 first when whole rows fit. While the loop body works on one
// tile, a goroutine reads the next into the other of two buffers, so the
// iteration holds at most two tiles (≤ budget) plus what one read has in
// flight (the array's pipeline options, with MaxBytesInFlight lowered to
// a quarter of the budget when it is larger).
//
// A read error is yielded once (with a zero Tile) and ends the iteration;
// so does ctx ending. Breaking out of the loop, or ctx ending, stops the
// prefetch: when the loop statement returns, no goroutine of the
// iteration is left. See Tile for how long Data stays valid. An array
// with no elements yields nothing.
//
//	for b, err := range a.Tiles(ctx, 256<<20) {
//		if err != nil {
//			return err
//		}
//		use(b.Start, b.Shape, b.Data)
//	}
func (a *Array) Tiles(ctx context.Context, budget int64) iter.Seq2[Tile, error] {
	if budget <= 0 {
		budget = DefaultIterBudget
	}
	shape := a.meta.Shape
	bshape := a.TileShape(budget)
	item := a.meta.DataType.Size()
	opt := a.opts.pipe
	if opt.MaxBytesInFlight <= 0 || opt.MaxBytesInFlight > budget/4 {
		opt.MaxBytesInFlight = max(budget/4, 1)
	}
	return func(yield func(Tile, error) bool) {
		if nd.NumElements(shape) == 0 {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		type result struct {
			b   Tile
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
			for sel := range a.SplitTiles(a.whole(), max(budget/2, 1)) {
				var i int
				select {
				case i = <-free:
				case <-ctx.Done():
					return
				}
				start, stop, bs := make([]int, len(shape)), make([]int, len(shape)), make([]int, len(shape))
				for d, dim := range sel {
					start[d], stop[d], bs[d] = dim.Start, dim.Start+dim.Count, dim.Count
				}
				n := nd.NumElements(bs) * item
				if cap(bufs[i]) < n {
					bufs[i] = make([]byte, nd.NumElements(bshape)*item)
				}
				data := bufs[i][:n]
				err := a.readWith(ctx, sel, data, opt)
				r := result{b: Tile{Start: start, Stop: stop, Shape: bs, Data: data}, buf: i, err: err}
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
				yield(Tile{}, r.err)
				return
			}
			if !yield(r.b, nil) {
				return
			}
			free <- r.buf
		}
		if err := ctx.Err(); err != nil {
			yield(Tile{}, err)
		}
	}
}

// readWith is ReadSelection with other pipeline options.
func (a *Array) readWith(ctx context.Context, sel nd.Selection, out []byte, opt pipeline.Options) error {
	b := *a
	b.opts.pipe = opt
	return b.ReadSelection(ctx, out, sel)
}
