package icechunk

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gozarr/gozarr/zarr"
)

// NodeKind tells groups and arrays apart.
type NodeKind uint8

// Node kinds.
const (
	KindGroup NodeKind = iota + 1
	KindArray
)

// String returns "group" or "array".
func (k NodeKind) String() string {
	if k == KindArray {
		return "array"
	}
	return "group"
}

// manifestRef is one manifest of an array and the box of its chunk grid
// it covers: [from[i], to[i]) per dimension.
type manifestRef struct {
	id       ID
	from, to []uint32
}

func (m *manifestRef) contains(coords []uint32) bool {
	for i, c := range coords {
		if c < m.from[i] || c >= m.to[i] {
			return false
		}
	}
	return true
}

// node is one group or array of a snapshot. userData is a view into the
// snapshot buffer.
type node struct {
	path      string // "/" or "/a/b"
	id        NodeID
	kind      NodeKind
	userData  []byte
	shape     []uint64 // array length per dimension
	numChunks []uint32 // chunks per dimension
	chunkLen  []uint64 // chunk shape, as spec 1 states it (nil in spec 2)
	manifests []manifestRef
	enc       zarr.ChunkKeyEncoding
}

// snapshot is a parsed snapshot file.
type snapshot struct {
	id        ID
	spec      uint8
	buf       []byte
	parent    *ID // spec 1 only
	flushedAt uint64
	message   string
	metadata  fbVector // of MetadataItem tables
	nodes     []node   // sorted by path
	refs      int64    // manifest file chunk refs, as the snapshot states them
	files     map[ID]manifestInfo
}

// Snapshot table fields.
const (
	snID = iota
	snParentID
	snNodes
	snFlushedAt
	snMessage
	snMetadata
	snManifestFiles
	snManifestFilesV2
)

func parseSnapshot(id ID, data []byte, maxBytes int64) (*snapshot, error) {
	h, root, err := decodeSelf(data, fileSnapshot, maxBytes, id)
	if err != nil {
		return nil, err
	}
	s := &snapshot{spec: h.spec, buf: root.buf, id: id}
	if p, err := root.inline(snParentID, 12); err != nil {
		return nil, err
	} else if p != nil {
		pid := ID(p)
		s.parent = &pid
	}
	if s.flushedAt, err = root.u64(snFlushedAt, 0); err != nil {
		return nil, err
	}
	if s.message, err = root.str(snMessage, false); err != nil {
		return nil, err
	}
	if s.metadata, err = root.vector(snMetadata, 4, false); err != nil {
		return nil, err
	}
	if err := checkMetadata(s.metadata); err != nil {
		return nil, err
	}
	// the manifest files lists (V1 structs of 32 bytes, V2 tables)
	s.files = map[ID]manifestInfo{}
	mf1, err := root.vector(snManifestFiles, 32, false)
	if err != nil {
		return nil, err
	}
	for j := 0; j < mf1.n; j++ {
		b := mf1.at(j)
		s.files[ID(b[:12])] = manifestInfo{id: ID(b[:12]), size: leU64(b[16:]), refs: leU32(b[24:])}
	}
	mf, err := root.vector(snManifestFilesV2, 4, false)
	if err != nil {
		return nil, err
	}
	err = mf.eachTable(func(_ int, t fbTable) error {
		idb, err := t.inline(0, 12)
		if err != nil {
			return err
		}
		if idb == nil {
			return corruptf("manifest file without an id")
		}
		size, err := t.u64(1, 0)
		if err != nil {
			return err
		}
		n, err := t.u32(2, 0)
		s.refs += int64(n)
		s.files[ID(idb)] = manifestInfo{id: ID(idb), size: size, refs: n}
		return err
	})
	if err != nil {
		return nil, err
	}
	nodes, err := root.vector(snNodes, 4, true)
	if err != nil {
		return nil, err
	}
	s.nodes = make([]node, nodes.n)
	err = nodes.eachTable(func(j int, t fbTable) error {
		if err := s.parseNode(t, &s.nodes[j]); err != nil {
			return fmt.Errorf("node %d: %w", j, err)
		}
		if j > 0 && s.nodes[j-1].path >= s.nodes[j].path {
			return corruptf("nodes not sorted by path (%q after %q)", s.nodes[j].path, s.nodes[j-1].path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NodeSnapshot, ArrayNodeData and ManifestRef fields.
const (
	nsID = iota
	nsPath
	nsUserData
	nsDataType
	nsData
)

const (
	adShape = iota
	adDimNames
	adManifests
	adShapeV2
)

func validPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] < 0x20 || seg[i] == '\\' {
				return false
			}
		}
	}
	return true
}

// maxDims bounds an array's dimensions, as zarr's metadata does.
const maxDims = 64

func (s *snapshot) parseNode(t fbTable, n *node) error {
	idb, err := t.inline(nsID, 8)
	if err != nil {
		return err
	}
	if idb == nil {
		return corruptf("node without an id")
	}
	n.id = NodeID(idb)
	if n.path, err = t.str(nsPath, true); err != nil {
		return err
	}
	if !validPath(n.path) {
		return corruptf("node path %q", n.path)
	}
	if n.userData, err = t.bytes(nsUserData, true); err != nil {
		return err
	}
	typ, err := t.u8(nsDataType, 0)
	if err != nil {
		return err
	}
	data, _, err := t.table(nsData, true)
	if err != nil {
		return err
	}
	switch typ {
	case 2:
		n.kind = KindGroup
		return nil
	case 1:
		n.kind = KindArray
	default:
		return corruptf("node %s: node data type %d", n.path, typ)
	}
	// Shape: V2 tables of (array_length, num_chunks), or V1 structs of
	// (array_length, chunk_length).
	v2, err := data.vector(adShapeV2, 4, false)
	if err != nil {
		return err
	}
	if _, present, _ := data.ref(adShapeV2); present {
		if v2.n > maxDims {
			return corruptf("array %s of %d dimensions", n.path, v2.n)
		}
		n.shape = make([]uint64, v2.n)
		n.numChunks = make([]uint32, v2.n)
		for i := range n.shape {
			d, err := v2.table(i)
			if err != nil {
				return err
			}
			if n.shape[i], err = d.u64(0, 0); err != nil {
				return err
			}
			if n.numChunks[i], err = d.u32(1, 0); err != nil {
				return err
			}
		}
	} else {
		v1, err := data.vector(adShape, 16, true)
		if err != nil {
			return err
		}
		if v1.n > maxDims {
			return corruptf("array %s of %d dimensions", n.path, v1.n)
		}
		n.shape = make([]uint64, v1.n)
		n.numChunks = make([]uint32, v1.n)
		n.chunkLen = make([]uint64, v1.n)
		for i := range n.shape {
			n.shape[i] = leU64(v1.at(i))
			n.chunkLen[i] = leU64(v1.at(i)[8:])
			if c := n.chunkLen[i]; c > 0 {
				n.numChunks[i] = uint32(min((n.shape[i]+c-1)/c, 1<<32-1))
			}
		}
	}
	mans, err := data.vector(adManifests, 4, true)
	if err != nil {
		return err
	}
	n.manifests = make([]manifestRef, mans.n)
	for j := range n.manifests {
		mt, err := mans.table(j)
		if err != nil {
			return err
		}
		oid, err := mt.inline(0, 12)
		if err != nil {
			return err
		}
		if oid == nil {
			return corruptf("array %s: manifest ref without an id", n.path)
		}
		ext, err := mt.vector(1, 8, true)
		if err != nil {
			return err
		}
		if ext.n != len(n.shape) {
			return corruptf("array %s: manifest extents of %d dimensions for %d", n.path, ext.n, len(n.shape))
		}
		m := &n.manifests[j]
		m.id = ID(oid)
		m.from, m.to = make([]uint32, ext.n), make([]uint32, ext.n)
		for i := 0; i < ext.n; i++ {
			b := ext.at(i)
			m.from[i], m.to[i] = leU32(b), leU32(b[4:])
			if m.from[i] > m.to[i] {
				return corruptf("array %s: manifest extent [%d, %d)", n.path, m.from[i], m.to[i])
			}
		}
	}
	if err := checkOverlap(n.path, n.manifests); err != nil {
		return err
	}
	var meta struct {
		Enc *zarr.ChunkKeyEncoding `json:"chunk_key_encoding"`
	}
	n.enc = zarr.DefaultKeyEncoding()
	if err := json.Unmarshal(n.userData, &meta); err != nil {
		return corruptf("array %s: zarr.json: %v", n.path, err)
	}
	if meta.Enc != nil {
		n.enc = *meta.Enc
	}
	return nil
}

// checkOverlap reports manifests of one array whose extents overlap,
// which would make a chunk's ref ambiguous. Quadratic in the manifests of
// one array, which are few (one per split region).
func checkOverlap(path string, ms []manifestRef) error {
	if len(ms) > 1<<14 {
		return corruptf("array %s: %d manifests", path, len(ms))
	}
	for a := range ms {
	next:
		for b := a + 1; b < len(ms); b++ {
			for i := range ms[a].from {
				if max(ms[a].from[i], ms[b].from[i]) >= min(ms[a].to[i], ms[b].to[i]) {
					continue next // disjoint in dimension i
				}
			}
			return corruptf("array %s: manifests %v and %v have overlapping extents", path, ms[a].id, ms[b].id)
		}
	}
	return nil
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func leU64(b []byte) uint64 { return uint64(leU32(b)) | uint64(leU32(b[4:]))<<32 }

// find returns the node at path ("/" or "/a/b").
func (s *snapshot) find(path string) *node {
	lo, hi := 0, len(s.nodes)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.nodes[mid].path < path {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(s.nodes) && s.nodes[lo].path == path {
		return &s.nodes[lo]
	}
	return nil
}

// checkMetadata checks the MetadataItem tables of v (names and values
// present) without decoding the values.
func checkMetadata(v fbVector) error {
	for j := 0; j < v.n; j++ {
		t, err := v.table(j)
		if err != nil {
			return err
		}
		if _, err := t.str(0, true); err != nil {
			return err
		}
		if _, err := t.bytes(1, true); err != nil {
			return err
		}
	}
	return nil
}

// metadataMap decodes a vector of MetadataItem tables (FlexBuffers values
// in spec 2, MessagePack in spec 1).
func metadataMap(v fbVector, spec uint8) (map[string]any, error) {
	out := make(map[string]any, v.n)
	for j := 0; j < v.n; j++ {
		t, err := v.table(j)
		if err != nil {
			return nil, err
		}
		name, err := t.str(0, true)
		if err != nil {
			return nil, err
		}
		val, err := t.bytes(1, true)
		if err != nil {
			return nil, err
		}
		var x any
		if spec == 1 {
			x, err = decodeMsgpack(val)
		} else {
			x, err = decodeFlex(val)
		}
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", name, err)
		}
		out[name] = x
	}
	return out, nil
}

// microsTime converts non-leap microseconds since the epoch.
func microsTime(us uint64) time.Time {
	if us > 1<<62 {
		us = 1 << 62
	}
	return time.UnixMicro(int64(us)).UTC()
}
