package hdf5

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Node is a group or a dataset of a file.
type Node struct {
	Path  string // "/" for the root group, "/a/b" below it
	Addr  uint64 // address of the object header
	Attrs []Attribute
	// Dataset describes the node when it is a dataset; nil for a group.
	Dataset *Dataset
}

// Attr returns the attribute called name, or nil.
func (n *Node) Attr(name string) *Attribute {
	for i := range n.Attrs {
		if n.Attrs[i].Name == name {
			return &n.Attrs[i]
		}
	}
	return nil
}

// Dataset describes a dataset: its type, shape, storage and filters. Its
// chunks are listed by Chunks.
type Dataset struct {
	Type     *Datatype
	Shape    []uint64 // nil for a scalar
	MaxShape []uint64 // Unlimited for an unlimited dimension
	Layout   Layout
	// Index is the chunk index of a chunked dataset.
	Index      ChunkIndex
	ChunkShape []uint64 // chunked datasets only
	// Fill is the fill value's bytes (nil when none is defined: HDF5 then
	// fills with zero bytes).
	Fill    []byte
	Filters []Filter
	// Address and Size locate a contiguous dataset's data (Address is
	// Unallocated when no data was written).
	Address, Size uint64
	// CompactData holds a compact dataset's data.
	CompactData []byte
	// Dims names, per dimension, the path of the dimension scale attached
	// to it ("" for none; the first one when there are several).
	Dims []string
	// IsScale reports a dimension scale (CLASS = "DIMENSION_SCALE"), as
	// NetCDF-4 writes for each dimension.
	IsScale bool

	f    *File
	path string
	lay  *layoutInfo
}

// Unallocated is the Address of a contiguous dataset with no storage.
const Unallocated = undef

// walkState tracks a traversal.
type walkState struct {
	seen  map[uint64]string
	nodes []*Node
}

// Walk calls fn for every group and dataset of the file, parents before
// children and children in name order. An object reachable through several
// hard links is visited once, under its first path; soft and external
// links are not followed. Nodes are read completely before the first call
// (dimension scales need the whole file), bounded by WithMaxObjects.
func (f *File) Walk(ctx context.Context, fn func(*Node) error) error {
	nodes, err := f.nodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// Node returns the group or dataset at path ("/" or "/a/b").
func (f *File) Node(ctx context.Context, p string) (*Node, error) {
	nodes, err := f.nodes(ctx)
	if err != nil {
		return nil, err
	}
	want := path.Clean("/" + p)
	for _, n := range nodes {
		if n.Path == want {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, want)
}

func (f *File) nodes(ctx context.Context) ([]*Node, error) {
	f.objMu.Lock()
	cached := f.listing
	f.objMu.Unlock()
	if cached != nil {
		return cached, nil
	}
	st := &walkState{seen: map[uint64]string{}}
	if err := f.visit(ctx, st, "/", f.sb.root, 0); err != nil {
		return nil, fmt.Errorf("hdf5: %s: %w", f.key, err)
	}
	// Resolve dimension scales now that every object's path is known.
	for _, n := range st.nodes {
		ds := n.Dataset
		if ds == nil {
			continue
		}
		ds.Dims = make([]string, len(ds.Shape))
		if a := n.Attr("DIMENSION_LIST"); a != nil {
			if refs, ok := a.Value.([][]uint64); ok {
				for i := range ds.Dims {
					if i < len(refs) && len(refs[i]) > 0 {
						ds.Dims[i] = st.seen[refs[i][0]]
					}
				}
			}
		}
	}
	f.objMu.Lock()
	f.listing = st.nodes
	f.objMu.Unlock()
	return st.nodes, nil
}

func (f *File) visit(ctx context.Context, st *walkState, p string, addr uint64, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: groups nested deeper than %d", ErrLimit, maxDepth)
	}
	if len(st.nodes) >= f.cfg.maxObjects {
		return fmt.Errorf("%w: more than %d objects", ErrLimit, f.cfg.maxObjects)
	}
	st.seen[addr] = p
	h, err := f.object(ctx, addr)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	attrs, err := f.attributes(ctx, h)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	n := &Node{Path: p, Addr: addr, Attrs: attrs}
	if h.first(msgLayout) != nil {
		ds, err := f.dataset(ctx, h, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if a := n.Attr("CLASS"); a != nil && a.Value == "DIMENSION_SCALE" {
			ds.IsScale = true
		}
		n.Dataset = ds
		st.nodes = append(st.nodes, n)
		return nil
	}
	if h.first(msgSymbolTable) == nil && h.first(msgLinkInfo) == nil && h.first(msgLink) == nil && h.first(msgGroupInfo) == nil {
		return nil // a committed datatype, or an object of no interest
	}
	st.nodes = append(st.nodes, n)
	links, err := f.links(ctx, h)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	sort.Slice(links, func(i, j int) bool { return links[i].name < links[j].name })
	for i, l := range links {
		if i > 0 && links[i-1].name == l.name {
			return errorf("%s: two links named %q", p, l.name)
		}
		if l.kind != linkHard {
			continue
		}
		if l.name == "." || l.name == ".." || strings.HasPrefix(l.name, ".z") {
			return errorf("%s: a link named %q", p, l.name)
		}
		if _, ok := st.seen[l.addr]; ok {
			continue // visited already (a second hard link, or a cycle)
		}
		if err := f.visit(ctx, st, path.Join(p, l.name), l.addr, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// dataset parses the dataset messages of h.
func (f *File) dataset(ctx context.Context, h *objectHeader, p string) (*Dataset, error) {
	ds := &Dataset{f: f, path: p, Address: undef}
	for _, typ := range []uint16{msgDataspace, msgDatatype, msgLayout} {
		if h.first(typ) == nil {
			return nil, errorf("dataset without a message of type %d", typ)
		}
	}
	if h.first(msgExternal) != nil {
		return nil, unsupported("external data files")
	}
	b, err := f.sharedMessage(ctx, h.first(msgDatatype), 0)
	if err != nil {
		return nil, err
	}
	if ds.Type, _, err = f.parseDatatype(b, 0); err != nil {
		return nil, err
	}
	if ds.Type.Size == 0 {
		return nil, errorf("a data type of 0 bytes")
	}
	b, err = f.sharedMessage(ctx, h.first(msgDataspace), 0)
	if err != nil {
		return nil, err
	}
	space, err := f.parseDataspace(b)
	if err != nil {
		return nil, err
	}
	ds.Shape, ds.MaxShape = space.dims, space.maxdims
	nelem, err := space.numElements()
	if err != nil {
		return nil, err
	}
	if m := h.first(msgFill); m != nil {
		b, err := f.sharedMessage(ctx, m, 0)
		if err != nil {
			return nil, err
		}
		fv, err := f.parseFill(b)
		if err != nil {
			return nil, err
		}
		if fv.defined {
			ds.Fill = fv.value
		}
	} else if m := h.first(msgFillOld); m != nil {
		d := f.dec(m.data, "fill value message")
		n := d.u32()
		v := d.bytes(int(n))
		if d.err != nil {
			return nil, d.err
		}
		if n > 0 {
			ds.Fill = v
		}
	}
	if ds.Fill != nil && len(ds.Fill) != ds.Type.Size {
		return nil, errorf("a %d-byte fill value for %d-byte elements", len(ds.Fill), ds.Type.Size)
	}
	if m := h.first(msgFilters); m != nil {
		b, err := f.sharedMessage(ctx, m, 0)
		if err != nil {
			return nil, err
		}
		if ds.Filters, err = f.parseFilters(b); err != nil {
			return nil, err
		}
	}
	lay, err := f.parseLayout(h.first(msgLayout).data)
	if err != nil {
		return nil, err
	}
	ds.lay = lay
	ds.Layout = lay.class
	switch lay.class {
	case Compact:
		if nelem > uint64(len(lay.compact)/ds.Type.Size) {
			return nil, errorf("compact data of %d bytes for %d elements of %d bytes", len(lay.compact), nelem, ds.Type.Size)
		}
		ds.CompactData = lay.compact
	case Contiguous:
		ds.Address, ds.Size = lay.addr, lay.size
		if lay.addr != undef {
			if err := f.checkRange(lay.addr, lay.size, "contiguous data"); err != nil {
				return nil, err
			}
		}
	case Chunked:
		if len(lay.chunk) != len(ds.Shape) {
			return nil, errorf("chunks of rank %d for a dataspace of rank %d", len(lay.chunk), len(ds.Shape))
		}
		if lay.elemSize != uint64(ds.Type.Size) {
			return nil, errorf("chunk element size %d for %d-byte elements", lay.elemSize, ds.Type.Size)
		}
		ds.ChunkShape = lay.chunk
		ds.Index = lay.index
		if _, err := ds.chunkBytes(); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// chunkBytes returns the size in bytes of an unfiltered chunk.
func (ds *Dataset) chunkBytes() (uint64, error) {
	n := uint64(ds.Type.Size)
	for _, c := range ds.ChunkShape {
		if n > maxStructure*64/c {
			return 0, fmt.Errorf("%w: chunks of %v elements", ErrLimit, ds.ChunkShape)
		}
		n *= c
	}
	return n, nil
}
