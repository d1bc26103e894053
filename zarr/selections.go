package zarr

import (
	"context"
	"fmt"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
)

// This file holds the selections beyond boxes that are not items of a
// subscript: coordinate selections (points, a boolean mask of the whole
// array) and block selections. Orthogonal selections (index arrays and
// masks per dimension: nd.IndexArray, nd.Mask) are items, and go through
// ReadBytes, ReadBytesInto, WriteBytes, Read, ReadInto and Write like
// slices do.

// Points normalises a coordinate selection against the array's shape:
// coords[d] lists the coordinates of dimension d of every point (lists of
// length 1 broadcast; negative coordinates count from the end), as
// zarr-python's vindex and NumPy's a[i, j, k] with index arrays.
func (a *Array) Points(coords [][]int) (nd.Points, error) {
	return nd.NormalizePoints(coords, a.meta.Shape)
}

// ReadPointsBytes reads the elements at a coordinate selection (see Points)
// into a new buffer and returns it with its shape, [number of points].
// Each chunk (inner chunk of a shard) the points touch is fetched and
// decoded once, however many points it serves and in whatever order they
// are asked.
func (a *Array) ReadPointsBytes(ctx context.Context, coords [][]int) ([]byte, []int, error) {
	if n, ok := listsLen(coords); ok && len(a.meta.Shape) > 0 {
		return a.readPointsOf(n, func(out []byte) error { return a.ReadPointsInto(ctx, out, coords) })
	}
	pts, err := a.Points(coords)
	if err != nil {
		return nil, nil, err
	}
	return a.readPoints(ctx, pts)
}

// ReadPointsInto reads the elements at a coordinate selection (coords as
// Points takes them) into out, which holds exactly one element per point:
// ReadPointsSelection of a.Points(coords), where the lists are normalised
// as the points are grouped by chunk rather than copied into an nd.Points
// first (for lists of one length: broadcast ones are normalised first).
func (a *Array) ReadPointsInto(ctx context.Context, out []byte, coords [][]int) error {
	if err := pipeline.ReadPointLists(ctx, a.st, a.grid, coords, out, a.opts.pipe); err != nil {
		return fmt.Errorf("read %q: %w", a.path, err)
	}
	return nil
}

// listsLen returns the common length of coordinate lists that do not
// broadcast (more than one list, or one, all of one length), and false
// for others.
func listsLen(coords [][]int) (int, bool) {
	if len(coords) == 0 {
		return 0, false
	}
	n := len(coords[0])
	for _, l := range coords {
		if len(l) != n {
			return 0, false
		}
	}
	return n, true
}

// ReadMaskBytes reads the elements where mask (a boolean array of the array's
// shape, C order) is true, in C order, into a new buffer and returns it
// with its shape, [number of true elements].
func (a *Array) ReadMaskBytes(ctx context.Context, mask []bool) ([]byte, []int, error) {
	pts, err := nd.MaskPoints(mask, a.meta.Shape)
	if err != nil {
		return nil, nil, err
	}
	return a.readPoints(ctx, pts)
}

// zeroDimAxes reports items that give a 0-d array new axes (None, True,
// False), which NumPy reads pointwise: a[None] is the array's one element
// in shape (1,), a[False] none in shape (0,). Points of rank 0 cannot
// count them, so the callers read or write the element as a box: the
// result's shape, and n, its 0 or 1 elements.
func (a *Array) zeroDimAxes(items []nd.Item) (shape []int, n int, ok bool, err error) {
	if len(a.meta.Shape) != 0 {
		return nil, 0, false, nil
	}
	p, ok, err := nd.NewPointwise(items, a.meta.Shape)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	shape = p.Shape()
	return shape, nd.NumElements(shape), true, nil
}

// pointwise reads items as NumPy reads them when they select pointwise
// (index arrays that broadcast, see nd.Broadcast): the points and the
// output's shape, ok false when Normalize reads them instead. The points'
// coordinates (8 bytes each, rank per point) count with the values
// against WithMaxReadBytes and the platform's ceiling before any is
// listed, so a short text that broadcasts to billions of points is
// refused rather than allocated.
func (a *Array) pointwise(items []nd.Item) (nd.Points, []int, bool, error) {
	p, ok, err := nd.NewPointwise(items, a.meta.Shape)
	if err != nil || !ok {
		return nd.Points{}, nil, false, err
	}
	n, shape := int64(p.Len()), p.Shape()
	per := int64(a.meta.DataType.Size() + 8*len(a.meta.Shape))
	limit := int64(maxAlloc)
	if a.opts.maxRead > 0 {
		limit = min(limit, a.opts.maxRead)
	}
	if n > limit/per {
		return nd.Points{}, nil, false, fmt.Errorf("%q: %w: the pointwise selection of shape %v is %d points of %d bytes each (the value and its coordinates), more than the limit of %d bytes (WithMaxReadBytes, or what the platform can allocate)", a.path, ErrTooLarge, shape, n, per, limit)
	}
	return p.Points(0, p.Len(), nil), shape, true, nil
}

// ReadPointsSelection reads the elements at the normalised points pts into
// out, which holds exactly pts.Len() elements (for a 0-d array, points of
// rank 0: as many copies of its element as out holds).
func (a *Array) ReadPointsSelection(ctx context.Context, out []byte, pts nd.Points) error {
	if size := a.meta.DataType.Size(); len(a.meta.Shape) == 0 && pts.Rank == 0 && len(out) >= size && len(out)%size == 0 {
		// Points of a 0-d array (NumPy's a[None]): its one element, in
		// every place of out (points of rank 0 cannot count themselves).
		if err := a.ReadSelection(ctx, out[:size], nd.Selection{}); err != nil {
			return err
		}
		for k := size; k < len(out); k += size {
			copy(out[k:k+size], out[:size])
		}
		return nil
	}
	if err := pipeline.ReadPoints(ctx, a.st, a.grid, pts, out, a.opts.pipe); err != nil {
		return fmt.Errorf("read %q: %w", a.path, err)
	}
	return nil
}

// readPoints reads pts into a new buffer, bounded as ReadBytes is.
func (a *Array) readPoints(ctx context.Context, pts nd.Points) ([]byte, []int, error) {
	return a.readPointsOf(pts.Len(), func(out []byte) error { return a.ReadPointsSelection(ctx, out, pts) })
}

// readPointsOf reads n points with read into a new buffer, bounded as
// ReadBytes is.
func (a *Array) readPointsOf(n int, read func(out []byte) error) ([]byte, []int, error) {
	m, err := a.allocBytes(nd.Selection{{Count: n, Step: 1}})
	if err != nil {
		return nil, nil, err
	}
	out := make([]byte, m)
	if err := read(out); err != nil {
		return nil, nil, err
	}
	return out, []int{n}, nil
}

// WritePointsBytes writes data (one element per point, memory representation)
// at a coordinate selection (see Points). Where a point repeats, its last
// value wins, as in NumPy.
func (a *Array) WritePointsBytes(ctx context.Context, data []byte, coords [][]int) error {
	pts, err := a.Points(coords)
	if err != nil {
		return err
	}
	return a.WritePointsSelection(ctx, data, pts)
}

// WriteMaskBytes writes data (one element per true element of mask, in C
// order) where mask, a boolean array of the array's shape, is true.
func (a *Array) WriteMaskBytes(ctx context.Context, data []byte, mask []bool) error {
	pts, err := nd.MaskPoints(mask, a.meta.Shape)
	if err != nil {
		return err
	}
	return a.WritePointsSelection(ctx, data, pts)
}

// WritePointsSelection writes data at the normalised points pts.
func (a *Array) WritePointsSelection(ctx context.Context, data []byte, pts nd.Points) error {
	rw, ok := a.st.(pipeline.ReadWriter)
	if !ok {
		return fmt.Errorf("write %q: %w", a.path, store.ErrReadOnly)
	}
	if err := pipeline.WritePoints(ctx, rw, a.grid, pts, data, a.opts.pipe); err != nil {
		return fmt.Errorf("write %q: %w", a.path, err)
	}
	return nil
}

// BlockItems turns a block selection (zarr-python's blocks) into the
// element selection it stands for: items index the chunk grid (of the
// array's chunks, or shards for a sharded array: its write units), as
// integers (negative from the end) and slices with step 1, and the result
// selects the elements of those chunks, edge chunks clipped to the array.
// Read it with ReadBytes, write it with WriteBytes.
func (a *Array) BlockItems(items ...nd.Item) ([]nd.Item, error) {
	grid := a.meta.Shape
	chunk := a.meta.ChunkShape
	gshape := a.meta.GridShape()
	for i, it := range items {
		// As zarr-python: whatever they would select, index arrays, masks
		// and steps other than 1 are no block selection.
		step, stepped := it.SliceStep()
		if it.IsOrthogonal() || stepped && step != 1 {
			return nil, fmt.Errorf("block selection: %w: item %d (%s): only integers and slices with step 1 select blocks", nd.ErrInvalidSelection, i, it)
		}
	}
	sel, err := nd.Normalize(items, gshape)
	if err != nil {
		return nil, fmt.Errorf("block selection: %w", err)
	}
	out := make([]nd.Item, len(sel))
	for d, dim := range sel {
		if dim.Index != nil || dim.Order != nil || (dim.Count > 1 && dim.Step != 1) {
			return nil, fmt.Errorf("block selection: %w: dimension %d: only integers and slices with step 1 select blocks", nd.ErrInvalidSelection, d)
		}
		var lo, hi int
		switch {
		case dim.Count == 0:
		case a.grid.Rect != nil:
			e := a.grid.Rect.Edges[d]
			lo, _ = e.Chunk(dim.Start)
			last, size := e.Chunk(dim.Start + dim.Count - 1)
			hi = min(grid[d], last+size)
		default:
			lo = dim.Start * chunk[d]
			hi = min(grid[d], (dim.Start+dim.Count)*chunk[d])
		}
		out[d] = nd.Range(lo, hi)
	}
	return out, nil
}

// ReadPoints reads the elements of a at a coordinate selection (see
// Array.Points) into a new slice, in the order asked.
func ReadPoints[T Element](ctx context.Context, a *Array, coords [][]int) ([]T, error) {
	if n, ok := listsLen(coords); ok && len(a.meta.Shape) > 0 {
		return readPointsTOf[T](a, n, func(b []byte) error { return a.ReadPointsInto(ctx, b, coords) })
	}
	pts, err := a.Points(coords)
	if err != nil {
		return nil, err
	}
	return readPointsT[T](ctx, a, pts)
}

// ReadMask reads the elements of a where mask (a boolean array of a's
// shape, C order) is true, in C order, into a new slice: the typed form of
// Array.ReadMaskBytes.
func ReadMask[T Element](ctx context.Context, a *Array, mask []bool) ([]T, error) {
	pts, err := nd.MaskPoints(mask, a.meta.Shape)
	if err != nil {
		return nil, err
	}
	return readPointsT[T](ctx, a, pts)
}

// readPointsT reads pts into a new []T.
func readPointsT[T Element](ctx context.Context, a *Array, pts nd.Points) ([]T, error) {
	return readPointsTOf[T](a, pts.Len(), func(b []byte) error { return a.ReadPointsSelection(ctx, b, pts) })
}

// readPointsTOf reads n points with read (into the bytes of a new []T).
func readPointsTOf[T Element](a *Array, n int, read func(b []byte) error) ([]T, error) {
	if _, err := asBytes[T](a, nil); err != nil {
		return nil, err
	}
	if _, err := a.allocBytes(nd.Selection{{Count: n, Step: 1}}); err != nil {
		return nil, err
	}
	out := make([]T, n)
	b, err := asBytes(a, out)
	if err != nil {
		return nil, err
	}
	if err := read(b); err != nil {
		return nil, err
	}
	return out, nil
}

// WritePoints writes data (one value per point) into a at a coordinate
// selection (see Array.Points); where a point repeats, its last value wins.
func WritePoints[T Element](ctx context.Context, a *Array, data []T, coords [][]int) error {
	b, err := asBytes(a, data)
	if err != nil {
		return err
	}
	return a.WritePointsBytes(ctx, b, coords)
}

// ReadView reads the selected elements into dst, any strided view of the
// selection's shape (Shape, dropped dimensions left out) with the array's
// item size: a sub-box of a larger buffer — a batch being assembled, a
// mosaic, a transposed layout — so no copy is needed afterwards. Views of
// concurrent reads must not overlap. Orthogonal selections are accepted;
// for points, read into a slice of the larger buffer with ReadPointsSelection.
func (a *Array) ReadView(ctx context.Context, dst nd.View, items ...nd.Item) error {
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	if _, err := a.selectionBytes(sel); err != nil {
		return fmt.Errorf("read %w", err)
	}
	shape := sel.Shape()
	if !slices.Equal(dst.Shape, shape) || len(dst.Strides) != len(shape) || dst.ItemSize != a.meta.DataType.Size() {
		return fmt.Errorf("read %q: %w: a view of shape %v (%d-byte items) for a selection of shape %v (%d-byte items)",
			a.path, nd.ErrInvalidSelection, dst.Shape, dst.ItemSize, shape, a.meta.DataType.Size())
	}
	if err := checkViewBounds(dst); err != nil {
		return fmt.Errorf("read %q: %w", a.path, err)
	}
	// The engine's view has every dimension; a dropped one has length 1.
	full := nd.View{Data: dst.Data, Offset: dst.Offset, ItemSize: dst.ItemSize}
	k := 0
	for _, d := range sel {
		if d.Drop {
			full.Shape, full.Strides = append(full.Shape, 1), append(full.Strides, 0)
			continue
		}
		full.Shape, full.Strides = append(full.Shape, dst.Shape[k]), append(full.Strides, dst.Strides[k])
		k++
	}
	if err := pipeline.ReadView(ctx, a.st, a.grid, sel, full, a.opts.pipe); err != nil {
		return fmt.Errorf("read %q: %w", a.path, err)
	}
	return nil
}

// checkViewBounds reports a view whose elements do not all lie inside its
// data.
func checkViewBounds(v nd.View) error {
	lo, hi := v.Offset, v.Offset
	for d, n := range v.Shape {
		if n == 0 {
			return nil
		}
		if s := (n - 1) * v.Strides[d]; s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	if lo < 0 || hi+v.ItemSize > len(v.Data) {
		return fmt.Errorf("%w: the view reaches bytes [%d, %d) of a %d-byte buffer", nd.ErrInvalidSelection, lo, hi+v.ItemSize, len(v.Data))
	}
	return nil
}
