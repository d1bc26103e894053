package nd

import (
	"errors"
	"slices"
	"testing"
)

// TestCheckPoints: coordinates are resolved in place as NormalizePoints
// resolves them (negative from the end), and an out-of-bounds one names
// its point and dimension.
func TestCheckPoints(t *testing.T) {
	shape := []int{4, 5}
	pts, err := CheckPoints(Points{Rank: 2, Coords: []int{0, -1, 3, 2, -4, 0}}, shape)
	want, werr := NormalizePoints([][]int{{0, 3, -4}, {-1, 2, 0}}, shape)
	if err != nil || werr != nil || !slices.Equal(pts.Coords, want.Coords) {
		t.Fatalf("CheckPoints: %v, %v; NormalizePoints %v, %v", pts, err, want, werr)
	}
	if _, err := CheckPoints(Points{Rank: 2, Coords: []int{0, 0, 1, 5}}, shape); !errors.Is(err, ErrOutOfBounds) || err.Error() != "index out of bounds: index 5 of dimension 1 (length 5), point 1" {
		t.Errorf("out of bounds: %v", err)
	}
	if _, err := CheckPoints(Points{Rank: 1, Coords: []int{0}}, shape); !errors.Is(err, ErrInvalidSelection) {
		t.Errorf("rank 1 for 2 dimensions: %v", err)
	}
}

// TestNormalizePointsRows: the loop point after point (lists that do not
// broadcast) resolves every coordinate as the loop by dimension does, for
// ranks 1 to 4 and negative coordinates, and an out-of-bounds coordinate
// gives the error the loop by dimension gives (the first in dimension
// order, then point order), not the first point's.
func TestNormalizePointsRows(t *testing.T) {
	for rank := 1; rank <= 4; rank++ {
		shape := []int{7, 5, 3, 6}[:rank]
		index := make([][]int, rank)
		want := make([]int, 50*rank)
		for d := range rank {
			index[d] = make([]int, 50)
			for k := range 50 {
				c := (k*31 + d*7) % shape[d]
				want[k*rank+d] = c
				if k%3 == 0 {
					c -= shape[d] // the same coordinate, from the end
				}
				index[d][k] = c
			}
		}
		pts, err := NormalizePoints(index, shape)
		if err != nil || pts.Rank != rank || !slices.Equal(pts.Coords, want) {
			t.Fatalf("rank %d: %v, %v; want %v", rank, pts.Coords, err, want)
		}
		// Two bad coordinates: point 9 in the last dimension, point 40 in
		// the first. The loop by dimension reports point 40's (point 9's
		// for rank 1).
		index[rank-1][9] = shape[rank-1]
		index[0][40] = -shape[0] - 1
		_, err = NormalizePoints(index, shape)
		msg := "index out of bounds: index -8 of dimension 0 (length 7), point 40"
		if rank == 1 {
			msg = "index out of bounds: index 7 of dimension 0 (length 7), point 9"
		}
		if !errors.Is(err, ErrOutOfBounds) || err.Error() != msg {
			t.Errorf("rank %d: %v, want %q", rank, err, msg)
		}
	}
	// A list of one coordinate broadcasts.
	pts, err := NormalizePoints([][]int{{2}, {0, -1, 3}}, []int{4, 5})
	if err != nil || !slices.Equal(pts.Coords, []int{2, 0, 2, 4, 2, 3}) {
		t.Errorf("broadcast: %v, %v", pts.Coords, err)
	}
}
