package cache

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpaceModel runs random allocations and frees against a space and
// checks, after each, that it is best fit, that no two live extents
// overlap, that the sorted size list matches the free extents, and that
// free and live bytes add up.
func TestSpaceModel(t *testing.T) {
	var s space
	s.init(1<<20, 3)
	r := rand.New(rand.NewPCG(1, 2))
	live := map[int64]int64{} // start → size
	for step := range 5000 {
		if len(live) > 0 && r.IntN(2) == 0 {
			var off int64
			for o := range live { // any live extent
				off = o
				break
			}
			s.free(off, live[off], nil)
			delete(live, off)
		} else {
			size := int64(1+r.IntN(40)) * 1024
			best := int64(-1)
			for sz := range s.bySize {
				if sz >= size && (best < 0 || sz < best) {
					best = sz
				}
			}
			var fromBest map[int64]struct{}
			if best >= 0 {
				fromBest = maps2set(s.bySize[best])
			}
			off := s.alloc(size)
			if best >= 0 {
				if _, ok := fromBest[off]; !ok {
					t.Fatalf("step %d: %d bytes at %d, not from the best fit (%d bytes)", step, size, off, best)
				}
			} else if off+size != s.end {
				t.Fatalf("step %d: no fit, yet %d is not at the end %d", step, off, s.end)
			}
			live[off] = size
		}
		starts := make([]int64, 0, len(live))
		var liveSum int64
		for o, sz := range live {
			starts = append(starts, o)
			liveSum += sz
		}
		slices.Sort(starts)
		for i := 1; i < len(starts); i++ {
			if starts[i-1]+live[starts[i-1]] > starts[i] {
				t.Fatalf("step %d: live extents at %d and %d overlap", step, starts[i-1], starts[i])
			}
		}
		keys := make([]int64, 0, len(s.bySize))
		var freeSum int64
		for sz, m := range s.bySize {
			keys = append(keys, sz)
			freeSum += sz * int64(len(m))
		}
		slices.Sort(keys)
		if !slices.Equal(keys, s.sizes) || freeSum != s.freeSum || liveSum != s.live || freeSum+liveSum != s.end {
			t.Fatalf("step %d: sizes %v vs %v, free %d vs %d, live %d vs %d, end %d",
				step, s.sizes, keys, s.freeSum, freeSum, s.live, liveSum, s.end)
		}
	}
}

func maps2set(m map[int64]struct{}) map[int64]struct{} {
	out := make(map[int64]struct{}, len(m))
	for k := range m {
		out[k] = struct{}{}
	}
	return out
}

// BenchmarkSpaceAlloc measures an allocation and a free in a space
// fragmented into many free sizes.
func BenchmarkSpaceAlloc(b *testing.B) {
	var s space
	s.init(1<<20, 3)
	offs := make([]int64, 20000)
	for i := range offs {
		offs[i] = s.alloc(int64(1+i%2000) * 1024)
	}
	for i := 0; i < len(offs); i += 2 {
		s.free(offs[i], int64(1+i%2000)*1024, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		off := s.alloc(100*1024 + 512)
		s.free(off, 100*1024+512, nil)
	}
}
