package nd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/nd"
)

// numpyCase is one selection text and what NumPy made of it
// (testdata/selections/make_numpy_subscripts.py).
type numpyCase struct {
	Shape       []int  `json:"shape"`
	Text        string `json:"text"`
	ResultShape []int  `json:"result_shape"`
	Values      []int  `json:"values"`
	Error       string `json:"error"`
	Message     string `json:"message"`
	// What gozarr reports where NumPy raises: the sentinel's name, and
	// whether the text holds NumPy's message.
	Sentinel     string `json:"sentinel"`
	MatchMessage bool   `json:"match_message"`
	// The orthogonal meaning (zarr-python's oindex), for texts with an
	// index array or mask.
	OShape  []int  `json:"oindex_shape"`
	OValues []int  `json:"oindex_values"`
	OError  string `json:"oindex_error"`
}

func loadNumpyCases(t *testing.T) []numpyCase {
	t.Helper()
	b, err := os.ReadFile("../testdata/selections/numpy_subscripts.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []numpyCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// linear is the C-order position of coords in shape: the value of
// np.arange(n).reshape(shape) there.
func linear(coords, shape []int) int {
	k := 0
	for d, c := range coords {
		k = k*shape[d] + c
	}
	return k
}

// evalText evaluates a selection text on np.arange(n).reshape(shape) as
// zarr's reads do: pointwise through Broadcast, else through Normalize.
func evalText(text string, shape []int) ([]int, []int, error) {
	items, err := nd.ParseSelection(text)
	if err != nil {
		return nil, nil, err
	}
	return evalItems(items, shape)
}

// evalItems is evalText of parsed items.
func evalItems(items []nd.Item, shape []int) ([]int, []int, error) {
	pts, outShape, pointwise, err := nd.Broadcast(items, shape)
	if err != nil {
		return nil, nil, err
	}
	if pointwise {
		vals := make([]int, pts.Len())
		for k := range vals {
			vals[k] = linear(pts.At(k), shape)
		}
		return vals, outShape, nil
	}
	sel, err := nd.Normalize(items, shape)
	if err != nil {
		return nil, nil, err
	}
	var vals []int
	pos := make([]int, len(sel))
	coords := make([]int, len(sel))
	n := sel.NumElements()
	for range n {
		for d, dim := range sel {
			k := pos[d]
			if dim.Order != nil {
				k = dim.Order[k]
			}
			switch {
			case dim.Index != nil:
				coords[d] = dim.Index[k]
			default:
				coords[d] = dim.Start + k*dim.Step
			}
		}
		vals = append(vals, linear(coords, shape))
		for d := len(sel) - 1; d >= 0; d-- {
			pos[d]++
			if pos[d] < sel[d].Len() {
				break
			}
			pos[d] = 0
		}
	}
	return vals, sel.Shape(), nil
}

// TestNumpySubscripts: every selection text gives NumPy's result (shape
// and values), pointwise, orthogonal, mixed, negative, repeated and empty,
// or fails where NumPy raises, with NumPy's message.
func TestNumpySubscripts(t *testing.T) {
	cases := loadNumpyCases(t)
	if len(cases) < 150 {
		t.Fatalf("only %d reference cases", len(cases))
	}
	errs, ranked := 0, 0
	for _, c := range cases {
		if strings.Contains(c.Text, "[[") {
			ranked++ // an index array or mask of rank above 1
		}
		vals, shape, err := evalText(c.Text, c.Shape)
		if c.Error != "" {
			if err == nil {
				t.Errorf("%v [%s]: got shape %v, NumPy raises %s: %s", c.Shape, c.Text, shape, c.Error, c.Message)
				continue
			}
			want := map[string]error{"ErrInvalidSelection": nd.ErrInvalidSelection, "ErrOutOfBounds": nd.ErrOutOfBounds}[c.Sentinel]
			if want == nil {
				t.Fatalf("%v [%s]: sentinel %q", c.Shape, c.Text, c.Sentinel)
			}
			if !errors.Is(err, want) || c.MatchMessage && !strings.Contains(err.Error(), strings.TrimSpace(c.Message)) {
				t.Errorf("%v [%s]: %v, NumPy: %s", c.Shape, c.Text, err, c.Message)
			}
			errs++
			continue
		}
		if err != nil {
			t.Errorf("%v [%s]: %v", c.Shape, c.Text, err)
			continue
		}
		if !slices.Equal(shape, c.ResultShape) || !slices.Equal(vals, c.Values) && len(c.Values) > 0 {
			t.Errorf("%v [%s]: shape %v values %v, NumPy %v %v", c.Shape, c.Text, shape, vals, c.ResultShape, c.Values)
		}
	}
	if errs < 40 || ranked < 85 {
		t.Errorf("only %d errors and %d texts with arrays of rank above 1 checked", errs, ranked)
	}
}

// TestNumpyOindex: Orthogonal of every text with an index array or mask
// gives the orthogonal result the reference computed with NumPy (np.ix_,
// zarr-python's oindex), or fails where that raises.
func TestNumpyOindex(t *testing.T) {
	n := 0
	for _, c := range loadNumpyCases(t) {
		if c.OShape == nil && c.OError == "" {
			continue
		}
		n++
		items, err := nd.ParseSelection(c.Text)
		if err != nil {
			if c.OError == "" {
				t.Errorf("%v [%s]: %v", c.Shape, c.Text, err)
			}
			continue
		}
		vals, shape, err := evalItems(nd.Orthogonal(items), c.Shape)
		switch {
		case c.OError != "" && err == nil:
			t.Errorf("%v oindex[%s]: shape %v, NumPy raises %s", c.Shape, c.Text, shape, c.OError)
		case c.OError != "":
		case err != nil:
			t.Errorf("%v oindex[%s]: %v", c.Shape, c.Text, err)
		case !slices.Equal(shape, c.OShape) || !slices.Equal(vals, c.OValues) && len(c.OValues) > 0:
			t.Errorf("%v oindex[%s]: shape %v values %v, NumPy %v %v", c.Shape, c.Text, shape, vals, c.OShape, c.OValues)
		}
	}
	if n < 50 {
		t.Fatalf("only %d oindex reference cases", n)
	}
}

// TestOrthogonalSpelling: Orthogonal gives zarr-python's oindex meaning
// to the texts NumPy reads pointwise.
func TestOrthogonalSpelling(t *testing.T) {
	items, err := nd.ParseSelection("[0, 2, 4], [1, 1, 3]")
	if err != nil {
		t.Fatal(err)
	}
	if _, shape, pw, err := nd.Broadcast(items, []int{5, 6}); err != nil || !pw || !slices.Equal(shape, []int{3}) {
		t.Fatalf("pointwise: %v %v %v", shape, pw, err)
	}
	o := nd.Orthogonal(items)
	if _, _, pw, err := nd.Broadcast(o, []int{5, 6}); err != nil || pw {
		t.Fatalf("Orthogonal is pointwise: %v %v", pw, err)
	}
	sel, err := nd.Normalize(o, []int{5, 6})
	if err != nil || !slices.Equal(sel.Shape(), []int{3, 3}) {
		t.Errorf("orthogonal shape %v, %v", sel.Shape(), err)
	}
}

// TestShapedArraysAsParsed: index arrays and masks of any rank built
// with IndexArrayOfShape and MaskOfShape (with Vectorized for the 1-D
// ones) are the items ParseSelection makes of their text, so they select
// NumPy's results of the reference set; bad shapes are refused.
func TestShapedArraysAsParsed(t *testing.T) {
	two, err := nd.IndexArrayOfShape([]int{2, 1}, []int{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	mask, err := nd.MaskOfShape([]int{2, 3}, []bool{true, false, true, false, true, false})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := nd.IndexArrayOfShape([]int{2, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		items []nd.Item
		text  string
	}{
		{nd.Vectorized([]nd.Item{two, nd.IndexArray(1, 3)}), "[[0], [2]], [1, 3]"},
		{[]nd.Item{mask, nd.Ellipsis}, "[[True, False, True], [False, True, False]], ..."},
		{[]nd.Item{empty, nd.All()}, "[[], []], :"},
		{nd.Vectorized([]nd.Item{nd.Mask([]bool{true, false}), nd.All(), nd.IndexArray(-1)}), "[True, False], :, [-1]"},
	} {
		want, err := nd.ParseSelection(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.items, want) {
			t.Errorf("%s: items %v, parsed %v", c.text, c.items, want)
		}
	}
	// Every reference case with an index array, rebuilt: the same result.
	n := 0
	for _, c := range loadNumpyCases(t) {
		items, err := nd.ParseSelection(c.Text)
		if err != nil || c.Error != "" || strings.Contains(fmt.Sprint(items), "(") {
			continue // refused, or an array printed shortened
		}
		rebuilt := make([]nd.Item, len(items))
		for i, it := range items {
			rebuilt[i] = rebuild(t, it)
		}
		vals, shape, err := evalItems(nd.Vectorized(rebuilt), c.Shape)
		if err != nil || !slices.Equal(shape, c.ResultShape) || !slices.Equal(vals, c.Values) && len(c.Values) > 0 {
			t.Errorf("%v rebuilt [%s]: %v %v %v, NumPy %v %v", c.Shape, c.Text, shape, vals, err, c.ResultShape, c.Values)
		}
		n++
	}
	if n < 100 {
		t.Errorf("only %d cases rebuilt", n)
	}
	for _, bad := range []struct {
		shape []int
		n     int
	}{{nil, 0}, {[]int{}, 1}, {[]int{2, 2}, 3}, {[]int{-1, -1}, 1}, {[]int{math.MaxInt / 2, 3}, 0}, {make([]int, 65), 0}} {
		if _, err := nd.IndexArrayOfShape(bad.shape, make([]int, bad.n)); !errors.Is(err, nd.ErrInvalidSelection) {
			t.Errorf("IndexArrayOfShape(%v, %d indices): %v", bad.shape, bad.n, err)
		}
		if _, err := nd.MaskOfShape(bad.shape, make([]bool, bad.n)); !errors.Is(err, nd.ErrInvalidSelection) {
			t.Errorf("MaskOfShape(%v, %d elements): %v", bad.shape, bad.n, err)
		}
	}
}

// rebuild makes a parsed item again through the public constructors: the
// item's text tells its kind and values.
func rebuild(t *testing.T, it nd.Item) nd.Item {
	t.Helper()
	text := it.String()
	if !strings.HasPrefix(text, "[") {
		return it // an integer, slice or ellipsis
	}
	var v any
	if err := json.Unmarshal([]byte(strings.NewReplacer("True", "true", "False", "false").Replace(text)), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	var shape []int
	for x := v; ; {
		l, ok := x.([]any)
		if !ok {
			break
		}
		shape = append(shape, len(l))
		if len(l) == 0 {
			break
		}
		x = l[0]
	}
	var ints []int
	var bools []bool
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case bool:
			bools = append(bools, x)
		case float64:
			ints = append(ints, int(x))
		}
	}
	walk(v)
	var out nd.Item
	var err error
	if bools != nil {
		out, err = nd.MaskOfShape(shape, bools)
	} else {
		out, err = nd.IndexArrayOfShape(shape, ints)
	}
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return out
}

// BenchmarkPointwisePoints lists the 10^6 points of index arrays that
// broadcast ("[[0], ..., [999]], [[0, ..., 999]]" on a 1000 x 1000
// array, and a 2-D mask of it) into a reused buffer; bytes are the
// coordinates written (16 a point). The memcpy sub-benchmark copies as
// many bytes, the limit to compare with in the same run.
func BenchmarkPointwisePoints(b *testing.B) {
	rows := make([]int, 1000)
	for i := range rows {
		rows[i] = i
	}
	col, err := nd.IndexArrayOfShape([]int{1000, 1}, rows)
	if err != nil {
		b.Fatal(err)
	}
	mask := make([]bool, 1000*1000)
	for i := range mask {
		mask[i] = i%3 != 0
	}
	m, err := nd.MaskOfShape([]int{1000, 1000}, mask)
	if err != nil {
		b.Fatal(err)
	}
	shape := []int{1000, 1000}
	for _, c := range []struct {
		name  string
		items []nd.Item
	}{{"broadcast", nd.Vectorized([]nd.Item{col, nd.IndexArray(rows...)})}, {"mask2d", []nd.Item{m}}} {
		p, ok, err := nd.NewPointwise(c.items, shape)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		buf := make([]int, 2*p.Len())
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(16 * p.Len()))
			b.ReportAllocs()
			for b.Loop() {
				p.Points(0, p.Len(), buf)
			}
		})
		if c.name == "broadcast" {
			src := make([]int, len(buf))
			b.Run("memcpy", func(b *testing.B) {
				b.SetBytes(int64(16 * p.Len()))
				b.ReportAllocs()
				for b.Loop() {
					copy(buf, src)
				}
			})
		}
	}
}

func ExampleNewPointwise() {
	// NumPy's a[[[0], [2]], [1, 3]]: the index arrays broadcast to 2×2.
	items, _ := nd.ParseSelection("[[0], [2]], [1, 3]")
	p, pointwise, _ := nd.NewPointwise(items, []int{5, 6})
	fmt.Println(pointwise, p.Shape(), p.Len())
	for k := range p.Len() {
		fmt.Print(p.Points(k, 1, nil).At(0), " ")
	}
	fmt.Println()
	// Output:
	// true [2 2] 4
	// [0 1] [0 3] [2 1] [2 3]
}

// TestPointwiseRange: Points past the end, before the start or of no
// points gives what lies inside, without panicking.
func TestPointwiseRange(t *testing.T) {
	items, err := nd.ParseSelection("[[0], [2]], [1, 3]")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := nd.NewPointwise(items, []int{5, 6})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, n, want int }{{0, 4, 4}, {3, 10, 1}, {4, 1, 0}, {-1, 2, 0}, {2, -1, 0}, {math.MaxInt, 1, 0}, {math.MinInt, math.MaxInt, 0}} {
		if got := p.Points(c.from, c.n, nil); got.Len() != c.want {
			t.Errorf("Points(%d, %d): %d points, want %d", c.from, c.n, got.Len(), c.want)
		}
	}
	if got := p.Points(3, 10, nil).At(0); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("Points(3, 10) = %v, want [2 3]", got)
	}
	var zero nd.Pointwise
	if zero.Len() != 0 || zero.Shape() != nil || zero.Points(0, 1, nil).Len() != 0 {
		t.Errorf("the zero Pointwise: %d %v", zero.Len(), zero.Shape())
	}
}
