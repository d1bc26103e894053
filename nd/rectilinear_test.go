package nd

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// expand returns the explicit edges of runs.
func expand(runs []Run) []int {
	var out []int
	for _, r := range runs {
		for range r.Count {
			out = append(out, r.Size)
		}
	}
	return out
}

// TestEdgesLocate checks Locate and Chunk against the explicit edges.
func TestEdgesLocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var runs []Run
		for range 1 + rng.IntN(5) {
			runs = append(runs, Run{Size: 1 + rng.IntN(5), Count: 1 + rng.IntN(3)})
		}
		all := expand(runs)
		total := 0
		for _, c := range all {
			total += c
		}
		extent := rng.IntN(total + 1)
		e, err := NewEdges(runs, extent)
		if err != nil {
			t.Fatal(err)
		}
		start, chunk := 0, 0
		for i := range extent {
			for i >= start+all[chunk] {
				start += all[chunk]
				chunk++
			}
			c, l := e.Locate(i)
			if c != chunk || l != i-start {
				t.Fatalf("%v over %d: element %d in chunk %d at %d, want %d at %d", runs, extent, i, c, l, chunk, i-start)
			}
			if s, n := e.Chunk(c); s != start || n != all[chunk] {
				t.Fatalf("chunk %d: %d+%d, want %d+%d", c, s, n, start, all[chunk])
			}
		}
		if extent > 0 && e.NumChunks() != chunk+1 {
			t.Fatalf("%v over %d: %d chunks, want %d", runs, extent, e.NumChunks(), chunk+1)
		}
		if _, err := NewEdges(runs, total+1); !errors.Is(err, ErrInvalidGrid) {
			t.Fatalf("edges short of the extent: %v", err)
		}
	}
}

// TestSubGridsCover checks that SubGrids splits random selections into parts
// that cover each selected element once, at the right output place and in
// the right chunk.
func TestSubGridsCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		rank := 1 + rng.IntN(3)
		shape := make([]int, rank)
		edges := make([]Edges, rank)
		items := make([]Item, rank)
		for d := range rank {
			shape[d] = 1 + rng.IntN(12)
			var runs []Run
			for sum := 0; sum < shape[d]; {
				r := Run{Size: 1 + rng.IntN(4), Count: 1 + rng.IntN(3)}
				runs = append(runs, r)
				sum += r.Size * r.Count
			}
			var err error
			if edges[d], err = NewEdges(runs, shape[d]); err != nil {
				t.Fatal(err)
			}
			switch rng.IntN(4) {
			case 0:
				items[d] = Index(rng.IntN(shape[d]))
			case 1:
				items[d] = IndexArray(rng.IntN(shape[d]), rng.IntN(shape[d]), rng.IntN(shape[d]))
			case 2:
				items[d] = Slice(shape[d]-1, -shape[d]-1, -1-rng.IntN(3))
			default:
				items[d] = Slice(rng.IntN(shape[d]), shape[d], 1+rng.IntN(3))
			}
		}
		sel, err := Normalize(items, shape)
		if err != nil {
			t.Fatal(err)
		}
		sel = sel.Compact()
		full := sel.FullShape()
		seen := make([]int, NumElements(full))
		subGrids := 0
		for b := range sel.SubGrids(edges) {
			subGrids++
			bs := b.Sel.FullShape()
			pos := make([]int, rank)
			for range NumElements(bs) {
				out := 0
				for d := range rank {
					local := b.Sel[d].At(pos[d])
					if local < 0 || local >= b.Shape[d] {
						t.Fatalf("local index %d outside sub-grid of %d", local, b.Shape[d])
					}
					global := b.Offset[d] + local
					o := b.DstStart[d] + pos[d]
					if global != sel[d].At(o) {
						t.Fatalf("dim %d: output %d takes %d, want %d", d, o, global, sel[d].At(o))
					}
					c, l := edges[d].Locate(global)
					if c != b.FirstChunk[d]+local/b.ChunkShape[d] || l != local%b.ChunkShape[d] {
						t.Fatalf("dim %d: element %d in chunk %d, sub-grid says %d", d, global, c, b.FirstChunk[d]+local/b.ChunkShape[d])
					}
					out = out*full[d] + o
				}
				seen[out]++
				for d := rank - 1; d >= 0; d-- {
					if pos[d]++; pos[d] < bs[d] {
						break
					}
					pos[d] = 0
				}
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%v over %v: output %d covered %d times", items, shape, i, n)
			}
		}
		if subGrids != sel.NumSubGrids(edges) {
			t.Fatalf("%d sub-grids, NumSubGrids %d", subGrids, sel.NumSubGrids(edges))
		}
	}
}

// TestEdgesHostile: huge counts cost one run; overflow and non-positive
// values are refused.
func TestEdgesHostile(t *testing.T) {
	// huge is 2^40 on 64-bit platforms, 2^8 on 32-bit ones.
	const huge = 1 << (bits.UintSize - 24)
	e, err := NewEdges([]Run{{1, math.MaxInt}, {7, 3}}, huge)
	if err != nil || len(e.Runs()) != 1 || e.NumChunks() != huge {
		t.Fatalf("%v %v", e.Runs(), err)
	}
	if c, l := e.Locate(huge - 1); c != huge-1 || l != 0 {
		t.Errorf("locate %d %d", c, l)
	}
	for _, runs := range [][]Run{{{0, 1}}, {{1, 0}}, {{-1, 5}}, {{math.MaxInt - 5, 1}, {10, 1}}} {
		if _, err := NewEdges(runs, math.MaxInt); !errors.Is(err, ErrInvalidGrid) {
			t.Errorf("%v: %v", runs, err)
		}
	}
	if !slices.Equal(CompressRuns([]int{3, 3, 1, 3}), []Run{{3, 2}, {1, 1}, {3, 1}}) {
		t.Error(CompressRuns([]int{3, 3, 1, 3}))
	}
}
