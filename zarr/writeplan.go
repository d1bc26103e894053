package zarr

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
)

// ErrMisaligned reports a write plan whose region covers some chunk or
// shard of the array in part: tasks run by independent workers would each
// read-modify-write it, which is safe only where writers of one key are
// serialised (see WritePlan).
var ErrMisaligned = errors.New("zarr: region does not align with the array's chunks or shards")

// WritePlan splits a write of a region of an array into independent
// tasks, one per write unit (chunk, or shard of a sharded array), for
// workers that may run anywhere: each task writes its own unit whole, is
// idempotent (running it again writes the same bytes) and may be retried
// after a failure; Finalize completes the array. It is the contract a
// distributed writer (one worker per task) builds on.
//
// A region that covers some write unit in part is refused (ErrMisaligned)
// unless the plan is made with AllowPartialUnits: partial units are then
// read-modify-written, which is safe for tasks run in this process and,
// on the filesystem store, by processes on one machine (store.KeyLocker);
// elsewhere concurrent tasks of one unit may lose each other's data.
type WritePlan struct {
	a       *Array
	sel     nd.Selection
	partial bool
}

// WriteTask is one task of a WritePlan: the part of the region that lies
// in one write unit.
type WriteTask struct {
	a    *Array
	unit pipeline.WriteUnit
	// Start and Shape are the task's box in array coordinates: Run takes
	// its data, C order, of that shape.
	Start, Shape []int
	// Offset is where the box starts within the region (the plan's
	// selection output), for a caller slicing the region's data.
	Offset []int
}

// WritePlanOption changes how NewWritePlan plans.
type WritePlanOption func(*writePlanOpts)

type writePlanOpts struct{ partial bool }

// AllowPartialUnits lets a write plan hold tasks that cover their chunk
// or shard in part (see WritePlan for what that costs and guarantees).
func AllowPartialUnits() WritePlanOption { return func(o *writePlanOpts) { o.partial = true } }

// NewWritePlan plans a write of region, given as ranges with step 1 (an
// nd.Range per dimension, or nd.All; indices drop no dimension here), one
// task per write unit the region touches. Planning costs grow with the
// units touched, never with the grid.
func (a *Array) NewWritePlan(region []nd.Item, opts ...WritePlanOption) (*WritePlan, error) {
	var o writePlanOpts
	for _, opt := range opts {
		opt(&o)
	}
	sel, err := a.Selection(region...)
	if err != nil {
		return nil, err
	}
	for d, s := range sel {
		if s.Drop || (s.Count > 1 && s.Step != 1) {
			return nil, fmt.Errorf("%w: write plan region: dimension %d is not a range with step 1", nd.ErrInvalidSelection, d)
		}
	}
	p := &WritePlan{a: a, sel: sel, partial: o.partial}
	if !o.partial {
		for u := range pipeline.NewPlan(a.grid, sel).WriteUnits() {
			if !u.Whole {
				return nil, fmt.Errorf("%w: the region covers chunk %v (key %q) in part", ErrMisaligned, u.Coords, u.Key)
			}
		}
	}
	return p, nil
}

// All yields the plan's tasks, in C order of their write units, one at a
// time: a plan of many units costs no memory per unit.
func (p *WritePlan) All() iter.Seq[WriteTask] {
	return func(yield func(WriteTask) bool) {
		for u := range pipeline.NewPlan(p.a.grid, p.sel).WriteUnits() {
			t := WriteTask{a: p.a, unit: u, Shape: slices.Clone(u.Part.Count), Offset: slices.Clone(u.Part.DstStart)}
			t.Start = make([]int, len(u.Coords))
			for d := range t.Start {
				t.Start[d] = p.sel[d].Start + u.Part.DstStart[d] // a step-1 range
			}
			if !yield(t) {
				return
			}
		}
	}
}

// Tasks returns the plan's tasks, in C order of their write units (All,
// collected).
func (p *WritePlan) Tasks() []WriteTask { return slices.Collect(p.All()) }

// Key returns the store key the task replaces.
func (t WriteTask) Key() string { return t.unit.Key }

// Whole reports whether the task replaces its unit without reading it.
func (t WriteTask) Whole() bool { return t.unit.Whole }

// Run writes data (C order, the task's Shape, the array's memory
// representation) into the task's box: one atomic replacement of its
// chunk or shard. Running it again with the same data writes the same
// bytes, so a failed task may simply be run again.
func (t WriteTask) Run(ctx context.Context, data []byte) error {
	items := make([]nd.Item, len(t.Start))
	for d := range items {
		items[d] = nd.Range(t.Start[d], t.Start[d]+t.Shape[d])
	}
	return t.a.WriteBytes(ctx, data, items...)
}

// Finalize completes a planned write once every task has run: it writes
// the array's metadata again (idempotent), so that a reader that opens the
// array after Finalize sees a complete one (a v2 array's .zarray is left
// as it is). Metadata of groups above it is the caller's.
func (p *WritePlan) Finalize(ctx context.Context) error { return p.a.Finalize(ctx) }

// Finalize is WritePlan.Finalize for a writer whose plan ran elsewhere (a
// distributed pipeline's last step opens the array again): it writes the
// array's v3 metadata again; a v2 array is left as it is.
func (a *Array) Finalize(ctx context.Context) error {
	if a.format != 3 {
		return nil
	}
	doc, err := a.meta.Marshal()
	if err != nil {
		return err
	}
	w, ok := a.st.(pipeline.ReadWriter)
	if !ok {
		return fmt.Errorf("finalize %q: %w", a.path, store.ErrReadOnly)
	}
	return w.Set(ctx, nodeKey(a.path, MetadataKey), doc)
}
