package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// fetched is one chunk's encoded bytes on their way from an I/O goroutine to
// a decode worker.
type fetched struct {
	part    nd.ChunkPart
	data    []byte
	buf     *[]byte // the pooled buffer data lives in, if any
	missing bool    // the chunk is not stored: its part reads as fill value
	cost    int64   // bytes reserved against the in-flight cap
}

// exactSizeAbove is the largest encoded-size bound for which fetchChunk
// reads into a buffer of that bound without asking the store for the
// chunk's size first.
const exactSizeAbove = 8 << 20

// fetchChunk reads a whole chunk. Through an IntoReader it reads into a
// pooled buffer, sized by the store's SizeReader for large chunks (internal/bufpool: a steady read then allocates almost
// nothing per chunk, where the garbage of fresh buffers would let the heap,
// and RSS, grow well past the output) one byte longer than the largest valid encoding, so one
// request both reads the chunk and tells an oversized one (ErrCorrupt);
// otherwise it uses Get.
func fetchChunk(ctx context.Context, r store.Reader, key string, maxEnc int) (data []byte, buf *[]byte, err error) {
	into, ok := r.(store.IntoReader)
	if !ok {
		data, err = r.Get(ctx, key, store.Full())
		return data, nil, err
	}
	want := maxEnc + 1
	if sz, ok := r.(store.SizeReader); ok && maxEnc > exactSizeAbove {
		// A large chunk is sized exactly: no buffer bigger than the chunk
		// as stored. (For small ones the extra stat costs more than the
		// spare bytes.)
		size, err := sz.Size(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		want = int(min(size, int64(want)))
	}
	buf = bufpool.Get(want)
	n, err := into.ReadInto(ctx, key, 0, *buf)
	if err == nil && n > maxEnc {
		err = fmt.Errorf("chunk %q: %w: larger than any valid encoding (%d bytes)", key, codecs.ErrCorrupt, maxEnc)
	}
	if err != nil {
		bufpool.Put(buf)
		return nil, nil, err
	}
	return (*buf)[:n], buf, nil
}

// Read reads the elements sel selects into out, in C order of sel's output
// shape. out must hold exactly that many elements (len(out) ==
// NumElements(sel.Shape()) × item size). Chunks that are not stored read as
// the fill value. Read returns the first error any chunk met, with the
// chunk's key; on error or cancellation every goroutine it started has
// returned before it does.
func Read(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, out []byte, opt Options) error {
	opt = opt.forStore(r)
	fullShape := sel.FullShape()
	item := g.itemSize()
	if want := nd.NumElements(fullShape) * item; len(out) != want {
		return fmt.Errorf("pipeline: output holds %d bytes, selection needs %d", len(out), want)
	}
	if len(out) == 0 {
		return ctx.Err()
	}
	outView := nd.Contiguous(out, fullShape, item)
	if g.Shard != nil {
		return readSharded(ctx, r, g, sel, outView, opt)
	}
	return readChunks(ctx, r, g, sel, outView, opt)
}

// readChunks reads an unsharded array: producer → I/O pool → decode pool.
func readChunks(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, outView nd.View, opt Options) error {
	if g.Cache != nil {
		return readChunksCached(ctx, r, g, sel, outView, opt) // cache.go
	}
	eg, ctx := errgroup.WithContext(ctx)
	chunkBytes := int64(g.chunkBytes())
	maxEnc := g.Chain.MaxEncodedSize()
	cost := min(chunkBytes+int64(maxEnc), opt.MaxBytesInFlight)
	inflight := semaphore.NewWeighted(opt.MaxBytesInFlight)
	into, canReadInto := r.(store.IntoReader)
	vec, canVec := r.(store.VectorReader)
	sizer, _ := r.(store.SizeReader)
	identity := g.Chain.Identity() && (canReadInto || canVec)
	// Whole chunks go through ReadVec when their places in the output
	// (which all share its strides) are runs long enough.
	run := nd.View{Shape: g.ChunkShape, Strides: outView.Strides, ItemSize: g.itemSize()}.RunLen()
	useVec := canVec && identity && vecread.Worth(run, int(chunkBytes))

	parts := make(chan nd.ChunkPart)
	ready := make(chan fetched, opt.DecodeConcurrency)
	eg.Go(func() error {
		defer close(parts)
		for p := range sel.Chunks(g.ChunkShape) {
			select {
			case parts <- p:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	var fetchers sync.WaitGroup
	for range min(opt.IOConcurrency, sel.NumChunks(g.ChunkShape)) {
		fetchers.Add(1)
		eg.Go(func() error {
			defer fetchers.Done()
			var runs *[][]byte // the output runs of one chunk, reused
			var sink []byte    // the byte past an uncompressed chunk
			if useVec {
				sink = make([]byte, 1)
				runs = vecread.GetRuns()
				defer vecread.PutRuns(runs)
			}
			for p := range parts {
				key := g.Key(p.Coords)
				f := fetched{part: p}
				if identity && wholeForward(p, g.ChunkShape) {
					// Stored as it decodes and wanted whole: read it
					// straight into its place in the output, holding no
					// buffer (so nothing counts against the cap).
					dv := p.DstView(outView)
					direct, missing := false, false
					var err error
					if dst, ok := dv.IsContiguous(); ok && canReadInto {
						direct = true
						missing, err = readInto(ctx, into, sizer, key, dst)
					} else if useVec {
						direct = true
						*runs = append(dv.AppendRuns((*runs)[:0]), sink)
						missing, err = readVec(ctx, vec, key, *runs, int(chunkBytes))
					}
					if err != nil {
						return err
					}
					if direct && !missing {
						continue
					}
					f.missing = missing
				}
				if !f.missing {
					if err := inflight.Acquire(ctx, cost); err != nil {
						return err
					}
					f.cost = cost
					data, buf, err := fetchChunk(ctx, r, key, maxEnc)
					switch {
					case errors.Is(err, store.ErrNotFound):
						f.missing = true
					case err != nil:
						inflight.Release(cost)
						return err
					}
					f.data, f.buf = data, buf
				}
				select {
				case ready <- f:
				case <-ctx.Done():
					f.release(inflight)
					return ctx.Err()
				}
			}
			return nil
		})
	}
	eg.Go(func() error { fetchers.Wait(); close(ready); return nil })
	for range opt.DecodeConcurrency {
		eg.Go(func() error {
			w := worker{g: g}
			for f := range ready {
				err := w.place(f, outView)
				f.release(inflight)
				if err != nil {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// release returns f's buffer to the pool and its bytes to the cap.
func (f *fetched) release(inflight *semaphore.Weighted) {
	if f.buf != nil {
		bufpool.Put(f.buf)
		f.buf = nil
	}
	inflight.Release(f.cost)
}

// readInto reads an identity-encoded chunk straight into dst. It reports a
// missing chunk, and a stored chunk of the wrong size as ErrCorrupt.
func readInto(ctx context.Context, into store.IntoReader, sizer store.SizeReader, key string, dst []byte) (missing bool, err error) {
	if sizer != nil {
		n, err := sizer.Size(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if n != int64(len(dst)) {
			return false, fmt.Errorf("chunk %q: %w: %d bytes stored, %d expected", key, codecs.ErrCorrupt, n, len(dst))
		}
	}
	n, err := into.ReadInto(ctx, key, 0, dst)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if n != len(dst) {
		return false, fmt.Errorf("chunk %q: %w: %d bytes stored, %d expected", key, codecs.ErrCorrupt, n, len(dst))
	}
	return false, nil
}

// readVec reads an identity-encoded chunk of want bytes straight into
// runs, whose last run is a 1-byte sink past the chunk's bytes: a chunk
// that fills it is larger than want, one that ends before it shorter, and
// both are ErrCorrupt. It reports a missing chunk.
func readVec(ctx context.Context, vec store.VectorReader, key string, runs [][]byte, want int) (missing bool, err error) {
	n, err := vec.ReadVec(ctx, key, 0, runs)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err == nil:
		return false, fmt.Errorf("chunk %q: %w: larger than any valid encoding (%d bytes)", key, codecs.ErrCorrupt, want)
	case errors.Is(err, io.ErrUnexpectedEOF) && n == want:
		return false, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return false, fmt.Errorf("chunk %q: %w: %d bytes stored, %d expected", key, codecs.ErrCorrupt, n, want)
	}
	return false, err
}

// wholeForward reports whether a part takes every element of its chunk, in
// order: then a contiguous destination receives the chunk exactly as it
// decodes, and the chunk may be decoded (or read) straight into it.
func wholeForward(p nd.ChunkPart, chunkShape []int) bool {
	for d, n := range chunkShape {
		if p.SrcStart[d] != 0 || p.Count[d] != n || (n > 1 && p.SrcStep[d] != 1) {
			return false
		}
	}
	return true
}

// worker is one decode goroutine's private state: its scratch buffer is its
// own allocation, so workers never share cache lines.
type worker struct {
	g       *Grid
	scratch []byte
}

// place decodes one fetched chunk into its part of the output.
func (w *worker) place(f fetched, outView nd.View) error {
	dst := f.part.DstView(outView)
	if f.missing {
		nd.Fill(dst, w.g.fill())
		return nil
	}
	if wholeForward(f.part, w.g.ChunkShape) {
		if run, ok := dst.IsContiguous(); ok {
			// Capped: the bytes past run belong to other chunks.
			if err := w.g.Chain.Decode(run[:len(run):len(run)], f.data); err != nil {
				return fmt.Errorf("chunk %q: %w", w.g.Key(f.part.Coords), err)
			}
			return nil
		}
	}
	n := w.g.chunkBytes()
	if w.g.Chain.Identity() && len(f.data) == n {
		// Stored as it decodes: place straight from the fetched bytes.
		nd.Copy(dst, f.part.SrcView(nd.Contiguous(f.data, w.g.ChunkShape, w.g.itemSize())))
		return nil
	}
	if cap(w.scratch) < n {
		w.scratch = make([]byte, n, n+codecs.DecodeSlack)
	}
	w.scratch = w.scratch[:n]
	if err := w.g.Chain.Decode(w.scratch, f.data); err != nil {
		return fmt.Errorf("chunk %q: %w", w.g.Key(f.part.Coords), err)
	}
	nd.Copy(dst, f.part.SrcView(nd.Contiguous(w.scratch, w.g.ChunkShape, w.g.itemSize())))
	return nil
}

// shardCost returns the bytes that reading part p of a shard of layout l
// holds at once, at most: the index and the part's share of the shard's
// largest encoding; or, when l reads the inner chunks p covers whole in
// place (Layout.ReadsInPlace), the index and the inner chunks p covers in
// part, each with the coalescing gap that may join it to the next.
func shardCost(l *sharding.Layout, p nd.ChunkPart, inPlace bool, co store.CoalesceOptions) int64 {
	index := int64(l.IndexSize())
	shardElems := int64(nd.NumElements(l.Shard().Shape))
	share := index + int64(l.MaxEncodedSize())*int64(p.NumElements())/max(shardElems, 1)
	if !inPlace {
		return share
	}
	touched, whole := int64(1), int64(1)
	for d, c := range l.ChunkShape() {
		n, step := p.Count[d], p.SrcStep[d]
		lo := p.SrcStart[d]
		if step < 0 {
			lo += (n - 1) * step
		}
		hi := lo + (n-1)*max(step, -step) // last index taken
		touched *= int64(hi/c - lo/c + 1)
		if n > 1 && step != 1 {
			whole = 0
			continue
		}
		// Inner chunks wholly inside [lo, hi].
		whole *= int64(max(0, (hi+1)/c-(lo+c-1)/c))
	}
	gap := co.MaxGap
	if gap == 0 {
		gap = store.DefaultMaxGap
	}
	perChunk := int64(l.Inner().MaxEncodedSize()) + max(gap, 0)
	return min(share, index+(touched-whole)*perChunk)
}

// readSharded reads a sharded array: shard parts run concurrently, each
// through the sharding partial reader, with the decode budget split between
// shards and the inner chunks of each.
func readSharded(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, outView nd.View, opt Options) error {
	nShards := sel.NumChunks(g.ChunkShape)
	parallel := max(1, min(nShards, max(opt.IOConcurrency, opt.DecodeConcurrency)))
	if store.IsLocal(r) {
		// A local store's reads cost CPU, not waiting: shards beyond the
		// decode workers only interleave their buffers in the caches
		// (measured on 4 shards and 2 workers: 0.21 s against 0.27 s).
		parallel = max(1, min(nShards, opt.DecodeConcurrency))
	}
	// The decode budget is split between shards and the inner chunks of
	// each: one shard gets all workers, many shards one each. (Giving every
	// shard all workers measured no faster and cost more CPU.)
	inner := max(1, opt.DecodeConcurrency/min(nShards, opt.DecodeConcurrency))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(parallel)
	ropt := sharding.ReadOptions{Coalesce: opt.Coalesce, Concurrency: inner, Cache: g.IndexCache, ChunkCache: g.Cache}
	// Bytes in flight: each shard part reserves its share of the shard's
	// largest encoding (the whole of it for a whole shard), so a huge read
	// holds at most MaxBytesInFlight of fetched shard data at once.
	inflight := semaphore.NewWeighted(opt.MaxBytesInFlight)
	inPlace := g.Shard.ReadsInPlace(r, outView, ropt)
	for p := range sel.Chunks(g.ChunkShape) {
		if gctx.Err() != nil {
			break
		}
		cost := min(opt.MaxBytesInFlight, shardCost(g.Shard, p, inPlace, opt.Coalesce))
		if err := inflight.Acquire(gctx, cost); err != nil {
			break
		}
		eg.Go(func() error {
			defer inflight.Release(cost)
			sub := make(nd.Selection, len(p.Count))
			for d := range sub {
				sub[d] = nd.Dim{Start: p.SrcStart[d], Count: p.Count[d], Step: p.SrcStep[d]}
			}
			key := g.Key(p.Coords)
			src := sharding.StoreSource(r, g.StoreID, key)
			if err := g.Shard.Read(gctx, src, sub, p.DstView(outView), ropt); err != nil {
				return fmt.Errorf("shard %q: %w", key, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
