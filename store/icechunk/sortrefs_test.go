package icechunk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedRefs: sortedRefs orders refs as compareCoords does, on the
// fast path (a 3-D box) and the fallback (a box past 2^64, mixed ranks);
// nil refs (deleted chunks) are left out.
func TestSortedRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		gen  func(i int) []uint32
	}{
		{"3-D", func(int) []uint32 { return []uint32{rng.Uint32N(7), rng.Uint32N(300), rng.Uint32N(5)} }},
		{"past 2^64", func(int) []uint32 { return []uint32{rng.Uint32(), rng.Uint32(), rng.Uint32()} }},
		{"mixed ranks", func(i int) []uint32 {
			if i%3 == 0 {
				return []uint32{rng.Uint32N(9)}
			}
			return []uint32{rng.Uint32N(9), rng.Uint32N(9)}
		}},
	} {
		all := map[string]*writeRef{}
		for i := range 2000 {
			c := tc.gen(i)
			all[coordsKey(c)] = &writeRef{coords: c, chunkRef: chunkRef{length: uint64(i)}}
		}
		all["deleted"] = nil
		got := sortedRefs(all)
		var want []writeRef
		for _, r := range all {
			if r != nil {
				want = append(want, *r)
			}
		}
		slices.SortFunc(want, func(a, b writeRef) int { return compareCoords(a.coords, b.coords) })
		if len(got) != len(want) {
			t.Fatalf("%s: %d refs, want %d", tc.name, len(got), len(want))
		}
		for i := range got {
			if !slices.Equal(got[i].coords, want[i].coords) || got[i].length != want[i].length {
				t.Fatalf("%s: ref %d is %v, want %v", tc.name, i, got[i].coords, want[i].coords)
			}
		}
	}
}
