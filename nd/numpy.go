package nd

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Orthogonal returns a copy of items whose index arrays and masks select
// orthogonally, each on its own dimension (zarr-python's oindex, NumPy's
// np.ix_), whatever ParseSelection made of them.
func Orthogonal(items []Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		it.numpy = false
		out[i] = it
	}
	return out
}

// Vectorized returns a copy of items whose index arrays and masks select
// as NumPy's advanced indexing does (zarr-python's vindex): they
// broadcast together and select pointwise (see Broadcast), as the arrays
// ParseSelection makes do. Orthogonal is its inverse.
func Vectorized(items []Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		it.numpy = it.kind == kindIndices || it.kind == kindMask
		out[i] = it
	}
	return out
}

// advanced is one dimension of a NumPy subscript expanded against a
// shape: one of its index arrays (a mask of rank k gives k, the indices
// where it is true, as NumPy's nonzero()), an integer, or a slice
// resolved to a Dim.
type advanced struct {
	kind  itemKind // kindIndices, kindIndex or kindSlice (dim)
	axis  int      // the array dimension it indexes; -1 for a new axis (a slice of length 1)
	arr   int      // kindIndices: which of broadcast.arrays
	index int      // kindIndex: in bounds
	dim   Dim
}

// indexArray is one index array of a subscript: its indices (in C order,
// resolved in bounds) and shape, and its strides in the broadcast shape
// (0 along the dimensions it stretches over).
type indexArray struct {
	list    []int
	shape   []int
	strides []int
}

// Broadcast evaluates items as NumPy evaluates a subscript with advanced
// indexes, when ParseSelection made index arrays or masks of them: the
// index arrays (a mask of rank k as the k index arrays of the positions
// where it is true) broadcast together, NumPy's rule (shapes aligned at
// their last dimensions, each dimension equal or 1), and the integers
// among them with them; the output has the broadcast shape in place of
// the indexed dimensions when the arrays and integers are adjacent, else
// first, and the slices' dimensions around it. pointwise is false when
// the selection means the same orthogonally (one 1-D index array or mask,
// in its own place), and then Normalize reads it; otherwise pts lists
// every output element's coordinates in C order of outShape. Errors wrap
// ErrOutOfBounds or ErrInvalidSelection and say what NumPy's IndexError
// says.
func Broadcast(items []Item, shape []int) (pts Points, outShape []int, pointwise bool, err error) {
	p, ok, err := NewPointwise(items, shape)
	if err != nil || !ok {
		return Points{}, nil, false, err
	}
	return p.Points(0, p.Len(), nil), p.Shape(), true, nil
}

// Pointwise is a selection NumPy reads pointwise (see Broadcast),
// analysed but its points not listed: its output shape, and its points in
// C order of that shape a range at a time, so that a reader can bound
// what it holds (check Len before listing) or stream a selection of more
// points than it would hold. Make one with NewPointwise; it is immutable
// and safe for concurrent use.
type Pointwise struct {
	b    *broadcast
	rank int
}

// NewPointwise analyses items against an array shape as Broadcast does,
// with its errors, without listing the points; ok is false when the items
// do not select pointwise (Normalize reads them).
func NewPointwise(items []Item, shape []int) (p Pointwise, ok bool, err error) {
	b, err := analyze(items, shape)
	if err != nil || b == nil || !b.pointwise {
		return Pointwise{}, false, err
	}
	return Pointwise{b: b, rank: len(shape)}, true, nil
}

// Shape returns the output's shape (a copy).
func (p Pointwise) Shape() []int {
	if p.b == nil {
		return nil
	}
	return slices.Clone(p.b.outShape)
}

// Len returns the number of points, the output's element count.
func (p Pointwise) Len() int {
	if p.b == nil {
		return 0
	}
	return NumElements(p.b.outShape)
}

// Points lists the points from, from+1, ..., from+n-1 (output elements
// in C order; those past Len() are left out), into dst's storage when its
// capacity holds them (rank coordinates each), else into a new slice.
func (p Pointwise) Points(from, n int, dst []int) Points {
	n = min(n, p.Len()-from)
	if p.b == nil || n <= 0 || from < 0 {
		return Points{Rank: p.rank, Coords: []int{}}
	}
	if cap(dst) < n*p.rank {
		dst = make([]int, n*p.rank)
	}
	pts := Points{Rank: p.rank, Coords: dst[:n*p.rank]}
	p.b.points(from, pts)
	return pts
}

// broadcast is a NumPy subscript with advanced indexes, analysed.
type broadcast struct {
	dims      []advanced
	arrays    []indexArray
	outShape  []int
	at, bRank int // the broadcast dimensions' place in outShape, and count
	pointwise bool
}

// analyze checks items as NumPy would when ParseSelection made index
// arrays or masks of some (nil, nil otherwise) and works out the output.
// It checks in NumPy's order: the number of indices, masks' shapes, the
// broadcast, then the bounds.
func analyze(items []Item, shape []int) (*broadcast, error) {
	numpyArrays := 0
	for _, it := range items {
		if it.numpy && (it.kind == kindIndices || it.kind == kindMask) {
			numpyArrays++
		}
	}
	newAxes := 0
	for _, it := range items {
		if it.kind == kindNewAxis || it.kind == kindMask && it.shape != nil && len(it.shape) == 0 {
			newAxes++ // None, or a scalar True or False: a new axis
		}
	}
	if numpyArrays == 0 && newAxes == 0 {
		return nil, nil
	}
	if newAxes > 0 {
		for _, it := range items {
			if !it.numpy && (it.kind == kindIndices || it.kind == kindMask) {
				return nil, fmt.Errorf("%w: a new axis (None, or a scalar True or False) with orthogonal index arrays (zarr-python's oindex takes none)", ErrInvalidSelection)
			}
		}
	}
	ellipsis, explicit := -1, 0
	for i, it := range items {
		switch {
		case it.kind == kindEllipsis:
			if ellipsis >= 0 {
				return nil, fmt.Errorf("%w: an index can only have a single ellipsis ('...')", ErrInvalidSelection)
			}
			ellipsis = i
		case it.kind == kindMask && it.shape != nil:
			explicit += len(it.shape) // a mask indexes as many dimensions as it has
		case it.kind == kindNewAxis:
		default:
			explicit++
		}
	}
	rank := len(shape)
	if explicit > rank {
		return nil, fmt.Errorf("%w: too many indices for array: array is %d-dimensional, but %d were indexed", ErrInvalidSelection, rank, explicit)
	}
	dims := make([]advanced, 0, rank)
	var arrays []indexArray
	// NumPy checks the masks' shapes first, then integers and slices as
	// it walks the dimensions: the first of those errors waits for the
	// masks (a[9, [True]] is the mask's IndexError).
	var walkErr error
	ax := 0 // the array dimensions taken so far
	for _, it := range items {
		d := ax
		switch it.kind {
		case kindEllipsis:
			for range rank - explicit {
				dims = append(dims, advanced{axis: ax, dim: fullDim(shape[ax])})
				ax++
			}
		case kindNewAxis:
			dims = append(dims, advanced{axis: -1, dim: Dim{Count: 1, Step: 1}})
		case kindMask:
			mshape := it.shape
			if mshape == nil {
				mshape = []int{len(it.mask)}
			}
			if len(mshape) == 0 {
				// A scalar boolean, as NumPy takes it: an index array on a
				// new axis of length 1, [0] for True, [] for False.
				list := []int{}
				if it.mask[0] {
					list = []int{0}
				}
				arrays = append(arrays, indexArray{list: list, shape: []int{len(list)}})
				dims = append(dims, advanced{kind: kindIndices, axis: -1, arr: len(arrays) - 1})
				continue
			}
			for j, m := range mshape {
				if m != shape[d+j] {
					return nil, fmt.Errorf("%w: boolean index did not match indexed array along axis %d; size of axis is %d but size of corresponding boolean axis is %d", ErrInvalidSelection, d+j, shape[d+j], m)
				}
			}
			for j, list := range nonzero(it.mask, mshape) {
				arrays = append(arrays, indexArray{list: list, shape: []int{len(list)}})
				dims = append(dims, advanced{kind: kindIndices, axis: d + j, arr: len(arrays) - 1})
			}
			ax += len(mshape)
		case kindIndices:
			ashape := it.shape
			if ashape == nil {
				ashape = []int{len(it.list)}
			}
			arrays = append(arrays, indexArray{list: it.list, shape: ashape})
			dims = append(dims, advanced{kind: kindIndices, axis: d, arr: len(arrays) - 1})
			ax++
		case kindIndex: // NumPy checks integers first, arrays after the broadcast
			i, n := it.index, shape[d]
			if i < -n || i >= n {
				if walkErr == nil {
					walkErr = fmt.Errorf("%w: index %d is out of bounds for axis %d with size %d", ErrOutOfBounds, i, d, n)
				}
				i = 0
			}
			if i < 0 {
				i += n
			}
			dims = append(dims, advanced{kind: kindIndex, axis: d, index: i})
			ax++
		default:
			dim, err := it.normalize(shape[d])
			if err != nil && walkErr == nil {
				walkErr = fmt.Errorf("item %s on axis %d of size %d: %w", it, d, shape[d], err)
			}
			dims = append(dims, advanced{axis: d, dim: dim})
			ax++
		}
	}
	for ; ax < rank; ax++ {
		dims = append(dims, advanced{axis: ax, dim: fullDim(shape[ax])})
	}
	if walkErr != nil {
		return nil, walkErr
	}
	bshape, ok := broadcastShapes(arrays)
	if !ok {
		shapes := make([]string, len(arrays))
		for i, a := range arrays {
			shapes[i] = tupleString(a.shape)
		}
		return nil, fmt.Errorf("%w: shape mismatch: indexing arrays could not be broadcast together with shapes %s", ErrInvalidSelection, strings.Join(shapes, " "))
	}
	// The arrays' bounds, dimension after dimension; negative indices
	// resolved into a copy (items are immutable). NumPy checks them as it
	// takes the points: not at all when the broadcast shape is empty
	// (a[[], [7]] is empty, no IndexError).
	empty := slices.Contains(bshape, 0)
	for _, p := range dims {
		if p.kind == kindIndices && p.axis >= 0 && !empty {
			n := shape[p.axis]
			a := &arrays[p.arr]
			var res []int
			for k, i := range a.list {
				if i < -n || i >= n {
					return nil, fmt.Errorf("%w: index %d is out of bounds for axis %d with size %d", ErrOutOfBounds, i, p.axis, n)
				}
				if i < 0 && res == nil {
					res = slices.Clone(a.list)
				}
				if i < 0 {
					res[k] = i + n
				}
			}
			if res != nil {
				a.list = res
			}
		}
	}
	// Where the advanced dimensions (arrays and integers) sit.
	first, last, count, slicesBefore := -1, -1, 0, 0
	for d, p := range dims {
		if p.kind == kindSlice {
			continue
		}
		if first < 0 {
			first = d
		}
		last = d
		count++
	}
	// NumPy looks at the items as written: an Ellipsis that stands for
	// no dimension still separates them (a[:, [0, 1], ..., [0, 1]] of a
	// 3-D array puts the broadcast dimension first).
	adjacent := last-first+1 == count && advancedAdjacent(items)
	if len(arrays) == 1 && len(arrays[0].shape) == 1 && newAxes == 0 {
		for _, p := range dims {
			if p.kind == kindIndices {
				break
			}
			if p.kind == kindSlice {
				slicesBefore++
			}
		}
		if adjacent || slicesBefore == 0 {
			return &broadcast{}, nil // orthogonal reads it the same
		}
	}
	// The output: slice dimensions in order, the broadcast ones at the
	// first advanced dimension's place (adjacent) or first.
	at := 0
	if adjacent {
		for d := 0; d < first; d++ {
			if dims[d].kind == kindSlice {
				at++
			}
		}
	}
	var sliceLens []int
	for _, p := range dims {
		if p.kind == kindSlice {
			sliceLens = append(sliceLens, p.dim.Len())
		}
	}
	outShape := make([]int, 0, len(sliceLens)+len(bshape))
	outShape = append(outShape, sliceLens[:at]...)
	outShape = append(outShape, bshape...)
	outShape = append(outShape, sliceLens[at:]...)
	total := 1
	for _, l := range outShape {
		if l != 0 && total > math.MaxInt/max(rank, 1)/l {
			return nil, fmt.Errorf("%w: a pointwise selection of shape %v is too large", ErrInvalidSelection, outShape)
		}
		total *= l
	}
	for i := range arrays {
		a := &arrays[i]
		a.strides = make([]int, len(bshape))
		stride := 1
		for j := len(a.shape) - 1; j >= 0; j-- {
			if a.shape[j] != 1 {
				a.strides[len(bshape)-len(a.shape)+j] = stride
			}
			stride *= a.shape[j]
		}
	}
	return &broadcast{dims: dims, arrays: arrays, outShape: outShape, at: at, bRank: len(bshape), pointwise: true}, nil
}

// advancedAdjacent reports whether the advanced items (index arrays,
// masks, scalar booleans, integers) stand next to each other.
func advancedAdjacent(items []Item) bool {
	first, last, count := -1, -1, 0
	for i, it := range items {
		switch it.kind {
		case kindIndices, kindMask, kindIndex:
			if first < 0 {
				first = i
			}
			last = i
			count++
		}
	}
	return last-first+1 == count
}

// broadcastShapes returns the shape the arrays broadcast to (NumPy's
// rule), or false when they do not.
func broadcastShapes(arrays []indexArray) ([]int, bool) {
	r := 0
	for _, a := range arrays {
		r = max(r, len(a.shape))
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, a := range arrays {
		for j, n := range a.shape {
			o := &out[r-len(a.shape)+j]
			switch {
			case n == *o || n == 1:
			case *o == 1:
				*o = n
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// nonzero returns, for each of the mask's dimensions, the coordinates
// along it of the true elements, in C order (NumPy's nonzero()).
func nonzero(mask []bool, shape []int) [][]int {
	count := 0
	for _, v := range mask {
		if v {
			count++
		}
	}
	k := len(shape)
	flat := make([]int, count*k)
	lists := make([][]int, k)
	for j := range lists {
		lists[j] = flat[j*count : (j+1)*count : (j+1)*count]
	}
	pos := make([]int, k)
	n := 0
	for _, v := range mask {
		if v {
			for j := range k {
				lists[j][n] = pos[j]
			}
			n++
		}
		for j := k - 1; j >= 0; j-- {
			pos[j]++
			if pos[j] < shape[j] {
				break
			}
			pos[j] = 0
		}
	}
	return lists
}

// points lists the coordinates of the output elements from, from+1, ...
// (C order) into pts, as many as it holds.
func (b *broadcast) points(from int, pts Points) {
	dims, outShape, at, rank := b.dims, b.outShape, b.at, pts.Rank
	total := pts.Len()
	if total == 0 {
		return
	}
	last := len(outShape) - 1
	pos := make([]int, len(outShape))
	for a, k := last, from; a >= 0; a-- { // unravel from
		pos[a] = k % outShape[a]
		k /= outShape[a]
	}
	bpos := pos[at : at+b.bRank]
	// A row (the output's last dimension) at a time: along it, each
	// coordinate (or, for an array, the offset into its indices) steps
	// by a constant.
	base, inc := make([]int, len(dims)), make([]int, len(dims))
	for k := 0; k < total; {
		n := min(outShape[last]-pos[last], total-k)
		oi := 0
		for d, p := range dims {
			inc[d] = 0
			base[d] = 0
			switch p.kind {
			case kindIndices:
				a := &b.arrays[p.arr]
				off := 0
				for i, st := range a.strides {
					off += bpos[i] * st
				}
				base[d] = off
				if last >= at && last < at+b.bRank {
					inc[d] = a.strides[last-at]
				}
			case kindIndex:
				base[d] = p.index
			default:
				if oi == at {
					oi += b.bRank
				}
				base[d] = p.dim.Start + pos[oi]*p.dim.Step
				if oi == last {
					inc[d] = p.dim.Step
				}
				oi++
			}
		}
		for d, p := range dims {
			if p.axis < 0 {
				continue // a new axis: no coordinate
			}
			v, step := base[d], inc[d]
			c := pts.Coords[k*rank+p.axis:]
			if p.kind == kindIndices {
				list := b.arrays[p.arr].list
				for j := range n {
					c[j*rank] = list[v]
					v += step
				}
				continue
			}
			for j := range n {
				c[j*rank] = v
				v += step
			}
		}
		k += n
		pos[last] += n
		for a := last; a > 0 && pos[a] >= outShape[a]; a-- {
			pos[a] = 0
			pos[a-1]++
		}
	}
}

// NumpyPointwise reports whether items, as NumPy reads them, select
// pointwise (see Broadcast), after checking them as NumPy does.
func NumpyPointwise(items []Item, shape []int) (bool, error) {
	b, err := analyze(items, shape)
	return b != nil && b.pointwise, err
}
