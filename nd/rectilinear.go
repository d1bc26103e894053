package nd

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
)

// ErrInvalidGrid reports chunk edges that do not make a chunk grid: an
// edge or a repeat count below 1, edges that do not cover their
// dimension, a grid whose extent overflows an int.
var ErrInvalidGrid = errors.New("invalid chunk grid")

// Run is Count consecutive chunks of Size elements each along one
// dimension of a rectilinear chunk grid (zarr-extensions' "rectilinear"
// chunk_grid): the run-length encoded form [Size, Count] of its edges, or
// an explicit edge (Count 1).
type Run struct{ Size, Count int }

// Edges is one dimension of a rectilinear chunk grid: the edge lengths of
// its chunks, held as runs of equal edges, so that a grid of 10^9 chunks
// declared as one run costs one entry. Only the chunks that start inside
// the dimension are kept (the edges may overflow it; the last kept chunk
// may end beyond it). Lookups are binary searches over the runs. The zero
// value is the grid of an empty dimension. An Edges is immutable and safe
// for concurrent use.
type Edges struct {
	runs   []Run
	start  []int // start[i]: element offset of runs[i]; start[len(runs)] = end covered
	first  []int // first[i]: chunk index of runs[i]; first[len(runs)] = chunk count
	extent int
}

// NewEdges returns the grid of a dimension of length extent whose chunk
// edges are runs, in order. Every Size and Count must be at least 1 and the
// edges must cover extent (they may exceed it by any number of chunks:
// those past the end are dropped, unchecked beyond their positivity). The
// result's memory is proportional to the runs used, never to the chunk
// count. Errors wrap ErrInvalidGrid.
func NewEdges(runs []Run, extent int) (Edges, error) {
	if extent < 0 {
		return Edges{}, fmt.Errorf("%w: negative extent %d", ErrInvalidGrid, extent)
	}
	e := Edges{extent: extent}
	end, chunks := 0, 0
	for i, r := range runs {
		if r.Size < 1 || r.Count < 1 {
			return Edges{}, fmt.Errorf("%w: edge %d repeated %d times (run %d): both must be at least 1", ErrInvalidGrid, r.Size, r.Count, i)
		}
		if end >= extent {
			continue // past the end: checked, not kept
		}
		// Chunks of this run that start inside the dimension.
		n := min(r.Count, (extent-end-1)/r.Size+1)
		if r.Size > (math.MaxInt-end)/n {
			return Edges{}, fmt.Errorf("%w: %d edges of %d from element %d overflow an int", ErrInvalidGrid, n, r.Size, end)
		}
		e.runs = append(e.runs, Run{Size: r.Size, Count: n})
		e.start = append(e.start, end)
		e.first = append(e.first, chunks)
		end += n * r.Size
		chunks += n // n ≤ extent: no overflow
	}
	if end < extent {
		return Edges{}, fmt.Errorf("%w: edges sum to %d, less than the dimension's %d", ErrInvalidGrid, end, extent)
	}
	e.start = append(e.start, end)
	e.first = append(e.first, chunks)
	return e, nil
}

// RegularEdges returns the grid of a dimension of length extent cut into
// chunks of size c (the last one may end beyond extent).
func RegularEdges(c, extent int) (Edges, error) {
	n := 1
	if c >= 1 && extent > 0 {
		n = (extent-1)/c + 1
	}
	return NewEdges([]Run{{Size: c, Count: n}}, extent)
}

// Extent returns the dimension's length.
func (e Edges) Extent() int { return e.extent }

// NumChunks returns the number of chunks that start inside the dimension.
func (e Edges) NumChunks() int {
	if len(e.first) == 0 {
		return 0
	}
	return e.first[len(e.first)-1]
}

// Runs returns the runs of chunks that start inside the dimension (the last
// count possibly reduced to them). The caller must not modify the result.
func (e Edges) Runs() []Run { return e.runs }

// MaxEdge returns the largest edge of the dimension's chunks (0 when it has
// none).
func (e Edges) MaxEdge() int {
	m := 0
	for _, r := range e.runs {
		m = max(m, r.Size)
	}
	return m
}

// Regular reports whether every chunk of the dimension has one edge
// length, and that length.
func (e Edges) Regular() (int, bool) {
	if len(e.runs) == 0 {
		return 0, false
	}
	for _, r := range e.runs[1:] {
		if r.Size != e.runs[0].Size {
			return 0, false
		}
	}
	return e.runs[0].Size, true
}

// runOf returns the run holding element i (0 ≤ i < extent).
func (e Edges) runOf(i int) int {
	return sort.Search(len(e.runs), func(r int) bool { return e.start[r+1] > i }) // first run ending past i
}

// Locate returns the chunk holding element i (0 ≤ i < Extent()) and i's
// index within it: a binary search over the runs.
func (e Edges) Locate(i int) (chunk, local int) {
	r := e.runOf(i)
	off := i - e.start[r]
	k := off / e.runs[r].Size
	return e.first[r] + k, off - k*e.runs[r].Size
}

// Chunk returns the first element and the edge length of chunk c (0 ≤ c <
// NumChunks()).
func (e Edges) Chunk(c int) (start, size int) {
	r := sort.Search(len(e.runs), func(r int) bool { return e.first[r+1] > c })
	return e.start[r] + (c-e.first[r])*e.runs[r].Size, e.runs[r].Size
}

// SubGrid is the part of a selection inside one sub-grid of a rectilinear grid:
// the chunks of one run per dimension, a region where every chunk has one
// shape, so that it is a regular grid of its own. Every slice has one entry
// per dimension.
type SubGrid struct {
	// Runs are the sub-grid's run indices (into Edges.Runs) per dimension.
	Runs []int
	// Offset is the sub-grid's first element in the array.
	Offset []int
	// FirstChunk is the grid coordinates of the sub-grid's first chunk: chunk
	// c of the sub-grid's own grid is chunk FirstChunk+c of the array's.
	FirstChunk []int
	// ChunkShape is the shape of every chunk of the sub-grid.
	ChunkShape []int
	// Shape is the sub-grid's extent inside the array (its last chunks may
	// end beyond it, as edge chunks of a regular grid do).
	Shape []int
	// Sel is the part of the selection inside the sub-grid, in sub-grid
	// coordinates (normalised against Shape; dropped dimensions stay
	// dropped).
	Sel Selection
	// DstStart is where Sel's output (its FullShape) starts in the
	// selection's output, in FullShape coordinates.
	DstStart []int
}

// subGridSeg is one run's share of one dimension of a selection.
type subGridSeg struct {
	run int
	dim Dim
	dst int
}

// dimSubGrids splits dimension d (no Order) of a selection by the runs of e,
// in ascending output order; the work grows with the runs it touches.
func dimSubGrids(d Dim, e Edges) []subGridSeg {
	var segs []subGridSeg
	if d.Count == 0 {
		return nil
	}
	if d.Index != nil {
		for k := 0; k < len(d.Index); {
			r := e.runOf(d.Index[k])
			end := e.start[r+1]
			m := k + sort.SearchInts(d.Index[k:], end)
			local := make([]int, m-k)
			for j := range local {
				local[j] = d.Index[k+j] - e.start[r]
			}
			segs = append(segs, subGridSeg{run: r, dim: listDim(local, nil), dst: k})
			k = m
		}
		return segs
	}
	for k := 0; k < d.Count; {
		idx := d.Start + k*d.Step
		r := e.runOf(idx)
		lo, hi := e.start[r], min(e.start[r+1], e.extent)
		var n int
		if d.Step > 0 {
			n = (hi-1-idx)/d.Step + 1
		} else {
			n = (idx-lo)/(-d.Step) + 1
		}
		n = min(n, d.Count-k)
		s := Dim{Start: idx - lo, Count: n, Step: d.Step, Drop: d.Drop}
		if n == 1 {
			s.Step = 1
		}
		segs = append(segs, subGridSeg{run: r, dim: s, dst: k})
		k += n
	}
	return segs
}

// SubGrids yields, for every sub-grid of the rectilinear grid edges (one Edges
// per dimension, each of the array's length in it) that holds a selected
// element, the part of the selection it serves; parts are disjoint and
// cover every selected element once. A selection that reorders is taken
// in its compact form (see Compact). The work grows with the sub-grids
// touched (a binary search per run boundary), never with the grid. A 0-d
// selection yields one sub-grid. Nothing is yielded when edges does not have
// one entry per dimension.
func (s Selection) SubGrids(edges []Edges) iter.Seq[SubGrid] {
	return func(yield func(SubGrid) bool) {
		n := len(s)
		if len(edges) != n {
			return
		}
		segs := make([][]subGridSeg, n)
		for d, dim := range s {
			dim.Order = nil
			if segs[d] = dimSubGrids(dim, edges[d]); len(segs[d]) == 0 {
				return
			}
		}
		pos := make([]int, n)
		for {
			buf := make([]int, 6*n)
			b := SubGrid{
				Runs:       buf[0:n:n],
				Offset:     buf[n : 2*n : 2*n],
				FirstChunk: buf[2*n : 3*n : 3*n],
				ChunkShape: buf[3*n : 4*n : 4*n],
				Shape:      buf[4*n : 5*n : 5*n],
				DstStart:   buf[5*n : 6*n : 6*n],
				Sel:        make(Selection, n),
			}
			for d := range n {
				sg, e := segs[d][pos[d]], edges[d]
				r := sg.run
				b.Runs[d] = r
				b.Offset[d] = e.start[r]
				b.FirstChunk[d] = e.first[r]
				b.ChunkShape[d] = e.runs[r].Size
				b.Shape[d] = min(e.start[r+1], e.extent) - e.start[r]
				b.Sel[d] = sg.dim
				b.DstStart[d] = sg.dst
			}
			if !yield(b) || !advance(pos, func(d int) int { return len(segs[d]) }) {
				return
			}
		}
	}
}

// NumSubGrids returns how many sub-grids SubGrids yields (saturating at
// math.MaxInt).
func (s Selection) NumSubGrids(edges []Edges) int {
	if len(edges) != len(s) {
		return 0
	}
	n := 1
	for d, dim := range s {
		dim.Order = nil
		k := len(dimSubGrids(dim, edges[d]))
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

// SubGridOf returns, for the array element at coords, the runs of its sub-grid
// (one per dimension, appended to runs) and its coordinates within the
// sub-grid (appended to local).
func SubGridOf(edges []Edges, coords []int, runs, local []int) ([]int, []int) {
	for d, c := range coords {
		r := edges[d].runOf(c)
		runs = append(runs, r)
		local = append(local, c-edges[d].start[r])
	}
	return runs, local
}

// RunSubGrid describes the sub-grid of runs (one run index per dimension):
// its offset, first chunk, chunk shape and extent inside the array, as in
// SubGrid (Sel and DstStart unset).
func RunSubGrid(edges []Edges, runs []int) SubGrid {
	n := len(runs)
	buf := make([]int, 6*n)
	b := SubGrid{
		Runs:       append(buf[0:0:n], runs...),
		Offset:     buf[n : 2*n : 2*n],
		FirstChunk: buf[2*n : 3*n : 3*n],
		ChunkShape: buf[3*n : 4*n : 4*n],
		Shape:      buf[4*n : 5*n : 5*n],
		DstStart:   buf[5*n : 6*n : 6*n],
	}
	for d, r := range runs {
		e := edges[d]
		b.Offset[d] = e.start[r]
		b.FirstChunk[d] = e.first[r]
		b.ChunkShape[d] = e.runs[r].Size
		b.Shape[d] = min(e.start[r+1], e.extent) - e.start[r]
	}
	return b
}

// CompressRuns returns edges (explicit chunk edge lengths) as runs of
// equal edges, as zarr-python and zarrs write them.
func CompressRuns(edges []int) []Run {
	var runs []Run
	for _, c := range edges {
		if k := len(runs) - 1; k >= 0 && runs[k].Size == c {
			runs[k].Count++
			continue
		}
		runs = append(runs, Run{Size: c, Count: 1})
	}
	return slices.Clip(runs)
}
