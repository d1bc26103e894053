package icechunk

import (
	"bytes"
	"fmt"
	"slices"
)

// manifest is a parsed manifest file: its refs as columns (compact.go),
// or, when it holds virtual refs, its flatbuffer and the checked vector of
// its arrays, the chunk refs staying in the buffer.
type manifest struct {
	id      ID
	spec    uint8
	buf     []byte
	arrays  fbVector       // of ArrayManifest tables, sorted by node id
	compact []compactArray // sorted by node id; when set, buf is nil
	refs    int64          // chunk refs in all arrays
}

// size is what the parsed manifest holds, in bytes.
func (m *manifest) size() int64 {
	if m.compact == nil {
		return int64(len(m.buf))
	}
	n := int64(0)
	for i := range m.compact {
		n += m.compact[i].bytes()
	}
	return n
}

// nodeIDs lists the arrays the manifest holds refs of.
func (m *manifest) nodeIDs() []NodeID {
	var out []NodeID
	for i := range m.compact {
		out = append(out, m.compact[i].node)
	}
	for j := 0; j < m.arrays.n; j++ {
		if t, err := m.arrays.table(j); err == nil {
			if nid, err := t.inline(0, 8); err == nil && nid != nil {
				out = append(out, NodeID(nid))
			}
		}
	}
	return out
}

// compactArray returns node's columns (m.compact set).
func (m *manifest) compactArray(node NodeID) (*compactArray, bool) {
	i, ok := slices.BinarySearchFunc(m.compact, node, func(a compactArray, n NodeID) int { return bytes.Compare(a.node[:], n[:]) })
	if !ok {
		return nil, false
	}
	return &m.compact[i], true
}

// ChunkRef table fields.
const (
	crIndex = iota
	crInline
	crOffset
	crLength
	crChunkID
	crLocation
	crChecksumEtag
	crChecksumLastModified
	crCompressedLocation
)

// refKind tells native, inline and virtual chunk refs apart.
type refKind uint8

const (
	refNative refKind = iota + 1
	refInline
	refVirtual
)

// chunkRef is one chunk reference, read from its manifest buffer.
type chunkRef struct {
	kind     refKind
	inline   []byte // a view into the manifest (inline refs)
	offset   uint64
	length   uint64
	chunkID  ID
	location string
	etag     string
	modified uint32
}

// parseManifest parses a manifest file and, when it can, turns its refs
// into columns.
func parseManifest(id ID, data []byte, maxBytes int64) (*manifest, error) {
	m, err := parseManifestFB(id, data, maxBytes)
	if err != nil {
		return nil, err
	}
	c, ok, err := compactRefs(m, int64(len(m.buf)))
	if err != nil {
		return nil, err
	}
	if ok {
		m.compact, m.buf, m.arrays = c, nil, fbVector{}
	}
	return m, nil
}

// parseManifestFB parses and checks a manifest file, keeping its
// flatbuffer.
func parseManifestFB(id ID, data []byte, maxBytes int64) (*manifest, error) {
	h, root, err := decodeSelf(data, fileManifest, maxBytes, id)
	if err != nil {
		return nil, err
	}
	buf := root.buf
	arrays, err := root.vector(1, 4, true)
	if err != nil {
		return nil, err
	}
	m := &manifest{id: id, spec: h.spec, buf: buf, arrays: arrays}
	var prev []byte
	err = arrays.eachTable(func(j int, t fbTable) error {
		nid, err := t.inline(0, 8)
		if err != nil {
			return err
		}
		if nid == nil {
			return corruptf("manifest array %d without a node id", j)
		}
		if prev != nil && bytes.Compare(prev, nid) >= 0 {
			return corruptf("manifest arrays not sorted by node id")
		}
		prev = nid
		refs, err := t.vector(1, 4, true)
		m.refs += int64(refs.n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// arrayRefs returns the refs vector of node's ArrayManifest, if any.
func (m *manifest) arrayRefs(node NodeID) (fbVector, bool, error) {
	var t fbTable
	found, err := search(m.arrays.n, func(j int) (c int, err error) {
		if t, err = m.arrays.table(j); err != nil {
			return 0, err
		}
		nid, err := t.inline(0, 8)
		if err != nil {
			return 0, err
		}
		return bytes.Compare(nid, node[:]), nil
	})
	if err != nil || !found {
		return fbVector{}, false, err
	}
	v, err := t.vector(1, 4, true)
	return v, err == nil, err
}

// search is a binary search of n sorted elements that cmp compares with
// the one sought (<0: element j comes before it); it stops at the first
// error and, on a match, right after comparing the matching element.
func search(n int, cmp func(j int) (int, error)) (bool, error) {
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c, err := cmp(mid); {
		case err != nil:
			return false, err
		case c == 0:
			return true, nil
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false, nil
}

// refIndex returns ref j's table and its index vector.
func refIndex(refs fbVector, j int) (fbTable, fbVector, error) {
	t, err := refs.table(j)
	if err != nil {
		return t, fbVector{}, err
	}
	idx, err := t.vector(crIndex, 4, true)
	return t, idx, err
}

func compareIndex(idx fbVector, coords []uint32) int {
	for i := 0; i < idx.n && i < len(coords); i++ {
		a := idx.u32(i)
		if a != coords[i] {
			if a < coords[i] {
				return -1
			}
			return 1
		}
	}
	return idx.n - len(coords)
}

// lookup finds node's ref at coords by binary search in the buffer.
func (m *manifest) lookup(node NodeID, coords []uint32) (chunkRef, bool, error) {
	if m.compact != nil {
		a, ok := m.compactArray(node)
		if !ok {
			return chunkRef{}, false, nil
		}
		r, ok := a.lookup(coords)
		return r, ok, nil
	}
	refs, ok, err := m.arrayRefs(node)
	if err != nil || !ok {
		return chunkRef{}, false, err
	}
	var t fbTable
	found, err := search(refs.n, func(j int) (int, error) {
		var idx fbVector
		var err error
		if t, idx, err = refIndex(refs, j); err != nil {
			return 0, err
		}
		return compareIndex(idx, coords), nil
	})
	if err != nil || !found {
		return chunkRef{}, false, err
	}
	r, err := readRef(t)
	return r, err == nil, err
}

// readRef reads a ChunkRef table.
func readRef(t fbTable) (chunkRef, error) {
	var r chunkRef
	var err error
	if r.offset, err = t.u64(crOffset, 0); err != nil {
		return r, err
	}
	if r.length, err = t.u64(crLength, 0); err != nil {
		return r, err
	}
	inline, err := t.vector(crInline, 1, false)
	if err != nil {
		return r, err
	}
	if _, present, err := t.ref(crInline); err != nil {
		return r, err
	} else if present {
		r.kind = refInline
		r.inline = inline.buf[inline.start : inline.start+inline.n : inline.start+inline.n]
		return r, nil
	}
	cid, err := t.inline(crChunkID, 12)
	if err != nil {
		return r, err
	}
	if cid != nil {
		r.kind = refNative
		copy(r.chunkID[:], cid)
		return r, nil
	}
	if r.location, err = t.str(crLocation, false); err != nil {
		return r, err
	}
	_, comp, err := t.ref(crCompressedLocation)
	if err != nil {
		return r, err
	}
	if r.location != "" || comp {
		r.kind = refVirtual
		if r.etag, err = t.str(crChecksumEtag, false); err != nil {
			return r, err
		}
		r.modified, err = t.u32(crChecksumLastModified, 0)
		return r, err
	}
	return r, corruptf("chunk ref that is neither inline, native nor virtual")
}

// eachRef calls fn for every ref of node in the manifest, in order, with
// its coordinates (a slice fn must not keep) and the ref.
func (m *manifest) eachRef(node NodeID, fn func(coords []uint32, r chunkRef) error) error {
	if m.compact != nil {
		a, ok := m.compactArray(node)
		if !ok {
			return nil
		}
		coords := make([]uint32, a.nd)
		for j := range a.n() {
			a.coordsOf(a.keyAt(j), coords)
			if err := fn(coords, a.ref(j)); err != nil {
				return err
			}
		}
		return nil
	}
	refs, ok, err := m.arrayRefs(node)
	if err != nil || !ok {
		return err
	}
	var coords []uint32
	for j := 0; j < refs.n; j++ {
		t, idx, err := refIndex(refs, j)
		if err != nil {
			return err
		}
		r, err := readRef(t)
		if err != nil {
			return err
		}
		coords = coords[:0]
		for d := 0; d < idx.n; d++ {
			coords = append(coords, idx.u32(d))
		}
		if err := fn(coords, r); err != nil {
			return err
		}
	}
	return nil
}

func (k refKind) String() string {
	switch k {
	case refNative:
		return "native"
	case refInline:
		return "inline"
	case refVirtual:
		return "virtual"
	}
	return fmt.Sprintf("refKind(%d)", uint8(k))
}
