package zarr

// The one memory-bounded splitter: a selection cut into parts aligned to
// the array's units (write units, then the inner chunks of every level of
// sharding, then single elements), each part's output within a byte bound.
// Blocks, the string reads' batches, zarrcat's streaming commands and
// zarrbeam's reads all cut with it.

import (
	"iter"
	"math"
	"slices"

	"github.com/gozarr/gozarr/nd"
)

// Split yields sel cut into consecutive parts whose outputs, concatenated
// in order, are sel's output in C order: one index along the dimensions
// before some dimension d, a run along d, the dimensions after d whole.
// Each part's output is at most maxBytes (but every part has at least one
// element), and d is the first dimension that allows it. Along d, parts
// start and end on the boundaries of the coarsest unit of the array that
// fits: its write units (chunks or shards), else the inner chunks of each
// level of sharding in turn, down to the decode units (Units), else single
// elements; rectilinear grids cut at their own chunk boundaries. Index
// arrays, masks and strided slices are cut the same way, at the positions
// where their indices cross a unit boundary. Parts are fresh selections;
// a dimension selected by an index list is cut into shorter lists. An
// empty selection yields nothing; a whole selection that fits is yielded
// as one part.
//
// Split is the splitter for outputs that must come in order (a stream);
// SplitTiles decodes fewer units twice.
func (a *Array) Split(sel nd.Selection, maxBytes int64) iter.Seq[nd.Selection] {
	return a.split(sel, maxBytes, false)
}

// SplitTiles yields sel cut into boxes of at most maxBytes of output each
// (at least one element each) that tile it, in C order of the tiles: for
// the coarsest unit of the array (as Split) and the first dimension d
// where it fits, one unit along the dimensions before d, a run of whole
// units along d, the dimensions after d whole. Every unit of that level,
// and so every decode unit, lies in one tile. The tiles' outputs
// concatenated are not sel's C order unless d is 0. Over the whole array
// the tiles are those Array.Tiles yields (TileShape(2*maxBytes)).
func (a *Array) SplitTiles(sel nd.Selection, maxBytes int64) iter.Seq[nd.Selection] {
	return a.split(sel, maxBytes, true)
}

// split is Split (tiles false) and SplitTiles.
func (a *Array) split(sel nd.Selection, maxBytes int64, tiles bool) iter.Seq[nd.Selection] {
	return func(yield func(nd.Selection) bool) {
		if sel.NumElements() == 0 {
			return
		}
		item := int64(a.meta.DataType.Size())
		if mulSat(item, int64(sel.NumElements())) <= maxBytes || len(sel) == 0 {
			yield(slices.Clone(sel))
			return
		}
		c := a.chooseCut(sel, item, maxBytes, tiles)
		sub := slices.Clone(sel)
		var rec func(j int) bool
		rec = func(j int) bool {
			for p := 0; p < sel[j].Len(); {
				e := p + 1
				switch {
				case j == c.d:
					e = p
					for range c.k {
						if e = c.axes[j].runEnd(sel[j], e); e >= sel[j].Len() {
							break
						}
					}
				case tiles:
					e = c.axes[j].runEnd(sel[j], p)
				}
				sub[j] = sel[j].Sub(p, e)
				if j == c.d {
					if !yield(slices.Clone(sub)) {
						return false
					}
				} else if !rec(j + 1) {
					return false
				}
				p = e
			}
			return true
		}
		rec(0)
	}
}

// cut is how split cuts a selection: along dimension d in groups of k
// runs of the units of axes (one level of the unit hierarchy).
type cut struct {
	axes []unitAxis
	d, k int
}

// chooseCut picks the cut of sel (which does not fit maxBytes whole): the
// coarsest level of units and first dimension where one unit along the
// split dimension fits (tiles: with one unit along the dimensions before
// it; else one index), and as many units along it as fit.
func (a *Array) chooseCut(sel nd.Selection, item, maxBytes int64, tiles bool) cut {
	n := len(sel)
	levels := a.unitAxes()
	runs := make([][]int, len(levels)) // the most positions of sel[j] one unit holds, per level
	maxRun := func(l, j int) int64 {
		if runs[l] == nil {
			runs[l] = make([]int, n)
		}
		if runs[l][j] == 0 {
			runs[l][j] = levels[l][j].maxRun(sel[j])
		}
		return int64(runs[l][j])
	}
	fits := func(l, d int) (int64, bool) {
		base := item
		for j := range n {
			switch {
			case j < d && tiles:
				base = mulSat(base, maxRun(l, j))
			case j > d:
				base = mulSat(base, int64(sel[j].Len()))
			}
		}
		unit := mulSat(base, maxRun(l, d))
		return max(1, maxBytes/max(unit, 1)), unit <= maxBytes
	}
	if tiles {
		for l := range levels {
			for d := range n {
				if k, ok := fits(l, d); ok {
					return cut{levels[l], d, int(min(k, math.MaxInt32))}
				}
			}
		}
	} else {
		// d: the last dimension that does not fit whole with those after it.
		d, rest := n-1, item
		for d > 0 && mulSat(rest, int64(sel[d].Len())) <= maxBytes {
			rest = mulSat(rest, int64(sel[d].Len()))
			d--
		}
		for l := range levels {
			if k, ok := fits(l, d); ok {
				return cut{levels[l], d, int(min(k, math.MaxInt32))}
			}
		}
	}
	return cut{levels[len(levels)-1], n - 1, 1} // an element exceeds maxBytes
}

// unitAxes returns the unit boundaries of every dimension at every level
// of the array's hierarchy, coarsest first: its chunks (shards), the
// inner chunks of each level of sharding, then single output positions.
func (a *Array) unitAxes() [][]unitAxis {
	shape := a.meta.Shape
	lv := a.grid.UnitLevels()
	out := make([][]unitAxis, 0, len(lv)+1)
	for l := range len(lv) + 1 {
		ax := make([]unitAxis, len(shape))
		for d := range ax {
			x := unitAxis{extent: shape[d], outer: max(1, a.grid.ChunkShape[d])}
			if a.grid.Rect != nil {
				x.edges = &a.grid.Rect.Edges[d]
			}
			switch {
			case l == len(lv):
				x.size = -1 // single positions
			case l > 0:
				x.size = max(1, lv[l][d])
			}
			ax[d] = x
		}
		out = append(out, ax)
	}
	return out
}

// unitAxis is the units of one dimension at one level: the grid's chunks
// (size 0), units of size edges within each chunk, from its start, or
// (size -1) single output positions.
type unitAxis struct {
	edges  *nd.Edges // the chunks of a rectilinear grid (nil: regular, of outer)
	outer  int
	size   int
	extent int
}

// unit returns the first index of the unit holding array index i and the
// index past its end.
func (x unitAxis) unit(i int) (lo, hi int) {
	var cs, ce int
	if x.edges != nil {
		c, _ := x.edges.Locate(i)
		s, n := x.edges.Chunk(c)
		cs, ce = s, s+n
	} else {
		cs = i - i%x.outer
		ce = cs + x.outer
	}
	ce = min(ce, x.extent)
	if x.size <= 0 {
		return cs, ce
	}
	lo = cs + (i-cs)/x.size*x.size
	return lo, min(lo+x.size, ce)
}

// edge returns the largest unit edge of the axis.
func (x unitAxis) edge() int {
	switch {
	case x.size > 0:
		return x.size
	case x.edges != nil:
		return max(1, x.edges.MaxEdge())
	}
	return x.outer
}

// runEnd returns the position (of dim's output) past the run from
// position k whose indices all lie in the unit of dim's k-th index.
func (x unitAxis) runEnd(dim nd.Dim, k int) int {
	if x.size < 0 {
		return k + 1
	}
	i := dim.At(k)
	lo, hi := x.unit(i)
	if dim.Index == nil && dim.Order == nil {
		var j int
		if dim.Step > 0 {
			j = k + (hi-1-i)/dim.Step + 1
		} else {
			j = k + (i-lo)/(-dim.Step) + 1
		}
		return min(j, dim.Count)
	}
	j := k + 1
	for ; j < dim.Len(); j++ {
		if v := dim.At(j); v < lo || v >= hi {
			break
		}
	}
	return j
}

// maxRun returns at least the length of dim's longest run in one unit:
// exactly that, scanning the runs, when they are at most maxRunScan; else
// a bound from the unit edge and the step.
func (x unitAxis) maxRun(dim nd.Dim) int {
	if x.size < 0 {
		return 1
	}
	best := 1
	for k, runs := 0, 0; k < dim.Len(); runs++ {
		if runs == maxRunScan && dim.Index == nil && dim.Order == nil {
			step := max(dim.Step, -dim.Step)
			return max(best, min(dim.Count, (x.edge()+step-1)/step))
		}
		e := x.runEnd(dim, k)
		best = max(best, e-k)
		k = e
	}
	return best
}

// maxRunScan is how many runs of a slice maxRun scans before it bounds
// the rest.
const maxRunScan = 4096
