package nd

import (
	"errors"
	"strings"
	"testing"
)

// A point of the wrong rank is named by ranks, with no "1 coordinates"
// (the newcomer trial's wording item).
func TestCheckPointsRankWording(t *testing.T) {
	_, err := CheckPoints(Points{Rank: 1, Coords: []int{0, 1}}, []int{4, 4})
	if !errors.Is(err, ErrInvalidSelection) {
		t.Fatalf("err = %v, want ErrInvalidSelection", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "points of rank 1 for an array of rank 2") {
		t.Errorf("message %q", msg)
	}
}
