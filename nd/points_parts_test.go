package nd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPointPartsRuns checks the parts of sorted and unsorted points
// against runs found by dividing every coordinate: one part per run of
// consecutive points in one chunk, with chunk-relative points.
func TestPointPartsRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	chunk := []int{4, 5, 3}
	shape := []int{17, 23, 9}
	for _, sorted := range []bool{false, true} {
		pts := Points{Rank: 3}
		for range 500 {
			pts.Coords = append(pts.Coords, r.IntN(shape[0]), r.IntN(shape[1]), r.IntN(shape[2]))
		}
		if sorted {
			idx := make([][]int, pts.Len())
			for k := range idx {
				idx[k] = pts.At(k)
			}
			slices.SortFunc(idx, func(a, b []int) int {
				for d, c := range chunk {
					if a[d]/c != b[d]/c {
						return a[d]/c - b[d]/c
					}
				}
				return 0
			})
			var flat []int
			for _, p := range idx {
				flat = append(flat, p...)
			}
			pts.Coords = flat
		}
		// Runs by division.
		var want [][2]int // start, length
		for k := range pts.Len() {
			same := k > 0
			for d, c := range chunk {
				same = same && pts.At(k)[d]/c == pts.At(k - 1)[d]/c
			}
			if same {
				want[len(want)-1][1]++
			} else {
				want = append(want, [2]int{k, 1})
			}
		}
		if n := NumPointParts(pts, chunk); n != len(want) {
			t.Fatalf("sorted %v: %d parts, want %d", sorted, n, len(want))
		}
		i := 0
		for p := range PointParts(pts, chunk) {
			start, m := want[i][0], want[i][1]
			if p.DstStart[2] != start || p.Count[2] != m {
				t.Fatalf("part %d: starts at %d with %d points, want %d and %d", i, p.DstStart[2], p.Count[2], start, m)
			}
			for j := range m {
				q := pts.At(start + j)
				for d, c := range chunk {
					if p.Coords[d] != q[d]/c || p.Points[j*3+d]-p.PointOrigin[d] != q[d]%c {
						t.Fatalf("part %d point %d: chunk %v points %v origin %v, point %v", i, j, p.Coords, p.Points[j*3:j*3+3], p.PointOrigin, q)
					}
				}
			}
			i++
		}
		if i != len(want) {
			t.Fatalf("sorted %v: yielded %d parts, want %d", sorted, i, len(want))
		}
	}
}

// TestGroupedPointParts checks the parts made from known runs against
// PointParts' (found by comparing points) at the grid and the inner
// level, that the inner parts come from the runs given (wrong runs give
// wrong parts: the runs are used, not found again), that every point
// copied out of a chunk through the parts' shared coordinates lands in
// its place, and that runs that do not fit end the parts early.
func TestGroupedPointParts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shard, inner := []int{8, 6, 4}, []int{4, 3, 2}
	shape := []int{16, 12, 8}
	list, pts, _, ends, innerEnds := sortedPoints(r, 400, shape, shard, inner)
	var want []ChunkPart
	for p := range PointParts(pts, shard) {
		want = append(want, p)
	}
	chunk := Contiguous(make([]byte, 4*NumElements(inner)), inner, 4)
	i := 0
	for p := range GroupedPointParts(pts, shard, ends, inner, innerEnds) {
		w := want[i]
		if !slices.Equal(p.Coords, w.Coords) || !slices.Equal(p.Count, w.Count) || !slices.Equal(p.DstStart, w.DstStart) {
			t.Fatalf("part %d: coords %v count %v dst %v, want %v %v %v", i, p.Coords, p.Count, p.DstStart, w.Coords, w.Count, w.DstStart)
		}
		if p.NumParts(inner) != w.NumParts(inner) {
			t.Fatalf("part %d: %d inner parts, want %d", i, p.NumParts(inner), w.NumParts(inner))
		}
		var got []ChunkPart
		for q := range w.Parts(inner) {
			got = append(got, q)
		}
		j := 0
		for q := range p.Parts(inner) {
			if !slices.Equal(q.Coords, got[j].Coords) || !slices.Equal(q.DstStart, got[j].DstStart) || q.Count[2] != got[j].Count[2] {
				t.Fatalf("part %d inner %d: coords %v dst %v, want %v %v", i, j, q.Coords, q.DstStart, got[j].Coords, got[j].DstStart)
			}
			// Values: each element of the inner chunk holds its C-order
			// index; copy the part's points out and compare.
			vals := chunk.Data
			for e := range NumElements(inner) {
				vals[4*e] = byte(e)
			}
			out := Contiguous(make([]byte, 4*q.Count[2]), q.Count, 4)
			q.CopyOut(out, chunk)
			for m := range q.Count[2] {
				pt := pts.At(w.DstStart[2] + q.DstStart[2] + m)
				e := 0
				for d, c := range inner {
					e = e*c + pt[d]%c
				}
				if out.Data[4*m] != byte(e) {
					t.Fatalf("part %d inner %d point %d %v: value %d, want %d", i, j, m, pt, out.Data[4*m], e)
				}
			}
			j++
		}
		if j != len(got) {
			t.Fatalf("part %d: %d inner parts yielded, want %d", i, j, len(got))
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%d parts, want %d", i, len(want))
	}
	// The runs given are used: one inner run per shard run.
	for p := range GroupedPointParts(pts, shard, ends, inner, ends) {
		if n := p.NumParts(inner); n != 1 {
			t.Fatalf("inner runs = shard runs: %d inner parts, want 1", n)
		}
		break
	}
	for _, bad := range [][2][]int{
		{{ends[0], ends[0]}, innerEnds}, // not increasing
		{{len(list) + 1}, innerEnds},    // past the end
		{ends, slices.DeleteFunc(slices.Clone(innerEnds), func(e int) bool { return e == ends[0] })}, // a shard end that is no inner end
		{ends, []int{innerEnds[0] + 1}}, // inner runs short
	} {
		n := 0
		for range GroupedPointParts(pts, shard, bad[0], inner, bad[1]) {
			n++
		}
		if n > 1 {
			t.Fatalf("runs %v / %v: %d parts, want them to end early", bad[0][:1], bad[1][:1], n)
		}
	}
}

// sortedPoints draws n random points of shape, sorts them by shard (of
// shape shard) and inner chunk (of shape inner), and returns them with
// their coordinates in order, their key (shard coordinates then inner
// chunk coordinates, both in grid units), and the ends of their runs of
// one shard and of one inner chunk.
func sortedPoints(r *rand.Rand, n int, shape, shard, inner []int) (list [][]int, pts Points, key func([]int) []int, ends, innerEnds []int) {
	for range n {
		list = append(list, []int{r.IntN(shape[0]), r.IntN(shape[1]), r.IntN(shape[2])})
	}
	key = func(p []int) []int {
		var k []int
		for _, c := range [][]int{shard, inner} {
			for d := range 3 {
				k = append(k, p[d]/c[d])
			}
		}
		return k
	}
	slices.SortStableFunc(list, func(a, b []int) int { return slices.Compare(key(a), key(b)) })
	pts = Points{Rank: 3}
	for _, p := range list {
		pts.Coords = append(pts.Coords, p...)
	}
	for k := 1; k <= len(list); k++ {
		if k == len(list) || !slices.Equal(key(list[k])[:3], key(list[k-1])[:3]) {
			ends = append(ends, k)
		}
		if k == len(list) || !slices.Equal(key(list[k]), key(list[k-1])) {
			innerEnds = append(innerEnds, k)
		}
	}
	return list, pts, key, ends, innerEnds
}
