package nd

// BoxInto resolves items against shape as Normalize does, when they select
// a box: each item an integer index or a slice of step 1 (given or
// implied), with no Ellipsis, index array or mask, and at most len(shape)
// items (the trailing dimensions whole). It appends the selection's
// dimensions to dst[:0] and returns them and true, without allocating
// when dst has room for len(shape) dimensions. For any other items, and
// for items Normalize would reject (an index out of bounds, a negative
// length), it returns false: call Normalize for the selection or the
// error. It is the small-read fast path's normaliser, for a read that
// finds everything in a chunk cache and should allocate nothing.
func BoxInto(dst Selection, items []Item, shape []int) (Selection, bool) {
	if len(items) > len(shape) {
		return nil, false
	}
	sel := dst[:0]
	for d, n := range shape {
		if n < 0 {
			return nil, false
		}
		if d >= len(items) {
			sel = append(sel, fullDim(n))
			continue
		}
		it := items[d]
		switch {
		case it.kind == kindIndex:
		case it.kind == kindSlice && (!it.hasStep || it.step == 1):
		default:
			return nil, false
		}
		dim, err := it.normalize(n)
		if err != nil {
			return nil, false
		}
		sel = append(sel, dim)
	}
	return sel, true
}
