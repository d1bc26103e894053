// Package nd holds gozarr's n-dimensional plumbing: strided views over byte
// slices, selections with NumPy semantics, the mapping of a selection onto a
// regular chunk grid, and copies between views that move whole contiguous
// runs at a time.
package nd

import "fmt"

// View is a strided n-dimensional view of fixed-size elements stored in a
// byte slice. Element (i0, i1, ...) starts at byte
// Offset + i0*Strides[0] + i1*Strides[1] + ... of Data. Strides are in bytes
// and may be negative (a reversed selection). A View with no dimensions is a
// single element. Views are values: sub-views share Data.
type View struct {
	Data     []byte
	Offset   int
	Shape    []int
	Strides  []int
	ItemSize int
}

// Contiguous returns the C-order view of data as an array of the given shape.
// It panics if data is shorter than the shape needs (a programming error).
func Contiguous(data []byte, shape []int, itemSize int) View {
	strides := make([]int, len(shape))
	s := itemSize
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	if s > len(data) && NumElements(shape) > 0 {
		panic(fmt.Sprintf("nd.Contiguous: %d bytes for shape %v of %d-byte items", len(data), shape, itemSize))
	}
	return View{Data: data, Shape: append([]int(nil), shape...), Strides: strides, ItemSize: itemSize}
}

// NumElements returns the product of shape (1 for a 0-d shape).
func NumElements(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Slice returns the sub-view that takes, in each dimension d, count[d]
// elements starting at start[d] and stepping by step[d] (which may be
// negative but not zero). The caller guarantees the indices are in range.
func (v View) Slice(start, count, step []int) View {
	out := View{Data: v.Data, Offset: v.Offset, ItemSize: v.ItemSize,
		Shape: make([]int, len(v.Shape)), Strides: make([]int, len(v.Shape))}
	for d := range v.Shape {
		out.Offset += start[d] * v.Strides[d]
		out.Shape[d] = count[d]
		out.Strides[d] = v.Strides[d] * step[d]
	}
	return out
}

// IsContiguous reports whether the view's elements form one C-order run of
// bytes, and if so that run.
func (v View) IsContiguous() ([]byte, bool) {
	s := v.ItemSize
	n := 1
	for d := len(v.Shape) - 1; d >= 0; d-- {
		n *= v.Shape[d]
		if v.Shape[d] != 1 && v.Strides[d] != s {
			return nil, false
		}
		s *= v.Shape[d]
	}
	return v.Data[v.Offset : v.Offset+n*v.ItemSize], true
}

// runLength returns how many trailing dimensions of a and b together form
// contiguous runs in both, and the run size in bytes.
func runLength(a, b View) (dims, bytes int) {
	bytes = a.ItemSize
	dims = 0
	for d := len(a.Shape) - 1; d >= 0; d-- {
		if a.Shape[d] != 1 && (a.Strides[d] != bytes || b.Strides[d] != bytes) {
			break
		}
		bytes *= a.Shape[d]
		dims++
	}
	return dims, bytes
}

// Copy copies the elements of src into dst, which must have the same shape
// and item size. It moves the longest runs that are contiguous in both views
// with one copy each.
func Copy(dst, src View) {
	if len(dst.Shape) != len(src.Shape) || dst.ItemSize != src.ItemSize {
		panic(fmt.Sprintf("nd.Copy: shapes %v and %v", dst.Shape, src.Shape))
	}
	for d := range dst.Shape {
		if dst.Shape[d] != src.Shape[d] {
			panic(fmt.Sprintf("nd.Copy: shapes %v and %v", dst.Shape, src.Shape))
		}
		if dst.Shape[d] == 0 {
			return
		}
	}
	dims, run := runLength(dst, src)
	outer := len(dst.Shape) - dims
	walk(dst.Shape[:outer], dst.Strides[:outer], src.Strides[:outer], dst.Offset, src.Offset,
		func(do, so int) { copy(dst.Data[do:do+run], src.Data[so:so+run]) })
}

// Fill sets every element of dst to elem (ItemSize bytes).
func Fill(dst View, elem []byte) {
	for d := range dst.Shape {
		if dst.Shape[d] == 0 {
			return
		}
	}
	dims, run := runLength(dst, dst)
	outer := len(dst.Shape) - dims
	walk(dst.Shape[:outer], dst.Strides[:outer], dst.Strides[:outer], dst.Offset, dst.Offset,
		func(do, _ int) { fillRun(dst.Data[do:do+run], elem) })
}

// fillRun fills b with repetitions of elem by doubling copies.
func fillRun(b, elem []byte) {
	if len(b) == 0 {
		return
	}
	n := copy(b, elem)
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// walk calls fn with the byte offsets of every index of shape, in C order,
// in two views with strides da and sa.
func walk(shape, da, sa []int, doff, soff int, fn func(do, so int)) {
	if len(shape) == 0 {
		fn(doff, soff)
		return
	}
	idx := make([]int, len(shape))
	last := len(shape) - 1
	for {
		fn(doff, soff)
		d := last
		for ; d >= 0; d-- {
			idx[d]++
			doff += da[d]
			soff += sa[d]
			if idx[d] < shape[d] {
				break
			}
			doff -= da[d] * shape[d]
			soff -= sa[d] * shape[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
