package pipeline

import (
	"context"
	"iter"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Plan is a selection of an array resolved against its chunk grid: the
// units a read or a write of it touches. It is what the engine executes
// (Read and Write run its write units through their fetchers and encoders)
// and what callers that schedule work of their own consume: gathers, batch
// loaders, distributed writers that give each worker whole write units.
//
// Planning costs grow with the chunks a selection touches, never with the
// grid: a plan holds the selection only, and its units are produced as
// they are iterated. A Plan is immutable and safe for concurrent use.
type Plan struct {
	g   *Grid
	sel nd.Selection
}

// NewPlan plans sel, a selection normalised against g's shape
// (nd.Normalize).
func NewPlan(g *Grid, sel nd.Selection) *Plan { return &Plan{g: g, sel: sel} }

// Selection returns the planned selection.
func (p *Plan) Selection() nd.Selection { return p.sel }

// NumWriteUnits returns the number of chunks (shards, for a sharded array)
// the selection touches, computed per dimension.
func (p *Plan) NumWriteUnits() int {
	if p.g.Rect != nil {
		return p.rectNumWriteUnits()
	}
	return p.sel.NumChunks(p.g.ChunkShape)
}

// WriteUnit is one chunk of the array's grid, or one shard of a sharded
// array: what one atomic store write replaces.
type WriteUnit struct {
	Key    string // its store key
	Coords []int  // its coordinates in the chunk grid
	// Part is the unit's share of the selection: SrcStart, SrcStep and
	// Count its box in the chunk, DstStart where that box starts in the
	// selection's output (FullShape coordinates).
	Part nd.ChunkPart
	// Whole: the selection covers the chunk's part inside the array, so a
	// write replaces it without reading it first.
	Whole bool
}

// WriteUnits returns the write units in C order of their grid coordinates
// (for a rectilinear grid, block by block: see Rectilinear).
func (p *Plan) WriteUnits() iter.Seq[WriteUnit] {
	if p.g.Rect != nil {
		return p.rectWriteUnits()
	}
	return func(yield func(WriteUnit) bool) {
		for part := range p.sel.Chunks(p.g.ChunkShape) {
			u := WriteUnit{Key: p.g.Key(part.Coords), Coords: part.Coords, Part: part, Whole: part.CoversChunk(p.g.ChunkShape, p.g.Shape)}
			if !yield(u) {
				return
			}
		}
	}
}

// ReadUnit is what a read decodes whole: a chunk of an unsharded array, or
// an inner chunk of a shard (through nested shards, an innermost chunk).
type ReadUnit struct {
	Key   string // the store key holding its bytes (the chunk's or shard's)
	Chunk []int  // the coordinates of that chunk (shard) in the array's grid
	// Inner is the path of inner chunk coordinates from the shard down to
	// the unit (one entry per level of nesting); nil for a chunk.
	Inner [][]int
	// Range is where its bytes are within Key's value: store.Full() for a
	// chunk, the inner chunk's byte range once its shard index is known.
	Range store.ByteRange
	// Missing: not stored, as its shard's index says (its part reads as
	// the fill value). A chunk of an unsharded array is found missing only
	// when read (store.ErrNotFound), so its unit never says so.
	Missing bool
	// Part is the unit's share of the selection: SrcStart, SrcStep and
	// Count its box in the unit's (inner) chunk, DstStart where that box
	// starts in the selection's output.
	Part nd.ChunkPart
	// Whole: the part is the whole unit, in order.
	Whole bool
}

// ReadUnits returns the read units of the plan, in C order of write units
// and, within a shard, of inner chunks. For a sharded array it resolves
// shard indexes from r (through the grid's index cache: one range request
// per cold shard, none for a warm one); a missing shard yields one Missing
// unit per inner chunk the selection touches in it. Iteration stops at the
// first error, which it yields.
func (p *Plan) ReadUnits(ctx context.Context, r store.Reader) iter.Seq2[ReadUnit, error] {
	if p.g.Rect != nil {
		return p.rectReadUnits(ctx, r)
	}
	return func(yield func(ReadUnit, error) bool) {
		var f *fetcher
		if p.g.Shard != nil {
			f = newFetcher(newEngine(r, p.g, nd.View{}, Options{}))
			defer f.close()
		}
		for w := range p.WriteUnits() {
			if f == nil {
				u := ReadUnit{Key: w.Key, Chunk: w.Coords, Range: store.Full(), Part: w.Part, Whole: w.Part.IsWhole(p.g.ChunkShape)}
				if !yield(u, nil) {
					return
				}
				continue
			}
			ref := shardRef{l: p.g.Shard, key: w.Key}
			if !f.planShard(ctx, ref, w.Coords, nil, w.Part, w.Part.DstStart, yield) {
				return
			}
		}
	}
}

// planShard yields the read units of sel within the shard ref, whose
// output box starts at dst0; path is the inner chunk path down to ref. It
// reports whether iteration goes on.
func (f *fetcher) planShard(ctx context.Context, ref shardRef, chunk []int, path [][]int, sel nd.ChunkPart, dst0 []int, yield func(ReadUnit, error) bool) bool {
	l := ref.l
	var ix *sharding.Index
	if g := f.e.g; g.IndexCache != nil {
		ix, _ = g.IndexCache.Get(g.StoreID, ref.key, ref.base, ref.size)
	}
	if ix == nil {
		var err error
		if ix, err = f.loadIndex(ctx, ref); err != nil {
			yield(ReadUnit{}, err)
			return false
		}
	}
	for q := range sel.Parts(l.ChunkShape()) {
		abs := q
		abs.DstStart = make([]int, len(q.DstStart))
		for d := range abs.DstStart {
			abs.DstStart[d] = dst0[d] + q.DstStart[d]
		}
		inner := append(slices.Clone(path), q.Coords)
		u := ReadUnit{Key: ref.key, Chunk: chunk, Inner: inner, Part: abs, Whole: q.IsWhole(l.ChunkShape()), Missing: true}
		if ix != nil {
			if off, n, ok := ix.Entry(l.Linear(q.Coords)); ok {
				if l.Nested() != nil {
					sub := shardRef{l: l.Nested(), key: ref.key, base: ref.base + off, size: n}
					if !f.planShard(ctx, sub, chunk, inner, q, abs.DstStart, yield) {
						return false
					}
					continue
				}
				u.Missing, u.Range = false, store.OffsetLen(ref.base+off, n)
			}
		}
		if !yield(u, nil) {
			return false
		}
	}
	return true
}
