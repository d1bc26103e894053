package icechunk

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"slices"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Encoding the files a commit writes: manifests, snapshots, transaction
// logs and the repo object, each a header and a zstd-compressed flatbuffer.

var zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))

const implementation = "gozarr"

func encodeFile(spec, typ uint8, fb []byte) []byte {
	out := make([]byte, 0, headerLen+len(fb)/2)
	out = append(out, magic...)
	name := []byte(implementation)
	out = append(out, name...)
	out = append(out, bytes.Repeat([]byte{' '}, 24-len(name))...)
	out = append(out, spec, typ, compressionZstd)
	return zenc.EncodeAll(fb, out)
}

func newID() ID {
	var id ID
	rand.Read(id[:])
	return id
}

func newNodeID() NodeID {
	var id NodeID
	rand.Read(id[:])
	return id
}

// writeRef is a chunk ref to write: the chunk's coordinates and its ref.
type writeRef struct {
	coords []uint32
	chunkRef
}

func compareCoords(a, b []uint32) int { return slices.Compare(a, b) }

// encodeManifest writes one manifest of one array's refs (sorted), in
// the layout of spec version spec (1 has no compression field).
func encodeManifest(spec uint8, id ID, node NodeID, refs []writeRef) []byte {
	b := newFB()
	fb := b.finish(func(b *fbBuilder) int {
		f := []*fbField{
			fStruct(id[:], 1),
			fTables(1, func(b *fbBuilder, _ int) int {
				return b.table([]*fbField{
					fStruct(node[:], 1),
					fTables(len(refs), func(b *fbBuilder, i int) int { return encodeRef(b, &refs[i]) }),
				})
			}),
		}
		if spec >= 2 {
			f = append(f, nil, fU8(0)) // compression_algorithm: locations stored plain
		}
		return b.table(f)
	})
	return encodeFile(spec, fileManifest, fb)
}

func encodeRef(b *fbBuilder, r *writeRef) int {
	f := make([]*fbField, 8)
	f[crIndex] = fU32s(r.coords)
	switch r.kind {
	case refInline:
		f[crInline] = fBytes(r.inline)
	case refNative:
		f[crOffset], f[crLength] = fU64(r.offset), fU64(r.length)
		f[crChunkID] = fStruct(r.chunkID[:], 1)
	case refVirtual:
		f[crOffset], f[crLength] = fU64(r.offset), fU64(r.length)
		f[crLocation] = fString(r.location)
		if r.etag != "" {
			f[crChecksumEtag] = fString(r.etag)
		}
		if r.modified != 0 {
			f[crChecksumLastModified] = fU32(r.modified)
		}
	}
	if r.offset == 0 {
		f[crOffset] = nil
	}
	return b.table(f)
}

// writeNode is a node of a snapshot to write.
type writeNode struct {
	path      string
	id        NodeID
	kind      NodeKind
	userData  []byte
	shape     []uint64
	numChunks []uint32
	chunkLen  []uint64 // chunk shape (spec 1 writes it, not numChunks)
	manifests []manifestRef
}

// manifestInfo describes a manifest file for the snapshot's list.
type manifestInfo struct {
	id   ID
	size uint64
	refs uint32
}

type metaItem struct {
	name  string
	value []byte // encoded (FlexBuffers)
}

func encodeMetadata(items []metaItem) *fbField {
	return fTables(len(items), func(b *fbBuilder, i int) int {
		return b.table([]*fbField{fString(items[i].name), fBytes(items[i].value)})
	})
}

// metaItems encodes metadata values: FlexBuffers in spec 2, MessagePack
// in spec 1.
func metaItems(spec uint8, md map[string]any) []metaItem {
	items := make([]metaItem, 0, len(md))
	for k, v := range md {
		if spec == 1 {
			items = append(items, metaItem{k, encodeMsgpack(v)})
		} else {
			items = append(items, metaItem{k, encodeFlex(v)})
		}
	}
	slices.SortFunc(items, func(a, b metaItem) int { return bytes.Compare([]byte(a.name), []byte(b.name)) })
	return items
}

// encodeSnapshot writes a snapshot in the layout of spec version spec:
// spec 1 names the parent and lists the manifest files as structs; spec 2
// keeps the parent in the repo object and lists them as tables.
func encodeSnapshot(spec uint8, id ID, parent *ID, nodes []writeNode, at time.Time, message string, md []metaItem, files []manifestInfo) []byte {
	b := newFB()
	fb := b.finish(func(b *fbBuilder) int {
		f := []*fbField{
			fStruct(id[:], 1),
			nil,
			fTables(len(nodes), func(b *fbBuilder, i int) int { return encodeNode(b, spec, &nodes[i]) }),
			fU64(uint64(at.UnixMicro())),
			fString(message),
			encodeMetadata(md),
		}
		if spec == 1 {
			if parent != nil {
				f[1] = fStruct(parent[:], 1)
			}
			// ManifestFileInfo: id, 4 bytes of padding, size, refs, padding
			data := make([]byte, 0, 32*len(files))
			for _, m := range files {
				data = append(data, m.id[:]...)
				data = append(data, 0, 0, 0, 0)
				data = binary.LittleEndian.AppendUint64(data, m.size)
				data = binary.LittleEndian.AppendUint32(data, m.refs)
				data = append(data, 0, 0, 0, 0)
			}
			return b.table(append(f, fStructs(len(files), 8, data)))
		}
		return b.table(append(f, fStructs(0, 8, nil),
			fTables(len(files), func(b *fbBuilder, i int) int {
				f := &files[i]
				return b.table([]*fbField{fStruct(f.id[:], 1), fU64(f.size), fU32(f.refs)})
			})))
	})
	return encodeFile(spec, fileSnapshot, fb)
}

func encodeNode(b *fbBuilder, spec uint8, n *writeNode) int {
	var typ uint8 = 2
	data := fRef(func(b *fbBuilder) int { return b.table(nil) })
	if n.kind == KindArray {
		typ = 1
		data = fRef(func(b *fbBuilder) int {
			f := []*fbField{
				fStructs(0, 8, nil),
				nil,
				fTables(len(n.manifests), func(b *fbBuilder, i int) int {
					m := &n.manifests[i]
					ext := make([]byte, 0, 8*len(m.from))
					for d := range m.from {
						ext = binary.LittleEndian.AppendUint32(ext, m.from[d])
						ext = binary.LittleEndian.AppendUint32(ext, m.to[d])
					}
					return b.table([]*fbField{fStruct(m.id[:], 1), fStructs(len(m.from), 4, ext)})
				}),
			}
			if spec == 1 {
				// DimensionShape structs: array length, chunk length
				shape := make([]byte, 0, 16*len(n.shape))
				for i := range n.shape {
					shape = binary.LittleEndian.AppendUint64(shape, n.shape[i])
					shape = binary.LittleEndian.AppendUint64(shape, n.chunkLen[i])
				}
				f[0] = fStructs(len(n.shape), 8, shape)
				return b.table(f)
			}
			return b.table(append(f, fTables(len(n.shape), func(b *fbBuilder, i int) int {
				return b.table([]*fbField{fU64(n.shape[i]), fU32(n.numChunks[i])})
			})))
		})
	}
	return b.table([]*fbField{fStruct(n.id[:], 1), fString(n.path), fBytes(n.userData), fU8(typ), data})
}

// txLog is what a commit changed, by node id.
type txLog struct {
	newGroups, newArrays, deletedGroups, deletedArrays, updatedArrays, updatedGroups []NodeID
	chunks                                                                           map[NodeID][][]uint32
}

// encodeTxLog writes a transaction log (spec 1 has no moves).
func encodeTxLog(spec uint8, id ID, t *txLog) []byte {
	ids := func(v []NodeID) *fbField {
		slices.SortFunc(v, func(a, b NodeID) int { return bytes.Compare(a[:], b[:]) })
		data := make([]byte, 0, 8*len(v))
		for _, x := range v {
			data = append(data, x[:]...)
		}
		return fStructs(len(v), 1, data)
	}
	nodes := make([]NodeID, 0, len(t.chunks))
	for n := range t.chunks {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b NodeID) int { return bytes.Compare(a[:], b[:]) })
	b := newFB()
	fb := b.finish(func(b *fbBuilder) int {
		f := []*fbField{
			fStruct(id[:], 1),
			ids(t.newGroups), ids(t.newArrays), ids(t.deletedGroups), ids(t.deletedArrays),
			ids(t.updatedArrays), ids(t.updatedGroups),
			fTables(len(nodes), func(b *fbBuilder, i int) int {
				unsorted := t.chunks[nodes[i]]
				cs := make([][]uint32, len(unsorted))
				for j, k := range coordOrder(len(unsorted), func(j int) []uint32 { return unsorted[j] }) {
					cs[j] = unsorted[k]
				}
				return b.table([]*fbField{
					fStruct(nodes[i][:], 1),
					fTables(len(cs), func(b *fbBuilder, j int) int { return b.table([]*fbField{fU32s(cs[j])}) }),
				})
			}),
		}
		if spec >= 2 {
			f = append(f, fTables(0, nil)) // moved nodes
		}
		return b.table(f)
	})
	return encodeFile(spec, fileTxLog, fb)
}
