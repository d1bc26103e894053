package pipeline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
)

// TestGatherParallelEqualsGather checks the slabbed gather against one
// nd.Gather, with the first dimension listed and not.
func TestGatherParallelEqualsGather(t *testing.T) {
	rows, cols := 1500, 3000 // 2 workers' worth of gatherMinBytes at 2-byte items
	src := make([]byte, rows*cols*2)
	for i := range src {
		src[i] = byte(i * 7)
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 2*rows)
	for i := range order {
		order[i] = r.IntN(rows)
	}
	colOrder := make([]int, cols)
	for i := range colOrder {
		colOrder[i] = r.IntN(cols)
	}
	for _, index := range [][][]int{{order, nil}, {order, colOrder}, {nil, colOrder}} {
		n := rows
		if index[0] != nil {
			n = len(index[0])
		}
		want := make([]byte, n*cols*2)
		got := make([]byte, n*cols*2)
		sv := nd.Contiguous(src, []int{rows, cols}, 2)
		nd.Gather(nd.Contiguous(want, []int{n, cols}, 2), sv, index)
		gatherParallel(nd.Contiguous(got, []int{n, cols}, 2), sv, index, 4)
		if !bytes.Equal(got, want) {
			t.Fatalf("index lists %v/%v: parallel gather differs", index[0] != nil, index[1] != nil)
		}
	}
}

// nestedSpecs is a sharded chain whose inner chunks are shards of their
// own (4 × 6 of 2 × 3), all plain bytes.
const nestedSpecs = `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 6],
		"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`

// specGrid is the grid of an array of shape and chunks with the codecs
// specs (JSON) and item type typ.
func specGrid(tb testing.TB, specs string, shape, chunk []int, typ dtype.DataType) *Grid {
	tb.Helper()
	var cs []codecs.Spec
	if err := json.Unmarshal([]byte(specs), &cs); err != nil {
		tb.Fatal(err)
	}
	chain, err := codecs.NewChain(cs, codecs.ChunkRepr{Shape: chunk, DType: typ, Fill: make([]byte, typ.Size())})
	if err != nil {
		tb.Fatal(err)
	}
	l, err := sharding.LayoutOf(chain)
	if err != nil {
		tb.Fatal(err)
	}
	return &Grid{Shape: shape, ChunkShape: chunk, Chain: chain, Shard: l}
}

// TestSortPointsKeyEqualsTuple checks the one-integer hierarchical key
// against the tuple comparison it stands for (the fallback for hierarchies
// past 64 bits), on a grid of shards with nested inner shards and on a
// plain grid, with repeats, for reads and writes.
func TestSortPointsKeyEqualsTuple(t *testing.T) {
	for _, c := range []struct {
		specs string
		chunk []int
	}{{nestedSpecs, []int{8, 12}}, {`[{"name": "bytes", "configuration": {"endian": "little"}}]`, []int{5, 7}}} {
		g := specGrid(t, c.specs, []int{37, 50}, c.chunk, dtype.TypeUint8)
		r := rand.New(rand.NewPCG(3, 4))
		pts := nd.Points{Rank: 2}
		for range 3000 {
			pts.Coords = append(pts.Coords, r.IntN(37), r.IntN(50))
		}
		for _, last := range []bool{false, true} {
			s1, o1 := sortPoints(g, pts, last)
			s2, o2 := sortPointsByTuple(g, pts, last)
			if !slices.Equal(s1.Coords, s2.Coords) || !slices.Equal(o1, o2) {
				t.Fatalf("chunks %v, write %v: the integer key and the tuple sort differ", c.chunk, last)
			}
			if len(o1) == 0 || s1.Len() >= pts.Len() {
				t.Fatalf("chunks %v: %d distinct of %d points: repeats expected", c.chunk, s1.Len(), pts.Len())
			}
		}
		sorted, _ := sortPoints(g, pts, false)
		if again, order := sortPoints(g, sorted, false); order != nil || !slices.Equal(again.Coords, sorted.Coords) {
			t.Fatalf("chunks %v: sorted distinct points are sorted again", c.chunk)
		}
	}
}

func TestRadixSortStable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 255, 256, 3000} {
		for _, bitsUsed := range []uint{3, 17, 64} {
			type kv struct{ k, v uint64 }
			xs := make([]kv, n)
			for i := range xs {
				xs[i] = kv{r.Uint64() >> (64 - bitsUsed), uint64(i)}
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b kv) int {
				switch {
				case a.k < b.k:
					return -1
				case a.k > b.k:
					return 1
				}
				return 0
			})
			got := radixSort(xs, func(x kv) uint64 { return x.k })
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d, %d-bit keys: radix sort differs from a stable sort", n, bitsUsed)
			}
		}
	}
}

// TestDividerExact checks the reciprocal division against the plain one
// at the edges of the 32-bit range and at random, for small, odd,
// power-of-two and huge divisors.
func TestDividerExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	divisors := []int{1, 2, 3, 7, 16, 17, 32, 100, 511, 512, 4096, 65535, 1<<31 - 1}
	if huge := uint64(1) << 31; strconv.IntSize == 64 {
		divisors = append(divisors, int(huge)) // past int32: 64-bit platforms only
	}
	for range 50 {
		divisors = append(divisors, 1+r.IntN(1<<20))
	}
	for _, d := range divisors {
		v := newDivider(d)
		ns := []uint64{0, 1, uint64(d) - 1, uint64(d), uint64(d) + 1, 1<<32 - 1, 1 << 32, 1<<40 + 3}
		for range 2000 {
			ns = append(ns, uint64(r.Uint32()), r.Uint64()>>r.IntN(64))
		}
		for _, n := range ns {
			if got, want := v.div(n), n/uint64(d); got != want {
				t.Fatalf("%d / %d = %d, want %d", n, d, got, want)
			}
		}
	}
}

// TestRadixSortBitsStable checks the packed sort of bit fields against a
// stable sort by the same field, for fields of several widths and places.
func TestRadixSortBitsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 300, 5000} {
		for _, f := range [][2]uint{{0, 3}, {17, 40}, {5, 64}, {20, 21}, {9, 9}} {
			xs := make([]uint64, n)
			for i := range xs {
				xs[i] = r.Uint64()
			}
			field := func(x uint64) uint64 {
				if f[1] <= f[0] {
					return 0
				}
				return x << (64 - f[1]) >> (64 - f[1] + f[0])
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(field(a), field(b)) })
			if got := radixSortBits(xs, nil, f[0], f[1]); !slices.Equal(got, want) {
				t.Fatalf("n=%d, bits %v: radix sort differs from a stable sort", n, f)
			}
		}
	}
}

// BenchmarkSortPoints groups (a read, sub-benchmark read) and sorts (a
// write: distinct points, the last value wins) 100,000 random points of gatherbench's
// cube16-small geometry (128 × 256 × 256, shards of 128³, inner chunks of
// 16³): the per-point cost a gather pays before any chunk is read.
func BenchmarkSortPoints(b *testing.B) {
	specs := `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [16, 16, 16],
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	g := specGrid(b, specs, []int{128, 256, 256}, []int{128, 128, 128}, dtype.TypeFloat32)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 100_000
	pts := nd.Points{Rank: 3}
	for range n {
		pts.Coords = append(pts.Coords, r.IntN(128), r.IntN(256), r.IntN(256))
	}
	b.ReportAllocs()
	// CPU time of the process beside wall time: on a shared machine the
	// wall time is mostly waiting for a core.
	// read: on one goroutine; read-parallel: on GOMAXPROCS, as ReadPoints
	// groups them.
	for _, name := range []string{"read", "read-parallel"} {
		workers := 1
		if name == "read-parallel" {
			workers = runtime.GOMAXPROCS(0)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				gr, err := groupPoints(g, pts, workers)
				if err != nil {
					b.Fatal(err)
				}
				gr.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/point")
			b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N)/n, "cpu-ns/point")
		})
	}
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		sortPoints(g, pts, true)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/point")
	b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N)/n, "cpu-ns/point")
}

// TestGroupPoints checks the read side's grouping on the nested-shard grid
// of TestSortPointsKeyEqualsTuple, a grid of many chunks and one of plain
// shards: the grouped points are the points asked, moved by order, their
// read units (by the tuple order of chunk coordinates at every level)
// never decrease, with the counting sort (few units) and the radix sort
// (many) alike, and the run ends at the grid and first inner level are
// those found by dividing every coordinate; an out-of-bounds point is
// ErrOutOfBounds.
func TestGroupPoints(t *testing.T) {
	plain := `[{"name": "bytes", "configuration": {"endian": "little"}}]`
	sharded := `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 5],
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	for _, c := range []struct {
		specs        string
		shape, chunk []int
		n            int
		sorted       bool
	}{
		{nestedSpecs, []int{37, 50}, []int{8, 12}, 3000, false}, // 2 × 5 × 4 × 8 units: counting
		{nestedSpecs, []int{37, 50}, []int{8, 12}, 3000, true},
		{plain, []int{3000, 4000}, []int{1, 1}, 500, false}, // 12M units: radix
		{plain, []int{3000, 4000}, []int{1, 1}, 500, true},
		{sharded, []int{3000, 4000}, []int{9, 10}, 700, false}, // radix, sharded
		{sharded, []int{40, 50}, []int{9, 10}, 700, false},     // counting, sharded
		{plain, []int{37, 50}, []int{5, 7}, 1, false},
		{sharded, []int{40, 50}, []int{9, 10}, 40000, false}, // counting, in parallel
		{nestedSpecs, []int{37, 50}, []int{8, 12}, 20000, false},
		{plain, []int{300, 400}, []int{1, 1}, 30000, false}, // 120k units: radix, its first pass in parallel
	} {
		g := specGrid(t, c.specs, c.shape, c.chunk, dtype.TypeUint8)
		lv := g.levels()
		unitOf := func(p []int, levels int) []int {
			var u []int
			for _, shape := range lv[:levels] {
				for d, s := range shape {
					u = append(u, p[d]/s)
				}
			}
			return u
		}
		r := rand.New(rand.NewPCG(9, 10))
		pts := nd.Points{Rank: 2}
		for range c.n {
			pts.Coords = append(pts.Coords, r.IntN(c.shape[0]), r.IntN(c.shape[1]))
		}
		if c.sorted {
			gr, err := groupPoints(g, pts, 1)
			if err != nil {
				t.Fatal(err)
			}
			grouped, _ := unplace(t, g, gr, pts)
			pts = nd.Points{Rank: 2, Coords: slices.Clone(grouped.Coords)}
			gr.release()
		}
		gr, err := groupPoints(g, pts, 1)
		if err != nil {
			t.Fatal(err)
		}
		grouped, places := unplace(t, g, gr, pts)
		if gr.order != nil {
			t.Fatalf("%v: points regrouped with an order, not places", c.chunk)
		}
		// On 3 goroutines (from groupParallelMin points on), the grouping
		// is the one goroutine's.
		gr3, err := groupPoints(g, pts, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gr3.pts.Coords, gr.pts.Coords) || !slices.Equal(gr3.places, gr.places) || !slices.Equal(gr3.placed, gr.placed) ||
			!slices.Equal(gr3.chunks, gr.chunks) || !slices.Equal(gr3.inner, gr.inner) || gr3.units != gr.units ||
			!slices.Equal(gr3.chunkAt, gr.chunkAt) || !slices.Equal(gr3.innerAt, gr.innerAt) {
			t.Fatalf("%v: %d points grouped on 3 goroutines differ from those grouped on one", c.chunk, c.n)
		}
		if c.n > 1 && !c.sorted && places == nil || c.sorted && places != nil {
			t.Fatalf("%v: random points came back as grouped, or grouped ones as not", c.chunk)
		}
		if places != nil {
			if grouped.Len() != pts.Len() || len(places) != pts.Len() {
				t.Fatalf("%v: %d grouped points, %d places, of %d", c.chunk, grouped.Len(), len(places), pts.Len())
			}
			seen := make([]bool, pts.Len())
			for i, k := range places {
				if seen[k] || !slices.Equal(grouped.At(i), pts.At(k)) {
					t.Fatalf("%v: grouped point %d %v has place %d (seen before: %v), which holds %v", c.chunk, i, grouped.At(i), k, seen[k], pts.At(k))
				}
				seen[k] = true
			}
		}
		for i := 1; i < grouped.Len(); i++ {
			if slices.Compare(unitOf(grouped.At(i-1), len(lv)), unitOf(grouped.At(i), len(lv))) > 0 {
				t.Fatalf("%v: grouped point %d %v is in a unit before point %d's %v", c.chunk, i, grouped.At(i), i-1, grouped.At(i-1))
			}
		}
		ends := func(levels int) []int {
			var e []int
			for i := 1; i <= grouped.Len(); i++ {
				if i == grouped.Len() || !slices.Equal(unitOf(grouped.At(i-1), levels), unitOf(grouped.At(i), levels)) {
					e = append(e, i)
				}
			}
			return e
		}
		if want := ends(1); !slices.Equal(gr.chunks, want) {
			t.Fatalf("%v: chunk runs end at %v, want %v", c.chunk, gr.chunks, want)
		}
		// Placed: the chunk of every run, at the grid and the first inner
		// level.
		kr, _ := newHierKeyer(g)
		if placedWant := c.specs != nestedSpecs && kr.units <= uint64(2*c.n+4096); (gr.placed != nil) != placedWant {
			t.Fatalf("%v: placed %v, want %v", c.chunk, gr.placed != nil, placedWant)
		}
		if gr.placed != nil {
			// Grid coordinates, then those within the shard.
			at := func(levels int) []int {
				var a []int
				for _, e := range ends(levels) {
					p := grouped.At(e - 1)
					for d := range 2 {
						if levels == 1 {
							a = append(a, p[d]/lv[0][d])
						} else {
							a = append(a, p[d]%lv[0][d]/lv[1][d])
						}
					}
				}
				return a
			}
			if want := at(1); !slices.Equal(gr.chunkAt, want) {
				t.Fatalf("%v: chunks of the runs %v, want %v", c.chunk, gr.chunkAt, want)
			}
			if len(lv) > 1 {
				if want := at(2); !slices.Equal(gr.innerAt, want) {
					t.Fatalf("%v: inner chunks of the runs %v, want %v", c.chunk, gr.innerAt, want)
				}
			}
		}
		if want := ends(len(lv)); gr.units != len(want) {
			t.Fatalf("%v: %d unit runs, want %d", c.chunk, gr.units, len(want))
		}
		if len(lv) > 1 {
			if want := ends(2); !slices.Equal(gr.inner, want) {
				t.Fatalf("%v: inner runs end at %v, want %v", c.chunk, gr.inner, want)
			}
		} else if len(gr.inner) != 0 {
			t.Fatalf("%v: inner runs %v of an unsharded grid", c.chunk, gr.inner)
		}
		gr.release()
		gr3.release()
		bad := nd.Points{Rank: 2, Coords: slices.Clone(pts.Coords)}
		bad.Coords[2*(c.n/2)+1] = c.shape[1]
		bad.Coords[2*(c.n-1)] = -1 // a later one, in the last worker's slice
		for _, workers := range []int{1, 3} {
			want := fmt.Sprintf("point %d has coordinate %d in dimension 1", c.n/2, c.shape[1])
			if c.n == 1 {
				want = "point 0 has coordinate -1 in dimension 0"
			}
			if _, err := groupPoints(g, bad, workers); !errors.Is(err, nd.ErrOutOfBounds) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v: points out of bounds on %d goroutines: %v, want %q", c.chunk, workers, err, want)
			}
		}
	}
}

// unplace returns the points gr grouped and their places (nil when the
// points asked were kept as grouped), from its points or, where gr is
// placed, from its places in pts; it checks the element of every placed
// point: its C-order offset within its read unit.
func unplace(t *testing.T, g *Grid, gr grouping, pts nd.Points) (nd.Points, []int) {
	t.Helper()
	if gr.placed == nil {
		return gr.pts, gr.places
	}
	unit := g.unitShape()
	if !slices.Equal(gr.elemShape, unit) {
		t.Fatalf("elements counted in chunks of %v, want %v", gr.elemShape, unit)
	}
	grouped := nd.Points{Rank: pts.Rank}
	places := make([]int, len(gr.placed))
	identity := true
	for i, x := range gr.placed {
		k := int(x >> nd.ElemBits)
		if k >= pts.Len() {
			t.Fatalf("grouped point %d has place %d, of %d", i, k, pts.Len())
		}
		p := pts.At(k)
		e := 0
		for d, c := range unit {
			e = e*c + p[d]%c
		}
		if got := int(x & (1<<nd.ElemBits - 1)); got != e {
			t.Fatalf("grouped point %d %v: element %d, want %d", i, p, got, e)
		}
		grouped.Coords = append(grouped.Coords, p...)
		places[i] = k
		identity = identity && k == i
	}
	if identity {
		return pts, nil
	}
	return grouped, places
}

// TestUnitPow2 checks the shift-and-mask read-unit index of hierarchies of
// powers of two against the division chain of hierKeyer.unit, on plain
// and nested shards with grids of any size, and that other hierarchies do
// not take it.
func TestUnitPow2(t *testing.T) {
	nested := `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 4, 16],
		"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	sharded := `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [16, 16, 16],
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	plain := `[{"name": "bytes", "configuration": {"endian": "little"}}]`
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		specs        string
		shape, chunk []int
		pow2         bool
	}{
		{nested, []int{100, 37, 333}, []int{32, 8, 64}, true},
		{sharded, []int{128, 256, 200}, []int{128, 128, 128}, true},
		{plain, []int{1000, 999, 5}, []int{64, 1, 4}, true},
		{plain, []int{1000, 999, 5}, []int{64, 3, 4}, false},
		{sharded, []int{100, 100, 100}, []int{48, 32, 32}, false}, // radix 3
	} {
		g := specGrid(t, c.specs, c.shape, c.chunk, dtype.TypeUint8)
		kr, ok := newHierKeyer(g)
		if !ok || kr.pow2 != c.pow2 {
			t.Fatalf("%v: keyer %v, pow2 %v, want %v", c.chunk, ok, kr.pow2, c.pow2)
		}
		if !kr.pow2 {
			continue
		}
		rem := make([]uint64, 3)
		for range 5000 {
			p := []int{r.IntN(c.shape[0]), r.IntN(c.shape[1]), r.IntN(c.shape[2])}
			if got, want := kr.unitPow2(p), kr.unit(p, rem); got != want {
				t.Fatalf("%v: point %v: unit %d, want %d", c.chunk, p, got, want)
			}
		}
	}
}

// TestFillUnits checks the table path of hierKeyer.fillUnits (dimensions
// short beside the points) against checkedUnit point by point, on ranks 1
// to 4, plain, sharded and non-power-of-two grids, and that it reports
// the first point outside the shape, below zero or past the end.
func TestFillUnits(t *testing.T) {
	plain := `[{"name": "bytes", "configuration": {"endian": "little"}}]`
	sharded := func(inner string) string {
		return `[{"name": "sharding_indexed", "configuration": {"chunk_shape": ` + inner + `,
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		specs        string
		shape, chunk []int
	}{
		{plain, []int{97}, []int{10}},
		{plain, []int{37, 50}, []int{5, 7}},
		{sharded("[16, 16, 16]"), []int{128, 256, 200}, []int{128, 128, 128}},
		{sharded("[3, 5, 2]"), []int{40, 51, 33}, []int{9, 10, 4}},
		{nestedSpecs, []int{37, 50}, []int{8, 12}},
		{sharded("[2, 3, 2, 5]"), []int{9, 13, 8, 21}, []int{4, 6, 4, 10}},
	} {
		g := specGrid(t, c.specs, c.shape, c.chunk, dtype.TypeUint8)
		kr, ok := newHierKeyer(g)
		if !ok {
			t.Fatalf("%v: no keyer", c.chunk)
		}
		rank, n := len(c.shape), 4000
		coords := make([]int, n*rank)
		for k := range n {
			for d, l := range c.shape {
				coords[k*rank+d] = r.IntN(l)
			}
		}
		s := new(gatherScratch)
		us := make([]uint64, n)
		if k := kr.fillUnits(us, coords, g.Shape, s); k != -1 {
			t.Fatalf("%v: point %d reported outside", c.chunk, k)
		}
		if len(s.tab) == 0 {
			t.Fatalf("%v: %d points did not take the tables", c.chunk, n)
		}
		rem := make([]uint64, rank)
		for k := range n {
			want, _ := kr.checkedUnit(coords[k*rank:(k+1)*rank], g.Shape, rem)
			if us[k] != want {
				t.Fatalf("%v: point %v: unit %d, want %d", c.chunk, coords[k*rank:(k+1)*rank], us[k], want)
			}
		}
		for _, bad := range []int{-1, c.shape[rank-1], math.MaxInt} {
			k := n / 3
			saved := coords[k*rank+rank-1]
			coords[k*rank+rank-1] = bad
			if got := kr.fillUnits(us, coords, g.Shape, s); got != k {
				t.Fatalf("%v: coordinate %d of point %d: reported point %d", c.chunk, bad, k, got)
			}
			coords[k*rank+rank-1] = saved
		}
	}
}
