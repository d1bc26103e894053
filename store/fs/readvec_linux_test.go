//go:build linux

package fs

import (
	"testing"
)

// TestAdvance checks the bookkeeping of ReadVec after a preadv call that
// may stop anywhere, also inside a buffer (short reads).
func TestAdvance(t *testing.T) {
	lens := func(bufs [][]byte) []int {
		out := make([]int, len(bufs))
		for i, b := range bufs {
			out[i] = len(b)
		}
		return out
	}
	mk := func(ns ...int) [][]byte {
		out := make([][]byte, len(ns))
		for i, n := range ns {
			out[i] = make([]byte, n)
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		bufs           []int
		batch, skip, n int
		wantLens       []int
		wantSkip       int
	}{
		{"all of one batch", []int{3, 4, 5}, 3, 0, 12, []int{}, 0},
		{"first batch of two", []int{3, 4, 5}, 2, 0, 7, []int{5}, 0},
		{"inside the first buffer", []int{3, 4}, 2, 0, 2, []int{3, 4}, 2},
		{"inside a later buffer", []int{3, 4, 5}, 3, 0, 5, []int{4, 5}, 2},
		{"finishing a partly read buffer", []int{3, 4}, 2, 2, 1, []int{4}, 0},
		{"further into a partly read buffer", []int{10, 4}, 2, 2, 3, []int{10, 4}, 5},
		{"past a partly read buffer", []int{10, 4}, 2, 2, 10, []int{4}, 2},
		{"empty buffers are passed", []int{0, 3, 0, 0, 2}, 5, 0, 4, []int{2}, 1},
		{"only empty buffers", []int{0, 0, 1}, 2, 0, 0, []int{1}, 0},
		{"zero bytes stops at a non-empty buffer", []int{2, 0}, 2, 0, 0, []int{2, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bufs := mk(tc.bufs...)
			rest, skip := advance(bufs[:tc.batch], bufs, tc.skip, tc.n)
			if got := lens(rest); len(got) != len(tc.wantLens) || skip != tc.wantSkip {
				t.Fatalf("advance = %v, skip %d; want %v, skip %d", got, skip, tc.wantLens, tc.wantSkip)
			} else {
				for i := range got {
					if got[i] != tc.wantLens[i] {
						t.Fatalf("advance = %v, skip %d; want %v, skip %d", got, skip, tc.wantLens, tc.wantSkip)
					}
				}
			}
		})
	}
}
