package zarr

import (
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
)

// Plan resolves a selection (the items of ReadBytesInto) against the array's
// chunk grid: its write units (chunks, or shards) and read units (chunks,
// or inner chunks of shards, with their byte ranges once the shard index
// is read). Reads and writes execute such plans; a caller may consume one
// to schedule work of its own (see pipeline.Plan). Planning costs grow
// with the chunks the selection touches, never with the grid.
func (a *Array) Plan(items ...nd.Item) (*pipeline.Plan, error) {
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, err
	}
	return pipeline.NewPlan(a.grid, sel), nil
}
