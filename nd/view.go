// Package nd holds gozarr's n-dimensional plumbing: strided views over byte
// slices, selections with NumPy semantics, the mapping of a selection onto a
// regular chunk grid, and copies between views that move whole contiguous
// runs at a time.
package nd

import (
	"encoding/binary"
	"fmt"
)

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
	strides := CStrides(shape, itemSize)
	s := itemSize
	if len(shape) > 0 {
		s = strides[0] * shape[0]
	}
	if s > len(data) && NumElements(shape) > 0 {
		panic(fmt.Sprintf("nd.Contiguous: %d bytes for shape %v of %d-byte items", len(data), shape, itemSize))
	}
	return View{Data: data, Shape: append([]int(nil), shape...), Strides: strides, ItemSize: itemSize}
}

// CStrides returns the C-order (row-major) strides, in bytes, of an array of
// the given shape with items of itemSize bytes.
func CStrides(shape []int, itemSize int) []int {
	strides := make([]int, len(shape))
	s := itemSize
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	return strides
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

// maxStackDims is the rank up to which Copy and Fill keep their scratch
// on the stack.
const maxStackDims = 8

// simplify rewrites the loop nest of one or two views of the same shape
// into an equivalent shorter one: dimensions of length 1 are dropped and a
// dimension is merged into the next inner one when, in both views, stepping
// it equals stepping the inner one over its whole length. The result's
// innermost dimension is the longest run of equally spaced elements. Results
// go into the given buffers (each at least len(shape) long).
func simplify(shape, sa, sb []int, outShape, outA, outB []int) (n int) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] == 1 {
			continue
		}
		if n > 0 {
			i := n - 1 // the current outermost merged dimension
			if sa[d] == outA[i]*outShape[i] && sb[d] == outB[i]*outShape[i] {
				outShape[i] *= shape[d]
				continue
			}
		}
		outShape[n], outA[n], outB[n] = shape[d], sa[d], sb[d]
		n++
	}
	// Built innermost first; reverse into C order.
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		outShape[i], outShape[j] = outShape[j], outShape[i]
		outA[i], outA[j] = outA[j], outA[i]
		outB[i], outB[j] = outB[j], outB[i]
	}
	return n
}

// Copy copies the elements of src into dst, which must have the same shape
// and item size (else it panics: a programming error). Dimensions that can
// be merged are merged first; runs that are contiguous in both views move
// with one copy each, and strided single elements of 1, 2, 4 or 8 bytes
// move with typed loads and stores. Overlapping views give unspecified
// results. Copy does not allocate for views of up to 8 dimensions.
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
	var bufs [3 * maxStackDims]int
	var shape, ds, ss []int
	if k := len(dst.Shape); k <= maxStackDims {
		shape, ds, ss = bufs[:k], bufs[maxStackDims:maxStackDims+k], bufs[2*maxStackDims:2*maxStackDims+k]
	} else {
		shape, ds, ss = make([]int, k), make([]int, k), make([]int, k)
	}
	n := simplify(dst.Shape, dst.Strides, src.Strides, shape, ds, ss)
	item := dst.ItemSize
	if n == 0 {
		copy(dst.Data[dst.Offset:dst.Offset+item], src.Data[src.Offset:src.Offset+item])
		return
	}
	in := n - 1
	count, dstep, sstep := shape[in], ds[in], ss[in]
	contiguous := dstep == item && sstep == item
	run := count * item
	var idx [maxStackDims]int
	outer := shape[:in]
	var pos []int
	if in <= maxStackDims {
		pos = idx[:in]
	} else {
		pos = make([]int, in)
	}
	do, so := dst.Offset, src.Offset
	d, s := dst.Data, src.Data
	if contiguous && in >= 1 && run <= shortRun {
		// Short contiguous runs: the next dimension's runs in one tight
		// loop (copyRuns), the odometer only over the dimensions outside.
		rows, drow, srow := shape[in-1], ds[in-1], ss[in-1]
		outer, pos = shape[:in-1], pos[:in-1]
		for {
			copyRuns(d, s, do, so, rows, drow, srow, run)
			k := len(outer) - 1
			for ; k >= 0; k-- {
				pos[k]++
				do += ds[k]
				so += ss[k]
				if pos[k] < outer[k] {
					break
				}
				do -= ds[k] * outer[k]
				so -= ss[k] * outer[k]
				pos[k] = 0
			}
			if k < 0 {
				return
			}
		}
	}
	for {
		switch {
		case contiguous:
			copy(d[do:do+run], s[so:so+run])
		case item == 4:
			copy4(d, s, do, so, count, dstep, sstep)
		case item == 8:
			copy8(d, s, do, so, count, dstep, sstep)
		case item == 2:
			copy2(d, s, do, so, count, dstep, sstep)
		case item == 1:
			copy1(d, s, do, so, count, dstep, sstep)
		default:
			copyN(d, s, do, so, count, dstep, sstep, item)
		}
		// Advance the odometer over the outer dimensions.
		k := len(outer) - 1
		for ; k >= 0; k-- {
			pos[k]++
			do += ds[k]
			so += ss[k]
			if pos[k] < outer[k] {
				break
			}
			do -= ds[k] * outer[k]
			so -= ss[k] * outer[k]
			pos[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// shortRun is the longest contiguous run Copy moves with copyRuns, the
// runs of the next dimension in one loop: beyond it the odometer's cost
// per run is nothing against the bytes.
const shortRun = 1024

// copyRuns copies rows runs of run bytes (at most shortRun), the k-th from
// s[so+k*sstep:] to d[do+k*dstep:]. Runs of 16, 32 and 64 bytes move as
// arrays (inline loads and stores, no memmove call: 20-34% less CPU than
// a copy each in BenchmarkCopyShortRuns); others with copy (as arrays,
// 128 bytes and more were slower than memmove).
func copyRuns(d, s []byte, do, so, rows, dstep, sstep, run int) {
	switch run {
	case 16:
		for range rows {
			*(*[16]byte)(d[do:]) = *(*[16]byte)(s[so:])
			do += dstep
			so += sstep
		}
	case 32:
		for range rows {
			*(*[32]byte)(d[do:]) = *(*[32]byte)(s[so:])
			do += dstep
			so += sstep
		}
	case 64:
		for range rows {
			*(*[64]byte)(d[do:]) = *(*[64]byte)(s[so:])
			do += dstep
			so += sstep
		}
	default:
		for range rows {
			copy(d[do:do+run], s[so:so+run])
			do += dstep
			so += sstep
		}
	}
}

func copy1(d, s []byte, do, so, n, dstep, sstep int) {
	for range n {
		d[do] = s[so]
		do += dstep
		so += sstep
	}
}

func copy2(d, s []byte, do, so, n, dstep, sstep int) {
	for range n {
		binary.LittleEndian.PutUint16(d[do:do+2], binary.LittleEndian.Uint16(s[so:so+2]))
		do += dstep
		so += sstep
	}
}

func copy4(d, s []byte, do, so, n, dstep, sstep int) {
	for range n {
		binary.LittleEndian.PutUint32(d[do:do+4], binary.LittleEndian.Uint32(s[so:so+4]))
		do += dstep
		so += sstep
	}
}

func copy8(d, s []byte, do, so, n, dstep, sstep int) {
	for range n {
		binary.LittleEndian.PutUint64(d[do:do+8], binary.LittleEndian.Uint64(s[so:so+8]))
		do += dstep
		so += sstep
	}
}

func copyN(d, s []byte, do, so, n, dstep, sstep, item int) {
	for range n {
		copy(d[do:do+item], s[so:so+item])
		do += dstep
		so += sstep
	}
}

// Fill sets every element of dst to elem (ItemSize bytes). Like Copy it
// merges dimensions, fills contiguous runs by doubling copies (later runs
// copy the first) and strided elements of 1, 2, 4 or 8 bytes with typed
// stores. It does not allocate for views of up to 8 dimensions.
func Fill(dst View, elem []byte) {
	for d := range dst.Shape {
		if dst.Shape[d] == 0 {
			return
		}
	}
	item := dst.ItemSize
	elem = elem[:item]
	var bufs [3 * maxStackDims]int
	var shape, ds, tmp []int
	if k := len(dst.Shape); k <= maxStackDims {
		shape, ds, tmp = bufs[:k], bufs[maxStackDims:maxStackDims+k], bufs[2*maxStackDims:2*maxStackDims+k]
	} else {
		shape, ds, tmp = make([]int, k), make([]int, k), make([]int, k)
	}
	n := simplify(dst.Shape, dst.Strides, dst.Strides, shape, ds, tmp)
	if n == 0 {
		copy(dst.Data[dst.Offset:dst.Offset+item], elem)
		return
	}
	in := n - 1
	count, step := shape[in], ds[in]
	contiguous := step == item
	run := count * item
	first := -1 // offset of the first filled run, copied into the others
	var idx [maxStackDims]int
	outer := shape[:in]
	var pos []int
	if in <= maxStackDims {
		pos = idx[:in]
	} else {
		pos = make([]int, in)
	}
	do, d := dst.Offset, dst.Data
	for {
		switch {
		case contiguous && first >= 0:
			copy(d[do:do+run], d[first:first+run])
		case contiguous:
			fillRun(d[do:do+run], elem)
			first = do
		case item == 4:
			v := binary.LittleEndian.Uint32(elem)
			o := do
			for range count {
				binary.LittleEndian.PutUint32(d[o:o+4], v)
				o += step
			}
		case item == 8:
			v := binary.LittleEndian.Uint64(elem)
			o := do
			for range count {
				binary.LittleEndian.PutUint64(d[o:o+8], v)
				o += step
			}
		case item == 2:
			v := binary.LittleEndian.Uint16(elem)
			o := do
			for range count {
				binary.LittleEndian.PutUint16(d[o:o+2], v)
				o += step
			}
		case item == 1:
			v := elem[0]
			o := do
			for range count {
				d[o] = v
				o += step
			}
		default:
			o := do
			for range count {
				copy(d[o:o+item], elem)
				o += step
			}
		}
		k := len(outer) - 1
		for ; k >= 0; k-- {
			pos[k]++
			do += ds[k]
			if pos[k] < outer[k] {
				break
			}
			do -= ds[k] * outer[k]
			pos[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// IsFilled reports whether b is elem repeated, byte for byte (an empty b
// is): a chunk equal to its fill value everywhere, which writers do not
// store. It compares in doubling steps, at memory speed.
func IsFilled(b, elem []byte) bool {
	n := len(elem)
	if len(b) < n {
		return len(b) == 0
	}
	if string(b[:n]) != string(elem) {
		return false
	}
	// b[:k] is all elem; compare the rest against it in doubling steps.
	for k := n; k < len(b); k *= 2 {
		m := min(k, len(b)-k)
		if string(b[k:k+m]) != string(b[:m]) {
			return false
		}
	}
	return true
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

// RunLen returns the length in bytes of v's innermost contiguous runs:
// the item size times the lengths of the trailing dimensions that v's
// strides lay out back to back (dimensions of length 1 do not count). It
// looks at Shape, Strides and ItemSize only, so a caller may ask it of a
// view with no Data. For a non-empty view, AppendRuns yields runs at least
// this long (longer where runs happen to meet), and a contiguous view
// (IsContiguous) gives its whole size. An empty view gives 0.
func (v View) RunLen() int {
	for _, n := range v.Shape {
		if n == 0 {
			return 0
		}
	}
	run := v.ItemSize
	for d := len(v.Shape) - 1; d >= 0; d-- {
		if v.Shape[d] == 1 {
			continue
		}
		if v.Strides[d] != run {
			break
		}
		run *= v.Shape[d]
	}
	return run
}

// AppendRuns appends to dst the runs of bytes that hold v's elements, in
// the C order of the elements, and returns the extended slice: reading a
// C-order array's bytes into the runs in turn (a vectored read, say) places
// each element where Copy from that array would. Every run is as long as
// it can be: a view contiguous over several trailing dimensions (or all of
// them) gives runs spanning all of those, and a run that starts where the
// one before it ended is joined to it; elements that are not next to their
// successor (a step, a negative stride) are runs of their own. Runs share
// v.Data and are capped at their length; runs already in dst are left as
// they are. An empty view appends nothing. AppendRuns allocates only to
// grow dst (for views of up to 8 dimensions).
func (v View) AppendRuns(dst [][]byte) [][]byte {
	for _, n := range v.Shape {
		if n == 0 {
			return dst
		}
	}
	item := v.ItemSize
	d := v.Data
	o := v.Offset
	var bufs [3 * maxStackDims]int
	shape, strides, tmp := loopBufs(&bufs, len(v.Shape))
	n := simplify(v.Shape, v.Strides, v.Strides, shape, strides, tmp)
	if n == 0 {
		return append(dst, d[o:o+item:o+item])
	}
	count, step := shape[n-1], strides[n-1]
	if step == item { // the innermost dimension is one run
		count, step, item = 1, 0, count*item
	}
	first := len(dst) // runs before it are the caller's
	start, end := -1, -1
	var idx [maxStackDims]int
	outer := shape[:n-1]
	var pos []int
	if len(outer) <= maxStackDims {
		pos = idx[:len(outer)]
	} else {
		pos = make([]int, len(outer))
	}
	for {
		p := o
		for range count {
			if p == end && len(dst) > first {
				end += item
				dst[len(dst)-1] = d[start:end:end]
			} else {
				start, end = p, p+item
				dst = append(dst, d[start:end:end])
			}
			p += step
		}
		k := len(outer) - 1
		for ; k >= 0; k-- {
			pos[k]++
			o += strides[k]
			if pos[k] < outer[k] {
				break
			}
			o -= strides[k] * outer[k]
			pos[k] = 0
		}
		if k < 0 {
			return dst
		}
	}
}

// loopBufs returns three k-long scratch slices, in bufs when k is at most
// maxStackDims.
func loopBufs(bufs *[3 * maxStackDims]int, k int) (a, b, c []int) {
	if k <= maxStackDims {
		return bufs[:k], bufs[maxStackDims : maxStackDims+k], bufs[2*maxStackDims : 2*maxStackDims+k]
	}
	return make([]int, k), make([]int, k), make([]int, k)
}
