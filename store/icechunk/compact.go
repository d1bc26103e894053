package icechunk

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// A manifest whose refs are all native or inline is held as columns
// instead of its flatbuffer: per array, the refs' coordinates as one
// sorted linear index in the box they span (4 bytes, or 8 for a box of
// more than 2^32 chunks), the chunk id (12 bytes; an inline ref's offset
// in the array's blob of inline bytes instead), the length (4 bytes, or 8
// when one is past 4 GiB) and, only when one is not 0, the offset; no Go
// value per ref. A native ref costs 20 bytes held (of 44 to 56 in the
// flatbuffer, with its table, vtable offset, index vector and padding).
// Manifests with virtual refs keep their flatbuffer.

// compactArray is one array's refs as columns.
type compactArray struct {
	node    NodeID
	nd      int
	lo      []uint32 // the box's origin
	size    []uint64 // the box's extent per dimension
	keys32  []uint32 // linear index in the box, ascending (or keys64)
	keys64  []uint64
	ids     []byte   // 12 per ref
	inline  []uint64 // bit j: ref j is inline (nil: none is)
	offsets []uint64 // nil: all 0
	lens32  []uint32 // or lens64
	lens64  []uint64
	blob    []byte // inline bytes
}

func (a *compactArray) n() int { return len(a.ids) / 12 }

// bytes is what the columns hold.
func (a *compactArray) bytes() int64 {
	return int64(8*len(a.lo)+8*len(a.size)+4*len(a.keys32)+8*len(a.keys64)+len(a.ids)+8*len(a.inline)+
		8*len(a.offsets)+4*len(a.lens32)+8*len(a.lens64)+len(a.blob)) + 160
}

// compactRefs builds the columns of every array of m; ok is false (and m
// is left as it is) when a ref is virtual, the refs are not strictly
// ascending, a box is too large to index, or the columns would not be
// smaller.
// The columns hold at most budget bytes (the buffer's size: they are
// never larger than what they replace, even for a hostile buffer whose
// refs share tables).
func compactRefs(m *manifest, budget int64) ([]compactArray, bool, error) {
	out := make([]compactArray, m.arrays.n)
	for j := range out {
		t, err := m.arrays.table(j)
		if err != nil {
			return nil, false, err
		}
		nid, err := t.inline(0, 8)
		if err != nil {
			return nil, false, err
		}
		refs, err := t.vector(1, 4, true)
		if err != nil {
			return nil, false, err
		}
		a := &out[j]
		a.node = NodeID(nid)
		if ok, err := a.build(refs, &budget); !ok || err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

func (a *compactArray) build(refs fbVector, budget *int64) (bool, error) {
	n := refs.n
	// first pass: dimensions, the box, what columns are needed
	var maxLen uint64
	anyInline, anyOffset := false, false
	blob := 0
	for j := range n {
		t, idx, err := refIndex(refs, j)
		if err != nil {
			return false, err
		}
		if j == 0 {
			if idx.n > maxDims {
				return false, nil
			}
			a.nd = idx.n
			a.lo = make([]uint32, a.nd)
			a.size = make([]uint64, a.nd)
			for d := range a.nd {
				a.lo[d] = idx.u32(d)
			}
		}
		if idx.n != a.nd {
			return false, nil
		}
		for d := range a.nd {
			c := idx.u32(d)
			if c < a.lo[d] {
				a.size[d] += uint64(a.lo[d] - c)
				a.lo[d] = c
			}
			a.size[d] = max(a.size[d], uint64(c-a.lo[d])+1)
		}
		r, err := readRef(t)
		if err != nil {
			return false, err
		}
		switch r.kind {
		case refVirtual:
			return false, nil
		case refInline:
			anyInline = true
			blob += len(r.inline)
		}
		anyOffset = anyOffset || r.offset != 0
		maxLen = max(maxLen, r.length)
	}
	total := uint64(1)
	for _, s := range a.size {
		hi, lo := bits.Mul64(total, s)
		if hi != 0 {
			return false, nil
		}
		total = lo
	}
	// what the columns will hold: at most 8+12+8+8 bytes per ref, the
	// inline bytes and the array's own
	if *budget -= 160 + 16*int64(a.nd) + int64(n)*36 + int64(blob); *budget < 0 {
		return false, nil
	}
	if n > 0 && total <= math.MaxUint32+1 {
		a.keys32 = make([]uint32, n)
	} else {
		a.keys64 = make([]uint64, n)
	}
	a.ids = make([]byte, 12*n)
	if anyInline {
		a.inline = make([]uint64, (n+63)/64)
		a.blob = make([]byte, 0, blob)
	}
	if anyOffset {
		a.offsets = make([]uint64, n)
	}
	if maxLen <= math.MaxUint32 {
		a.lens32 = make([]uint32, n)
	} else {
		a.lens64 = make([]uint64, n)
	}
	coords := make([]uint32, a.nd)
	var prev uint64
	for j := range n {
		t, idx, err := refIndex(refs, j)
		if err != nil {
			return false, err
		}
		for d := range coords {
			coords[d] = idx.u32(d)
		}
		key, _ := a.key(coords)
		if j > 0 && key <= prev {
			return false, nil // not sorted: the buffer's order is kept as it is
		}
		prev = key
		r, err := readRef(t)
		if err != nil {
			return false, err
		}
		if a.keys32 != nil {
			a.keys32[j] = uint32(key)
		} else {
			a.keys64[j] = key
		}
		if r.kind == refInline {
			// the id slot holds the bytes' place in the blob
			a.inline[j/64] |= 1 << (j % 64)
			binary.LittleEndian.PutUint64(a.ids[12*j:], uint64(len(a.blob)))
			binary.LittleEndian.PutUint32(a.ids[12*j+8:], uint32(len(r.inline)))
			a.blob = append(a.blob, r.inline...)
		} else {
			copy(a.ids[12*j:], r.chunkID[:])
		}
		if a.offsets != nil {
			a.offsets[j] = r.offset
		}
		if a.lens32 != nil {
			a.lens32[j] = uint32(r.length)
		} else {
			a.lens64[j] = r.length
		}
	}
	return true, nil
}

// key returns the linear index of coords in the box; ok is false outside.
func (a *compactArray) key(coords []uint32) (uint64, bool) {
	if len(coords) != a.nd {
		return 0, false
	}
	var k uint64
	for d, c := range coords {
		if c < a.lo[d] || uint64(c-a.lo[d]) >= a.size[d] {
			return 0, false
		}
		k = k*a.size[d] + uint64(c-a.lo[d])
	}
	return k, true
}

// coordsOf is the inverse of key.
func (a *compactArray) coordsOf(k uint64, coords []uint32) {
	for d := a.nd - 1; d >= 0; d-- {
		coords[d] = a.lo[d] + uint32(k%a.size[d])
		k /= a.size[d]
	}
}

func (a *compactArray) keyAt(j int) uint64 {
	if a.keys32 != nil {
		return uint64(a.keys32[j])
	}
	return a.keys64[j]
}

// ref returns ref j.
func (a *compactArray) ref(j int) chunkRef {
	var r chunkRef
	if a.lens32 != nil {
		r.length = uint64(a.lens32[j])
	} else {
		r.length = a.lens64[j]
	}
	if a.offsets != nil {
		r.offset = a.offsets[j]
	}
	if a.inline != nil && a.inline[j/64]&(1<<(j%64)) != 0 {
		p := binary.LittleEndian.Uint64(a.ids[12*j:])
		e := p + uint64(binary.LittleEndian.Uint32(a.ids[12*j+8:]))
		r.kind, r.inline = refInline, a.blob[p:e:e]
		return r
	}
	r.kind = refNative
	copy(r.chunkID[:], a.ids[12*j:12*j+12])
	return r
}

// lookup finds the ref at coords.
func (a *compactArray) lookup(coords []uint32) (chunkRef, bool) {
	k, ok := a.key(coords)
	if !ok {
		return chunkRef{}, false
	}
	var j int
	if a.keys32 != nil {
		j, ok = slices.BinarySearch(a.keys32, uint32(k))
	} else {
		j, ok = slices.BinarySearch(a.keys64, k)
	}
	if !ok {
		return chunkRef{}, false
	}
	return a.ref(j), true
}
