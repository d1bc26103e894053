// Package loader feeds training loops: deterministic, resumable,
// chunk-aware shuffled batches of one or more Zarr arrays aligned on a
// sample axis.
//
// A Dataset names the arrays (Fields) and how samples sit on their axis 0:
// rows, or windows of rows at offsets around a sample's row (t-1, t, t+1),
// with a Start and a Stride, and a box of each row (Field.Rest). A Loader
// delivers its batches:
//
//	l, err := loader.New(ctx, loader.Dataset{Fields: []loader.Field{
//		{Name: "x", Array: x}, {Name: "y", Array: y}}},
//		loader.Config{BatchSize: 256, Sampler: loader.Sampler{Kind: loader.BlockShuffle, K: 16},
//			Seed: 1, Epochs: 10, Budget: 512 << 20})
//	defer l.Close()
//	for {
//		b, err := l.Next(ctx)
//		if err == io.EOF {
//			break
//		}
//		train(b.Data[0], b.Data[1])
//		b.Release()
//		checkpoint(l.State()) // a few bytes: Config.From resumes exactly here
//	}
//
// The order of every sampler (Sequential, ChunkShuffle, BlockShuffle,
// Permutation, Weighted) is a pure function of (seed, epoch, rank, world
// size, position), so the output does not depend on how many goroutines the
// loader runs, and a State resumes it byte for byte. Ranks split each epoch
// at the granularity of field 0's chunks (shards) along the sample axis, so
// no two ranks fetch a chunk in one epoch.
//
// The window samplers (Sequential, ChunkShuffle, BlockShuffle) read K
// chunk-aligned blocks at a time, each once per epoch, into a window that
// batches copy their rows from: amplification (chunk bytes decoded per byte
// delivered, Stats) stays at 1. Permutation and Weighted read every batch's
// rows where they are, and decode a chunk for few rows of it; Stats says how
// many.
//
// Reads are zarr.Array reads — a range of rows per run of adjacent blocks
// of a window, one orthogonal read (nd.IndexArray) per field and batch for
// Permutation and Weighted — with the arrays' own fetch and decode
// concurrency (zarr.WithConcurrency); Config.Reads of them run at once, Config.Prefetch batches are prepared ahead, and everything in flight
// stays within Config.Budget. Batches come in buffers the consumer gives
// back (Batch.Release); Close leaves no goroutine behind.
package loader
