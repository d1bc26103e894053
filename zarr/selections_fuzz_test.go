package zarr_test

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// fuzzSelArrays are a 9×11 uint16 array holding its C-order index + 1,
// chunked and sharded (the last chunk row missing), shared by the fuzz
// targets.
func fuzzSelArrays(f *testing.F) []*zarr.Array {
	ctx := context.Background()
	var arrays []*zarr.Array
	for _, opts := range [][]zarr.MetadataOption{nil, {zarr.Shards(4, 6)}} {
		chunks := []int{4, 6}
		if opts != nil {
			chunks = []int{2, 3}
		}
		meta, err := zarr.NewArrayMetadata([]int{9, 11}, dtype.TypeUint16, chunks, opts...)
		if err != nil {
			f.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, mem.New(), "a", meta)
		if err != nil {
			f.Fatal(err)
		}
		vals := make([]uint16, 8*11)
		for i := range vals {
			vals[i] = uint16(i + 1)
		}
		if err := zarr.Write(ctx, a, vals, nd.Range(0, 8)); err != nil {
			f.Fatal(err)
		}
		arrays = append(arrays, a)
	}
	return arrays
}

// fuzzValue is the element (i, j) of the fuzz arrays.
func fuzzValue(i, j int) uint16 {
	if i >= 8 {
		return 0
	}
	return uint16(i*11 + j + 1)
}

// FuzzPoints reads coordinate selections drawn from the input (signed
// coordinates, out of range too, repeats, any order) and checks them
// against an element-by-element reference; an out-of-range point must be
// an error, never a panic.
func FuzzPoints(f *testing.F) {
	arrays := fuzzSelArrays(f)
	f.Add([]byte{0, 0, 8, 10, 3, 4, 3, 4})
	f.Add([]byte{255, 255, 9, 0, 1, 2})
	f.Add([]byte{})
	// More points than ReadPointsBytes serves one by one: the lists are
	// normalised as they are grouped (pipeline.ReadPointLists), in range
	// and, in the second, with one point out of it.
	many := make([]byte, 2*150)
	for i := range many {
		many[i] = byte(i*37 + i/2)
	}
	f.Add(slices.Clone(many))
	many[201] = 11
	f.Add(many)
	f.Fuzz(func(t *testing.T, b []byte) {
		n := len(b) / 2
		coords := [][]int{make([]int, n), make([]int, n)}
		for k := range n {
			coords[0][k] = int(int8(b[2*k])) % 12
			coords[1][k] = int(int8(b[2*k+1])) % 14
		}
		for _, a := range arrays {
			got, shape, err := a.ReadPointsBytes(context.Background(), coords)
			inRange := true
			for k := range n {
				inRange = inRange && coords[0][k] >= -9 && coords[0][k] < 9 && coords[1][k] >= -11 && coords[1][k] < 11
			}
			if !inRange {
				if err == nil {
					t.Fatalf("%v: no error for a point out of range", coords)
				}
				continue
			}
			if err != nil || len(shape) != 1 || shape[0] != n {
				t.Fatalf("%v: shape %v, %v", coords, shape, err)
			}
			for k := range n {
				i, j := (coords[0][k]+9)%9, (coords[1][k]+11)%11
				if g := binary.LittleEndian.Uint16(got[2*k:]); g != fuzzValue(i, j) {
					t.Fatalf("%v: point %d (%d, %d) = %d, want %d", coords, k, i, j, g, fuzzValue(i, j))
				}
			}
		}
	})
}

// FuzzOrthogonal reads orthogonal selections parsed from text (index
// arrays, masks, slices, integers) and checks them against an
// element-by-element reference built from the normalised selection.
func FuzzOrthogonal(f *testing.F) {
	arrays := fuzzSelArrays(f)
	for _, s := range []string{"[[3, 1, 3, -1], ::-2]", "[True, False, True, False, True, False, True, False, True], 1:", "[], 5", "2, [1, 1, 1]", "[[8, 0, 4], 1:9:3]", "(0, 2), :"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		items, err := nd.ParseSelection(text)
		if err != nil {
			return
		}
		for _, a := range arrays {
			sel, err := a.Selection(items...)
			if err != nil {
				return
			}
			if sel.NumElements() > 1<<16 {
				return
			}
			got, _, err := a.ReadBytes(context.Background(), items...)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			k := 0
			for x := range sel[0].Len() {
				for y := range sel[1].Len() {
					i, j := sel[0].At(x), sel[1].At(y)
					if g := binary.LittleEndian.Uint16(got[2*k:]); g != fuzzValue(i, j) {
						t.Fatalf("%q: element %d (%d, %d) = %d, want %d", text, k, i, j, g, fuzzValue(i, j))
					}
					k++
				}
			}
			if 2*k != len(got) {
				t.Fatalf("%q: %d bytes for %d elements", text, len(got), k)
			}
		}
	})
}

// FuzzPointwise reads selections that NumPy reads pointwise (index arrays
// of any rank that broadcast, N-D masks, mixed with slices and integers)
// parsed from text, and checks shape and values against the points
// nd.Pointwise lists, element by element; bad texts must be errors.
func FuzzPointwise(f *testing.F) {
	arrays := fuzzSelArrays(f)
	for _, s := range []string{"[[0], [2]], [1, 3]", "[[8, -1]], ::-3", "[[[0, 1]], [[2, 3]]], [[10], [0]]", "[0, 1], 1:3",
		"1, [[0, 10], [5, 5]]", "[[True, False, True, False, True, False, True, False, True]], [[1], [2]]", "[[], []], [0]", "[[0, 9]], [0]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		items, err := nd.ParseSelection(text)
		if err != nil {
			return
		}
		p, ok, err := nd.NewPointwise(items, []int{9, 11})
		if err != nil || !ok || p.Len() > 1<<16 {
			return
		}
		pts := p.Points(0, p.Len(), nil)
		for _, a := range arrays {
			got, shape, err := a.ReadBytes(context.Background(), items...)
			if err != nil || !slices.Equal(shape, p.Shape()) || len(got) != 2*p.Len() {
				t.Fatalf("%q: shape %v, %d bytes, %v; want shape %v", text, shape, len(got), err, p.Shape())
			}
			for k := range pts.Len() {
				c := pts.At(k)
				if g := binary.LittleEndian.Uint16(got[2*k:]); g != fuzzValue(c[0], c[1]) {
					t.Fatalf("%q: element %d %v = %d, want %d", text, k, c, g, fuzzValue(c[0], c[1]))
				}
			}
		}
	})
}
