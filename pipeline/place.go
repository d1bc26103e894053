package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Kinds of read unit a decode worker places.
const (
	unitDecode uint8 = iota // decode data with chain into the part's place
	unitRuns                // assemble byte runs of an uncompressed chunk, then copy
	unitKeep                // decode data whole into a new buffer, reply with it and place it (cache loads)
	unitFill                // fill the place with the fill value data (a missing chunk)
	unitCopy                // data is the decoded chunk (a cache hit): copy the part out
	unitInto                // read the identity-encoded chunk key straight into its place (local stores)
	unitVec                 // read an uncompressed inner chunk at off of key straight into its place
	unitBatch               // the units of batch, placed one after the other (units of one in-memory shard)
	unitWalk                // walk the part (a piece of points) of the in-memory shard walk and place its inner chunks
)

// unit is one read unit on its way from a fetcher to a decode worker: a
// chunk, or an inner chunk of a shard, with its encoded bytes and its
// place in the output.
type unit struct {
	kind  uint8
	key   string  // the chunk's (or shard's) store key
	inner []int   // inner chunk coordinates within its shard; nil for a chunk
	path  [][]int // the inner shards (coordinates) leading to that shard, for nested shards
	chain *codecs.Chain
	shape []int        // the unit's decoded (chunk) shape
	part  nd.ChunkPart // the unit's share: its box in the chunk ...
	dst   nd.View      // ... and its place in the output
	data  []byte       // encoded bytes

	// unitRuns: the fetched runs, their spans and the chunk's offset in
	// the shard, and the first run's offset within the chunk.
	pieces  [][]byte
	spans   []store.Span
	off, lo int64

	cacheKey string       // decode whole and keep in kept under this key
	kept     cache.Cache  // the chunk cache, with cacheKey
	reply    chan decoded // unitKeep

	// unitInto: the chunk's decoded size; unitVec: the inner chunk's size.
	size int

	buf  *[]byte // a pooled buffer data lives in, this unit's own
	cost int64   // bytes this unit alone reserved against the cap
	hold *hold   // what it shares with the other units of its shard

	batch *[]unit // unitBatch: its units, from batchPool

	walk *shardWalk // unitWalk: the shard (shard.go)
}

// decoded is a unitKeep's result.
type decoded struct {
	v   []byte
	err error
}

// worker is one decode goroutine's private state: its scratch buffer is
// its own, so workers never share cache lines.
type worker struct {
	e       *engine // the read, whose store units read straight into place use
	scratch *[]byte
	runs    *[][]byte // the output runs of one unit read into place, reused
	one     [1]byte   // the byte past an uncompressed chunk (vectored reads)
	// The C-order strides of the last chunk shape viewed (chunkView),
	// kept: a view per unit allocates nothing.
	vshape, vstrides []int
	vitem            int
}

// chunkView returns data as a contiguous view of shape (a chunk's decoded
// shape) with items of item bytes: nd.Contiguous without its two
// allocations, the view's shape and strides being the worker's own (valid
// until the next call).
func (w *worker) chunkView(data []byte, shape []int, item int) nd.View {
	if item != w.vitem || !slices.Equal(shape, w.vshape) {
		w.vshape, w.vstrides, w.vitem = append(w.vshape[:0], shape...), nd.CStrides(shape, item), item
	}
	if n := item * nd.NumElements(shape); len(data) < n && n > 0 {
		panic(fmt.Sprintf("pipeline: %d bytes for a chunk of shape %v of %d-byte items", len(data), shape, item))
	}
	return nd.View{Data: data, Shape: w.vshape, Strides: w.vstrides, ItemSize: item}
}

func (w *worker) close() {
	if w.scratch != nil {
		bufpool.Put(w.scratch)
	}
	if w.runs != nil {
		vecread.PutRuns(w.runs)
		w.runs = nil
	}
}

// runsOf returns the worker's reused list of output runs, emptied.
func (w *worker) runsOf() *[][]byte {
	if w.runs == nil {
		w.runs = vecread.GetRuns()
	}
	*w.runs = (*w.runs)[:0]
	return w.runs
}

// scratchFor returns the worker's scratch buffer of n bytes, with the spare
// room decoders use (codecs.DecodeSlack).
func (w *worker) scratchFor(n int) []byte {
	if w.scratch == nil || cap(*w.scratch) < n+codecs.DecodeSlack {
		if w.scratch != nil {
			bufpool.Put(w.scratch)
		}
		w.scratch = bufpool.Get(n + codecs.DecodeSlack)
	}
	return (*w.scratch)[:n]
}

// place decodes one read unit into its place in the output: decode
// workers are the only writers of a read's output, whether the unit is
// decoded, filled, copied from the chunk cache or read straight into
// place. Errors name the unit's key once, and its inner chunk.
func (w *worker) place(ctx context.Context, u *unit) error {
	switch u.kind {
	case unitBatch:
		return w.placeBatch(ctx, u)
	case unitWalk:
		return w.placeWalk(ctx, u)
	}
	return w.placeUnit(ctx, u)
}

// placeUnit is place for a unit of one chunk (no batch, no walk): not
// recursive, so that a unit made on a worker's stack stays there.
func (w *worker) placeUnit(ctx context.Context, u *unit) error {
	if w.e != nil && w.e.placed != nil {
		w.e.placed(*u)
	}
	var err error
	switch u.kind {
	case unitKeep:
		v, derr := u.chain.DecodeNew(u.data)
		if derr == nil && len(v) != u.chain.Repr().NumBytes() {
			derr = fmt.Errorf("%w: decoded %d bytes, chunks have %d", codecs.ErrCorrupt, len(v), u.chain.Repr().NumBytes())
		}
		if derr == nil {
			u.part.CopyOut(u.dst, nd.Contiguous(v, u.shape, u.dst.ItemSize))
		}
		u.reply <- decoded{v, derr}
		return nil
	case unitFill:
		u.part.FillPlaces(u.dst, u.data)
		return nil
	case unitCopy:
		u.part.CopyOut(u.dst, w.chunkView(u.data, u.shape, u.dst.ItemSize))
		return nil
	case unitInto:
		err = w.placeInto(ctx, u)
	case unitVec:
		err = w.placeVec(ctx, u)
	case unitRuns:
		w.placeRuns(u)
	default:
		switch {
		case u.cacheKey != "":
			err = w.placeKept(u)
		case u.hold != nil && u.hold.unmap != nil:
			err = w.decodeMapped(u) // mapped.go: a fault is an error
		default:
			err = w.decodeInto(u.chain, u.shape, u.data, u.part, u.dst)
		}
	}
	if err == nil {
		return nil
	}
	if u.inner == nil {
		return fmt.Errorf("chunk %q: %w", u.key, err)
	}
	return fmt.Errorf("shard %q: %sinner chunk %v: %w", u.key, pathPrefix(u.path), u.inner, err)
}

// decodeInto is the place function: it decodes the encoded chunk enc (of
// chain, decoded shape shape) and moves the part p of it into dst.
//   - a part that is the whole chunk, whose place is one contiguous run,
//     decodes straight into it;
//   - a chunk stored as it decodes is copied from its encoded bytes;
//   - otherwise it decodes into the worker's scratch and is moved with a
//     strided copy (a gather for listed indices or points).
func (w *worker) decodeInto(chain *codecs.Chain, shape []int, enc []byte, p nd.ChunkPart, dst nd.View) error {
	item := dst.ItemSize
	if p.IsWhole(shape) {
		if run, ok := dst.IsContiguous(); ok {
			// Capped: the bytes past run belong to other chunks.
			return chain.Decode(run[:len(run):len(run)], enc)
		}
	}
	n := chain.Repr().NumBytes()
	if chain.Identity() && len(enc) == n {
		p.CopyOut(dst, w.chunkView(enc, shape, item))
		return nil
	}
	scratch := w.scratchFor(n)
	if err := chain.Decode(scratch, enc); err != nil {
		return err
	}
	p.CopyOut(dst, w.chunkView(scratch, shape, item))
	return nil
}

// placeBatch places the units of the batch u in order, each given back
// once placed; the first error ends it (the units left are given back
// with the batch, by engine.done).
func (w *worker) placeBatch(ctx context.Context, u *unit) error {
	b := *u.batch
	for i := range b {
		err := w.placeUnit(ctx, &b[i])
		w.e.done(&b[i])
		if err != nil {
			return err
		}
		if i+1 < len(b) && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// placeKept decodes a whole inner chunk into a new buffer, hands it to the
// chunk cache and places its part.
func (w *worker) placeKept(u *unit) error {
	var v []byte
	if u.chain.Identity() && len(u.data) == u.chain.Repr().NumBytes() {
		v = append([]byte(nil), u.data...) // data may share a larger fetch buffer
	} else {
		var err error
		if v, err = u.chain.DecodeNew(u.data); err != nil {
			return err
		}
	}
	cache.AddElem(u.kept, u.cacheKey, v, u.dst.ItemSize)
	u.part.CopyOut(u.dst, nd.Contiguous(v, u.shape, u.dst.ItemSize))
	return nil
}

// placeRuns assembles the fetched byte runs of an uncompressed inner chunk
// into scratch and copies the part they hold into place.
func (w *worker) placeRuns(u *unit) {
	last := u.spans[len(u.spans)-1]
	buf := w.scratchFor(int(last.End() - u.off - u.lo))
	for i, s := range u.spans {
		copy(buf[s.Offset-u.off-u.lo:], u.pieces[i])
	}
	item := u.dst.ItemSize
	v := nd.View{Data: buf, Offset: -int(u.lo), Shape: u.shape, Strides: nd.CStrides(u.shape, item), ItemSize: item}
	nd.Copy(u.dst, u.part.SrcView(v))
}

// placeInto reads the identity-encoded chunk u.key, wanted whole, straight
// into its place in the output: with one read when the place is one run,
// else with one vectored read. A missing chunk is filled.
func (w *worker) placeInto(ctx context.Context, u *unit) error {
	e := w.e
	var missing bool
	var err error
	if run, ok := u.dst.IsContiguous(); ok && e.caps.Into != nil {
		missing, err = readInto(ctx, e.caps.Into, e.caps.Sizer, u.key, run)
	} else {
		runs := w.runsOf()
		*runs = append(u.dst.AppendRuns(*runs), w.one[:])
		missing, err = readVec(ctx, e.caps.Vec, u.key, *runs, u.size)
	}
	if err == nil && missing {
		nd.Fill(u.dst, e.g.fill())
	}
	return err
}

// placeVec reads the uncompressed inner chunk of u (u.size bytes at u.off
// of u.key) straight into its place with one vectored read.
func (w *worker) placeVec(ctx context.Context, u *unit) error {
	runs := w.runsOf()
	*runs = u.dst.AppendRuns(*runs)
	_, err := w.e.caps.Vec.ReadVec(ctx, u.key, u.off, *runs)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: bytes [%d, %d) lie past the end of the shard", sharding.ErrCorruptIndex, u.off, u.off+int64(u.size))
	}
	return err
}
