package zarrbeam

import (
	"fmt"
	"iter"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// items returns the box [start, start+shape) as selection items.
func items(start, shape []int) []nd.Item {
	it := make([]nd.Item, len(start))
	for d := range it {
		it[d] = nd.Range(start[d], start[d]+shape[d])
	}
	return it
}

// regionOf parses a NumPy-syntax box of a ("" for the whole array) into
// its start and shape: every dimension a range with step 1.
func regionOf(a *zarr.Array, selection string) (start, shape []int, err error) {
	its, err := nd.ParseSelection(selection)
	if err != nil {
		return nil, nil, err
	}
	sel, err := a.Selection(its...)
	if err != nil {
		return nil, nil, err
	}
	start, shape = make([]int, len(sel)), make([]int, len(sel))
	for d, s := range sel {
		if s.Drop || s.Index != nil || (s.Count > 1 && s.Step != 1) {
			return nil, nil, fmt.Errorf("%w: selection %q: dimension %d is not a range with step 1", nd.ErrInvalidSelection, selection, d)
		}
		start[d], shape[d] = s.Start, s.Count
	}
	return start, shape, nil
}

// tiles yields the boxes of the grid of tile-shaped cells (aligned to the
// array's origin) that meet the box [start, start+shape), clipped to it, in
// C order.
func tiles(start, shape, tile []int) iter.Seq2[[]int, []int] {
	return func(yield func([]int, []int) bool) {
		n := len(start)
		for d := range n {
			if shape[d] == 0 {
				return
			}
		}
		lo, hi := make([]int, n), make([]int, n)
		for d := range n {
			lo[d] = start[d] / tile[d]
			hi[d] = (start[d] + shape[d] - 1) / tile[d]
		}
		idx := append([]int(nil), lo...)
		for {
			s, c := make([]int, n), make([]int, n)
			for d := range n {
				b := max(idx[d]*tile[d], start[d])
				e := min((idx[d]+1)*tile[d], start[d]+shape[d])
				s[d], c[d] = b, e-b
			}
			if !yield(s, c) {
				return
			}
			d := n - 1
			for ; d >= 0; d-- {
				if idx[d] < hi[d] {
					idx[d]++
					break
				}
				idx[d] = lo[d]
			}
			if d < 0 {
				return
			}
		}
	}
}

// copyBox copies the part of src that lies in dst from src's data into
// dst's (both C order of their shapes, item bytes per element) and returns
// the number of elements copied.
func copyBox(dst, src Region, item int) int { return copyClipped(dst, src, src, item) }

// copyClipped is copyBox restricted to the box of clip (its data unused).
func copyClipped(dst, src, clip Region, item int) int {
	n := len(dst.Start)
	off, soff, cnt, one := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	count := 1
	for d := range n {
		b := max(dst.Start[d], src.Start[d], clip.Start[d])
		e := min(dst.Start[d]+dst.Shape[d], src.Start[d]+src.Shape[d], clip.Start[d]+clip.Shape[d])
		if e <= b {
			return 0
		}
		off[d], soff[d], cnt[d], one[d] = b-dst.Start[d], b-src.Start[d], e-b, 1
		count *= e - b
	}
	nd.Copy(nd.Contiguous(dst.Data, dst.Shape, item).Slice(off, cnt, one),
		nd.Contiguous(src.Data, src.Shape, item).Slice(soff, cnt, one))
	return count
}

// meets reports whether b's box and the box [start, start+shape) share an
// element.
func meets(b Region, start, shape []int) bool {
	for d := range start {
		if max(b.Start[d], start[d]) >= min(b.Start[d]+b.Shape[d], start[d]+shape[d]) {
			return false
		}
	}
	return true
}

// sub returns the box [start, start+shape) of b, sharing b's data when it
// is all of b.
func sub(b Region, start, shape []int, item int) Region {
	same := true
	for d := range start {
		same = same && start[d] == b.Start[d] && shape[d] == b.Shape[d]
	}
	if same {
		return b
	}
	out := Region{Start: start, Shape: shape, Data: make([]byte, nd.NumElements(shape)*item)}
	copyBox(out, b, item)
	return out
}

// bytesOf returns the size of a box of shape, saturating at 1<<62.
func bytesOf(shape []int, item int) int64 {
	n := int64(item)
	for _, v := range shape {
		if v > 0 && n > (1<<62)/int64(v) {
			return 1 << 62
		}
		n *= int64(v)
	}
	return n
}

// consolidate grows base (a unit shape) by whole multiples, from the last
// dimension to the first, while the box stays within maxBytes and each
// dimension within limit[d] rounded up to a multiple of base[d]: the
// rechunker's consolidate_chunks. It fails when base alone exceeds
// maxBytes.
func consolidate(base, limit []int, item int, maxBytes int64) ([]int, error) {
	out := append([]int(nil), base...)
	if b := bytesOf(out, item); b > maxBytes {
		return nil, fmt.Errorf("%w: a unit of shape %v (%d bytes) exceeds the memory bound of %d bytes", ErrInvalid, base, b, maxBytes)
	}
	for d := len(out) - 1; d >= 0; d-- {
		if base[d] <= 0 {
			continue
		}
		most := max(1, (limit[d]+base[d]-1)/base[d])
		rest := bytesOf(out, item) / int64(out[d])
		fit := max(1, maxBytes/max(1, rest)/int64(base[d]))
		out[d] = base[d] * int(min(int64(most), fit))
	}
	return out, nil
}

// units returns the array's write unit shape (the chunk, or the shard) and
// its decode unit shape (the chunk, or the innermost chunk of its shards).
func units(a *zarr.Array) (write, read []int) { return a.Units() }

// RechunkPlan is the rechunker's plan for copying an array of shape (item
// bytes per element) stored in source units (whole chunks or inner chunks
// that a reader decodes) into target write units (chunks or shards) with
// at most maxMem bytes per region: Write, the target units consolidated up
// to maxMem, one writer each; Read, the source units consolidated up to
// maxMem and along each dimension no further than Write where the source
// unit is the smaller (so read regions nest in write regions).
type RechunkPlan struct {
	Read, Write []int
}

// PlanRechunk computes a RechunkPlan (see there); it fails (ErrInvalid)
// when one target write unit exceeds maxMem.
func PlanRechunk(shape, source, target []int, item int, maxMem int64) (RechunkPlan, error) {
	if len(source) != len(shape) || len(target) != len(shape) {
		return RechunkPlan{}, fmt.Errorf("%w: rechunk of shape %v from %v to %v", ErrInvalid, shape, source, target)
	}
	write, err := consolidate(target, shape, item, maxMem)
	if err != nil {
		return RechunkPlan{}, fmt.Errorf("rechunk: target %w", err)
	}
	limit := make([]int, len(shape))
	for d := range limit {
		limit[d] = write[d]
		if source[d] > target[d] {
			limit[d] = source[d]
		}
	}
	read, err := consolidate(source, limit, item, maxMem)
	if err != nil {
		return RechunkPlan{}, fmt.Errorf("rechunk: source %w", err)
	}
	return RechunkPlan{Read: read, Write: write}, nil
}

// planRechunk plans the copy of src into dst within maxMem: source units
// are src's shards where one fits, else its inner chunks.
func planRechunk(src, dst *zarr.Array, maxMem int64) (RechunkPlan, error) {
	if !slices.Equal(src.Shape(), dst.Shape()) || src.Metadata().DataType != dst.Metadata().DataType {
		return RechunkPlan{}, fmt.Errorf("%w: rechunk from shape %v %v to shape %v %v", ErrInvalid,
			src.Shape(), src.Metadata().DataType, dst.Shape(), dst.Metadata().DataType)
	}
	item := src.Metadata().DataType.Size()
	sw, sr := units(src)
	base := sw
	if bytesOf(sw, item) > maxMem {
		base = sr
	}
	dw, _ := units(dst)
	return PlanRechunk(src.Shape(), base, dw, item, maxMem)
}
