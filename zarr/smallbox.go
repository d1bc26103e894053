package zarr

import (
	"context"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
)

// readCachedBox reads items into out from the chunk cache when they
// select a box (integers and step-1 slices) whose read units the cache
// holds, all of them, and reports whether it did (pipeline.ReadCachedBox):
// the small-read fast path of ReadBytesInto for tiles, which builds no
// selection or plan and, with an LRU cache, allocates nothing. On false
// the caller reads as usual, and reports any error.
func (a *Array) readCachedBox(ctx context.Context, out []byte, items []nd.Item) bool {
	const maxRank = 8
	if a.grid.Cache == nil || len(a.meta.Shape) > maxRank || ctx.Err() != nil {
		return false
	}
	var dims [maxRank]nd.Dim
	sel, ok := nd.BoxInto(dims[:0], items, a.meta.Shape)
	return ok && pipeline.ReadCachedBox(a.grid, sel, out)
}
