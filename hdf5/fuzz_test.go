package hdf5

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store/mem"
)

// fuzzLimits keep one fuzz input's work small.
var fuzzLimits = []Option{WithMaxMetadataBytes(4 << 20), WithMaxChunks(1 << 12), WithMaxObjects(1 << 10)}

// exercise opens data as an HDF5 file and does everything a caller would:
// walk, list chunks, make references. Errors are fine; panics, hangs and
// unbounded allocations are not.
func exercise(data []byte) {
	ctx := context.Background()
	st := mem.New()
	if err := st.Set(ctx, "f.h5", data); err != nil {
		panic(err)
	}
	f, err := Open(ctx, st, "f.h5", fuzzLimits...)
	if err != nil {
		return
	}
	_ = f.Walk(ctx, func(n *Node) error {
		if n.Dataset != nil && n.Dataset.Layout == Chunked {
			_ = n.Dataset.Chunks(ctx, func(Chunk) error { return nil })
		}
		return nil
	})
	_, _ = References(ctx, f, RefsOptions{SkipUnsupported: true})
}

// FuzzOpen fuzzes whole files: the superblock, object headers, groups,
// heaps and chunk indexes as a reader meets them. Seeds: the tiny
// reference files (testdata/fuzz/FuzzOpen) and the larger ones.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"tiny_earliest.h5", "tiny_latest.h5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { exercise(data) })
}

// fuzzFile returns a File over data with 8-byte offsets and lengths, as if
// its superblock said so, for fuzzing one structure at address 0.
func fuzzFile(data []byte) *File {
	st := mem.New()
	_ = st.Set(context.Background(), "f", data)
	f := &File{r: st, key: "f", size: uint64(len(data)), pages: map[uint64]*page{}, objects: map[uint64]*objectHeader{},
		gheaps: map[uint64][]byte{}, cfg: config{maxMeta: 4 << 20, maxChunks: 1 << 12, maxObjects: 1 << 10}}
	f.sb = superblock{version: 2, sizeOffsets: 8, sizeLengths: 8, groupLeafK: 4, groupIntK: 16}
	return f
}

// FuzzObjectHeader fuzzes an object header at address 0 and every message
// it holds, parsed as its type says.
func FuzzObjectHeader(f *testing.F) {
	f.Add([]byte("OHDR\x02\x00\x10\x01\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\x01\x00\x01\x00\x01\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x01\x00\x10\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		file := fuzzFile(data)
		h, err := file.readObjectHeader(ctx, 0)
		if err != nil {
			return
		}
		for _, m := range h.msgs {
			switch m.typ {
			case msgDataspace:
				_, _ = file.parseDataspace(m.data)
			case msgDatatype:
				_, _, _ = file.parseDatatype(m.data, 0)
			case msgFill:
				_, _ = file.parseFill(m.data)
			case msgFilters:
				_, _ = file.parseFilters(m.data)
			case msgLayout:
				_, _ = file.parseLayout(m.data)
			case msgLink:
				_, _ = file.parseLink(m.data)
			case msgAttribute:
				_, _ = file.parseAttribute(ctx, m.data)
			}
		}
		_, _ = file.links(ctx, h)
		_, _ = file.attributes(ctx, h)
		_, _ = file.dataset(ctx, h, "/x")
	})
}

// FuzzIndex fuzzes the B-tree, heap and array structures at address 0: a
// version 1 B-tree of either node type, a version 2 B-tree, a fractal
// heap, a local heap, and fixed and extensible arrays as chunk indexes of
// a small 2-D dataset (the first byte chooses the filters).
func FuzzIndex(f *testing.F) {
	f.Add([]byte("TREE\x01\x00\x00\x00"))
	f.Add([]byte("BTHD\x00\x0a\x00\x02\x00\x00\x18\x00\x00\x00\x64\x28"))
	f.Add([]byte("FAHD\x00\x00\x08\x0a"))
	f.Add([]byte("EAHD\x00\x00\x08\x20\x04\x10\x04\x0a"))
	f.Add([]byte("FRHP\x00\x07\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		file := fuzzFile(data)
		nop := func(btree1Entry) error { return nil }
		_ = file.walkBTree1(ctx, 0, 0, 8, nop)
		_ = file.walkBTree1(ctx, 0, 1, 8+8*3, nop)
		for _, typ := range []uint8{5, 8, 10, 11} {
			_, _ = file.walkBTree2(ctx, 0, typ, 1<<12, func([]byte) error { return nil })
		}
		if h, err := file.readFractalHeap(ctx, 0); err == nil && len(data) > 8 {
			_, _ = file.heapObject(ctx, h, data[len(data)-8:])
		}
		_, _ = file.localHeap(ctx, 0)
		_, _ = file.globalObject(ctx, 0, 1)
		var filters []Filter
		if len(data) > 0 && data[0]&1 != 0 {
			filters = []Filter{{ID: FilterDeflate}}
		}
		for _, index := range []ChunkIndex{IndexFixedArray, IndexExtensible, IndexBTree2, IndexBTree1} {
			ds := &Dataset{f: file, path: "/x", Type: &Datatype{Class: ClassInteger, Size: 4}, Shape: []uint64{20, 30},
				MaxShape: []uint64{Unlimited, 30}, Layout: Chunked, Index: index, ChunkShape: []uint64{3, 8}, Filters: filters,
				lay: &layoutInfo{class: Chunked, index: index, chunk: []uint64{3, 8}, elemSize: 4, indexAddr: 0}}
			if index == IndexFixedArray {
				ds.MaxShape = []uint64{20, 30}
			}
			_ = ds.Chunks(ctx, func(Chunk) error { return nil })
		}
	})
}
