package zarrbeam

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// DefaultMaxRegionBytes is the region size Read aims at when ReadOptions
// leaves it zero: 64 MiB.
const DefaultMaxRegionBytes int64 = 64 << 20

// DefaultMaxMem is the memory bound per region of Rechunk when
// RechunkOptions leaves it zero: 256 MiB.
const DefaultMaxMem int64 = 256 << 20

func init() {
	register.DoFn3x1[context.Context, []byte, func(Region), error](&planFn{})
	register.DoFn3x1[context.Context, Region, func(string, Region), error](&readFn{})
	register.DoFn4x1[context.Context, string, Region, func(string), error](&writeFn{})
	register.DoFn5x1[context.Context, string, Region, func(string, Region), func(string), error](&splitFn{})
	register.DoFn4x1[context.Context, string, func(*Region) bool, func(string), error](&mergeFn{})
	register.DoFn4x1[context.Context, []byte, func(*string) bool, func(int), error](&finalizeFn{})
	register.Emitter1[Region]()
	register.Emitter2[string, Region]()
	register.Emitter1[string]()
	register.Emitter1[int]()
	register.Iter1[Region]()
	register.Iter1[string]()
}

// faultHook, when set (by tests), runs before each write of a write unit
// (stage "write") and after it (stage "written"); an error it returns fails
// the DoFn, as a worker lost there would.
var faultHook func(stage, key string) error

func fault(stage, key string) error {
	if faultHook == nil {
		return nil
	}
	return faultHook(stage, key)
}

// ReadOptions are the options of Read.
type ReadOptions struct {
	// Selection is the box to read, in NumPy syntax with step-1 slices
	// ("0:4096, :"); "" reads the whole array.
	Selection string
	// MaxRegionBytes bounds each region's size: regions are the tiles of
	// zarr.Array.SplitTiles, whole shards of a sharded array where one
	// fits (else whole inner chunks, at every level of nesting), whole
	// chunks of an unsharded one, as many as fit; boxes smaller than one
	// chunk when none does. 0 means DefaultMaxRegionBytes.
	MaxRegionBytes int64
	// RegionShape, if set, is the region shape instead (regions are aligned
	// to multiples of it from the array's origin).
	RegionShape []int
}

// Read reads the array src (or the box opts.Selection of it) as a
// PCollection of KV<string, Region>: regions aligned to its chunk grid, keyed
// by FormatKey of their start. The split is made on a worker (the plan
// step opens the array), and the regions are reshuffled so readers spread
// over workers.
func Read(s beam.Scope, src Ref, opts ReadOptions) beam.PCollection {
	s = s.Scope("zarrbeam.Read")
	boxes := beam.ParDo(s, &planFn{Src: src, Selection: opts.Selection, MaxBytes: opts.MaxRegionBytes, Shape: opts.RegionShape}, beam.Impulse(s))
	return beam.ParDo(s, &readFn{opened{Array: src}}, beam.Reshuffle(s, boxes))
}

// planFn emits the boxes (regions without data) of a read: of Shape, or
// of the array's units consolidated up to MaxBytes, or of the rechunk
// plan of Src into Dst within MaxMem when Dst is set.
type planFn struct {
	Src       Ref
	Selection string
	MaxBytes  int64
	Shape     []int
	Dst       Ref
	MaxMem    int64
}

func (f *planFn) ProcessElement(ctx context.Context, _ []byte, emit func(Region)) error {
	a, err := f.Src.Open(ctx)
	if err != nil {
		return err
	}
	start, shape, err := regionOf(a, f.Selection)
	if err != nil {
		return fmt.Errorf("zarrbeam: read %s: %w", f.Src, err)
	}
	tile := f.Shape
	switch {
	case f.Dst.URL != "":
		b, err := f.Dst.Open(ctx)
		if err != nil {
			return err
		}
		p, err := planRechunk(a, b, f.MaxMem)
		if err != nil {
			return fmt.Errorf("zarrbeam: rechunk %s to %s: %w", f.Src, f.Dst, err)
		}
		tile = p.Read
	case tile == nil:
		limit := f.MaxBytes
		if limit <= 0 {
			limit = DefaultMaxRegionBytes
		}
		sel, err := a.Selection(items(start, shape)...)
		if err != nil {
			return fmt.Errorf("zarrbeam: read %s: %w", f.Src, err)
		}
		for t := range a.SplitTiles(sel, limit) {
			b := Region{Start: make([]int, len(t)), Shape: make([]int, len(t))}
			for d, dim := range t {
				b.Start[d], b.Shape[d] = dim.Start, dim.Count
			}
			emit(b)
		}
		return nil
	}
	if len(tile) != len(start) || slices.Min(append([]int{1}, tile...)) < 1 {
		return fmt.Errorf("%w: read %s: region shape %v for an array of rank %d", ErrInvalid, f.Src, tile, len(start))
	}
	for s, c := range tiles(start, shape, tile) {
		emit(Region{Start: s, Shape: c})
	}
	return nil
}

// opened is the array of a DoFn, opened in Setup; readFn and writeFn
// embed it.
type opened struct {
	Array Ref
	a     *zarr.Array
}

func (o *opened) Setup(ctx context.Context) (err error) {
	o.a, err = o.Array.Open(ctx)
	return err
}

// readFn reads the box of each region it is given.
type readFn struct{ opened }

func (f *readFn) ProcessElement(ctx context.Context, b Region, emit func(string, Region)) error {
	data, _, err := f.a.ReadBytes(ctx, items(b.Start, b.Shape)...)
	if err != nil {
		return fmt.Errorf("zarrbeam: read %s box %v+%v: %w", f.Array, b.Start, b.Shape, err)
	}
	emit(FormatKey(b.Start), Region{Start: b.Start, Shape: b.Shape, Data: data})
	return nil
}

// WriteOptions are the options of Write.
type WriteOptions struct {
	// Merge lets regions cover write units (chunks, or shards) in part:
	// regions are cut into pieces, one per write unit, grouped by unit (a
	// shuffle) and each unit written once by one writer, read first where
	// the pieces do not cover it. Without Merge such a region fails the
	// pipeline with zarr.ErrMisaligned, and aligned regions are written where
	// they are, with no shuffle.
	Merge bool
}

// Write writes regions (KV<string, Region>, the regions' data in the array's
// memory representation) into the existing array dst, one writer per
// write unit, and returns the PCollection of the store keys written (for
// Finalize). Regions must not overlap. Every write replaces whole units and
// may run again (a retried bundle) with the same result.
func Write(s beam.Scope, dst Ref, regions beam.PCollection, opts WriteOptions) beam.PCollection {
	s = s.Scope("zarrbeam.Write")
	if !opts.Merge {
		return beam.ParDo(s, &writeFn{opened{Array: dst}}, regions)
	}
	return merge(s, &splitFn{groupSpec{Dst: dst}}, regions)
}

// merge writes regions cut by split: pieces that are a whole group box are
// written where they are (no other piece can meet that box), the others
// grouped by box and merged.
func merge(s beam.Scope, split *splitFn, regions beam.PCollection) beam.PCollection {
	pieces, direct := beam.ParDo2(s, split, regions)
	merged := beam.ParDo(s, &mergeFn{groupSpec{Dst: split.Dst, Src: split.Src, MaxMem: split.MaxMem}}, beam.GroupByKey(s, pieces))
	return beam.Flatten(s, direct, merged)
}

// writeFn writes regions that cover whole write units.
type writeFn struct{ opened }

func (f *writeFn) ProcessElement(ctx context.Context, _ string, b Region, emit func(string)) error {
	return writeRegion(ctx, f.a, f.Array, b, nil, emit)
}

// writeRegion writes b, which must cover whole write units of a (else
// zarr.ErrMisaligned), one task per unit, and emits each unit's key.
// With touched set, units that meet none of its boxes are left alone.
func writeRegion(ctx context.Context, a *zarr.Array, r Ref, b Region, touched []Region, emit func(string)) error {
	item := a.Metadata().DataType.Size()
	if err := checkRegion(a, b); err != nil {
		return fmt.Errorf("zarrbeam: write %s: %w", r, err)
	}
	plan, err := a.NewWritePlan(items(b.Start, b.Shape))
	if err != nil {
		return fmt.Errorf("zarrbeam: write %s region %s of shape %v: %w (regions must cover whole chunks or shards: align them, or write with WriteOptions{Merge: true})",
			r, FormatKey(b.Start), b.Shape, err)
	}
	tasks := plan.Tasks()
	if touched == nil {
		// All of the region: one write, which encodes and stores its units
		// concurrently (each unit replaced whole, as its task would).
		for _, t := range tasks {
			if err := fault("write", t.Key()); err != nil {
				return err
			}
		}
		if err := a.WriteBytes(ctx, b.Data, items(b.Start, b.Shape)...); err != nil {
			return fmt.Errorf("zarrbeam: write %s region %s: %w", r, FormatKey(b.Start), err)
		}
		for _, t := range tasks {
			if err := fault("written", t.Key()); err != nil {
				return err
			}
		}
		for _, t := range tasks {
			emit(t.Key())
		}
		return nil
	}
	for _, t := range tasks {
		if !slices.ContainsFunc(touched, func(c Region) bool { return meets(c, t.Start, t.Shape) }) {
			continue
		}
		if err := fault("write", t.Key()); err != nil {
			return err
		}
		if err := t.Run(ctx, sub(b, t.Start, t.Shape, item).Data); err != nil {
			return fmt.Errorf("zarrbeam: write %s unit %q: %w", r, t.Key(), err)
		}
		if err := fault("written", t.Key()); err != nil {
			return err
		}
		emit(t.Key())
	}
	return nil
}

// checkRegion checks that b is a box inside a with the data it needs.
func checkRegion(a *zarr.Array, b Region) error {
	shape := a.Shape()
	if len(b.Start) != len(shape) || len(b.Shape) != len(shape) {
		return fmt.Errorf("%w: region of start %v and shape %v for an array of shape %v", ErrInvalid, b.Start, b.Shape, shape)
	}
	for d := range shape {
		if b.Start[d] < 0 || b.Shape[d] < 0 || b.Start[d]+b.Shape[d] > shape[d] {
			return fmt.Errorf("%w: region of start %v and shape %v outside an array of shape %v", ErrInvalid, b.Start, b.Shape, shape)
		}
	}
	if want := bytesOf(b.Shape, a.Metadata().DataType.Size()); int64(len(b.Data)) != want {
		return fmt.Errorf("%w: region %s of shape %v holds %d bytes, not %d", ErrInvalid, FormatKey(b.Start), b.Shape, len(b.Data), want)
	}
	return nil
}

// groupSpec resolves, in Setup, the shape of the boxes pieces are
// grouped by: the destination's write unit, or the rechunk plan's write
// region when Src is set. splitFn and mergeFn embed it.
type groupSpec struct {
	Dst, Src Ref
	MaxMem   int64
	a        *zarr.Array
	group    []int
}

func (g *groupSpec) Setup(ctx context.Context) (err error) {
	if g.a, err = g.Dst.Open(ctx); err != nil {
		return err
	}
	if g.Src.URL == "" {
		g.group, _ = units(g.a)
		return nil
	}
	src, err := g.Src.Open(ctx)
	if err != nil {
		return err
	}
	p, err := planRechunk(src, g.a, g.MaxMem)
	if err != nil {
		return fmt.Errorf("zarrbeam: rechunk %s to %s: %w", g.Src, g.Dst, err)
	}
	g.group = p.Write
	return nil
}

// splitFn cuts regions into pieces, one per group box they meet: a piece
// that is its whole box it writes (and emits the keys written on its
// second output), the others it emits keyed by their box's start.
type splitFn struct{ groupSpec }

func (f *splitFn) ProcessElement(ctx context.Context, _ string, b Region, emit func(string, Region), written func(string)) error {
	if err := checkRegion(f.a, b); err != nil {
		return fmt.Errorf("zarrbeam: write %s: %w", f.Dst, err)
	}
	item := f.a.Metadata().DataType.Size()
	shape := f.a.Shape()
	for s, c := range tiles(b.Start, b.Shape, f.group) {
		key := make([]int, len(s))
		whole := true
		for d := range key {
			key[d] = s[d] - s[d]%f.group[d]
			whole = whole && s[d] == key[d] && c[d] == min(f.group[d], shape[d]-key[d])
		}
		if whole {
			if err := writeRegion(ctx, f.a, f.Dst, sub(b, s, c, item), nil, written); err != nil {
				return err
			}
			continue
		}
		emit(FormatKey(key), sub(b, s, c, item))
	}
	return nil
}

// mergeFn writes each group box once from its pieces.
type mergeFn struct{ groupSpec }

func (f *mergeFn) ProcessElement(ctx context.Context, key string, pieces func(*Region) bool, emit func(string)) error {
	start, err := ParseKey(key)
	if err != nil || len(start) != len(f.group) {
		return fmt.Errorf("%w: write %s: group key %q", ErrInvalid, f.Dst, key)
	}
	shape := f.a.Shape()
	box := Region{Start: start, Shape: make([]int, len(start))}
	for d := range start {
		box.Shape[d] = max(0, min(f.group[d], shape[d]-start[d]))
	}
	item := f.a.Metadata().DataType.Size()
	box.Data = make([]byte, bytesOf(box.Shape, item))
	var boxes []Region
	covered := 0
	var p Region
	for pieces(&p) {
		if err := checkRegion(f.a, p); err != nil {
			return fmt.Errorf("zarrbeam: write %s: %w", f.Dst, err)
		}
		covered += copyBox(box, p, item)
		boxes = append(boxes, Region{Start: p.Start, Shape: p.Shape})
	}
	if covered > nd.NumElements(box.Shape) {
		return fmt.Errorf("%w: write %s: the pieces of box %s overlap (regions given to Write must not)", ErrInvalid, f.Dst, key)
	}
	if covered < nd.NumElements(box.Shape) {
		// Pieces cover the box in part: the rest keeps what is stored,
		// and units no piece meets are not written (another job may own
		// them).
		old := Region{Start: box.Start, Shape: box.Shape, Data: make([]byte, len(box.Data))}
		if err := f.a.ReadBytesInto(ctx, old.Data, items(box.Start, box.Shape)...); err != nil {
			return fmt.Errorf("zarrbeam: write %s: read box %s to merge into: %w", f.Dst, key, err)
		}
		for _, c := range boxes {
			copyClipped(old, box, c, item)
		}
		return writeRegion(ctx, f.a, f.Dst, old, boxes, emit)
	}
	return writeRegion(ctx, f.a, f.Dst, box, nil, emit)
}

// RechunkOptions are the options of Rechunk.
type RechunkOptions struct {
	// MaxMem bounds the bytes of each read region and each write region (a
	// worker holds about twice that per bundle it runs: a region and its
	// pieces, or a write region and the pieces it is merged from). It
	// must hold one write unit (shard) of the destination. 0 means
	// DefaultMaxMem.
	MaxMem int64
	// Selection limits the copy to a box (NumPy syntax, step-1 slices;
	// "" for the whole array). Jobs that copy parts of one array side by
	// side must give boxes aligned to the destination's write units, so
	// that no unit has two writers.
	Selection string
}

// Rechunk copies the array src into dst, an existing array of the same
// shape and data type with other chunks, shards or codecs, with the
// rechunker's algorithm (see RechunkPlan): read regions of consolidated
// source units, cut into pieces per write region, grouped by write region
// (the shuffle is the intermediate array) and written, one writer per
// write region. It returns the PCollection of the store keys written.
func Rechunk(s beam.Scope, src, dst Ref, opts RechunkOptions) beam.PCollection {
	s = s.Scope("zarrbeam.Rechunk")
	mem := opts.MaxMem
	if mem <= 0 {
		mem = DefaultMaxMem
	}
	boxes := beam.ParDo(s, &planFn{Src: src, Dst: dst, MaxMem: mem, Selection: opts.Selection}, beam.Impulse(s))
	regions := beam.ParDo(s, &readFn{opened{Array: src}}, beam.Reshuffle(s, boxes))
	return merge(s, &splitFn{groupSpec{Dst: dst, Src: src, MaxMem: mem}}, regions)
}

// FinalizeOptions are the options of Finalize.
type FinalizeOptions struct {
	// Consolidate writes the consolidated metadata of the group at
	// Group (node path in dst's store, "" for its root) after the
	// array's metadata.
	Consolidate bool
	Group       string
}

// Finalize completes the writes whose keys are written (Write's or
// Rechunk's output): once all of them are done it writes dst's metadata
// again (idempotent: a reader that opens the array after the job sees a
// complete one) and, if asked, the consolidated metadata of a group. Its
// output holds one int, the number of write units written.
func Finalize(s beam.Scope, dst Ref, written beam.PCollection, opts FinalizeOptions) beam.PCollection {
	s = s.Scope("zarrbeam.Finalize")
	return beam.ParDo(s, &finalizeFn{Dst: dst, Consolidate: opts.Consolidate, Group: opts.Group},
		beam.Impulse(s), beam.SideInput{Input: written})
}

type finalizeFn struct {
	Dst         Ref
	Consolidate bool
	Group       string
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, written func(*string) bool, emit func(int)) error {
	n := 0
	var k string
	for written(&k) {
		n++
	}
	st, err := OpenStore(ctx, f.Dst.URL)
	if err != nil {
		return err
	}
	w, ok := st.(store.Store)
	if !ok {
		return fmt.Errorf("zarrbeam: finalize %s: %w", f.Dst, store.ErrReadOnly)
	}
	a, err := zarr.OpenArray(ctx, st, f.Dst.Path)
	if err != nil {
		return fmt.Errorf("zarrbeam: finalize %s: %w", f.Dst, err)
	}
	if err := a.Finalize(ctx); err != nil {
		return fmt.Errorf("zarrbeam: finalize %s: %w", f.Dst, err)
	}
	if f.Consolidate {
		if _, err := zarr.Consolidate(ctx, w, f.Group); err != nil {
			return fmt.Errorf("zarrbeam: finalize %s: consolidate group %q: %w", f.Dst, f.Group, err)
		}
	}
	emit(n)
	return nil
}
