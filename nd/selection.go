package nd

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Errors reported by selection parsing and normalisation. Returned errors
// wrap one of these, so errors.Is works, and name the offending item.
var (
	// ErrInvalidSelection reports a selection that is malformed or does not
	// fit the array's rank: bad syntax, a zero step, two ellipses, more
	// items than dimensions, a negative dimension length.
	ErrInvalidSelection = errors.New("invalid selection")
	// ErrOutOfBounds reports an integer index outside its dimension.
	ErrOutOfBounds = errors.New("index out of bounds")
)

type itemKind uint8

const (
	kindSlice itemKind = iota // the zero Item is a full slice
	kindIndex
	kindEllipsis
	kindIndices // an integer index array (orthogonal selection)
	kindMask    // a boolean mask of one dimension (orthogonal selection)
	kindNewAxis // NumPy's np.newaxis (None): a new dimension of length 1
)

// Item is one entry of a selection, as written between the brackets of a
// NumPy subscript: an integer index (which drops its dimension), a slice
// with optional start, stop and step, the Ellipsis, or, for an orthogonal
// selection (zarr-python's oindex, NumPy's np.ix_), an integer index array
// or a boolean mask of the dimension. Build items with Index, Slice, Range,
// SliceFrom, SliceTo, All, Every, IndexArray and Mask, refine a slice with
// WithStep, or parse text with ParseSelection. The zero Item is All().
// Items are immutable values, safe to share between goroutines.
type Item struct {
	kind              itemKind
	hasStart, hasStop bool
	hasStep           bool
	start, stop, step int
	index             int
	list              []int  // kindIndices, owned, C order
	mask              []bool // kindMask, owned, C order
	// shape is the shape of an index array or mask of rank other than 1
	// (nil: 1-D, of len(list) or len(mask)), as NumPy's advanced indexing
	// takes them: such arrays always select pointwise.
	shape []int
	// bad is the text of a parsed slice with a bound that is no integer
	// ("1.5:"): NumPy's TypeError, reported by Normalize.
	bad string
	// numpy marks an index array or mask parsed from text: it combines
	// with the selection's other index arrays as NumPy's advanced
	// indexing does (broadcast, pointwise; see Broadcast), not
	// orthogonally. Orthogonal clears it.
	numpy bool
}

// IndexArray returns an integer index array item: the output takes, along its
// dimension, the elements at idx in the order given. Indices may repeat
// and count from the end when negative; every one must lie inside the
// dimension (else Normalize reports ErrOutOfBounds). The dimension is kept,
// with len(idx) elements (zero is allowed). Several index arrays in one
// selection combine orthogonally, as NumPy's np.ix_: the output is their
// outer product. idx is copied.
func IndexArray(idx ...int) Item {
	return Item{kind: kindIndices, list: append(make([]int, 0, len(idx)), idx...)}
}

// Mask returns a boolean mask item: the output takes, along its dimension,
// the elements where mask is true, in order. The mask must have the
// dimension's length (else Normalize reports ErrInvalidSelection). mask is
// copied.
func Mask(mask []bool) Item {
	return Item{kind: kindMask, mask: append(make([]bool, 0, len(mask)), mask...)}
}

// IndexArrayOfShape returns an integer index array item of any rank, as
// NumPy's advanced indexing takes one: idx holds its NumElements(shape)
// indices in C order (copied). It selects as ParseSelection's index
// arrays do, pointwise with the selection's other arrays (see Broadcast):
// IndexArrayOfShape([]int{2, 1}, []int{0, 2}) with IndexArray(1, 3),
// through Vectorized, is "[[0], [2]], [1, 3]", a 2×2 result. A shape of
// rank 1 gives a 1-D array; rank 0, a negative length or a count that is
// not the shape's are errors wrapping ErrInvalidSelection.
func IndexArrayOfShape(shape []int, idx []int) (Item, error) {
	if err := checkArrayShape(shape, len(idx)); err != nil {
		return Item{}, err
	}
	it := Item{kind: kindIndices, list: append(make([]int, 0, len(idx)), idx...), numpy: true}
	if len(shape) > 1 {
		it.shape = slices.Clone(shape)
	}
	return it, nil
}

// MaskOfShape returns a boolean mask item of any rank: mask holds its
// NumElements(shape) elements in C order (copied). A mask of rank k
// indexes k dimensions, whose lengths must be its shape, and selects the
// positions where it is true, as NumPy's a[mask] (its nonzero() arrays,
// pointwise; see Broadcast). Errors as for IndexArrayOfShape.
func MaskOfShape(shape []int, mask []bool) (Item, error) {
	if err := checkArrayShape(shape, len(mask)); err != nil {
		return Item{}, err
	}
	it := Item{kind: kindMask, mask: append(make([]bool, 0, len(mask)), mask...), numpy: true}
	if len(shape) > 1 {
		it.shape = slices.Clone(shape)
	}
	return it, nil
}

// checkArrayShape checks an index array's or mask's shape against its
// element count.
func checkArrayShape(shape []int, n int) error {
	if len(shape) == 0 || len(shape) > maxArrayRank {
		return fmt.Errorf("%w: an index array of %d dimensions (1 to %d)", ErrInvalidSelection, len(shape), maxArrayRank)
	}
	count := 1
	for _, l := range shape {
		if l < 0 {
			return fmt.Errorf("%w: index array shape %v has a negative length", ErrInvalidSelection, shape)
		}
		if l != 0 && count > math.MaxInt/l {
			return fmt.Errorf("%w: index array shape %v for %d elements", ErrInvalidSelection, shape, n)
		}
		count *= l
	}
	if count != n {
		return fmt.Errorf("%w: index array shape %v for %d elements", ErrInvalidSelection, shape, n)
	}
	return nil
}

// SliceStep reports the step a slice item was given explicitly (ok false
// for an item that is no slice or has no step).
func (it Item) SliceStep() (step int, ok bool) {
	return it.step, it.kind == kindSlice && it.hasStep
}

// IsOrthogonal reports whether the item is an index array or a mask.
func (it Item) IsOrthogonal() bool { return it.kind == kindIndices || it.kind == kindMask }

// NewAxis is NumPy's np.newaxis (None in a subscript): a new dimension of
// length 1 in the output, at its place, taking no dimension of the array.
// A selection with one is read as NumPy reads it (see Broadcast), not as
// a box (Normalize reports ErrPointwise).
var NewAxis = Item{kind: kindNewAxis}

// Ellipsis stands for as many full slices as needed to give the selection
// one entry per dimension (NumPy's "..."). A selection holds at most one.
var Ellipsis = Item{kind: kindEllipsis}

// Index returns an integer index item: i counts from the start of the
// dimension, or from its end when negative (-1 is the last element). The
// dimension is dropped from the output shape.
func Index(i int) Item { return Item{kind: kindIndex, index: i} }

// Slice returns the slice start:stop:step with all three bounds given, with
// Python's meaning: negative bounds count from the end, bounds beyond the
// dimension are clamped, and a negative step walks backwards. A zero step is
// reported by Normalize.
func Slice(start, stop, step int) Item {
	return Item{hasStart: true, hasStop: true, hasStep: true, start: start, stop: stop, step: step}
}

// Range returns the slice start:stop (step 1).
func Range(start, stop int) Item {
	return Item{hasStart: true, hasStop: true, start: start, stop: stop}
}

// SliceFrom returns the slice start: (to the end of the dimension).
func SliceFrom(start int) Item { return Item{hasStart: true, start: start} }

// SliceTo returns the slice :stop (from the beginning of the dimension).
func SliceTo(stop int) Item { return Item{hasStop: true, stop: stop} }

// All returns the full slice ":".
func All() Item { return Item{} }

// Every returns the slice ::step, e.g. Every(-1) reverses a dimension.
func Every(step int) Item { return Item{hasStep: true, step: step} }

// WithStep returns the slice it with its step set to step; on an index or
// the Ellipsis it returns it unchanged. SliceFrom(5).WithStep(-1) is "5::-1".
func (it Item) WithStep(step int) Item {
	if it.kind != kindSlice {
		return it
	}
	it.hasStep, it.step = true, step
	return it
}

// IsIndex reports whether the item is an integer index, and the index.
func (it Item) IsIndex() (int, bool) { return it.index, it.kind == kindIndex }

// IsEllipsis reports whether the item is the Ellipsis.
func (it Item) IsEllipsis() bool { return it.kind == kindEllipsis }

// String returns the item in NumPy syntax ("3", "-1", "2:8:2", "::-1", ":",
// "...", "[3, 1, 4]", "[True, False]"); lists longer than maxListPrint
// elements are shortened ("[0, 1, ..., 9 (1000 indices)]").
func (it Item) String() string {
	switch it.kind {
	case kindIndex:
		return strconv.Itoa(it.index)
	case kindEllipsis:
		return "..."
	case kindNewAxis:
		return "None"
	case kindSlice:
		if it.bad != "" {
			return it.bad
		}
	case kindIndices:
		if it.shape != nil {
			return nestedString(it.shape, func(i int) string { return strconv.Itoa(it.list[i]) })
		}
		return listString(len(it.list), func(i int) string { return strconv.Itoa(it.list[i]) })
	case kindMask:
		elem := func(i int) string {
			if it.mask[i] {
				return "True"
			}
			return "False"
		}
		if it.shape != nil {
			return nestedString(it.shape, elem)
		}
		return listString(len(it.mask), elem)
	}
	var b strings.Builder
	if it.hasStart {
		b.WriteString(strconv.Itoa(it.start))
	}
	b.WriteByte(':')
	if it.hasStop {
		b.WriteString(strconv.Itoa(it.stop))
	}
	if it.hasStep {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(it.step))
	}
	return b.String()
}

// Dim is one normalised dimension of a selection: the selected indices are
// Start + k*Step for k in [0, Count). Drop reports an integer index (Count
// is then 1 and the output has no such dimension). Step is never zero; it
// is 1 or -1 whenever Count ≤ 1, and Start is 0 when Count is 0, so equal
// selections of the same indices compare equal.
//
// A dimension selected by an index array or mask that is not an
// arithmetic progression lists its indices in Index instead: ascending and
// distinct, Count == len(Index), Start == Index[0] (0 when empty), Step 1.
// When the request was in another order or repeated indices, Order gives
// the output along the dimension: its element k is Index[Order[k]]. The
// selection's chunk parts (Chunks) always cover the distinct ascending
// indices once, its compact form (Compact); its Shape and NumElements are
// those of the output, Order included. Index and Order are shared, never
// modified.
type Dim struct {
	Start, Count, Step int
	Drop               bool
	Index              []int
	Order              []int
}

// Len returns the output length of the dimension: len(Order) when the
// dimension reorders, else Count.
func (d Dim) Len() int {
	if d.Order != nil {
		return len(d.Order)
	}
	return d.Count
}

// Reorders reports whether a dimension of s has an Order: the output is a
// rearrangement (with repeats) of the compact selection's.
func (s Selection) Reorders() bool {
	for _, d := range s {
		if d.Order != nil {
			return true
		}
	}
	return false
}

// Compact returns s without Order: the distinct ascending indices the
// selection touches, each once, which is what its chunk parts read.
func (s Selection) Compact() Selection {
	c := make(Selection, len(s))
	for i, d := range s {
		d.Order = nil
		c[i] = d
	}
	return c
}

// Orders returns, per dimension, the positions in the compact selection
// that the output takes (nil for a dimension that does not reorder): the
// index lists that Gather takes to build the output from the compact
// selection's values.
func (s Selection) Orders() [][]int {
	o := make([][]int, len(s))
	for i, d := range s {
		o[i] = d.Order
	}
	return o
}

// LastOrders returns, per dimension that reorders, for each compact
// position the last output position that takes it: the index lists that
// Gather takes to build the compact selection's values from data in the
// output's shape so that, where an index repeats, the last write wins, as
// in NumPy. Every compact position is taken by some output position.
func (s Selection) LastOrders() [][]int {
	o := make([][]int, len(s))
	for i, d := range s {
		if d.Order == nil {
			continue
		}
		last := make([]int, d.Count)
		for k, u := range d.Order {
			last[u] = k
		}
		o[i] = last
	}
	return o
}

// Selection is a normalised selection: one Dim per dimension of the array,
// every selected index in range. Build one with Normalize (or by hand, with
// the same invariants). Selections are plain values; methods do not modify
// them and are safe for concurrent use.
type Selection []Dim

// ErrPointwise reports items that select pointwise (NumPy's advanced
// indexing by several index arrays, see Broadcast) given where a box
// (Selection) is needed. It wraps ErrInvalidSelection.
var ErrPointwise = fmt.Errorf("%w: a pointwise selection", ErrInvalidSelection)

// Normalize resolves items against an array shape with NumPy's basic
// indexing rules: negative indices count from the end; an integer index
// outside its dimension is an error wrapping ErrOutOfBounds; slice bounds
// are clamped like Python's slice.indices; steps may be negative but not
// zero; at most one Ellipsis, which expands to full slices; fewer items than
// dimensions leaves the trailing dimensions whole; more items than
// dimensions is an error. Other errors wrap ErrInvalidSelection.
func Normalize(items []Item, shape []int) (Selection, error) {
	for d, n := range shape {
		if n < 0 {
			return nil, fmt.Errorf("%w: dimension %d has negative length %d", ErrInvalidSelection, d, n)
		}
	}
	if b, err := analyze(items, shape); err != nil {
		return nil, err
	} else if b != nil && b.pointwise {
		return nil, fmt.Errorf("%w: index arrays that NumPy broadcasts select pointwise, which is no box (zarr's reads take them; nd.Broadcast lists the points; nd.Orthogonal gives zarr-python's oindex meaning)", ErrPointwise)
	}
	ellipsis := -1
	for i, it := range items {
		if it.kind == kindEllipsis {
			if ellipsis >= 0 {
				return nil, fmt.Errorf("%w: an index can only have a single ellipsis ('...') (items %d and %d)", ErrInvalidSelection, ellipsis, i)
			}
			ellipsis = i
		}
	}
	explicit := len(items)
	if ellipsis >= 0 {
		explicit--
	}
	if explicit > len(shape) {
		n, dims := fmt.Sprintf("%d indices", explicit), fmt.Sprintf("%d dimensions", len(shape))
		if explicit == 1 {
			n = "1 index"
		}
		if len(shape) == 1 {
			dims = "1 dimension"
		}
		return nil, fmt.Errorf("%w: %s for an array of %s (NumPy's IndexError: too many indices for array: array is %d-dimensional, but %d were indexed)", ErrInvalidSelection, n, dims, len(shape), explicit)
	}
	sel := make(Selection, len(shape))
	d := 0
	for i, it := range items {
		if it.kind == kindEllipsis {
			for range len(shape) - explicit {
				sel[d] = fullDim(shape[d])
				d++
			}
			continue
		}
		if x, ok := it.IsIndex(); ok && (x < -shape[d] || x >= shape[d]) {
			return nil, fmt.Errorf("item %d (%s) on dimension %d of length %d: %w: index %d is out of bounds for axis %d with size %d", i, it, d, shape[d], ErrOutOfBounds, x, d, shape[d])
		}
		dim, err := it.normalize(shape[d])
		if err != nil {
			return nil, fmt.Errorf("item %d (%s) on dimension %d of length %d: %w", i, it, d, shape[d], err)
		}
		sel[d] = dim
		d++
	}
	for ; d < len(shape); d++ {
		sel[d] = fullDim(shape[d])
	}
	return sel, nil
}

// fullDim is the whole of a dimension of length n.
func fullDim(n int) Dim {
	if n == 0 {
		return Dim{Step: 1}
	}
	return Dim{Start: 0, Count: n, Step: 1}
}

// normalize resolves one non-ellipsis item against a dimension of length n.
func (it Item) normalize(n int) (Dim, error) {
	if it.shape != nil {
		// As zarr-python's oindex says it.
		what := "integer"
		if it.kind == kindMask {
			what = "Boolean"
		}
		return Dim{}, fmt.Errorf("%w: %s arrays in an orthogonal selection must be 1-dimensional only (this one has shape %s; one array a dimension is \"[0, 2], [1, 3]\": \"[[0, 2], [1, 3]]\" is one 2-D array, as in NumPy)", ErrInvalidSelection, what, tupleString(it.shape))
	}
	switch it.kind {
	case kindIndices:
		return indexDim(it.list, n)
	case kindMask:
		return maskDim(it.mask, n)
	}
	if it.kind == kindIndex {
		i := it.index
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return Dim{}, fmt.Errorf("%w: index %d", ErrOutOfBounds, it.index)
		}
		return Dim{Start: i, Count: 1, Step: 1, Drop: true}, nil
	}
	if it.bad != "" {
		return Dim{}, fmt.Errorf("%w: a slice bound of %s is not an integer (NumPy's TypeError: slice indices must be integers or None or have an __index__ method)", ErrInvalidSelection, Clip(it.bad))
	}
	step := 1
	if it.hasStep {
		step = it.step
	}
	if step == 0 {
		return Dim{}, fmt.Errorf("%w: slice step cannot be zero", ErrInvalidSelection)
	}
	lower, upper := 0, n
	if step < 0 {
		lower, upper = -1, n-1
	}
	clampBound := func(v int) int {
		if v < 0 {
			v += n // cannot overflow: n ≥ 0 and v < 0
			if v < lower {
				v = lower
			}
		} else if v > upper {
			v = upper
		}
		return v
	}
	var start, stop int
	switch {
	case !it.hasStart && step < 0:
		start = upper
	case !it.hasStart:
		start = lower
	default:
		start = clampBound(it.start)
	}
	switch {
	case !it.hasStop && step < 0:
		stop = lower
	case !it.hasStop:
		stop = upper
	default:
		stop = clampBound(it.stop)
	}
	// start and stop are now in [-1, n], so differences cannot overflow.
	count := 0
	if step > 0 && start < stop {
		count = (stop-start-1)/step + 1
	} else if step < 0 && stop < start {
		if step == math.MinInt {
			count = 1
		} else {
			count = (start-stop-1)/(-step) + 1
		}
	}
	switch {
	case count == 0:
		start = 0
		fallthrough
	case count == 1:
		if step > 0 {
			step = 1
		} else {
			step = -1
		}
	}
	return Dim{Start: start, Count: count, Step: step}, nil
}

// Shape returns the output shape of the selection: the counts of the
// dimensions that are not dropped.
func (s Selection) Shape() []int {
	out := make([]int, 0, len(s))
	for _, d := range s {
		if !d.Drop {
			out = append(out, d.Len())
		}
	}
	return out
}

// FullShape returns the output shape with one entry per array dimension,
// dropped dimensions as 1. Chunk parts' destination coordinates are in this
// shape, which has the same elements in the same order as Shape.
func (s Selection) FullShape() []int {
	out := make([]int, len(s))
	for i, d := range s {
		out[i] = d.Len()
	}
	return out
}

// NumElements returns the number of selected elements.
func (s Selection) NumElements() int {
	n := 1
	for _, d := range s {
		n *= d.Len()
	}
	return n
}

// String returns the selection in NumPy syntax, e.g. "[0:10, 3, 9::-2]";
// ParseSelection and Normalize on the same shape give it back. A
// selection without slices (integers and index lists only) is written as
// a tuple, "(0, 3)", "([], 2)", "([4, 1],)" or "()", since "[0, 3]"
// would read as one index array, as NumPy reads a[[0, 3]].
func (s Selection) String() string {
	open, close := "(", ")"
	for _, d := range s {
		if !d.Drop && d.Index == nil && d.Order == nil {
			open, close = "[", "]"
			break
		}
	}
	if open == "(" && len(s) == 1 && !s[0].Drop {
		close = ",)" // (x) would be x
	}
	var b strings.Builder
	b.WriteString(open)
	for i, d := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	b.WriteString(close)
	return b.String()
}

// String returns the dimension in NumPy syntax: the index for a dropped
// dimension, else start:stop or start:stop:step (stop left out when a
// backward slice reaches index 0).
func (d Dim) String() string {
	if d.Drop {
		return strconv.Itoa(d.Start)
	}
	if d.Index != nil || d.Order != nil {
		return listString(d.Len(), func(k int) string { return strconv.Itoa(d.At(k)) })
	}
	stop := d.Start // the tightest stop: one past the last index
	if d.Count > 0 {
		stop += (d.Count - 1) * d.Step
		if d.Step > 0 {
			stop++
		} else {
			stop--
		}
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(d.Start))
	b.WriteByte(':')
	if stop >= 0 {
		b.WriteString(strconv.Itoa(stop))
	}
	if d.Step != 1 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(d.Step))
	}
	return b.String()
}

// ParseSelection parses a selection as NumPy reads the subscript a[text]:
// items separated by commas, each an integer ("5", "-1"), a slice with
// optional parts ("0:10", ":", "::-1", " 3 : 7 : 2 ", "None:4"), "..." (or
// "Ellipsis"), "None" (or "np.newaxis": NewAxis, a new dimension of
// length 1), "True" or "False" (NumPy's 0-d boolean index: a new
// dimension of length 1 or 0, an advanced index), or a list or tuple,
// which NumPy makes an array of: an integer index array ("[3, 1, 4]",
// "(0, 2)", "[]") or a boolean mask ("[True, False, True]"), nested for
// arrays of rank above 1 ("[[0], [2]]", "[(0, 1), (2, 3)]"). The lists
// must nest evenly and hold integers or booleans only (else NumPy's
// ValueError or IndexError, an error here); booleans among integers
// count as 1 and 0.
//
// Index arrays and masks mean what they mean in NumPy (advanced
// indexing): they broadcast together and select pointwise, "[0, 2, 4],
// [1, 1, 3]" three elements, not nine, and "[[0], [2]], [1, 3]" a 2×2
// result (see Broadcast; zarr's reads follow it); Orthogonal turns the
// items into zarr-python's oindex meaning, each 1-D array on its own
// dimension.
//
// The text is Python: integers are Python's literals ("0x1f", "1_000")
// with unary operators ("~0" is -1, "--1" 1, "-True" -1); a text that is
// one list is one index array or mask, as in NumPy ("[3, 1, 4]" is
// a[[3, 1, 4]], three rows; "[[0], 1]" nests unevenly, an error as in
// NumPy); a tuple alone is the items ("(1, 2)" is a[1, 2]), a tuple among
// items an index array ("(0, 1), 2" is a[[0, 1], 2]); a trailing comma
// is allowed. Beyond NumPy, "" selects everything, and one pair of
// brackets or parentheses around a text that Python would not read
// (slices inside: "[-4:, ...]", "(0:2, 1)") wraps the selection. Slice
// bounds beyond the int range clamp, as they would in Python. Errors wrap
// ErrInvalidSelection (an integer beyond the int range, which NumPy
// refuses, also ErrOutOfBounds).
func ParseSelection(text string) ([]Item, error) {
	t := strings.TrimSpace(text)
	items, err := parseSubscript(t)
	var se *syntaxError
	if errors.As(err, &se) && enclosed(t) {
		// Not Python; the optional brackets around the selection.
		items, err = parseSubscript(t[1 : len(t)-1])
	}
	if err != nil {
		return nil, fmt.Errorf("selection %s: %w", Clip(text), err)
	}
	if items == nil {
		items = []Item{}
	}
	return items, nil
}

// clipAt is how many bytes of a selection's text an error quotes.
const clipAt = 120

// Clip quotes text for an error message as %q does, cut to its first and
// last bytes when it is long (a selection of a million indices is not
// echoed whole), with its length said.
func Clip(text string) string {
	if len(text) <= clipAt {
		return strconv.Quote(text)
	}
	head, tail := text[:clipAt*2/3], text[len(text)-clipAt/3:]
	for !utf8.ValidString(head) && len(head) > 0 {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) && len(tail) > 0 {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s...%s (%d bytes)", strconv.Quote(head)[:len(strconv.Quote(head))-1], strconv.Quote(tail)[1:], len(text))
}
