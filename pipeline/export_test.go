package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// ShardCost is shardCost, for tests.
var ShardCost = shardCost

// ReadPlanUnits reads p's selection from r into out with the concurrent
// engine and returns the units its decode workers placed, each as
// "kind key inner-path" (kind: fill, copy or unit), in no order.
func ReadPlanUnits(ctx context.Context, r store.Reader, p *Plan, out []byte, opt Options) ([]string, error) {
	var mu sync.Mutex
	var seen []string
	e := newEngine(r, p.g, nd.Contiguous(out, p.sel.FullShape(), p.g.itemSize()), opt)
	e.placed = func(u unit) {
		kind := "unit"
		switch u.kind {
		case unitFill:
			kind = "fill"
		case unitCopy:
			kind = "copy"
		}
		var path [][]int
		if u.inner != nil {
			path = append(slices.Clone(u.path), u.inner)
		}
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %v", kind, u.key, path))
		mu.Unlock()
	}
	err := e.run(ctx, *p)
	return seen, err
}
