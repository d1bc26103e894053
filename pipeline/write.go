package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// ReadWriter is the store a write needs: reads for read-modify-write of
// partly covered chunks, writes and deletes.
type ReadWriter interface {
	store.Reader
	store.Writer
}

// Write stores data (C order, sel's output shape) into the elements sel
// selects. Chunks the selection covers whole are encoded straight from data;
// chunks it covers in part are read, modified and rewritten. A chunk that
// ends equal to the fill value everywhere is deleted rather than stored,
// as zarr-python does by default. Each chunk is replaced by one atomic Set
// (or Delete); chunks are written concurrently, so an error can leave some
// chunks of the selection written and others not.
func Write(ctx context.Context, s ReadWriter, g *Grid, sel nd.Selection, data []byte, opt Options) error {
	opt = opt.forStore(s)
	fullShape := sel.FullShape()
	item := g.itemSize()
	if want := nd.NumElements(fullShape) * item; len(data) != want {
		return fmt.Errorf("pipeline: data holds %d bytes, selection needs %d", len(data), want)
	}
	if len(data) == 0 {
		return ctx.Err()
	}
	srcView := nd.Contiguous(data, fullShape, item)
	chunkBytes := int64(g.chunkBytes())
	perTask := 2*chunkBytes + int64(g.Chain.MaxEncodedSize())
	limit := int(max(1, min(int64(opt.DecodeConcurrency+opt.IOConcurrency), opt.MaxBytesInFlight/max(perTask, 1))))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(limit)
	for p := range sel.Chunks(g.ChunkShape) {
		if gctx.Err() != nil {
			break
		}
		eg.Go(func() error { return writeChunk(gctx, s, g, p, srcView, opt.WriteEmptyChunks) })
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// writeChunk assembles, encodes and stores one chunk (or shard).
func writeChunk(ctx context.Context, s ReadWriter, g *Grid, p nd.ChunkPart, srcView nd.View, keepEmpty bool) error {
	key := g.Key(p.Coords)
	defer g.forget(key) // drop cached decoded chunks, even if the write failed midway
	covers := p.CoversChunk(g.ChunkShape, g.Shape)
	if g.Shard != nil && !covers {
		return updateShard(ctx, s, g, p, srcView, keepEmpty)
	}
	// The chunk and its encoding live in pooled buffers: stores do not keep
	// a value after Set returns (store.Writer).
	chunkBuf := bufpool.Get(g.chunkBytes())
	defer bufpool.Put(chunkBuf)
	chunk := *chunkBuf
	chunkView := nd.Contiguous(chunk, g.ChunkShape, g.itemSize())
	if covers {
		// Past the array's edge a chunk holds the fill value.
		if !inside(p.Coords, g.ChunkShape, g.Shape) {
			nd.Fill(chunkView, g.fill())
		}
	} else {
		old, err := s.Get(ctx, key, store.Full())
		switch {
		case errors.Is(err, store.ErrNotFound):
			nd.Fill(chunkView, g.fill())
		case err != nil:
			return err
		default:
			if err := g.Chain.Decode(chunk, old); err != nil {
				return fmt.Errorf("chunk %q: read-modify-write: %w", key, err)
			}
		}
	}
	nd.Copy(p.SrcView(chunkView), p.DstView(srcView))
	if g.Shard != nil {
		encBuf := bufpool.Get(g.Shard.MaxEncodedSize())
		defer bufpool.Put(encBuf)
		enc, empty, err := g.Shard.EncodeShard((*encBuf)[:0], chunk)
		if err != nil {
			return fmt.Errorf("shard %q: %w", key, err)
		}
		return store1(ctx, s, key, enc, empty && !keepEmpty)
	}
	if !keepEmpty && allFill(chunk, g.fill()) {
		return s.Delete(ctx, key)
	}
	encBuf := bufpool.Get(g.Chain.MaxEncodedSize())
	defer bufpool.Put(encBuf)
	enc, err := g.Chain.Encode((*encBuf)[:0], chunk)
	if err != nil {
		return fmt.Errorf("chunk %q: %w", key, err)
	}
	return s.Set(ctx, key, enc)
}

// updateShard rewrites the part of one shard a write covers: the inner
// chunks it touches are re-encoded, the others are copied as they are.
func updateShard(ctx context.Context, s ReadWriter, g *Grid, p nd.ChunkPart, srcView nd.View, keepEmpty bool) error {
	key := g.Key(p.Coords)
	old, err := s.Get(ctx, key, store.Full())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	sub := make(nd.Selection, len(p.Count))
	for d := range sub {
		sub[d] = nd.Dim{Start: p.SrcStart[d], Count: p.Count[d], Step: p.SrcStep[d]}
	}
	encBuf := bufpool.Get(g.Shard.MaxEncodedSize())
	defer bufpool.Put(encBuf)
	enc, empty, err := g.Shard.UpdateShard((*encBuf)[:0], old, sub, p.DstView(srcView))
	if err != nil {
		return fmt.Errorf("shard %q: %w", key, err)
	}
	return store1(ctx, s, key, enc, empty && !keepEmpty)
}

// store1 stores an encoded chunk, or deletes its key when it is empty.
func store1(ctx context.Context, s ReadWriter, key string, enc []byte, empty bool) error {
	if empty {
		return s.Delete(ctx, key)
	}
	return s.Set(ctx, key, enc)
}

// inside reports whether the chunk at coords lies wholly inside the array.
func inside(coords, chunkShape, shape []int) bool {
	for d, c := range coords {
		if (c+1)*chunkShape[d] > shape[d] {
			return false
		}
	}
	return true
}

// allFill reports whether every element of chunk equals fill, byte for byte.
func allFill(chunk, fill []byte) bool {
	n := len(fill)
	if len(chunk) < n {
		return len(chunk) == 0
	}
	if !bytes.Equal(chunk[:n], fill) {
		return false
	}
	// chunk[:k] is all fill; compare the rest against it in doubling steps.
	for k := n; k < len(chunk); k *= 2 {
		m := min(k, len(chunk)-k)
		if !bytes.Equal(chunk[k:k+m], chunk[:m]) {
			return false
		}
	}
	return true
}
