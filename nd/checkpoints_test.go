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
