package pipeline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// This file reads unsharded arrays over a store whose values are byte
// ranges of other stores' objects (store.Locator: kerchunk references,
// Icechunk virtual chunks). Consecutive chunks of a read go to a fetcher
// as one batch; it locates them, groups them by the object they live in
// and fetches each object's ranges with the coalescing of shards
// (fetchSpansOf): neighbouring chunks of one file are one request.

// maxBatch bounds the chunks of one batch, and batchBytes the bytes a
// batch may hold against the in-flight cap (at most a quarter of it).
const (
	maxBatch   = 256
	batchBytes = 64 << 20
)

// located reports whether the read goes through batches of located chunks.
func (e *engine) located() bool {
	return e.g.Shard == nil && e.g.Cache == nil && e.caps.Locator != nil
}

// batchLen returns how many chunks one batch holds.
func (e *engine) batchLen() int {
	budget := min(int64(batchBytes), e.opt.MaxBytesInFlight/4)
	return int(max(1, min(int64(maxBatch), budget/max(e.cost, 1))))
}

// runBatches is run for a located store: producer → fetchers of
// batches → decode workers.
func (e *engine) runBatches(ctx context.Context, units iter.Seq[WriteUnit], n int) error {
	size := e.batchLen()
	fetchers := min(e.opt.IOConcurrency, (n+size-1)/size)
	eg, ctx := errgroup.WithContext(ctx)
	queue := make(chan []WriteUnit)
	e.ready = make(chan unit, e.opt.DecodeConcurrency)
	eg.Go(func() error {
		defer close(queue)
		batch := make([]WriteUnit, 0, size)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			select {
			case queue <- batch:
				batch = make([]WriteUnit, 0, size)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		for u := range units {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch = append(batch, u)
			if len(batch) == size {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	var running sync.WaitGroup
	for range fetchers {
		running.Add(1)
		eg.Go(func() error {
			defer running.Done()
			f := newFetcher(e)
			defer f.close()
			for b := range queue {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := f.readBatch(ctx, b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	eg.Go(func() error { running.Wait(); close(e.ready); return nil })
	e.decodeWorkers(ctx, eg)
	return e.wait(eg)
}

// virtualGroup is the chunks of one batch that live in one object.
type virtualGroup struct {
	st    store.Reader
	key   string
	spans []store.Span
	parts []int // indexes into the batch, one per span
}

// readBatch locates the chunks of batch, fetches them, grouped by object
// and coalesced, and hands them to the decode workers.
func (f *fetcher) readBatch(ctx context.Context, batch []WriteUnit) error {
	e := f.e
	cost := min(e.opt.MaxBytesInFlight, e.cost*int64(len(batch)))
	if err := e.inflight.acquire(ctx, cost); err != nil {
		return err
	}
	h := &hold{cost: cost}
	h.refs.Store(1)
	defer e.unref(h)
	keys := make([]string, len(batch))
	var groups []*virtualGroup
	byID := map[string]*virtualGroup{}
	for i := range batch {
		key, p := batch[i].Key, batch[i].Part
		keys[i] = key
		dst := p.DstView(e.out)
		loc, err := e.caps.Locator.Locate(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if err := e.sendFill(ctx, key, p, dst, e.g.fill()); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("chunk %q: %w", key, err)
		}
		if loc.Store == nil {
			if err := f.sendLocated(ctx, h, p, key, slices.Clone(loc.Inline)); err != nil {
				return err
			}
			continue
		}
		off, n, ok := loc.Range.Bounded()
		if !ok {
			// A whole object (or an open range): one request of its own.
			data, err := loc.Store.Get(ctx, loc.Key, loc.Range)
			if err != nil {
				return fmt.Errorf("chunk %q: %w", key, err)
			}
			if err := f.sendLocated(ctx, h, p, key, data); err != nil {
				return err
			}
			continue
		}
		id := store.IDOf(loc.Store) + "\x00" + loc.Key
		g := byID[id]
		if g == nil {
			g = &virtualGroup{st: loc.Store, key: loc.Key}
			byID[id] = g
			groups = append(groups, g)
		}
		g.spans = append(g.spans, store.Span{Offset: off, Length: n})
		g.parts = append(g.parts, i)
	}
	fetch := func(ctx context.Context, g *virtualGroup, caps store.Capabilities) error {
		data, err := e.fetchSpansOf(ctx, h, g.st, caps, g.key, 0, g.spans)
		if err != nil {
			return fmt.Errorf("chunk %q: %w", keys[g.parts[0]], err)
		}
		for j, i := range g.parts {
			if int64(len(data[j])) != g.spans[j].Length {
				return fmt.Errorf("chunk %q: %w: its reference names bytes [%d, %d) of %q, which ends first",
					keys[i], codecs.ErrCorrupt, g.spans[j].Offset, g.spans[j].End(), g.key)
			}
			if err := f.sendLocated(ctx, h, batch[i].Part, keys[i], data[j]); err != nil {
				return err
			}
		}
		return nil
	}
	// The objects of remote stores are fetched concurrently, up to the
	// read's I/O concurrency: a batch whose chunks live in many objects
	// (kerchunk references to many files, native Icechunk chunks, one
	// object each) would otherwise wait for one request after another.
	// Local stores (and inline reads) fetch in order; they also read into
	// h.bufs, which only one goroutine appends to.
	var remote []*virtualGroup
	for _, g := range groups {
		caps := store.CapabilitiesOf(g.st)
		if caps.Local || e.inline || len(groups) == 1 {
			if err := fetch(ctx, g, caps); err != nil {
				return err
			}
			continue
		}
		remote = append(remote, g)
	}
	if len(remote) == 0 {
		return nil
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(1, e.opt.IOConcurrency))
	for _, g := range remote {
		eg.Go(func() error { return fetch(gctx, g, store.CapabilitiesOf(g.st)) })
	}
	return eg.Wait()
}

// sendLocated hands one located chunk's encoded bytes to the decode
// workers.
func (f *fetcher) sendLocated(ctx context.Context, h *hold, p nd.ChunkPart, key string, data []byte) error {
	e := f.e
	if len(data) > e.maxEnc {
		return fmt.Errorf("chunk %q: %w", key, oversized(e.maxEnc))
	}
	return e.send(ctx, unit{kind: unitDecode, key: key, chain: e.g.Chain, shape: e.g.ChunkShape, part: p, dst: p.DstView(e.out), data: data, hold: h})
}
