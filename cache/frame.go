package cache

import (
	"runtime"
	"sync/atomic"
)

// offHeapMin is the smallest frame kept outside the Go heap: smaller ones
// would waste most of a page.
const offHeapMin = 16 << 10

// frame is bytes a cache holds (a compressed value, or a disk extent's
// place) that may be freed while readers still use them, so it is
// reference counted: the cache holds one reference, every reader takes
// one with retain and drops it with release, and the bytes are freed when
// the last reference goes.
//
// Large frames of the Compressed cache live outside the Go heap
// (anonymous memory mappings on Unix): the garbage collector's heap goal
// is then set by the live Go heap alone, not by every byte the cache
// holds, so a cache of N bytes costs about N of resident memory instead of
// up to 2N under the default GOGC. A frame that becomes unreachable
// without being released (a cache dropped without emptying it) is freed
// by a runtime cleanup.
type frame struct {
	b       []byte
	refs    atomic.Int32
	offHeap bool
	cleanup runtime.Cleanup
	onFree  func() // called when the last reference goes, if set
}

// newFrame returns a frame holding a copy of src, with one reference.
func newFrame(src []byte) *frame {
	f := &frame{}
	if len(src) >= offHeapMin {
		if b, err := mapBytes(len(src)); err == nil {
			f.b, f.offHeap = b, true
			f.cleanup = runtime.AddCleanup(f, unmapBytes, b)
		}
	}
	if f.b == nil {
		f.b = make([]byte, len(src))
	}
	copy(f.b, src)
	f.refs.Store(1)
	return f
}

// size is the memory the frame occupies (whole pages when off the heap).
func (f *frame) size() int { return cap(f.b) }

// retain takes a reference; false if the frame is already freed.
func (f *frame) retain() bool {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return false
		}
		if f.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference, freeing the bytes with the last one.
func (f *frame) release() {
	if f.refs.Add(-1) != 0 {
		return
	}
	if f.offHeap {
		f.cleanup.Stop()
		unmapBytes(f.b)
	}
	if f.onFree != nil {
		f.onFree()
	}
}

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
	f.refs.Store(1)
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
