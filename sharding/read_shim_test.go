package sharding_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	. "github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

// The read tests of this package read one shard through the one engine
// (package pipeline), as an array of one shard; these helpers keep their
// tables in the shape they had when sharding had a reader of its own.

// ReadOptions tune readLayout.
type ReadOptions struct {
	Coalesce    store.CoalesceOptions
	Concurrency int // decode workers; 0: the pipeline's default
	Cache       *IndexCache
	ChunkCache  cache.Cache
}

// Source is where the shard read by readLayout is: a key of a store, or
// memory (served from a memory store).
type Source struct {
	r       store.Reader
	storeID string
	key     string
}

// StoreSource is the shard stored as the whole value of key in r.
func StoreSource(r store.Reader, storeID, key string) Source {
	return Source{r: r, storeID: storeID, key: key}
}

// BytesSource is a shard held in memory.
func BytesSource(b []byte) Source {
	m := mem.New()
	if err := m.Set(context.Background(), "s", b); err != nil {
		panic(err)
	}
	return Source{r: m, key: "s"}
}

// readLayout reads sel (a selection within one shard of layout l) of the
// shard src into dst with pipeline.ReadView, the shard being the one chunk
// of an array of the shard's shape.
func readLayout(l *Layout, ctx context.Context, src Source, sel nd.Selection, dst nd.View, opt ReadOptions) error {
	if err := l.CheckSelection(sel, dst); err != nil {
		return err
	}
	if sel.NumElements() == 0 {
		return nil
	}
	chain, err := codecs.Prepare([]codecs.Codec{l.Codec()}, l.Shard(), codecs.PrepareOptions{})
	if err != nil {
		return err
	}
	storeID := src.storeID
	g := &pipeline.Grid{
		Shape:      l.Shard().Shape,
		ChunkShape: l.Shard().Shape,
		Key:        func([]int) string { return src.key },
		Chain:      chain,
		Shard:      l,
		StoreID:    storeID,
	}
	if storeID != "" {
		g.IndexCache, g.Cache = opt.Cache, opt.ChunkCache
	}
	if err := pipeline.ReadView(ctx, src.r, g, sel, dst, pipeline.Options{DecodeConcurrency: opt.Concurrency, Coalesce: opt.Coalesce}); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// partSelection turns a chunk part into a selection within its chunk.
func partSelection(p nd.ChunkPart) nd.Selection { return p.Selection() }
