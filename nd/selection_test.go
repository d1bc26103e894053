package nd

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// indices lists the selected indices of one dimension.
func (d Dim) indices() []int {
	out := []int{}
	for k := range d.Count {
		out = append(out, d.Start+k*d.Step)
	}
	return out
}

// TestSlicePythonSemantics checks one-dimensional slices against results
// computed with CPython 3.11: list(range(n))[slice(start, stop, step)].
func TestSlicePythonSemantics(t *testing.T) {
	cases := []struct {
		n    int
		text string
		want []int
	}{
		{10, "::-1", []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{5, "::-1", []int{4, 3, 2, 1, 0}},
		{5, "5:0:-2", []int{4, 2}},
		{5, "10:0:-2", []int{4, 2}},
		{5, "-1::-1", []int{4, 3, 2, 1, 0}},
		{5, "-10::-1", []int{}},
		{5, ":-10:-1", []int{4, 3, 2, 1, 0}},
		{10, "2:8", []int{2, 3, 4, 5, 6, 7}},
		{10, "2:8:3", []int{2, 5}},
		{10, "-3:", []int{7, 8, 9}},
		{10, ":-3", []int{0, 1, 2, 3, 4, 5, 6}},
		{10, "-100:100", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{10, "100:", []int{}},
		{10, ":-100", []int{}},
		{10, "8:2", []int{}},
		{10, "8:2:-1", []int{8, 7, 6, 5, 4, 3}},
		{10, "8:2:-3", []int{8, 5}},
		{10, "::3", []int{0, 3, 6, 9}},
		{10, "1::3", []int{1, 4, 7}},
		{10, "::-3", []int{9, 6, 3, 0}},
		{10, "-2:-8:-2", []int{8, 6, 4}},
		{10, "3:3", []int{}},
		{0, ":", []int{}},
		{0, "::-1", []int{}},
		{0, "5:-5:-1", []int{}},
		{1, "::-1", []int{0}},
		{7, "::100", []int{0}},
		{7, "::-100", []int{6}},
		{7, "6:0:-100", []int{6}},
		{7, "-1:-2:-1", []int{6}},
		{7, "-1:-1", []int{}},
		{7, "0:7:7", []int{0}},
		{3, "1:2:-1", []int{}},
		{10, "9:-11:-1", []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{10, "None:4", []int{0, 1, 2, 3}},
		{10, "4:None:-1", []int{4, 3, 2, 1, 0}},
		{10, "99999999999999999999999:", []int{}},
		{10, "-99999999999999999999999::-1", []int{}},
		{10, "::99999999999999999999999", []int{0}},
		{10, "::-99999999999999999999999", []int{9}},
		{4, "-9223372036854775808:9223372036854775807", []int{0, 1, 2, 3}},
	}
	for _, c := range cases {
		items, err := ParseSelection(c.text)
		if err != nil {
			t.Fatalf("ParseSelection(%q): %v", c.text, err)
		}
		sel, err := Normalize(items, []int{c.n})
		if err != nil {
			t.Fatalf("Normalize(%q, [%d]): %v", c.text, c.n, err)
		}
		if got := sel[0].indices(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q on length %d: got %v, want %v (dim %+v)", c.text, c.n, got, c.want, sel[0])
		}
		if got := sel.Shape(); !reflect.DeepEqual(got, []int{len(c.want)}) {
			t.Errorf("%q on length %d: shape %v, want [%d]", c.text, c.n, got, len(c.want))
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name  string
		items []Item
		shape []int
		want  Selection
		err   error
	}{
		{"empty selects all", nil, []int{3, 4}, Selection{{Start: 0, Count: 3, Step: 1, Drop: false}, {Start: 0, Count: 4, Step: 1, Drop: false}}, nil},
		{"index and all", []Item{Index(1), All()}, []int{3, 4}, Selection{{Start: 1, Count: 1, Step: 1, Drop: true}, {Start: 0, Count: 4, Step: 1, Drop: false}}, nil},
		{"negative index", []Item{Index(-1)}, []int{3, 4}, Selection{{Start: 2, Count: 1, Step: 1, Drop: true}, {Start: 0, Count: 4, Step: 1, Drop: false}}, nil},
		{"most negative index", []Item{Index(-3)}, []int{3}, Selection{{Start: 0, Count: 1, Step: 1, Drop: true}}, nil},
		{"index too big", []Item{Index(3)}, []int{3}, nil, ErrOutOfBounds},
		{"index too negative", []Item{Index(-4)}, []int{3}, nil, ErrOutOfBounds},
		{"index MinInt", []Item{Index(math.MinInt)}, []int{3}, nil, ErrOutOfBounds},
		{"index into empty", []Item{Index(0)}, []int{0}, nil, ErrOutOfBounds},
		{"ellipsis first", []Item{Ellipsis, Index(2)}, []int{2, 3, 4}, Selection{{Start: 0, Count: 2, Step: 1, Drop: false}, {Start: 0, Count: 3, Step: 1, Drop: false}, {Start: 2, Count: 1, Step: 1, Drop: true}}, nil},
		{"ellipsis middle", []Item{Index(0), Ellipsis, Every(-2)}, []int{2, 3, 5}, Selection{{Start: 0, Count: 1, Step: 1, Drop: true}, {Start: 0, Count: 3, Step: 1, Drop: false}, {Start: 4, Count: 3, Step: -2, Drop: false}}, nil},
		{"ellipsis expands to nothing", []Item{Index(0), Ellipsis, Index(1)}, []int{2, 3}, Selection{{Start: 0, Count: 1, Step: 1, Drop: true}, {Start: 1, Count: 1, Step: 1, Drop: true}}, nil},
		{"two ellipses", []Item{Ellipsis, Ellipsis}, []int{2, 3}, nil, ErrInvalidSelection},
		{"too many items", []Item{All(), All(), All()}, []int{2, 3}, nil, ErrInvalidSelection},
		{"too many with ellipsis", []Item{All(), Ellipsis, All(), All()}, []int{2, 3}, nil, ErrInvalidSelection},
		{"zero step", []Item{Every(0)}, []int{2}, nil, ErrInvalidSelection},
		{"negative dim", nil, []int{2, -1}, nil, ErrInvalidSelection},
		{"scalar", nil, []int{}, Selection{}, nil},
		{"scalar ellipsis", []Item{Ellipsis}, []int{}, Selection{}, nil},
		{"scalar index", []Item{Index(0)}, []int{}, nil, ErrInvalidSelection},
		{"range", []Item{Range(2, 5)}, []int{10}, Selection{{Start: 2, Count: 3, Step: 1, Drop: false}}, nil},
		{"slice from", []Item{SliceFrom(-4)}, []int{10}, Selection{{Start: 6, Count: 4, Step: 1, Drop: false}}, nil},
		{"slice to", []Item{SliceTo(-4)}, []int{10}, Selection{{Start: 0, Count: 6, Step: 1, Drop: false}}, nil},
		{"slice from reversed", []Item{SliceFrom(5).WithStep(-1)}, []int{10}, Selection{{Start: 5, Count: 6, Step: -1, Drop: false}}, nil},
		{"full slice", []Item{Slice(1, 9, 4)}, []int{10}, Selection{{Start: 1, Count: 2, Step: 4, Drop: false}}, nil},
		{"empty slice normalised", []Item{Range(7, 2)}, []int{10}, Selection{{Start: 0, Count: 0, Step: 1, Drop: false}}, nil},
		{"empty reversed normalised", []Item{Slice(2, 7, -3)}, []int{10}, Selection{{Start: 0, Count: 0, Step: -1, Drop: false}}, nil},
		{"single element step normalised", []Item{Slice(3, 4, 5)}, []int{10}, Selection{{Start: 3, Count: 1, Step: 1, Drop: false}}, nil},
		{"huge negative step", []Item{Every(math.MinInt)}, []int{10}, Selection{{Start: 9, Count: 1, Step: -1, Drop: false}}, nil},
		{"huge bounds", []Item{Slice(math.MinInt, math.MaxInt, math.MaxInt)}, []int{10}, Selection{{Start: 0, Count: 1, Step: 1, Drop: false}}, nil},
		{"WithStep on index is a no-op", []Item{Index(2).WithStep(3)}, []int{10}, Selection{{Start: 2, Count: 1, Step: 1, Drop: true}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Normalize(c.items, c.shape)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestShapes(t *testing.T) {
	sel, err := Normalize([]Item{Index(1), Every(2), Ellipsis, Index(-1)}, []int{3, 5, 4, 6})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sel.Shape(), []int{3, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("Shape = %v, want %v", got, want)
	}
	if got, want := sel.FullShape(), []int{1, 3, 4, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("FullShape = %v, want %v", got, want)
	}
	if got := sel.NumElements(); got != 12 {
		t.Errorf("NumElements = %d, want 12", got)
	}
	if got, want := sel.String(), "[1, 0:5:2, 0:4, 5]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestParseSelection(t *testing.T) {
	cases := []struct {
		text string
		want string // items joined by ";" via Item.String
		err  error
	}{
		{"", "", nil},
		{"()", "", nil},
		{"[]", "[]", nil}, // NumPy: a[[]] is an empty index array
		{"  ", "", nil},
		{"0:10,:,5", "0:10;:;5", nil},
		{"[..., ::2]", "...;::2", nil},
		{"-1", "-1", nil},
		{"::-1", "::-1", nil},
		{" 3 : 7 : 2 ", "3:7:2", nil},
		{"(1, 2)", "1;2", nil},
		{"0,", "0", nil},
		{"[0,]", "[0]", nil}, // NumPy: a[[0,]] is a[[0]]
		{"+4", "4", nil},
		{"- 4", "-4", nil},
		{"None:None:None", ":", nil},
		{"Ellipsis, 1", "...;1", nil},
		{"::", ":", nil},
		{"5:", "5:", nil},
		{":5", ":5", nil},
		{"1:2:", "1:2", nil},
		{"0,,1", "", ErrInvalidSelection},
		{",", "", ErrInvalidSelection},
		{"0,,", "", ErrInvalidSelection},
		{"1:2:3:4", "", ErrInvalidSelection},
		{"a", "", ErrInvalidSelection},
		{"1.5", "", ErrInvalidSelection},
		{"1:x", "", ErrInvalidSelection},
		{"::0", "::0", nil}, // Normalize refuses it, in NumPy's order
		{"[1", "", ErrInvalidSelection},
		// Python's integer literals and unary operators, as a[...] takes them.
		{"1_000", "1000", nil},
		{"--1", "1", nil},
		{"- - 1", "1", nil},
		{"0x10", "16", nil},
		{"0b101, 0o17, 0X_1f", "5;15;31", nil},
		{"~0", "-1", nil},
		{"-True, ~True, +False", "-1;-2;0", nil},
		{"[-1, ~0, -(2)]", "[-1, -1, -2]", nil},
		{"~0:-(1):-1", "-1:-1:-1", nil},
		{"00, 0_0", "0;0", nil},
		{"007", "", ErrInvalidSelection}, // Python: leading zeros are not permitted
		{"1__0", "", ErrInvalidSelection},
		{"1_", "", ErrInvalidSelection},
		{"_1", "", ErrInvalidSelection},
		{"-[1]", "", ErrInvalidSelection}, // Python's TypeError
		{"[-[1]]", "", ErrInvalidSelection},
		{"~None", "", ErrInvalidSelection},
		{"~1.5", "", ErrInvalidSelection},
		{"-1.5", "", ErrInvalidSelection},
		{"--", "", ErrInvalidSelection},
		{"99999999999999999999", "", ErrOutOfBounds},
		{"....", "", ErrInvalidSelection},
		{"[[0]]", "[[0]]", nil}, // a list literal alone is one index array, as NumPy's a[[[0]]]
		{"[0],", "[0]", nil},
		{"[3, 1, 4]", "[3, 1, 4]", nil},
		{"[-4:, ...]", "-4:;...", nil},
		{"[[3, 1, 4], :, 5]", "[3, 1, 4];:;5", nil},
		{"[[True, False], ...]", "", ErrInvalidSelection}, // NumPy: ValueError, inhomogeneous (a list, not a tuple)
		{"[True, False], ...", "[True, False];...", nil},
		{"[[], 1]", "", ErrInvalidSelection},  // NumPy: ValueError, inhomogeneous
		{"[[], 1:]", "[];1:", nil},            // no Python list (a slice inside): brackets around the selection
		{"[[0], 1]", "", ErrInvalidSelection}, // NumPy: ValueError, inhomogeneous
		{"[0], 1", "[0];1", nil},
		{"[[1, True]]", "[[1, 1]]", nil}, // NumPy: booleans among integers are 1 and 0
		{"[[1, [2]]]", "", ErrInvalidSelection},
		{"[[[0], [2]], [1, 3]]", "", ErrInvalidSelection}, // NumPy: ValueError, inhomogeneous after 2 dimensions
		{"[[0], [2]], [1, 3]", "[[0], [2]];[1, 3]", nil},
		{"([[0], [2]], [1, 3])", "[[0], [2]];[1, 3]", nil}, // a tuple alone is the items
		{"[[[True, False]], [0, 1,]]", "", ErrInvalidSelection},
		{"[[True, False]], [0, 1,]", "[[True, False]];[0, 1]", nil},
		// Tuples are sequences, as NumPy reads them; a tuple alone is the subscript.
		{"(0, 1), 2", "[0, 1];2", nil},
		{"[(0, 1), 2]", "", ErrInvalidSelection}, // NumPy: ValueError, inhomogeneous
		{"[(0, 1), (2, 3)]", "[[0, 1], [2, 3]]", nil},
		{"[[0, 1], (2, 3)]", "[[0, 1], [2, 3]]", nil},
		{"[[0], (1,)]", "[[0], [1]]", nil},
		{"((0, 1),)", "[0, 1]", nil},
		{"((0, 1))", "0;1", nil},
		{"(0, (1, 2))", "0;[1, 2]", nil},
		{"(), 0", "[];0", nil},
		{"(),", "[]", nil},
		{"[()]", "[[]]", nil}, // shape (1, 0)
		{"(5)", "5", nil},
		{"[(5)]", "[5]", nil},
		{"((0:2, 1))", "", ErrInvalidSelection}, // one pair of brackets only
		{"(0:2, 1)", "0:2;1", nil},
		// What NumPy makes an object array of: IndexError.
		{"[..., 1]", "", ErrInvalidSelection},
		{"[None, 1]", "", ErrInvalidSelection},
		{"[...]", "", ErrInvalidSelection},
		{"[[0], None]", "", ErrInvalidSelection},
		{"[1, 2.0]", "", ErrInvalidSelection},
		{"[0]:2", "[0]:2", nil}, // NumPy: TypeError, slice indices must be integers, as Normalize says
		{"1.5:", "1.5:", nil},
		{"True:", "1:", nil},
		{"::True", "::1", nil},
		{"[[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]]", "[[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]]", nil},
		{"[[[], []]]", "[[[], []]]", nil},
		{"[[[]]]", "[[[]]]", nil},
		{"[[" + strings.Repeat("[0, 1, 2, 3], ", 6) + "[4, 5, 6, 7]]]", "[[[0, 1, 2, 3], [0, 1, 2, 3], ..., [4, 5, 6, 7]]] (shape (1,7,4))", nil},
		{"[[[0, 1], [2]]]", "", ErrInvalidSelection},
		{"[[[0], 1]]", "", ErrInvalidSelection},
		{"[[0, [1]]]", "", ErrInvalidSelection},
		{"[[[0] [1]]]", "", ErrInvalidSelection},
		{"[[[0], ]]]", "", ErrInvalidSelection},
		{"[[,]]", "", ErrInvalidSelection},
		{"[[0,,1]]", "", ErrInvalidSelection},
		{"[[[1.5]]]", "", ErrInvalidSelection},
		{strings.Repeat("[", 65) + "0" + strings.Repeat("]", 65), "", ErrInvalidSelection}, // NumPy: at most 64 dimensions
		{strings.Repeat("[", 64) + "0" + strings.Repeat("]", 64), strings.Repeat("[", 64) + "0" + strings.Repeat("]", 64), nil},
		{strings.Repeat("(", 300) + "0" + strings.Repeat(")", 300), "", ErrInvalidSelection}, // Python: too many nested parentheses
		{"[[1, 2]", "", ErrInvalidSelection},
		{"[1]]", "", ErrInvalidSelection},
		{"[[99999999999999999999]]", "", ErrOutOfBounds},
		{"[[99999999999999999999]]", "", ErrInvalidSelection}, // NumPy's IndexError: only integers ...
	}
	for _, c := range cases {
		items, err := ParseSelection(c.text)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("ParseSelection(%q) err = %v, want %v", c.text, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSelection(%q): %v", c.text, err)
			continue
		}
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = it.String()
		}
		if got := strings.Join(parts, ";"); got != c.want {
			t.Errorf("ParseSelection(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestNormalizeText runs whole text selections against shapes, with
// results worked out with NumPy's rules.
func TestNormalizeText(t *testing.T) {
	cases := []struct {
		text  string
		shape []int
		want  string // Selection.String, or "" for an error
		err   error
	}{
		{"0:10,:,5", []int{20, 3, 6}, "[0:10, 0:3, 5]", nil},
		{"[..., ::2]", []int{4, 5}, "[0:4, 0:5:2]", nil},
		{"-1", []int{4, 5}, "[3, 0:5]", nil},
		{"::-1", []int{5}, "[4::-1]", nil},
		{"::-2, 1", []int{6, 2}, "[5:0:-2, 1]", nil},
		{"()", []int{2, 2}, "[0:2, 0:2]", nil},
		{"", []int{}, "()", nil},
		{"5", []int{5}, "", ErrOutOfBounds},
		{"0,0,0", []int{1, 1}, "", ErrInvalidSelection},
		{"...,...", []int{1, 1}, "", ErrInvalidSelection},
		{"1:1", []int{5}, "[0:0]", nil},
		// NumPy reads slice bounds as it walks the dimensions: after the
		// count of indices, before a later integer's bounds.
		{"::0", []int{5}, "", ErrInvalidSelection},
		{"1.5:", []int{5}, "", ErrInvalidSelection},
		{"9, 1.5:", []int{5, 6}, "", ErrOutOfBounds},
		{"1.5:, 9", []int{5, 6}, "", ErrInvalidSelection},
		{"9, ::0", []int{5, 6}, "", ErrOutOfBounds},
		{"1.5:, 0, 0", []int{5, 6}, "", ErrInvalidSelection},
	}
	for _, c := range cases {
		items, err := ParseSelection(c.text)
		if err != nil {
			t.Fatalf("ParseSelection(%q): %v", c.text, err)
		}
		sel, err := Normalize(items, c.shape)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q on %v: err = %v, want %v", c.text, c.shape, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q on %v: %v", c.text, c.shape, err)
			continue
		}
		if got := sel.String(); got != c.want {
			t.Errorf("%q on %v = %s, want %s", c.text, c.shape, got, c.want)
		}
		assertRoundTrip(t, sel, c.shape)
	}
}

// assertRoundTrip checks that a selection's String parses and normalises
// back to the same selection.
func assertRoundTrip(t testing.TB, sel Selection, shape []int) {
	t.Helper()
	items, err := ParseSelection(sel.String())
	if err != nil {
		t.Fatalf("reparse %s: %v", sel, err)
	}
	back, err := Normalize(items, shape)
	if err != nil {
		t.Fatalf("renormalize %s: %v", sel, err)
	}
	if !reflect.DeepEqual(back, sel) && !(len(back) == 0 && len(sel) == 0) {
		t.Fatalf("round trip of %s on %v: got %+v, want %+v", sel, shape, back, sel)
	}
}

func TestErrorNamesItem(t *testing.T) {
	_, err := Normalize([]Item{All(), Index(7)}, []int{3, 4})
	if err == nil || !strings.Contains(err.Error(), "item 1 (7) on dimension 1 of length 4") {
		t.Fatalf("err = %v", err)
	}
	_, err = ParseSelection("1, x")
	if err == nil || !strings.Contains(err.Error(), `item 1`) || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("err = %v", err)
	}
}

func ExampleParseSelection() {
	items, _ := ParseSelection("[1, ::-2, ...]")
	sel, _ := Normalize(items, []int{3, 5, 4})
	fmt.Println(sel, sel.Shape())
	// Output: [1, 4::-2, 0:4] [3 4]
}

func TestDimSub(t *testing.T) {
	shape := []int{20}
	for _, it := range []Item{Slice(18, 2, -3), Range(3, 15), IndexArray(5, 1, 1, 19, 0), IndexArray(2, 4, 6, 8), Mask([]bool{true, false, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true})} {
		sel, err := Normalize([]Item{it}, shape)
		if err != nil {
			t.Fatal(err)
		}
		d := sel[0]
		for lo := 0; lo <= d.Len(); lo++ {
			for hi := lo; hi <= d.Len(); hi++ {
				s := d.Sub(lo, hi)
				if s.Len() != hi-lo {
					t.Fatalf("%v.Sub(%d, %d) has %d elements", it, lo, hi, s.Len())
				}
				for k := range hi - lo {
					if s.At(k) != d.At(lo+k) {
						t.Fatalf("%v.Sub(%d, %d) element %d = %d, want %d", it, lo, hi, k, s.At(k), d.At(lo+k))
					}
				}
			}
		}
	}
}
