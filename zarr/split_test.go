package zarr_test

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// splitCase is an array of the split tests and the edges of its decode
// units per dimension (boundaries, ascending, from 0 to the extent).
type splitCase struct {
	name  string
	a     *zarr.Array
	units [][]int
}

// regularEdges returns the boundaries of units of edge u over n.
func regularEdges(n, u int) []int {
	var e []int
	for i := 0; i < n; i += u {
		e = append(e, i)
	}
	return append(e, n)
}

// splitCases returns arrays of every kind of unit hierarchy: plain chunks,
// shards, nested shards and a rectilinear grid.
func splitCases(t *testing.T) []splitCase {
	t.Helper()
	ctx := context.Background()
	st := mem.New()
	open := func(name string, shape, chunks []int, codecs string) *zarr.Array {
		newFloatArray(t, st, name, shape, chunks, codecs)
		a, err := zarr.OpenArray(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	meta, err := zarr.NewArrayMetadata([]int{30, 17}, dtype.TypeFloat32, nil, zarr.RectilinearChunks([]int{4, 4, 10, 3, 9}, []int{5, 12}))
	if err != nil {
		t.Fatal(err)
	}
	rect, err := zarr.CreateArray(ctx, st, "r", meta)
	if err != nil {
		t.Fatal(err)
	}
	return []splitCase{
		{"chunks", open("c", []int{50, 30}, []int{8, 16}, plainZstd), [][]int{regularEdges(50, 8), regularEdges(30, 16)}},
		{"shards", open("s", []int{64, 64}, []int{32, 32}, fmt.Sprintf(shardZstd, "[8,8]")), [][]int{regularEdges(64, 8), regularEdges(64, 8)}},
		{"nested shards", open("n", []int{64, 64}, []int{32, 32}, nestedZstd), [][]int{regularEdges(64, 8), regularEdges(64, 8)}},
		{"rectilinear", rect, [][]int{{0, 4, 8, 18, 21, 30}, {0, 5, 17}}},
	}
}

// unitOf returns the decode unit holding index i of edges e.
func unitOf(e []int, i int) int {
	k, _ := slices.BinarySearch(e, i+1)
	return k - 1
}

// coords yields the array coordinates of sel's output elements in C order.
func coords(sel nd.Selection) iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		if sel.NumElements() == 0 {
			return
		}
		pos := make([]int, len(sel))
		for {
			c := make([]int, len(sel))
			for d := range sel {
				c[d] = sel[d].At(pos[d])
			}
			if !yield(c) {
				return
			}
			d := len(sel) - 1
			for ; d >= 0; d-- {
				if pos[d]++; pos[d] < sel[d].Len() {
					break
				}
				pos[d] = 0
			}
			if d < 0 {
				return
			}
		}
	}
}

// maxUnitRun returns the longest run of dim's consecutive output positions
// whose indices lie in one decode unit of edges e.
func maxUnitRun(dim nd.Dim, e []int) int {
	best, run := 0, 0
	for k := range dim.Len() {
		if k > 0 && unitOf(e, dim.At(k)) == unitOf(e, dim.At(k-1)) {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}

// TestSplit: for random selections (slices of any step, single indices,
// index lists with repeats) of arrays of every unit hierarchy, Split's
// parts concatenated are the selection's output in order and SplitTiles'
// tiles cover it once; every part is within the bound; and where one
// decode unit fits (with the later dimensions whole, for Split), no
// decode unit is cut between two parts. The last is what the splitters
// Split replaced got wrong for strided selections (zarrcat aligned step-1
// slices only) and for rectilinear grids (string batches assumed one
// edge).
func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range splitCases(t) {
		for round := range 150 {
			items := randomItems(rng, c.a.Shape())
			if round == 0 {
				items = nil
			}
			sel, err := c.a.Selection(items...)
			if err != nil {
				t.Fatal(err)
			}
			maxBytes := []int64{2, 4, 40, 300, 1000, 5000, 1 << 20}[rng.IntN(7)]
			for _, tiles := range []bool{false, true} {
				split := c.a.Split
				if tiles {
					split = c.a.SplitTiles
				}
				where := fmt.Sprintf("%s %v maxBytes %d tiles %v", c.name, sel, maxBytes, tiles)
				var got [][]int
				partsOf := map[string]map[int]bool{} // decode unit → the parts touching it
				part := 0
				for sub := range split(sel, maxBytes) {
					if n := int64(sub.NumElements() * 4); n > maxBytes && sub.NumElements() > 1 || n == 0 {
						t.Fatalf("%s: part %v of %d bytes", where, sub, n)
					}
					for x := range coords(sub) {
						got = append(got, x)
						u := make([]int, len(x))
						for d := range x {
							u[d] = unitOf(c.units[d], x[d])
						}
						k := fmt.Sprint(u)
						if partsOf[k] == nil {
							partsOf[k] = map[int]bool{}
						}
						partsOf[k][part] = true
					}
					part++
				}
				want := slices.Collect(coords(sel))
				if tiles {
					cmp := func(x, y []int) int { return slices.Compare(x, y) }
					slices.SortFunc(got, cmp)
					slices.SortFunc(want, cmp)
				}
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("%s: parts cover %d elements, not the selection's %d in order", where, len(got), len(want))
				}
				if sel.Reorders() {
					continue
				}
				// Does one decode unit fit?
				need := int64(4)
				for d, dim := range sel {
					if tiles || d == 0 {
						need *= int64(maxUnitRun(dim, c.units[d]))
					} else {
						need *= int64(dim.Len())
					}
				}
				if need > maxBytes {
					continue
				}
				for u, ps := range partsOf {
					if len(ps) > 1 {
						t.Fatalf("%s: decode unit %s read by %d parts", where, u, len(ps))
					}
				}
			}
		}
	}
}

// oldSplit is zarrcat's splitSelection before Split replaced it, as the
// reference for the selections it cut right: step-1 slices of unsharded
// arrays, runs along the split dimension aligned to the chunk edge.
func oldSplit(sel nd.Selection, item int, units []int, maxBytes int64) [][2][]int {
	n := len(sel)
	var out [][2][]int
	d, rest := n, int64(item)
	for d > 0 && int64(sel[d-1].Len()) <= maxBytes/rest {
		rest *= int64(sel[d-1].Len())
		d--
	}
	if d == 0 {
		return nil
	}
	d--
	run := max(1, int(maxBytes/rest))
	aligned := units[d] > 1 && run >= units[d]
	if aligned {
		run -= run % units[d]
	}
	var rec func(j int, start, count []int)
	rec = func(j int, start, count []int) {
		if j < d {
			for k := range sel[j].Count {
				rec(j+1, append(start, sel[j].Start+k), append(count, 1))
			}
			return
		}
		for i := 0; i < sel[d].Count; {
			e := min(sel[d].Count, i+run)
			if end := sel[d].Start + e; aligned && e < sel[d].Count {
				e = max(i+1, end-end%units[d]-sel[d].Start)
			}
			s, c := append(slices.Clone(start), sel[d].Start+i), append(slices.Clone(count), e-i)
			for k := d + 1; k < n; k++ {
				s, c = append(s, sel[k].Start), append(c, sel[k].Count)
			}
			out = append(out, [2][]int{s, c})
			i = e
		}
	}
	rec(0, nil, nil)
	return out
}

// TestSplitAsBefore: on unsharded arrays and step-1 slices, Split cuts as
// zarrcat's splitter did, and SplitTiles of the whole array tiles it with
// TileShape's blocks, as Blocks did.
func TestSplitAsBefore(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	newFloatArray(t, st, "a", []int{50, 30, 7}, []int{8, 16, 3}, plainZstd)
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		sel := make(nd.Selection, 3)
		for d, n := range a.Shape() {
			lo := rng.IntN(n)
			sel[d] = nd.Dim{Start: lo, Count: 1 + rng.IntN(n-lo), Step: 1}
		}
		maxBytes := int64(4 + rng.IntN(50*30*7*4))
		var got [][2][]int
		for sub := range a.Split(sel, maxBytes) {
			s, c := make([]int, 3), make([]int, 3)
			for d, dim := range sub {
				s[d], c[d] = dim.Start, dim.Count
			}
			got = append(got, [2][]int{s, c})
		}
		want := oldSplit(sel, 4, []int{8, 16, 3}, maxBytes)
		if want == nil {
			want = [][2][]int{{{sel[0].Start, sel[1].Start, sel[2].Start}, {sel[0].Count, sel[1].Count, sel[2].Count}}}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%v maxBytes %d: parts %v, the old splitter's %v", sel, maxBytes, got, want)
		}
	}
	for _, budget := range []int64{2, 100, 1000, 4000, 20000, 1 << 20} {
		bs := a.TileShape(budget)
		var tiles []string
		for sub := range a.SplitTiles(must(a.Selection()), max(budget/2, 1)) {
			tiles = append(tiles, fmt.Sprint(sub))
		}
		var blocks []string
		for s0 := 0; s0 < 50; s0 += bs[0] {
			for s1 := 0; s1 < 30; s1 += bs[1] {
				for s2 := 0; s2 < 7; s2 += bs[2] {
					sel := must(a.Selection(nd.Range(s0, min(50, s0+bs[0])), nd.Range(s1, min(30, s1+bs[1])), nd.Range(s2, min(7, s2+bs[2]))))
					blocks = append(blocks, fmt.Sprint(sel))
				}
			}
		}
		if !slices.Equal(tiles, blocks) {
			t.Fatalf("budget %d: tiles %v, blocks of %v %v", budget, tiles, bs, blocks)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSplitTilesNested: when a shard does not fit but an inner shard
// does, tiles are whole inner shards, so no inner shard's index and
// chunks are read for two tiles (zarrbeam grew innermost chunks, cutting
// inner shards between blocks).
func TestSplitTilesNested(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	newFloatArray(t, st, "n", []int{64, 64}, []int{32, 32}, nestedZstd)
	a, err := zarr.OpenArray(ctx, st, "n")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for sub := range a.SplitTiles(must(a.Selection()), 2048) {
		if sub[0].Count != 16 || sub[1].Count != 32 || sub[0].Start%16 != 0 || sub[1].Start%32 != 0 {
			t.Fatalf("tile %v, want 16×32 at multiples of 16×32 (two inner shards of 16²)", sub)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d tiles, want 8", n)
	}
}
