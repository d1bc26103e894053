package pipeline

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Plan is a selection of an array resolved against its chunk grid: the
// units a read or a write of it touches. It is the engine's input:
// ExecuteRead and ExecuteWrite run a plan (Read and Write build one and
// run it), and callers that schedule work of their own consume one:
// gathers, batch loaders, distributed writers that give each worker whole
// write units.
//
// A read runs its write units through the fetchers, each of which lists
// the read units of its unit with the plan's one walker (the one
// ReadUnits lists them with, through nested shards), fetches their bytes
// and hands every unit, a fill or a chunk-cache hit included, to the
// decode workers, the only writers of the output.
//
// Planning costs grow with the chunks a selection touches, never with the
// grid: a plan holds the selection only, and its units are produced as
// they are iterated. A Plan is immutable and safe for concurrent use.
type Plan struct {
	g   *Grid
	sel nd.Selection
	// parts, when not nil, are the chunk parts of a coordinate selection
	// grouped by chunk (ReadPoints), nparts of them: its write units in
	// place of sel's. Such a plan is built inside the package only.
	parts  iter.Seq[nd.ChunkPart]
	nparts int
}

// NewPlan plans sel, a selection normalised against g's shape
// (nd.Normalize).
func NewPlan(g *Grid, sel nd.Selection) *Plan { return &Plan{g: g, sel: sel} }

// partsPlan plans the n chunk parts parts (of g's grid, each at most once,
// their places in one output): the plan of a grouped coordinate selection.
func partsPlan(g *Grid, parts iter.Seq[nd.ChunkPart], n int) Plan {
	return Plan{g: g, parts: parts, nparts: n}
}

// Selection returns the planned selection.
func (p *Plan) Selection() nd.Selection { return p.sel }

// NumWriteUnits returns the number of chunks (shards, for a sharded array)
// the selection touches, computed per dimension.
func (p *Plan) NumWriteUnits() int {
	switch {
	case p.parts != nil:
		return p.nparts
	case p.g.Rect != nil:
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
	if p.g.Rect != nil && p.parts == nil {
		return p.rectWriteUnits()
	}
	return writeUnitsOf(p.g, p.sel, p.parts)
}

// writeUnitsOf returns the write units of sel in g's grid or, when parts
// is not nil, of those chunk parts. (It captures no *Plan, so a plan
// that runs inline stays on its caller's stack.)
func writeUnitsOf(g *Grid, sel nd.Selection, parts iter.Seq[nd.ChunkPart]) iter.Seq[WriteUnit] {
	return func(yield func(WriteUnit) bool) {
		if parts == nil {
			parts = sel.Chunks(g.ChunkShape)
		}
		for part := range parts {
			if !yield(g.writeUnit(part)) {
				return
			}
		}
	}
}

// writeUnit returns the write unit of part, a chunk part of g's grid.
func (g *Grid) writeUnit(part nd.ChunkPart) WriteUnit {
	return WriteUnit{Key: g.Key(part.Coords), Coords: part.Coords, Part: part, Whole: part.CoversChunk(g.ChunkShape, g.Shape)}
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
// and, within a shard, of inner chunks: exactly the units a Read of the
// plan's selection fetches and decodes (both walk shards with walkShard).
// For a sharded array it resolves shard indexes from r (through the
// grid's index cache: one range request per cold shard, none for a warm
// one); a missing shard yields one Missing unit per inner chunk the
// selection touches in it. Iteration stops at the first error, which it
// yields.
func (p *Plan) ReadUnits(ctx context.Context, r store.Reader) iter.Seq2[ReadUnit, error] {
	if p.g.Rect != nil {
		return p.rectReadUnits(ctx, r)
	}
	return func(yield func(ReadUnit, error) bool) {
		caps := store.CapabilitiesOf(r)
		index := func(ref shardRef) (*sharding.Index, error) {
			if g := p.g; g.IndexCache != nil {
				if ix, ok := g.IndexCache.Get(g.StoreID, ref.key, ref.base, ref.size); ok {
					return ix, nil
				}
			}
			return loadIndex(ctx, r, caps, p.g, ref)
		}
		nested := func(sub shardRef) (*sharding.Index, bool, error) {
			ix, err := index(sub)
			return ix, true, err
		}
		for w := range p.WriteUnits() {
			if p.g.Shard == nil {
				u := ReadUnit{Key: w.Key, Chunk: w.Coords, Range: store.Full(), Part: w.Part, Whole: w.Part.IsWhole(p.g.ChunkShape)}
				if !yield(u, nil) {
					return
				}
				continue
			}
			ref := shardRef{l: p.g.Shard, key: w.Key}
			ix, err := index(ref)
			if err != nil {
				yield(ReadUnit{}, err)
				return
			}
			ok := walkShard(ref, ix, nil, w.Part, w.Part.DstStart, nested, func(wu *walked) bool {
				if wu.err != nil {
					yield(ReadUnit{}, wu.err)
					return false
				}
				return yield(wu.unit(w.Coords), nil)
			})
			if !ok {
				return
			}
		}
	}
}

// walked is one step of walkShard: a read unit, an inner shard whose index
// is not known yet, or an error that ends the walk.
type walked struct {
	ref  shardRef     // the (inner) shard holding it
	part nd.ChunkPart // its share of the selection; DstStart from dst0
	dst0 []int        // where the box of its shard's part starts in the output
	lin  int          // its C-order index within its shard
	// stored: its shard's index lists it, at bytes [off, off+n) of the
	// key's value.
	stored bool
	off, n int64
	enc    []byte // its bytes, when its shard is in memory
	// pending: it is an inner shard whose index the walk's nested
	// function did not know.
	pending bool
	err     error
}

// unit returns w as a ReadUnit of the shard at grid coordinates chunk.
func (w *walked) unit(chunk []int) ReadUnit {
	abs := w.part
	abs.DstStart = make([]int, len(w.dst0))
	for d, s := range w.dst0 {
		abs.DstStart[d] = s + w.part.DstStart[d]
	}
	u := ReadUnit{Key: w.ref.key, Chunk: chunk, Inner: append(slices.Clone(w.ref.path), w.part.Coords), Part: abs,
		Whole: w.part.IsWhole(w.ref.l.ChunkShape()), Missing: !w.stored}
	if w.stored {
		u.Range = store.OffsetLen(w.off, w.n)
	}
	return u
}

// dst returns w's place in out, the read's output: part.DstView(out)
// moved by dst0, without its copies of the shape and strides (the view
// shares the part's Count and out's strides, which nothing changes), as
// it is made for every read unit.
func (w *walked) dst(out nd.View) nd.View {
	v := nd.View{Data: out.Data, Offset: out.Offset, Shape: w.part.Count, Strides: out.Strides, ItemSize: out.ItemSize}
	for d, s := range w.part.DstStart {
		v.Offset += s * out.Strides[d]
	}
	for d, s := range w.dst0 {
		v.Offset += s * out.Strides[d]
	}
	return v
}

// walkShard yields the read units of sel, a part of the shard ref whose
// index is ix (a nil ix: the shard is not stored), in C order of inner
// chunks and through nested shards; dst0 is where sel's box starts in
// the read's output. mem, when not nil, is the shard's bytes in memory:
// units then come with their bytes and inner shards are read from it.
// Otherwise an inner shard's index comes from nested; when it is not
// known (false), the walk yields the inner shard as pending instead of
// its units. An error is yielded and ends the walk. walkShard reports
// whether the consumer wants more. The step it yields is its own, reused
// for the next: valid until yield returns.
//
// It is the one planner of read units: Plan.ReadUnits and the engine's
// shard reads both walk with it, so the units a plan lists are the units
// a read fetches and decodes.
func walkShard(ref shardRef, ix *sharding.Index, mem []byte, sel nd.ChunkPart, dst0 []int,
	nested func(sub shardRef) (*sharding.Index, bool, error), yield func(*walked) bool) bool {
	l := ref.l
	w := new(walked) // one a walk, not one an inner chunk
	for q := range sel.Parts(l.ChunkShape()) {
		*w = walked{ref: ref, part: q, dst0: dst0, lin: l.Linear(q.Coords)}
		var off int64
		if ix != nil {
			off, w.n, w.stored = ix.Entry(w.lin)
		}
		if w.stored {
			w.off = ref.base + off
			if mem != nil {
				w.enc = mem[off : off+w.n : off+w.n]
			}
		}
		if w.stored && l.Nested() != nil {
			sub := shardRef{l: l.Nested(), key: ref.key, base: w.off, size: w.n, path: append(slices.Clone(ref.path), q.Coords)}
			var six *sharding.Index
			known := true
			var err error
			if mem != nil {
				six, err = sub.l.IndexOf(w.enc)
			} else {
				six, known, err = nested(sub)
			}
			if err != nil {
				yield(&walked{err: fmt.Errorf("%sinner shard %v: %w", pathPrefix(ref.path), q.Coords, err)})
				return false
			}
			if known {
				if !walkShard(sub, six, w.enc, q, w.subDst0(), nested, yield) {
					return false
				}
				continue
			}
			w.pending = true
		}
		if !yield(w) {
			return false
		}
	}
	return true
}

// subDst0 returns where the box of w's part starts in the output: the
// dst0 of a walk inside w (an inner shard).
func (w *walked) subDst0() []int {
	d0 := make([]int, len(w.dst0))
	for d, s := range w.dst0 {
		d0[d] = s + w.part.DstStart[d]
	}
	return d0
}
