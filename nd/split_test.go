package nd

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSplitParts checks that the pieces of a shard's part of points,
// with known inner runs and without, with places, and placed (Elems with
// the chunks' coordinates), hold between them
// exactly the part's inner parts, in order, each point going to the same
// place in the output, at most n pieces of about as many inner parts
// each; and that a box, or n ≤ 1, is one piece, at the start of the
// part's place.
func TestSplitParts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	shard, inner := []int{8, 6, 4}, []int{2, 3, 2}
	shape := []int{16, 12, 8}
	list, pts, key, ends, innerEnds := sortedPoints(r, 600, shape, shard, inner)
	places := r.Perm(len(list)) // points sent to places out of order
	// point is where point j of part q goes, relative to the place of the
	// part q was cut from (whose place starts at dst), and its coordinates
	// in q's chunk.
	type point struct{ at, c0, c1, c2 int }
	flatten := func(q ChunkPart, dst int) []point {
		var out []point
		for j := range q.Count[2] {
			at := dst + q.DstStart[2] + j
			if q.Places != nil {
				at = dst + q.DstStart[2] + q.Places[j] - q.PlaceBase
			}
			if q.Elems != nil {
				e := int(q.Elems[j] & (1<<ElemBits - 1))
				at = dst + q.DstStart[2] + int(q.Elems[j]>>ElemBits) - q.PlaceBase
				out = append(out, point{at, e / (inner[1] * inner[2]), e / inner[2] % inner[1], e % inner[2]})
				continue
			}
			c := q.Points[3*j : 3*j+3]
			o := q.PointOrigin
			out = append(out, point{at, c[0] - o[0], c[1] - o[1], c[2] - o[2]})
		}
		return out
	}
	type innerPart struct {
		coords [3]int
		pts    []point
	}
	walk := func(p ChunkPart, dst int) []innerPart {
		var out []innerPart
		for q := range p.Parts(inner) {
			out = append(out, innerPart{[3]int(q.Coords), flatten(q, dst)})
		}
		return out
	}
	// The same points placed: each its place and its element in its
	// inner chunk (PlacedPoints).
	pp := PlacedPoints{Rank: 3, ElemShape: inner}
	for k, q := range list {
		e := (q[0]%shard[0]%inner[0]*inner[1]+q[1]%shard[1]%inner[1])*inner[2] + q[2]%shard[2]%inner[2]
		pp.Elems = append(pp.Elems, uint64(places[k])<<ElemBits|uint64(e))
		if slices.Contains(ends, k+1) {
			pp.Ends, pp.Coords = append(pp.Ends, k+1), append(pp.Coords, key(q)[:3]...)
		}
		if slices.Contains(innerEnds, k+1) {
			pp.InnerEnds, pp.InnerCoords = append(pp.InnerEnds, k+1), append(pp.InnerCoords, key(q)[3:]...)
		}
	}
	parts := map[string]func(yield func(ChunkPart) bool){
		"runs":    GroupedPointParts(pts, shard, ends, inner, innerEnds),
		"no runs": PointParts(pts, shard),
		"placed":  pp.Parts(),
	}
	for name, seq := range parts {
		for _, placed := range []bool{false, true} {
			if name == "placed" && placed {
				continue // placed points carry their places
			}
			nparts := 0
			for p := range seq {
				nparts++
				if placed {
					k, m := p.DstStart[2], p.Count[2]
					p.Places, p.PlaceBase = places[k:k+m:k+m], k
				}
				want := walk(p, 0)
				for _, n := range []int{0, 1, 2, 3, 7, len(want), len(want) + 5} {
					what := fmt.Sprintf("%s, places %v, part %v, %d pieces", name, placed, p.Coords, n)
					var got []innerPart
					var sizes []int
					for piece := range p.SplitParts(inner, n) {
						if !slices.Equal(piece.Coords, p.Coords) {
							t.Fatalf("%s: piece of chunk %v", what, piece.Coords)
						}
						in := walk(piece, piece.DstStart[2])
						if piece.NumParts(inner) != len(in) {
							t.Fatalf("%s: piece counts %d parts, yields %d", what, piece.NumParts(inner), len(in))
						}
						got = append(got, in...)
						sizes = append(sizes, len(in))
					}
					if len(sizes) == 0 || len(sizes) > max(n, 1) {
						t.Fatalf("%s: %d pieces", what, len(sizes))
					}
					if n > 1 && len(want) > 1 && len(sizes) != min(n, len(want)) {
						t.Fatalf("%s: %d pieces of %d parts, want %d", what, len(sizes), len(want), min(n, len(want)))
					}
					if slices.Max(sizes)-slices.Min(sizes) > 1 {
						t.Fatalf("%s: pieces of %v parts", what, sizes)
					}
					if len(got) != len(want) {
						t.Fatalf("%s: %d parts in the pieces, want %d", what, len(got), len(want))
					}
					for i := range want {
						if got[i].coords != want[i].coords || !slices.Equal(got[i].pts, want[i].pts) {
							t.Fatalf("%s: part %d: %v %v, want %v %v", what, i, got[i].coords, got[i].pts, want[i].coords, want[i].pts)
						}
					}
				}
			}
			if nparts != len(ends) {
				t.Fatalf("%s: %d shard parts, want %d", name, nparts, len(ends))
			}
		}
	}
	// A box is one piece, itself.
	box := Selection{{Start: 1, Count: 6, Step: 1}, {Start: 0, Count: 6, Step: 1}, {Start: 2, Count: 2, Step: 1}}
	for p := range box.Chunks(shard) {
		n := 0
		for piece := range p.SplitParts(inner, 4) {
			if !slices.Equal(piece.Count, p.Count) || !slices.Equal(piece.SrcStart, p.SrcStart) || !slices.Equal(piece.DstStart, []int{0, 0, 0}) {
				t.Fatalf("box piece %v from %v at %v, want %v from %v at 0", piece.Count, piece.SrcStart, piece.DstStart, p.Count, p.SrcStart)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("box: %d pieces", n)
		}
	}
	// Stopping early stops.
	for p := range GroupedPointParts(pts, shard, ends, inner, innerEnds) {
		n := 0
		for range p.SplitParts(inner, 3) {
			n++
			break
		}
		if n != 1 {
			t.Fatalf("break: %d pieces", n)
		}
		break
	}
}
