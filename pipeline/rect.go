package pipeline

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Rectilinear is a rectilinear chunk grid (chunks of varying edge lengths
// per dimension) as the engine sees it. The engine cuts the grid into
// sub-grids, one run of equal edges per dimension (nd.Selection.SubGrids), each a
// regular grid of one chunk shape with the array's keys, and runs the
// touched sub-grids through the regular engine: planning costs grow with the
// sub-grids and chunks a selection touches, never with the grid. Chunk keys
// are the array's (Grid.Key of the chunk's coordinates in the whole grid);
// caches are shared. Set Grid.Rect to use one; Grid.ChunkShape is then the
// largest chunk shape and Grid.Chain its chain. A Rectilinear is safe for
// concurrent use once built; do not copy it.
type Rectilinear struct {
	// Edges holds the chunk edges of each dimension, resolved against the
	// array's shape.
	Edges []nd.Edges
	// Prepare resolves the codec chain for chunks of shape chunkShape. The
	// engine calls it lazily, the first time it meets a chunk shape, and
	// keeps at most MaxPreparedShapes results.
	Prepare func(chunkShape []int) (*codecs.Chain, error)

	mu    sync.Mutex
	preps map[string]*preparedShape
}

// MaxPreparedShapes is how many chunk shapes' chains a Rectilinear keeps:
// a grid of many distinct shapes prepares the others again as it meets
// them.
const MaxPreparedShapes = 64

// preparedShape is the chain (and shard layout) of one chunk shape.
type preparedShape struct {
	chain *codecs.Chain
	shard *sharding.Layout
}

// prepare returns the chain and layout of chunks of shape.
func (rg *Rectilinear) prepare(shape []int) (*preparedShape, error) {
	var b strings.Builder
	for _, c := range shape {
		b.WriteString(strconv.Itoa(c))
		b.WriteByte(',')
	}
	key := b.String()
	rg.mu.Lock()
	p := rg.preps[key]
	rg.mu.Unlock()
	if p != nil {
		return p, nil
	}
	if rg.Prepare == nil {
		return nil, fmt.Errorf("pipeline: rectilinear grid without Prepare")
	}
	chain, err := rg.Prepare(slices.Clone(shape))
	if err != nil {
		return nil, fmt.Errorf("chunks of shape %v: %w", shape, err)
	}
	l, err := sharding.LayoutOf(chain)
	if err != nil {
		return nil, fmt.Errorf("chunks of shape %v: %w", shape, err)
	}
	p = &preparedShape{chain: chain, shard: l}
	rg.mu.Lock()
	if rg.preps == nil {
		rg.preps = make(map[string]*preparedShape)
	}
	if len(rg.preps) >= MaxPreparedShapes {
		for k := range rg.preps { // drop any one
			delete(rg.preps, k)
			break
		}
	}
	rg.preps[key] = p
	rg.mu.Unlock()
	return p, nil
}

// blockGrid returns the regular grid of sub-grid b of g's rectilinear grid:
// its extent, its chunk shape's chain, and keys of the whole grid.
func (g *Grid) blockGrid(b nd.SubGrid) (*Grid, error) {
	p, err := g.Rect.prepare(b.ChunkShape)
	if err != nil {
		return nil, err
	}
	first := slices.Clone(b.FirstChunk)
	rank := len(first)
	sub := &Grid{
		Shape: slices.Clone(b.Shape), ChunkShape: slices.Clone(b.ChunkShape),
		Chain: p.chain, Shard: p.shard, IndexCache: g.IndexCache, StoreID: g.StoreID, Cache: g.Cache,
	}
	global := func(buf []int, c []int) []int {
		for d, x := range c {
			buf = append(buf, x+first[d])
		}
		return buf
	}
	sub.Key = func(c []int) string { return g.Key(global(make([]int, 0, rank), c)) }
	sub.AppendKey = func(dst []byte, c []int) []byte {
		var stack [8]int
		return g.appendKey(dst, global(stack[:0], c))
	}
	return sub, nil
}

// ones returns n ones.
func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// rectParallel is how many sub-grids of one read or write run at once: each
// runs the regular engine, all of them within one budget of bytes in flight.
func rectParallel(blocks int, opt Options) int {
	return max(1, min(blocks, opt.WithDefaults().DecodeConcurrency))
}

// eachBlock runs fn on every sub-grid of sel (no Order), up to rectParallel at
// once, all within one Budget (opt.Budget, or one of opt.MaxBytesInFlight).
func (g *Grid) eachBlock(ctx context.Context, sel nd.Selection, opt Options, fn func(ctx context.Context, sub *Grid, b nd.SubGrid, opt Options) error) error {
	n := sel.NumSubGrids(g.Rect.Edges)
	par := rectParallel(n, opt)
	if par == 1 {
		for b := range sel.SubGrids(g.Rect.Edges) {
			sub, err := g.blockGrid(b)
			if err != nil {
				return err
			}
			if err := fn(ctx, sub, b, opt); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	share := opt // the blocks run at once hold their bytes against one budget
	if share.Budget == nil {
		share.Budget = NewBudget(opt.WithDefaults().MaxBytesInFlight)
	}
	// par workers take the sub-grids in turn: a goroutine per sub-grid would
	// grow a new stack through the engine's calls every time (stack copying
	// was 40% of the CPU time of a read of 256 one-chunk sub-grids).
	type job struct {
		sub *Grid
		b   nd.SubGrid
	}
	jobs := make(chan job)
	eg, gctx := errgroup.WithContext(ctx)
	for range par {
		eg.Go(func() error {
			for j := range jobs {
				if err := fn(gctx, j.sub, j.b, share); err != nil {
					return err // cancels gctx: the producer stops
				}
			}
			return nil
		})
	}
	var err error
blocks:
	for b := range sel.SubGrids(g.Rect.Edges) {
		var sub *Grid
		if sub, err = g.blockGrid(b); err != nil {
			break
		}
		select {
		case jobs <- job{sub, b}:
		case <-gctx.Done():
			break blocks
		}
	}
	close(jobs)
	if werr := eg.Wait(); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// readRect reads sel (no Order) of a rectilinear grid into out, sub-grid by
// sub-grid.
func (g *Grid) readRect(ctx context.Context, r store.Reader, sel nd.Selection, out nd.View, opt Options) error {
	one := ones(len(sel))
	return g.eachBlock(ctx, sel, opt, func(ctx context.Context, sub *Grid, b nd.SubGrid, opt Options) error {
		return runSelection(ctx, r, sub, b.Sel, out.Slice(b.DstStart, b.Sel.FullShape(), one), opt)
	})
}

// writeRect writes src (sel's places, sel without Order) into a
// rectilinear grid, sub-grid by sub-grid.
func (g *Grid) writeRect(ctx context.Context, s ReadWriter, sel nd.Selection, src nd.View, opt Options) error {
	one := ones(len(sel))
	return g.eachBlock(ctx, sel, opt, func(ctx context.Context, sub *Grid, b nd.SubGrid, opt Options) error {
		return writeUnits(ctx, s, sub, NewPlan(sub, b.Sel).WriteUnits(), src.Slice(b.DstStart, b.Sel.FullShape(), one), opt)
	})
}

// readElementRect reads the element at coords (in bounds) of a
// rectilinear grid.
func (g *Grid) readElementRect(ctx context.Context, r store.Reader, coords []int, out []byte, opt Options) error {
	runs, local := nd.SubGridOf(g.Rect.Edges, coords, nil, nil)
	sub, err := g.blockGrid(nd.RunSubGrid(g.Rect.Edges, runs))
	if err != nil {
		return err
	}
	return ReadElement(ctx, r, sub, local, out, opt)
}

// pointGroup is the points of pts in one sub-grid: their positions in pts
// and their coordinates in the sub-grid.
type pointGroup struct {
	block nd.SubGrid
	pos   []int
	local nd.Points
}

// pointGroups splits pts by the sub-grids of g's rectilinear grid, in order
// of sub-grid runs; within a sub-grid, points keep their order in pts.
func (g *Grid) pointGroups(pts nd.Points) []pointGroup {
	rank, n := pts.Rank, pts.Len()
	runs := make([]int, 0, n*rank)
	local := make([]int, 0, n*rank)
	for k := range n {
		runs, local = nd.SubGridOf(g.Rect.Edges, pts.At(k), runs, local)
	}
	perm := make([]int, n)
	for k := range perm {
		perm[k] = k
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		return slices.Compare(runs[a*rank:(a+1)*rank], runs[b*rank:(b+1)*rank])
	})
	var groups []pointGroup
	for i := 0; i < n; {
		ra := runs[perm[i]*rank : (perm[i]+1)*rank]
		j := i + 1
		for j < n && slices.Equal(runs[perm[j]*rank:(perm[j]+1)*rank], ra) {
			j++
		}
		pg := pointGroup{block: nd.RunSubGrid(g.Rect.Edges, ra), pos: perm[i:j], local: nd.Points{Rank: rank, Coords: make([]int, 0, (j-i)*rank)}}
		for _, k := range pg.pos {
			pg.local.Coords = append(pg.local.Coords, local[k*rank:(k+1)*rank]...)
		}
		groups = append(groups, pg)
		i = j
	}
	return groups
}

// readPointsRect reads the points pts (checked) of a rectilinear grid into
// out, one sub-grid's points at a time.
func (g *Grid) readPointsRect(ctx context.Context, r store.Reader, pts nd.Points, out []byte, opt Options) error {
	item := g.itemSize()
	for _, pg := range g.pointGroups(pts) {
		sub, err := g.blockGrid(pg.block)
		if err != nil {
			return err
		}
		buf := bufpool.Get(len(pg.pos) * item)
		tmp := (*buf)[:len(pg.pos)*item]
		if err := ReadPoints(ctx, r, sub, pg.local, tmp, opt); err != nil {
			bufpool.Put(buf)
			return err
		}
		for j, k := range pg.pos {
			copy(out[k*item:(k+1)*item], tmp[j*item:(j+1)*item])
		}
		bufpool.Put(buf)
	}
	return ctx.Err()
}

// writePointsRect writes data at the points pts (checked) of a
// rectilinear grid, one sub-grid's points at a time (within a sub-grid in the
// order of pts, so the last value of a repeated point wins).
func (g *Grid) writePointsRect(ctx context.Context, s ReadWriter, pts nd.Points, data []byte, opt Options) error {
	item := g.itemSize()
	for _, pg := range g.pointGroups(pts) {
		sub, err := g.blockGrid(pg.block)
		if err != nil {
			return err
		}
		buf := bufpool.Get(len(pg.pos) * item)
		tmp := (*buf)[:len(pg.pos)*item]
		for j, k := range pg.pos {
			copy(tmp[j*item:(j+1)*item], data[k*item:(k+1)*item])
		}
		err = WritePoints(ctx, s, sub, pg.local, tmp, opt)
		bufpool.Put(buf)
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// rectNumWriteUnits counts the chunks a selection touches in a
// rectilinear grid.
func (p *Plan) rectNumWriteUnits() int {
	n := 0
	for b := range p.sel.SubGrids(p.g.Rect.Edges) {
		n += b.Sel.NumChunks(b.ChunkShape)
	}
	return n
}

// globalUnit moves a write unit of sub-grid b's grid into the whole grid:
// coordinates of the whole grid, output places of the whole selection.
func globalUnit(u WriteUnit, b nd.SubGrid) WriteUnit {
	coords := make([]int, len(u.Coords))
	dst := make([]int, len(u.Coords))
	for d := range coords {
		coords[d] = u.Coords[d] + b.FirstChunk[d]
		dst[d] = u.Part.DstStart[d] + b.DstStart[d]
	}
	u.Coords, u.Part.Coords, u.Part.DstStart = coords, coords, dst
	return u
}

// rectWriteUnits is WriteUnits for a rectilinear grid: sub-grid by sub-grid, in
// C order of grid coordinates within each sub-grid.
func (p *Plan) rectWriteUnits() iter.Seq[WriteUnit] {
	return func(yield func(WriteUnit) bool) {
		for b := range p.sel.SubGrids(p.g.Rect.Edges) {
			sub, err := p.g.blockGrid(b)
			if err != nil {
				return // Array.Plan has prepared the shapes' chains: not reached
			}
			for u := range NewPlan(sub, b.Sel).WriteUnits() {
				if !yield(globalUnit(u, b)) {
					return
				}
			}
		}
	}
}

// rectReadUnits is ReadUnits for a rectilinear grid, sub-grid by sub-grid.
func (p *Plan) rectReadUnits(ctx context.Context, r store.Reader) iter.Seq2[ReadUnit, error] {
	return func(yield func(ReadUnit, error) bool) {
		for b := range p.sel.SubGrids(p.g.Rect.Edges) {
			sub, err := p.g.blockGrid(b)
			if err != nil {
				yield(ReadUnit{}, err)
				return
			}
			for u, err := range NewPlan(sub, b.Sel).ReadUnits(ctx, r) {
				if err == nil {
					chunk := make([]int, len(u.Chunk))
					dst := make([]int, len(u.Chunk))
					for d := range chunk {
						chunk[d] = u.Chunk[d] + b.FirstChunk[d]
						dst[d] = u.Part.DstStart[d] + b.DstStart[d]
					}
					if u.Inner == nil {
						u.Part.Coords = chunk
					}
					u.Chunk, u.Part.DstStart = chunk, dst
				}
				if !yield(u, err) {
					return
				}
			}
		}
	}
}
