package pipeline

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// readChunksCached reads an unsharded array through g.Cache: each chunk is
// looked up in the cache and, on a miss, fetched and decoded once for all
// concurrent readers of it (cache.GetOrLoadElem) into a new buffer that
// the cache keeps; its part is then copied into the output. Fetches run on
// up to IOConcurrency goroutines, decodes on up to DecodeConcurrency of
// them at once, and MaxBytesInFlight bounds the chunks in flight as
// without a cache. Missing chunks are not cached: they read as the fill
// value.
func readChunksCached(ctx context.Context, r store.Reader, g *Grid, sel nd.Selection, outView nd.View, opt Options) error {
	chunkBytes := g.chunkBytes()
	item := g.itemSize()
	cost := min(int64(chunkBytes)+int64(g.Chain.MaxEncodedSize()), opt.MaxBytesInFlight)
	inflight := semaphore.NewWeighted(opt.MaxBytesInFlight)
	decoding := semaphore.NewWeighted(int64(opt.DecodeConcurrency))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(opt.IOConcurrency)
	for p := range sel.Chunks(g.ChunkShape) {
		if err := inflight.Acquire(gctx, cost); err != nil {
			break
		}
		eg.Go(func() error {
			defer inflight.Release(cost)
			key := g.Key(p.Coords)
			v, err := cache.GetOrLoadElem(gctx, g.Cache, g.cacheKey(key), item, func(ctx context.Context) ([]byte, error) {
				enc, err := r.Get(ctx, key, store.Full())
				if err != nil {
					return nil, err
				}
				if err := decoding.Acquire(ctx, 1); err != nil {
					return nil, err
				}
				defer decoding.Release(1)
				buf, err := g.Chain.DecodeNew(enc)
				if err != nil {
					return nil, fmt.Errorf("chunk %q: %w", key, err)
				}
				return buf, nil
			})
			dst := p.DstView(outView)
			switch {
			case errors.Is(err, store.ErrNotFound):
				nd.Fill(dst, g.fill())
				return nil
			case err != nil:
				return err
			case len(v) != chunkBytes:
				return fmt.Errorf("chunk %q: cached value of %d bytes, chunks have %d", key, len(v), chunkBytes)
			}
			nd.Copy(dst, p.SrcView(nd.Contiguous(v, g.ChunkShape, item)))
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
