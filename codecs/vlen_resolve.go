package codecs

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// unsafeBytes views s as bytes, which must never be written.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ResolveStrings sets out[i] to the value of the i-th handle of handles
// (8 bytes each, little-endian; len(out) of them) and releases the arena's
// segments. A decoded chunk of which out holds at least 7/8 of the
// elements is shared by the strings (no copy: memory is the output's and
// the chunk's 4 bytes of length per element); the elements of any other
// chunk are copied, so the chunk itself is dropped. Call it once, when the read is
// over.
func (a *VLenArena) ResolveStrings(handles []byte, out []string) error {
	if len(handles) != 8*len(out) {
		return fmt.Errorf("codecs: resolve %d bytes of handles into %d values", len(handles), len(out))
	}
	return a.resolveStrings(out, func(i int) uint64 { return binary.LittleEndian.Uint64(handles[8*i:]) })
}

// StringHeaderSize is the size of a Go string header; the handle of a
// string read in place (ResolveStringsInPlace) is in its second word.
const StringHeaderSize = int(unsafe.Sizeof(""))

// BytesHeaderSize is the size of a Go slice header; the handle of a byte
// string read in place (ResolveBytesInPlace) is in its second word.
const BytesHeaderSize = int(unsafe.Sizeof([]byte(nil)))

// InPlace reports whether handles fit the length word of a header (a
// 64-bit platform): else read them into a buffer of their own.
const InPlace = unsafe.Sizeof(uintptr(0)) == 8

// HeaderBytes views the memory of out (strings or byte slices) as bytes,
// for the engine to write each element's handle into its length word (at
// offset 8 of each header, a view of stride StringHeaderSize or
// BytesHeaderSize): the pointer words stay nil until resolved, so the
// garbage collector never sees a handle as a pointer. Nothing but handles
// may be written through it, and only into the length words.
func HeaderBytes[E string | []byte](out []E) []byte {
	var e E
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*int(unsafe.Sizeof(e)))
}

// lenWord returns the second word of the header at p.
func lenWord(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(p, 8)), 8))
}

// ResolveStringsInPlace is ResolveStrings for strings whose handles the
// engine wrote into their length words (HeaderBytes).
func (a *VLenArena) ResolveStringsInPlace(out []string) error {
	return a.resolveStrings(out, func(i int) uint64 { return lenWord(unsafe.Pointer(&out[i])) })
}

func (a *VLenArena) resolveStrings(out []string, handle func(int) uint64) error {
	var fill string
	if len(a.fill) > 0 {
		fill = string(a.fill)
	}
	return a.resolve(len(out), handle, func(i int, v []byte, shared bool) {
		switch {
		case len(v) == 0:
			out[i] = ""
		case shared:
			out[i] = unsafe.String(unsafe.SliceData(v), len(v))
		default:
			out[i] = string(v)
		}
	}, func(i int) { out[i] = fill })
}

// ResolveBytes is ResolveStrings for byte strings: each out[i] has its
// own capacity (appending to one never writes another's bytes), but
// elements selected more than once share their memory. Empty elements are
// empty, non-nil slices.
func (a *VLenArena) ResolveBytes(handles []byte, out [][]byte) error {
	if len(handles) != 8*len(out) {
		return fmt.Errorf("codecs: resolve %d bytes of handles into %d values", len(handles), len(out))
	}
	return a.resolveBytes(out, func(i int) uint64 { return binary.LittleEndian.Uint64(handles[8*i:]) })
}

// ResolveBytesInPlace is ResolveBytes for byte strings whose handles the
// engine wrote into their length words (HeaderBytes).
func (a *VLenArena) ResolveBytesInPlace(out [][]byte) error {
	return a.resolveBytes(out, func(i int) uint64 { return lenWord(unsafe.Pointer(&out[i])) })
}

func (a *VLenArena) resolveBytes(out [][]byte, handle func(int) uint64) error {
	return a.resolve(len(out), handle, func(i int, v []byte, shared bool) {
		if shared {
			out[i] = v[:len(v):len(v)]
			return
		}
		out[i] = append(make([]byte, 0, len(v)), v...)
	}, func(i int) { out[i] = append(make([]byte, 0, len(a.fill)), a.fill...) })
}

// resolve calls set for every non-fill handle with its value and whether
// the value may be kept (it lives in a segment shared with the result, or
// is the caller's own), and fill for handle 0. Element i's handle is read
// before set or fill writes element i.
func (a *VLenArena) resolve(n int, handle func(int) uint64, set func(i int, v []byte, shared bool), fill func(i int)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	// How many handles name each segment, to share a chunk most of which
	// is used and to drop the others once their last value is copied.
	left := make([]int, len(a.segs))
	for i := range n {
		if seg := handle(i) >> 32; seg < uint64(len(left)) {
			left[seg]++
		}
	}
	share := make([]bool, len(a.segs))
	for s, k := range left {
		seg := &a.segs[s]
		switch {
		case seg.raw != nil:
			share[s] = 8*k >= 7*int(binary.LittleEndian.Uint32(seg.raw))
		case seg.strs != nil, seg.blobs != nil:
			share[s] = true
		}
	}
	for i := range n {
		h := handle(i)
		if h == 0 {
			fill(i)
			continue
		}
		v, err := a.valueLocked(h)
		if err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		s := h >> 32
		set(i, v, share[s])
		if left[s]--; left[s] == 0 {
			a.segs[s] = vlenSeg{} // the last value of it: let the GC have the chunk
		}
	}
	clear(a.segs[1:])
	return nil
}
