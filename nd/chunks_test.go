package nd

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomSelection draws a shape of up to 4 small dimensions, a chunk shape
// and a selection on it (indices and slices with any bounds and steps).
func randomSelection(r *rand.Rand) (shape, chunk []int, items []Item) {
	nd := r.IntN(5)
	shape = make([]int, nd)
	chunk = make([]int, nd)
	for d := range nd {
		shape[d] = r.IntN(13)
		chunk[d] = 1 + r.IntN(6)
		bound := func() int { return r.IntN(2*shape[d]+5) - shape[d] - 2 }
		switch k := r.IntN(6); {
		case k == 0 && shape[d] > 0:
			items = append(items, Index(r.IntN(2*shape[d])-shape[d]))
		case k == 1:
			items = append(items, All())
		default:
			it := Item{}
			if r.IntN(4) > 0 {
				it = SliceFrom(bound())
			}
			if r.IntN(4) > 0 {
				it.hasStop, it.stop = true, bound()
			}
			if r.IntN(3) > 0 {
				step := 1 + r.IntN(7)
				if r.IntN(2) == 0 {
					step = -step
				}
				it = it.WithStep(step)
			}
			items = append(items, it)
		}
	}
	if nd > 0 && r.IntN(4) == 0 { // trailing items may be left out
		items = items[:r.IntN(nd)]
	}
	return shape, chunk, items
}

// element is one selected element: its chunk, its place in the chunk, and
// its place in the output (FullShape coordinates).
type element struct{ chunk, local, dst [4]int }

// bruteForce enumerates every selected element.
func bruteForce(sel Selection, chunk []int) []element {
	var out []element
	full := sel.FullShape()
	if NumElements(full) == 0 {
		return nil
	}
	j := make([]int, len(sel))
	for {
		var e element
		for d, dim := range sel {
			a := dim.Start + j[d]*dim.Step
			e.chunk[d], e.local[d], e.dst[d] = a/chunk[d], a%chunk[d], j[d]
		}
		out = append(out, e)
		d := len(j) - 1
		for ; d >= 0; d-- {
			j[d]++
			if j[d] < full[d] {
				break
			}
			j[d] = 0
		}
		if d < 0 {
			break
		}
	}
	return out
}

// fromParts expands chunk parts into their elements.
func fromParts(t *testing.T, sel Selection, chunk []int) ([]element, int) {
	var out []element
	parts := 0
	var prev []int
	for p := range sel.Chunks(chunk) {
		parts++
		if prev != nil && slices.Compare(prev, p.Coords) >= 0 {
			t.Fatalf("%s chunks %v: coords %v after %v, not C order", sel, chunk, p.Coords, prev)
		}
		prev = p.Coords
		if p.NumElements() == 0 {
			t.Fatalf("%s chunks %v: empty part %+v", sel, chunk, p)
		}
		n := len(sel)
		j := make([]int, n)
		for {
			var e element
			for d := range n {
				e.chunk[d] = p.Coords[d]
				e.local[d] = p.SrcStart[d] + j[d]*p.SrcStep[d]
				e.dst[d] = p.DstStart[d] + j[d]
				if e.local[d] < 0 || e.local[d] >= chunk[d] {
					t.Fatalf("%s chunks %v: part %+v reaches local index %v", sel, chunk, p, e.local)
				}
			}
			out = append(out, e)
			d := n - 1
			for ; d >= 0; d-- {
				j[d]++
				if j[d] < p.Count[d] {
					break
				}
				j[d] = 0
			}
			if d < 0 {
				break
			}
		}
	}
	return out, parts
}

func sortElements(e []element) {
	slices.SortFunc(e, func(a, b element) int { return slices.Compare(a.dst[:], b.dst[:]) })
}

// TestChunksBruteForce compares Chunks with an element-by-element
// enumeration on random shapes, chunk grids and selections.
func TestChunksBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		shape, chunk, items := randomSelection(r)
		sel, err := Normalize(items, shape)
		if err != nil {
			continue // out-of-range index: covered by the Normalize tests
		}
		want := bruteForce(sel, chunk)
		got, parts := fromParts(t, sel, chunk)
		sortElements(want)
		sortElements(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: %s on %v chunks %v:\n got %v\nwant %v", i, sel, shape, chunk, got, want)
		}
		if n := sel.NumChunks(chunk); n != parts {
			t.Fatalf("case %d: %s chunks %v: NumChunks = %d, Chunks yielded %d", i, sel, chunk, n, parts)
		}
	}
}

// TestChunksPlaceData assembles selections from chunk buffers with
// SrcView, DstView and Copy, and compares with a direct gather.
func TestChunksPlaceData(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 1500 {
		shape, chunk, items := randomSelection(r)
		sel, err := Normalize(items, shape)
		if err != nil {
			continue
		}
		const isz = 4
		full := sel.FullShape()
		want := make([]byte, NumElements(full)*isz)
		j := make([]int, len(sel))
		for k := 0; k < NumElements(full); k++ {
			lin := 0
			for d, dim := range sel {
				lin = lin*shape[d] + dim.Start + j[d]*dim.Step
			}
			binary.LittleEndian.PutUint32(want[k*isz:], uint32(lin))
			for d := len(j) - 1; d >= 0; d-- {
				if j[d]++; j[d] < full[d] {
					break
				}
				j[d] = 0
			}
		}
		out := Contiguous(make([]byte, len(want)), full, isz)
		for p := range sel.Chunks(chunk) {
			// The chunk as a codec would decode it: full chunk shape, with the
			// array's element numbers where the chunk lies inside the array.
			buf := Contiguous(make([]byte, NumElements(chunk)*isz), chunk, isz)
			l := make([]int, len(chunk))
			for k := 0; k < NumElements(chunk); k++ {
				lin, inside := 0, true
				for d := range chunk {
					a := p.Coords[d]*chunk[d] + l[d]
					inside = inside && a < shape[d]
					lin = lin*shape[d] + a
				}
				if inside {
					binary.LittleEndian.PutUint32(buf.Data[k*isz:], uint32(lin))
				} else {
					binary.LittleEndian.PutUint32(buf.Data[k*isz:], 0xdeadbeef)
				}
				for d := len(l) - 1; d >= 0; d-- {
					if l[d]++; l[d] < chunk[d] {
						break
					}
					l[d] = 0
				}
			}
			Copy(p.DstView(out), p.SrcView(buf))
		}
		if !slices.Equal(out.Data, want) {
			t.Fatalf("case %d: %s on %v chunks %v: assembled output differs", i, sel, shape, chunk)
		}
	}
}

func TestChunksExamples(t *testing.T) {
	sel, err := Normalize([]Item{Every(-3), Index(5)}, []int{10, 8})
	if err != nil {
		t.Fatal(err)
	}
	// Rows 9, 6, 3, 0 with chunks of 4 rows: chunk 0 holds 3 and 0 (output
	// rows 2, 3), chunk 1 holds 6 (output 1), chunk 2 holds 9 (output 0).
	want := []ChunkPart{
		{Coords: []int{0, 1}, SrcStart: []int{3, 1}, SrcStep: []int{-3, 1}, Count: []int{2, 1}, DstStart: []int{2, 0}},
		{Coords: []int{1, 1}, SrcStart: []int{2, 1}, SrcStep: []int{-3, 1}, Count: []int{1, 1}, DstStart: []int{1, 0}},
		{Coords: []int{2, 1}, SrcStart: []int{1, 1}, SrcStep: []int{-3, 1}, Count: []int{1, 1}, DstStart: []int{0, 0}},
	}
	got := slices.Collect(sel.Chunks([]int{4, 4}))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if n := sel.NumChunks([]int{4, 4}); n != 3 {
		t.Fatalf("NumChunks = %d", n)
	}
	// Steps larger than the chunk skip chunks.
	sel, _ = Normalize([]Item{Slice(1, 20, 7)}, []int{20})
	got = slices.Collect(sel.Chunks([]int{3}))
	var coords []int
	for _, p := range got {
		coords = append(coords, p.Coords[0])
	}
	if !slices.Equal(coords, []int{0, 2, 5}) { // indices 1, 8, 15
		t.Fatalf("coords %v", coords)
	}
	// 0-d selections have one chunk.
	sel, _ = Normalize(nil, nil)
	if got := slices.Collect(sel.Chunks(nil)); len(got) != 1 || len(got[0].Coords) != 0 {
		t.Fatalf("0-d parts %+v", got)
	}
	// Bad chunk shapes yield nothing.
	sel, _ = Normalize(nil, []int{4})
	for _, cs := range [][]int{nil, {0}, {-1}, {2, 2}} {
		if n := len(slices.Collect(sel.Chunks(cs))); n != 0 || sel.NumChunks(cs) != 0 {
			t.Fatalf("chunk shape %v: %d parts", cs, n)
		}
	}
	// Early break stops the iteration.
	sel, _ = Normalize(nil, []int{100})
	n := 0
	for range sel.Chunks([]int{1}) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatal(n)
	}
}

func TestCoversChunk(t *testing.T) {
	arr := []int{10, 7}
	chunk := []int{4, 4}
	cases := []struct {
		sel  string
		want []bool // per part, in C order
	}{
		{":, :", []bool{true, true, true, true, true, true}},         // edge chunks clipped
		{"::-1, :", []bool{true, true, true, true, true, true}},      // reversed still covers
		{"1:, :", []bool{false, false, true, true, true, true}},      // first row missing
		{":, ::2", []bool{false, false, false, false, false, false}}, // stepped
		{"0:4, 4:7", []bool{true}},                                   // exactly one edge chunk
		{"0:4, 4:6", []bool{false}},                                  // short of the array edge
		{"8:10, ::-1", []bool{true, true}},                           // last row of chunks
		{"3, :", []bool{false, false}},                               // a single row
	}
	for _, c := range cases {
		items, err := ParseSelection(c.sel)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := Normalize(items, arr)
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for p := range sel.Chunks(chunk) {
			got = append(got, p.CoversChunk(chunk, arr))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: covers %v, want %v", c.sel, got, c.want)
		}
	}
	one := ChunkPart{Coords: []int{0}, SrcStart: []int{0}, SrcStep: []int{1}, Count: []int{1}, DstStart: []int{0}}
	if !one.CoversChunk([]int{1}, []int{1}) || one.CoversChunk([]int{2}, []int{2}) || one.CoversChunk([]int{1, 1}, []int{1}) {
		t.Error("single-element coverage wrong")
	}
}

func BenchmarkChunks(b *testing.B) {
	sel, _ := Normalize([]Item{Range(100, 90000), Every(-1)}, []int{100000, 100000})
	chunk := []int{256, 256}
	b.ReportAllocs()
	b.SetBytes(int64(sel.NumChunks(chunk)))
	for b.Loop() {
		n := 0
		for p := range sel.Chunks(chunk) {
			n += p.Count[0]
		}
		if n == 0 {
			b.Fatal("no parts")
		}
	}
}

func ExampleSelection_Chunks() {
	// A 6x4 array of bytes, 0..23, stored in 4x3 chunks; read rows 5, 3, 1
	// of columns 1..3 (selection "5::-2, 1:").
	shape, chunkShape := []int{6, 4}, []int{4, 3}
	items, _ := ParseSelection("5::-2, 1:")
	sel, _ := Normalize(items, shape)
	out := Contiguous(make([]byte, sel.NumElements()), sel.FullShape(), 1)
	for p := range sel.Chunks(chunkShape) {
		// "Decode" the chunk: the array's values in the chunk's box.
		chunk := Contiguous(make([]byte, 12), chunkShape, 1)
		for i := range 4 {
			for j := range 3 {
				r, c := p.Coords[0]*4+i, p.Coords[1]*3+j
				if r < 6 && c < 4 {
					chunk.Data[i*3+j] = byte(r*4 + c)
				}
			}
		}
		fmt.Println(p.Coords, "covers whole chunk:", p.CoversChunk(chunkShape, shape))
		Copy(p.DstView(out), p.SrcView(chunk))
	}
	fmt.Println(sel.Shape(), out.Data)
	// Output:
	// [0 0] covers whole chunk: false
	// [0 1] covers whole chunk: false
	// [1 0] covers whole chunk: false
	// [1 1] covers whole chunk: false
	// [3 3] [21 22 23 13 14 15 5 6 7]
}
