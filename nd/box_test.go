package nd

import (
	"reflect"
	"testing"
)

// TestBoxInto checks BoxInto against Normalize: the same selection for
// every box, false for everything else (and for what Normalize rejects),
// and no allocation with room in dst.
func TestBoxInto(t *testing.T) {
	shape := []int{10, 7, 4}
	items := []Item{Index(0), Index(9), Index(-1), Index(-10), Range(2, 5), Range(-3, 100), Range(5, 2),
		SliceFrom(3), SliceTo(-2), All(), Slice(1, 6, 1), Range(-100, 3), Every(1)}
	notBox := []Item{Index(10), Index(-11), Slice(0, 6, 2), Every(-1), Slice(6, 0, -1), Slice(0, 4, 0),
		Ellipsis, IndexArray(1, 2), Mask(make([]bool, 10))}
	var buf [8]Dim
	check := func(its []Item, wantBox bool) {
		t.Helper()
		got, ok := BoxInto(buf[:0], its, shape)
		want, err := Normalize(its, shape)
		if !wantBox {
			if ok {
				t.Errorf("%v: BoxInto took it (Normalize: %v, %v)", its, want, err)
			}
			return
		}
		if err != nil {
			if ok {
				t.Errorf("%v: BoxInto took what Normalize rejects: %v", its, err)
			}
			return
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: BoxInto %v, %v; Normalize %v", its, got, ok, want)
		}
	}
	for _, a := range items {
		check([]Item{a}, true)
		for _, b := range items {
			check([]Item{a, b}, true)
			check([]Item{a, b, items[len(a.String())%len(items)]}, true)
		}
		for _, x := range notBox {
			check([]Item{a, x}, false)
			check([]Item{x, a}, false)
		}
	}
	check(nil, true)
	check([]Item{All(), All(), All(), All()}, false) // more items than dimensions
	if _, ok := BoxInto(buf[:0], nil, []int{3, -1}); ok {
		t.Error("BoxInto took a negative dimension")
	}
	its := []Item{Index(3), Range(1, 5), All()}
	if a := testing.AllocsPerRun(100, func() { BoxInto(buf[:0], its, shape) }); a != 0 {
		t.Errorf("BoxInto allocates %v times with room in dst", a)
	}
}
