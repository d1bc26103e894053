package nd

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func FuzzParseSelection(f *testing.F) {
	for _, s := range []string{"0:10,:,5", "[..., ::2]", "-1", "::-1", " 3 : 7 : 2 ", "()", "", "(1,)",
		"None:4:-2", "99999999999999999999:", "1,,2", "[[0]]", "...,...", "- 3", "Ellipsis",
		"[[3, 1, 4], :, 5]", "[[True, False], [-1, 0, -1]]", "[[], ...]",
		// NumPy's advanced indexing in full: index arrays of rank above 1,
		// 2-D masks, broadcasts, and what NumPy refuses.
		"[[0], [2]], [1, 3]", ":, [[0, 1], [2, 3]], [[4], [0]]", "[[0, 1]], 1:3, 0",
		"[[True, False, True], [False, True, False]], ...", "[[[]]], :", "[[0, 1], [2]], :",
		"[True, 1], :", "[[0, 1], [2, 3]], [1, 2, 3]", "[[[0, 1], [2, 0]], [[1, 1], [0, 2]]], [[[3]]]",
		"None, [[0], [2]], [1, 3]", "[0, 1], None, [1, 2]", "1, None, ::2", "None, ..., None", "True, [0, 1]", "False, :, True",
		// Python's reading: one list is one array (uneven: refused),
		// tuples are sequences, integer literals and unary operators.
		"[[0], 1]", "[(0, 1), 2]", "(0, 1), 2", "((0, 1),)", "[(0, 1), (2, 3)]", "(), 0", "[..., 1]",
		"0x1f, ~0", "--1:1_0:-(2)", "-True", "007", "-[1]", "(0:2, 1)", "[-4:, ...]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		items, err := ParseSelection(text)
		if err != nil {
			if !errors.Is(err, ErrInvalidSelection) && !errors.Is(err, ErrOutOfBounds) {
				t.Fatalf("%q: error %v wraps no sentinel", text, err)
			}
			return
		}
		// The items' own syntax parses back to the same items.
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = it.String()
		}
		joined := strings.Join(parts, ",")
		if strings.Contains(joined, "(") {
			return // a long list prints shortened
		}
		again, err := ParseSelection("(" + joined + ",)")
		if len(items) == 0 {
			again, err = ParseSelection("()")
		}
		if err != nil || !slices.EqualFunc(again, items, func(a, b Item) bool { return reflect.DeepEqual(a, b) }) {
			t.Fatalf("%q: items %v reparse as %v, %v", text, parts, again, err)
		}
		shape := []int{7, 1, 0, 12}
		sel, err := Normalize(items, shape[:min(len(shape), len(items))])
		if err == nil {
			assertRoundTrip(t, sel, shape[:len(sel)])
		}
		// NumPy's reading: every point inside the array, as many as the
		// output shape holds.
		for _, shape := range [][]int{{3, 4, 5}, {7, 1, 0, 12}, {2, 3}} {
			p, pw, err := NewPointwise(items, shape)
			outShape := p.Shape()
			if err != nil {
				if !errors.Is(err, ErrInvalidSelection) && !errors.Is(err, ErrOutOfBounds) {
					t.Fatalf("%q on %v: error %v wraps no sentinel", text, shape, err)
				}
				continue
			}
			if !pw || NumElements(outShape) > 1<<16 {
				continue
			}
			pts, outShape2, _, err := Broadcast(items, shape)
			if err != nil || !slices.Equal(outShape, outShape2) || pts.Len() != NumElements(outShape) && len(shape) > 0 {
				t.Fatalf("%q on %v: Broadcast %v %d points, %v; BroadcastShape %v", text, shape, outShape2, pts.Len(), err, outShape)
			}
			if _, err := CheckPoints(Points{Rank: pts.Rank, Coords: slices.Clone(pts.Coords)}, shape); err != nil && pts.Len() > 0 {
				t.Fatalf("%q on %v: %v", text, shape, err)
			}
			// Listed a range at a time, the same points.
			half := p.Len() / 2
			a, b := p.Points(0, half, nil), p.Points(half, p.Len()-half, make([]int, 0, 1))
			if !slices.Equal(append(slices.Clone(a.Coords), b.Coords...), pts.Coords) {
				t.Fatalf("%q on %v: points in two halves differ", text, shape)
			}
		}
	})
}

// FuzzNormalize normalises a parsed selection (its first item optionally
// replaced by a slice with arbitrary bounds) on a small shape and checks
// the selection's invariants and that its chunk parts cover exactly the
// selected elements.
func FuzzNormalize(f *testing.F) {
	f.Add("1:7:2, ::-1", uint8(10), uint8(9), uint8(3), uint8(3), uint8(4), uint8(2), false, 0, 0, 1)
	f.Add("..., 2", uint8(0), uint8(5), uint8(5), uint8(1), uint8(1), uint8(1), false, 0, 0, 1)
	f.Add("", uint8(17), uint8(1), uint8(9), uint8(5), uint8(1), uint8(4), true, -9, 100, -4)
	f.Add("-1, -1, -1", uint8(3), uint8(3), uint8(3), uint8(2), uint8(2), uint8(2), true, 2, -1, math.MinInt)
	f.Fuzz(func(t *testing.T, text string, s0, s1, s2, c0, c1, c2 uint8, useSlice bool, start, stop, step int) {
		items, err := ParseSelection(text)
		if err != nil {
			return
		}
		if useSlice {
			if len(items) == 0 {
				items = append(items, Item{})
			}
			items[0] = Slice(start, stop, step)
		}
		shape := []int{int(s0 % 40), int(s1 % 40), int(s2 % 40)}
		chunk := []int{1 + int(c0%16), 1 + int(c1%16), 1 + int(c2%16)}
		nd := max(len(items), 1)
		for _, it := range items {
			if it.IsEllipsis() {
				nd--
			}
		}
		nd = min(max(nd, 0), 3)
		shape, chunk = shape[:nd], chunk[:nd]
		sel, err := Normalize(items, shape)
		if err != nil {
			if !errors.Is(err, ErrInvalidSelection) && !errors.Is(err, ErrOutOfBounds) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		for d, dim := range sel {
			if dim.Step == 0 || dim.Count < 0 || dim.Count > shape[d] {
				t.Fatalf("dim %d: %+v on %d", d, dim, shape[d])
			}
			if dim.Count > 0 {
				last := dim.Start + (dim.Count-1)*dim.Step
				if dim.Start < 0 || dim.Start >= shape[d] || last < 0 || last >= shape[d] {
					t.Fatalf("dim %d: %+v out of range %d", d, dim, shape[d])
				}
			}
		}
		assertRoundTrip(t, sel, shape)
		total, parts := 0, 0
		for p := range sel.Chunks(chunk) {
			parts++
			total += p.NumElements()
			for d := range p.Count {
				last := p.SrcStart[d] + (p.Count[d]-1)*p.SrcStep[d]
				if p.Count[d] <= 0 || p.SrcStart[d] < 0 || p.SrcStart[d] >= chunk[d] || last < 0 || last >= chunk[d] ||
					p.DstStart[d] < 0 || p.DstStart[d]+p.Count[d] > sel[d].Count {
					t.Fatalf("%s chunks %v: bad part %+v", sel, chunk, p)
				}
			}
		}
		if total != sel.NumElements() || parts != sel.NumChunks(chunk) {
			t.Fatalf("%s chunks %v: parts hold %d elements in %d parts, want %d in %d",
				sel, chunk, total, parts, sel.NumElements(), sel.NumChunks(chunk))
		}
	})
}
