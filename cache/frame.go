package cache

import (
	"runtime"
	"sync/atomic"
)

// offHeapMin is the smallest frame kept outside the Go heap: smaller ones
// would waste most of a page.
const offHeapMin = 16 << 10

// refs is a reference count for what a cache holds and may free while
// readers still use it (a frame's bytes, a disk extent's place): the cache
// holds one reference, every reader takes one with retain and drops it
// with release, and onFree runs when the last one goes.
type refs struct {
	count  atomic.Int32
	onFree func()
}

// retain takes a reference; false if the last one is already gone.
func (r *refs) retain() bool {
	for {
		n := r.count.Load()
		if n <= 0 {
			return false
		}
		if r.count.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference, calling onFree with the last one.
func (r *refs) release() {
	if r.count.Add(-1) == 0 && r.onFree != nil {
		r.onFree()
	}
}

// frame is a compressed value a Compressed cache holds, reference counted
// (refs) because it may be evicted while a Get still decompresses it.
//
// Frames of a Compressed cache live outside the Go heap (carved from its
// arena, or anonymous memory mappings of their own on Unix): the garbage
// collector's heap goal is then set by the live Go heap alone, not by
// every byte the cache holds, so a cache of N bytes costs about N of
// resident memory instead of up to 2N under the default GOGC. A mapped
// frame that becomes unreachable without being released (a cache dropped
// without emptying it) is freed by a runtime cleanup.
type frame struct {
	refs
	b []byte
}

// newFrame returns a frame holding a copy of src, with one reference:
// mapped on its own when it is large enough, else on the Go heap.
func newFrame(src []byte) *frame {
	f := &frame{}
	if len(src) >= offHeapMin {
		if b, err := mapBytes(len(src)); err == nil {
			f.b = b
			cleanup := runtime.AddCleanup(f, unmapBytes, b)
			f.onFree = func() {
				cleanup.Stop()
				unmapBytes(b)
			}
		}
	}
	if f.b == nil {
		f.b = make([]byte, len(src))
	}
	copy(f.b, src)
	f.count.Store(1)
	return f
}

// size is the memory the frame occupies (whole grains or pages when off
// the heap).
func (f *frame) size() int { return cap(f.b) }

// arenaGrain is the unit frames are carved from an arena in.
const arenaGrain = 1024

// arenaMin is the smallest frame carved from an arena; smaller ones stay on
// the Go heap.
const arenaMin = 4 << 10

// arena is one reserved anonymous mapping that a bounded Compressed cache
// carves its frames from (with the Disk cache's allocator: best fit,
// merging neighbours), so that making a frame costs a copy and no system
// call or freshly zeroed pages. Address space is reserved, not memory: a
// page is resident once written, and pages of freed frames go back to the
// system when the free space passes its slack or reaches the end.
type arena struct {
	mem   []byte
	space space
	high  int64 // end of the pages written since last released; under space.mu
}

// newArena reserves size bytes, or returns nil.
func newArena(size int64) *arena {
	mem, err := reserveBytes(size)
	if err != nil {
		return nil
	}
	a := &arena{mem: mem}
	a.space.init(8<<20, 4)
	return a
}

// frame returns a frame holding a copy of src carved from the arena, with
// one reference, or nil when the arena has no room for it.
func (a *arena) frame(src []byte) *frame {
	size := (int64(len(src)) + arenaGrain - 1) &^ (arenaGrain - 1)
	off, ok := a.space.allocWithin(size, int64(len(a.mem)))
	if !ok {
		return nil
	}
	a.space.mu.Lock()
	a.high = max(a.high, off+size)
	a.space.mu.Unlock()
	f := &frame{b: a.mem[off : off+int64(len(src)) : off+size]}
	copy(f.b, src)
	f.count.Store(1)
	f.onFree = func() { a.release(off, size) }
	return f
}

// release returns a frame's bytes to the arena. Pages go back to the
// system when free space inside passes the slack (max(8 MiB, 1/16 of what
// is held)), or when the free tail past the end does.
func (a *arena) release(off, size int64) {
	a.space.free(off, size, func(from, to int64, tail bool) {
		if !tail {
			dropPages(a.mem[from:to])
			return
		}
		if a.high-from > a.space.slack() {
			dropPages(a.mem[from:a.high])
			a.high = from
		}
	})
}
