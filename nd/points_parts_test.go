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
					if p.Coords[d] != q[d]/c || p.Points[j*3+d] != q[d]%c {
						t.Fatalf("part %d point %d: chunk %v local %v, point %v", i, j, p.Coords, p.Points[j*3:j*3+3], q)
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
