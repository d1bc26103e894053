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
