package nd

import (
	"fmt"
	"math"
	"strconv"
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

// advanced is one dimension of a NumPy subscript expanded against a
// shape: an index array (a mask becomes the indices where it is true), an
// integer, or a slice resolved to a Dim.
type advanced struct {
	kind  itemKind // kindIndices, kindIndex or 0 (a slice: dim)
	list  []int    // kindIndices: in bounds, non-negative
	index int      // kindIndex: in bounds
	dim   Dim
}

// Broadcast evaluates items as NumPy evaluates a subscript with advanced
// indexes, when ParseSelection made index arrays or masks of them: the
// arrays (masks as the indices where they are true) and the integers
// among them broadcast to one length n (lengths 1 stretch; others must
// agree) and select n points; the n-long dimension takes the arrays'
// place when they (and the integers) are adjacent, else it comes first;
// slices keep their dimensions. pointwise is false when the selection
// means the same orthogonally (at most one index array, in its own place),
// and then Normalize reads it; otherwise pts lists every output element's
// coordinates in C order of shape. Errors wrap ErrOutOfBounds or
// ErrInvalidSelection and say what NumPy's IndexError says.
func Broadcast(items []Item, shape []int) (pts Points, outShape []int, pointwise bool, err error) {
	b, err := analyze(items, shape)
	if err != nil || b == nil || !b.pointwise {
		return Points{}, nil, false, err
	}
	return b.points(len(shape)), b.outShape, true, nil
}

// broadcast is a NumPy subscript with advanced indexes, analysed.
type broadcast struct {
	dims      []advanced
	outShape  []int
	at        int // the broadcast dimension's place in outShape
	pointwise bool
}

// analyze checks items as NumPy would when ParseSelection made index
// arrays or masks of some (nil, nil otherwise) and works out the output.
func analyze(items []Item, shape []int) (*broadcast, error) {
	var outShape []int
	pointwise := false
	numpyArrays := 0
	for _, it := range items {
		if it.numpy && (it.kind == kindIndices || it.kind == kindMask) {
			numpyArrays++
		}
	}
	if numpyArrays == 0 {
		return nil, nil
	}
	ellipsis, explicit := -1, 0
	for i, it := range items {
		if it.kind == kindEllipsis {
			if ellipsis >= 0 {
				return nil, fmt.Errorf("%w: an index can only have a single ellipsis ('...')", ErrInvalidSelection)
			}
			ellipsis = i
			continue
		}
		explicit++
	}
	rank := len(shape)
	if explicit > rank {
		return nil, fmt.Errorf("%w: too many indices for array: array is %d-dimensional, but %d were indexed", ErrInvalidSelection, rank, explicit)
	}
	dims := make([]advanced, 0, rank)
	arrays, firstArr, slicesBeforeArr := 0, -1, 0
	for _, it := range items {
		if it.kind == kindEllipsis {
			for range rank - explicit {
				dims = append(dims, advanced{dim: fullDim(shape[len(dims)])})
			}
			continue
		}
		d := len(dims)
		n := shape[d]
		switch it.kind {
		case kindIndices, kindMask:
			list := it.list
			if it.kind == kindMask {
				if len(it.mask) != n {
					return nil, fmt.Errorf("%w: boolean index did not match indexed array along axis %d; size of axis is %d but size of corresponding boolean axis is %d", ErrInvalidSelection, d, n, len(it.mask))
				}
				list = []int{}
				for i, v := range it.mask {
					if v {
						list = append(list, i)
					}
				}
			}
			res := make([]int, len(list))
			for k, i := range list {
				if i < -n || i >= n {
					return nil, fmt.Errorf("%w: index %d is out of bounds for axis %d with size %d", ErrOutOfBounds, i, d, n)
				}
				if i < 0 {
					i += n
				}
				res[k] = i
			}
			if firstArr < 0 {
				firstArr = d
				for _, p := range dims {
					if p.kind == 0 {
						slicesBeforeArr++
					}
				}
			}
			arrays++
			dims = append(dims, advanced{kind: kindIndices, list: res})
		case kindIndex:
			i := it.index
			if i < -n || i >= n {
				return nil, fmt.Errorf("%w: index %d is out of bounds for axis %d with size %d", ErrOutOfBounds, i, d, n)
			}
			if i < 0 {
				i += n
			}
			dims = append(dims, advanced{kind: kindIndex, index: i})
		default:
			dim, err := it.normalize(n)
			if err != nil {
				return nil, fmt.Errorf("item %s on axis %d of size %d: %w", it, d, n, err)
			}
			dims = append(dims, advanced{dim: dim})
		}
	}
	for len(dims) < rank {
		dims = append(dims, advanced{dim: fullDim(shape[len(dims)])})
	}
	// Broadcast the arrays' lengths, and find where the advanced
	// dimensions (arrays and integers) sit.
	n, first, last, count := 1, -1, -1, 0
	var lens []string
	for d, p := range dims {
		if p.kind == 0 {
			continue
		}
		if first < 0 {
			first = d
		}
		last = d
		count++
		if p.kind != kindIndices {
			continue
		}
		l := len(p.list)
		lens = append(lens, "("+strconv.Itoa(l)+",)")
		switch {
		case l == 1:
		case n == 1:
			n = l
		case l != n:
			n = -1
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: shape mismatch: indexing arrays could not be broadcast together with shapes %s", ErrInvalidSelection, strings.Join(lens, " "))
	}
	for _, p := range dims {
		if p.kind == kindIndices && len(p.list) == 0 {
			n = 0
		}
	}
	adjacent := last-first+1 == count
	if arrays == 1 && (adjacent || slicesBeforeArr == 0) {
		return &broadcast{}, nil // orthogonal reads it the same
	}
	// The output: slice dimensions in order, the broadcast one at the
	// first advanced dimension's place (adjacent) or first.
	at := 0
	if adjacent {
		for d := 0; d < first; d++ {
			if dims[d].kind == 0 {
				at++
			}
		}
	}
	var sliceDims []int
	for d, p := range dims {
		if p.kind == 0 {
			sliceDims = append(sliceDims, d)
		}
	}
	outShape = make([]int, 0, len(sliceDims)+1)
	for _, d := range sliceDims[:at] {
		outShape = append(outShape, dims[d].dim.Len())
	}
	outShape = append(outShape, n)
	for _, d := range sliceDims[at:] {
		outShape = append(outShape, dims[d].dim.Len())
	}
	total := 1
	for _, l := range outShape {
		if l != 0 && total > math.MaxInt/max(rank, 1)/l {
			return nil, fmt.Errorf("%w: a pointwise selection of shape %v is too large", ErrInvalidSelection, outShape)
		}
		total *= l
	}
	pointwise = true
	return &broadcast{dims: dims, outShape: outShape, at: at, pointwise: pointwise}, nil
}

// points lists the coordinates of every output element, in C order.
func (b *broadcast) points(rank int) Points {
	dims, outShape, at := b.dims, b.outShape, b.at
	total := 1
	for _, l := range outShape {
		total *= l
	}
	pts := Points{Rank: rank, Coords: make([]int, total*rank)}
	pos := make([]int, len(outShape))
	for k := range total {
		c := pts.Coords[k*rank : (k+1)*rank]
		j := pos[at]
		oi := 0
		for d, p := range dims {
			switch p.kind {
			case kindIndices:
				if len(p.list) == 1 {
					c[d] = p.list[0]
				} else {
					c[d] = p.list[j]
				}
			case kindIndex:
				c[d] = p.index
			default:
				if oi == at {
					oi++
				}
				c[d] = p.dim.Start + pos[oi]*p.dim.Step
				oi++
			}
		}
		for a := len(pos) - 1; a >= 0; a-- {
			pos[a]++
			if pos[a] < outShape[a] {
				break
			}
			pos[a] = 0
		}
	}
	return pts
}

// NumpyPointwise reports whether items, as NumPy reads them, select
// pointwise (see Broadcast), after checking them as NumPy does.
func NumpyPointwise(items []Item, shape []int) (bool, error) {
	b, err := analyze(items, shape)
	return b != nil && b.pointwise, err
}
