package cache

import (
	"slices"
	"sync"
)

// space is the allocator of a Disk cache's file and of a Compressed
// cache's arena: free extents indexed by size (best fit, through the
// sorted list of sizes), by start and by end (merging neighbours).
type space struct {
	mu      sync.Mutex
	end     int64                        // the used length
	bySize  map[int64]map[int64]struct{} // size → starts
	sizes   []int64                      // the keys of bySize, ascending
	byStart map[int64]int64              // start → size
	byEnd   map[int64]int64              // end → start
	freeSum int64                        // bytes in free extents
	live    int64                        // bytes in allocated extents
	// Free space inside is released (free returns punch) once it passes
	// max(minSlack, live>>slackShift).
	minSlack   int64
	slackShift uint
}

// init prepares an empty space releasing free space past max(minSlack,
// live>>slackShift).
func (s *space) init(minSlack int64, slackShift uint) {
	s.minSlack, s.slackShift = minSlack, slackShift
	s.bySize = map[int64]map[int64]struct{}{}
	s.byStart = map[int64]int64{}
	s.byEnd = map[int64]int64{}
}

// alloc returns the start of size free bytes: the smallest free extent
// that fits (its rest stays free), else the end of the file.
func (s *space) alloc(size int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocLocked(size)
}

// allocLocked is alloc with s.mu held.
func (s *space) allocLocked(size int64) int64 {
	s.live += size
	best := int64(-1)
	if i, _ := slices.BinarySearch(s.sizes, size); i < len(s.sizes) {
		best = s.sizes[i]
	}
	if best < 0 {
		off := s.end
		s.end += size
		return off
	}
	var off int64
	for o := range s.bySize[best] {
		off = o
		break
	}
	s.unlink(off, best)
	if best > size {
		s.link(off+size, best-size)
	}
	return off
}

// allocWithin is alloc for a space of at most limit bytes: false when no
// free extent fits and the end would pass limit.
func (s *space) allocWithin(size, limit int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end+size > limit && !s.fits(size) {
		return 0, false
	}
	return s.allocLocked(size), true
}

// fits reports whether a free extent of size bytes or more exists; s.mu is
// held.
func (s *space) fits(size int64) bool {
	return len(s.sizes) > 0 && s.sizes[len(s.sizes)-1] >= size
}

// free returns [off, off+size) to the free space, merged with free
// neighbours. When the merged extent reaches the end, the end moves back to
// its start and release (if any) is called with (start, old end, true);
// otherwise, once free space passes the slack, release is called with the
// freed range and false. release runs with s.mu held, so no allocation can
// hand out the range while it is being released.
func (s *space) free(off, size int64, release func(from, to int64, tail bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live -= size
	start, end := off, off+size
	if ps, ok := s.byEnd[start]; ok {
		s.unlink(ps, start-ps)
		start = ps
	}
	if ns, ok := s.byStart[end]; ok {
		s.unlink(end, ns)
		end += ns
	}
	if end == s.end {
		s.end = start
		if release != nil {
			release(start, end, true)
		}
		return
	}
	s.link(start, end-start)
	if release != nil && s.freeSum > s.slack() {
		release(off, off+size, false)
	}
}

// slack is how much free space may stay unreleased; s.mu is held.
func (s *space) slack() int64 { return max(s.minSlack, s.live>>s.slackShift) }

// link records [off, off+size) as free; s.mu is held.
func (s *space) link(off, size int64) {
	m := s.bySize[size]
	if m == nil {
		m = map[int64]struct{}{}
		s.bySize[size] = m
		i, _ := slices.BinarySearch(s.sizes, size)
		s.sizes = slices.Insert(s.sizes, i, size)
	}
	m[off] = struct{}{}
	s.byStart[off] = size
	s.byEnd[off+size] = off
	s.freeSum += size
}

// unlink removes the free extent [off, off+size); s.mu is held.
func (s *space) unlink(off, size int64) {
	m := s.bySize[size]
	delete(m, off)
	if len(m) == 0 {
		delete(s.bySize, size)
		if i, ok := slices.BinarySearch(s.sizes, size); ok {
			s.sizes = slices.Delete(s.sizes, i, i+1)
		}
	}
	delete(s.byStart, off)
	delete(s.byEnd, off+size)
	s.freeSum -= size
}
