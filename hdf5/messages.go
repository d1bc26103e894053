package hdf5

import (
	"context"
	"fmt"
	"math"
)

// Class is the class of an HDF5 data type.
type Class int

// Data type classes (the values are the format's class numbers).
const (
	ClassInteger   Class = 0
	ClassFloat     Class = 1
	ClassTime      Class = 2
	ClassString    Class = 3
	ClassBitfield  Class = 4
	ClassOpaque    Class = 5
	ClassCompound  Class = 6
	ClassReference Class = 7
	ClassEnum      Class = 8
	ClassVarLen    Class = 9
	ClassArray     Class = 10
	ClassComplex   Class = 11
)

var classNames = [...]string{"integer", "float", "time", "string", "bitfield", "opaque", "compound",
	"reference", "enum", "variable-length", "array", "complex"}

// String returns the class's name ("integer", "float", "compound", ...).
func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class %d", int(c))
}

// Datatype is an HDF5 data type, as much of it as this package reads.
type Datatype struct {
	Class     Class
	Size      int  // bytes per element
	BigEndian bool // integer, float: byte order
	Signed    bool // integer: two's complement
	// String (fixed or variable length): padding (0 null-terminated, 1
	// null-padded, 2 space-padded) and whether the characters are UTF-8.
	Pad  int
	UTF8 bool
	// VarLenString reports a variable-length string; a variable-length
	// sequence has Class ClassVarLen and its element type in Base.
	VarLenString bool
	// Base is the base type of an enumeration, a variable-length sequence
	// or an array; nil otherwise.
	Base *Datatype
	// Dims are the dimensions of an array type.
	Dims []uint64
	// RefType is 0 for object references, 1 for region references.
	RefType int
}

// NumpyDescr returns the NumPy type string of t ("<i4", ">f8", "|S6",
// "|u1"), or an error wrapping ErrUnsupported for a type that has none in
// the Zarr v2 data types this package writes (compound, variable-length,
// references, ...). Enumerations take their base integer type.
func (t *Datatype) NumpyDescr() (string, error) {
	order := "<"
	if t.BigEndian {
		order = ">"
	}
	switch t.Class {
	case ClassInteger:
		if t.Size == 1 {
			order = "|"
		}
		switch t.Size {
		case 1, 2, 4, 8:
		default:
			return "", unsupported("a %d-byte integer", t.Size)
		}
		if t.Signed {
			return fmt.Sprintf("%si%d", order, t.Size), nil
		}
		return fmt.Sprintf("%su%d", order, t.Size), nil
	case ClassFloat:
		switch t.Size {
		case 2, 4, 8:
			return fmt.Sprintf("%sf%d", order, t.Size), nil
		}
		return "", unsupported("a %d-byte float", t.Size)
	case ClassString:
		if t.VarLenString {
			break
		}
		return fmt.Sprintf("|S%d", t.Size), nil
	case ClassEnum:
		if t.Base != nil && t.Base.Class == ClassInteger {
			return t.Base.NumpyDescr()
		}
	}
	return "", unsupported("%s data type", t)
}

// String describes t briefly ("little-endian 4-byte signed integer").
func (t *Datatype) String() string {
	switch t.Class {
	case ClassInteger, ClassFloat:
		order := "little-endian"
		if t.BigEndian {
			order = "big-endian"
		}
		sign := ""
		if t.Class == ClassInteger {
			sign = "unsigned "
			if t.Signed {
				sign = "signed "
			}
		}
		return fmt.Sprintf("%s %d-byte %s%s", order, t.Size, sign, t.Class)
	case ClassString:
		if t.VarLenString {
			return "variable-length string"
		}
		return fmt.Sprintf("%d-byte string", t.Size)
	}
	return t.Class.String()
}

// parseDatatype parses a datatype message; depth bounds nesting.
func (f *File) parseDatatype(b []byte, depth int) (*Datatype, int, error) {
	if depth > 8 {
		return nil, 0, fmt.Errorf("%w: data types nested deeper than 8", ErrLimit)
	}
	d := f.dec(b, "datatype message")
	cv := d.u8()
	bits := uint32(d.u8()) | uint32(d.u8())<<8 | uint32(d.u8())<<16
	size := d.u32()
	if d.err != nil {
		return nil, 0, d.err
	}
	version := cv >> 4
	t := &Datatype{Class: Class(cv & 0x0f), Size: int(size)}
	if version < 1 || version > 5 {
		return nil, 0, errorf("datatype message version %d", version)
	}
	if size > 1<<30 {
		return nil, 0, errorf("a %d-byte data type", size)
	}
	switch t.Class {
	case ClassInteger:
		t.BigEndian = bits&1 != 0
		t.Signed = bits&8 != 0
		d.skip(4) // bit offset, precision
	case ClassFloat:
		if bits&0x40 != 0 {
			return nil, 0, unsupported("VAX-endian floating point")
		}
		t.BigEndian = bits&1 != 0
		d.skip(12)
	case ClassTime:
		t.BigEndian = bits&1 != 0
		d.skip(2)
	case ClassString:
		t.Pad = int(bits & 0x0f)
		t.UTF8 = bits>>4&0x0f == 1
	case ClassBitfield:
		t.BigEndian = bits&1 != 0
		d.skip(4)
	case ClassOpaque:
		// An ASCII tag padded to a multiple of 8 bytes; its length is in
		// the class bits.
		d.skip(int(bits & 0xff))
	case ClassCompound:
		// Member definitions follow; this package refuses compound
		// datasets, so it needs no more than the size. Attributes of a
		// compound type are skipped, and the message's length bounds it.
		d.p = len(d.b)
	case ClassReference:
		t.RefType = int(bits & 0x0f)
	case ClassEnum:
		base, n, err := f.parseDatatype(d.b[d.p:], depth+1)
		if err != nil {
			return nil, 0, err
		}
		t.Base = base
		d.skip(n)
		// Names and values follow; the message's length bounds them.
		d.p = len(d.b)
	case ClassVarLen:
		t.VarLenString = bits&0x0f == 1
		t.Pad = int(bits >> 4 & 0x0f)
		t.UTF8 = bits>>8&0x0f == 1
		base, n, err := f.parseDatatype(d.b[d.p:], depth+1)
		if err != nil {
			return nil, 0, err
		}
		t.Base = base
		d.skip(n)
		if t.VarLenString {
			t.Class = ClassString
		}
	case ClassArray:
		rank := int(d.u8())
		if version < 3 {
			d.skip(3)
		}
		if rank > maxRank {
			return nil, 0, errorf("array data type of rank %d", rank)
		}
		for i := 0; i < rank; i++ {
			t.Dims = append(t.Dims, uint64(d.u32()))
		}
		if version < 3 {
			d.skip(4 * rank) // permutation
		}
		if d.err != nil {
			return nil, 0, d.err
		}
		base, n, err := f.parseDatatype(d.b[d.p:], depth+1)
		if err != nil {
			return nil, 0, err
		}
		t.Base = base
		d.skip(n)
	case ClassComplex:
		t.BigEndian = bits&1 != 0
		d.p = len(d.b)
	default:
		return nil, 0, errorf("datatype class %d", t.Class)
	}
	if d.err != nil {
		return nil, 0, d.err
	}
	return t, d.p, nil
}

// dataspace is a parsed dataspace message.
type dataspace struct {
	null    bool // no elements at all
	dims    []uint64
	maxdims []uint64 // Unlimited for unlimited dimensions
}

// Unlimited is the maximum size of an unlimited dimension in MaxShape.
const Unlimited = ^uint64(0)

func (f *File) parseDataspace(b []byte) (*dataspace, error) {
	d := f.dec(b, "dataspace message")
	version := d.u8()
	rank := int(d.u8())
	flags := d.u8()
	s := &dataspace{}
	switch version {
	case 1:
		d.skip(5)
	case 2:
		typ := d.u8()
		if typ == 2 {
			s.null = true
		}
	default:
		if d.err == nil {
			return nil, errorf("dataspace message version %d", version)
		}
	}
	if rank > maxRank {
		return nil, errorf("dataspace of rank %d", rank)
	}
	for i := 0; i < rank; i++ {
		s.dims = append(s.dims, d.length())
	}
	if flags&1 != 0 {
		for i := 0; i < rank; i++ {
			m := d.length()
			if d.sl < 8 && m == 1<<(8*d.sl)-1 {
				m = Unlimited
			}
			s.maxdims = append(s.maxdims, m)
		}
	} else {
		s.maxdims = append([]uint64(nil), s.dims...)
	}
	if d.err != nil {
		return nil, d.err
	}
	for i, n := range s.dims {
		if s.maxdims[i] != Unlimited && s.maxdims[i] < n {
			return nil, errorf("dataspace: dimension %d of %d is larger than its maximum %d", i, n, s.maxdims[i])
		}
	}
	return s, nil
}

// numElements returns the number of elements of s, or an error when it
// overflows.
func (s *dataspace) numElements() (uint64, error) {
	if s.null {
		return 0, nil
	}
	n := uint64(1)
	for _, x := range s.dims {
		if x != 0 && n > math.MaxInt64/x {
			return 0, errorf("dataspace of %v elements overflows", s.dims)
		}
		n *= x
	}
	return n, nil
}

// fillValue is a dataset's fill value: its bytes when defined.
type fillValue struct {
	defined bool
	value   []byte
}

func (f *File) parseFill(b []byte) (fillValue, error) {
	d := f.dec(b, "fill value message")
	version := d.u8()
	var fv fillValue
	switch version {
	case 1, 2:
		d.skip(2) // allocation time, write time
		defined := d.u8()
		if version == 1 || defined != 0 {
			n := d.u32()
			if defined != 0 || version == 1 {
				fv.value = d.bytes(int(n))
				fv.defined = n > 0
			}
		}
	case 3:
		flags := d.u8()
		if flags&0x20 != 0 {
			n := d.u32()
			fv.value = d.bytes(int(n))
			fv.defined = n > 0
		}
	default:
		if d.err == nil {
			return fv, errorf("fill value message version %d", version)
		}
	}
	return fv, d.err
}

// Filter is one filter of a dataset's pipeline, in the order the filters
// were applied when the chunks were written.
type Filter struct {
	ID       uint16   // 1 deflate, 2 shuffle, 3 fletcher32, 4 szip, 32000 lzf, ...
	Name     string   // as stored (often empty for the predefined filters)
	Optional bool     // the filter may have been skipped for some chunks
	Values   []uint32 // the filter's client data
}

// Filter identifiers of the HDF5 library and registered plugins.
const (
	FilterDeflate     = 1
	FilterShuffle     = 2
	FilterFletcher32  = 3
	FilterSzip        = 4
	FilterNbit        = 5
	FilterScaleOffset = 6
	FilterLZF         = 32000
	FilterBlosc       = 32001
	FilterLZ4         = 32004
	FilterBitshuffle  = 32008
	FilterZstd        = 32015
)

func (f *File) parseFilters(b []byte) ([]Filter, error) {
	d := f.dec(b, "filter pipeline message")
	version := d.u8()
	n := int(d.u8())
	if version == 1 {
		d.skip(6)
	} else if version != 2 && d.err == nil {
		return nil, errorf("filter pipeline message version %d", version)
	}
	if n > 32 {
		return nil, errorf("a pipeline of %d filters", n)
	}
	var out []Filter
	for i := 0; i < n; i++ {
		var fl Filter
		fl.ID = d.u16()
		nameLen := 0
		if version == 1 || fl.ID >= 256 {
			nameLen = int(d.u16())
		}
		flags := d.u16()
		fl.Optional = flags&1 != 0
		nvals := int(d.u16())
		if nameLen > 0 {
			name := d.bytes(nameLen)
			for j, c := range name {
				if c == 0 {
					name = name[:j]
					break
				}
			}
			fl.Name = string(name)
			if version == 1 {
				d.skip((8 - nameLen%8) % 8)
			}
		}
		if nvals > 1<<12 {
			return nil, errorf("filter %d with %d client data values", fl.ID, nvals)
		}
		for j := 0; j < nvals; j++ {
			fl.Values = append(fl.Values, d.u32())
		}
		if version == 1 && nvals%2 == 1 {
			d.skip(4)
		}
		if d.err != nil {
			return nil, d.err
		}
		out = append(out, fl)
	}
	return out, nil
}

// Layout is how a dataset's data is stored.
type Layout int

// Storage layouts.
const (
	Compact    Layout = 0 // in the object header
	Contiguous Layout = 1 // one block of the file
	Chunked    Layout = 2 // chunks found through a chunk index
	Virtual    Layout = 3 // mapped from other datasets (not read)
)

// String returns "compact", "contiguous", "chunked" or "virtual".
func (l Layout) String() string {
	switch l {
	case Compact:
		return "compact"
	case Contiguous:
		return "contiguous"
	case Chunked:
		return "chunked"
	case Virtual:
		return "virtual"
	}
	return fmt.Sprintf("layout %d", int(l))
}

// ChunkIndex is the kind of index that locates a chunked dataset's chunks.
type ChunkIndex int

// Chunk index types (the values are the layout message's numbers; a
// version 3 layout always uses a version 1 B-tree).
const (
	IndexBTree1        ChunkIndex = 0
	IndexSingleChunk   ChunkIndex = 1
	IndexImplicit      ChunkIndex = 2
	IndexFixedArray    ChunkIndex = 3
	IndexExtensible    ChunkIndex = 4
	IndexBTree2        ChunkIndex = 5
	indexTypeCount                = 6
	chunkFlagSingleFil            = 0x02
)

var indexNames = [...]string{"btree-v1", "single-chunk", "implicit", "fixed-array", "extensible-array", "btree-v2"}

// String returns the index's name ("btree-v1", "fixed-array", ...).
func (c ChunkIndex) String() string {
	if c >= 0 && int(c) < len(indexNames) {
		return indexNames[c]
	}
	return fmt.Sprintf("index %d", int(c))
}

type layoutInfo struct {
	class      Layout
	compact    []byte
	addr, size uint64 // contiguous
	chunk      []uint64
	elemSize   uint64
	index      ChunkIndex
	flags      uint8
	single     struct {
		size uint64
		mask uint32
	}
	ea struct {
		maxBits, idxElems, minPtrs, minElems, pageBits uint8
	}
	faPageBits uint8
	indexAddr  uint64
}

func (f *File) parseLayout(b []byte) (*layoutInfo, error) {
	d := f.dec(b, "data layout message")
	version := d.u8()
	l := &layoutInfo{}
	if version < 3 || version > 5 {
		if d.err != nil {
			return nil, d.err
		}
		return nil, unsupported("data layout message version %d", version)
	}
	l.class = Layout(d.u8())
	switch l.class {
	case Compact:
		n := int(d.u16())
		l.compact = d.bytes(n)
	case Contiguous:
		l.addr = d.addr()
		l.size = d.length()
	case Chunked:
		if version == 3 {
			rank := int(d.u8())
			l.indexAddr = d.addr()
			if rank < 1 || rank > maxRank+1 {
				return nil, errorf("chunked layout of dimensionality %d", rank)
			}
			for i := 0; i < rank; i++ {
				l.chunk = append(l.chunk, uint64(d.u32()))
			}
			l.index = IndexBTree1
		} else {
			l.flags = d.u8()
			rank := int(d.u8())
			enc := int(d.u8())
			if rank < 1 || rank > maxRank+1 || enc < 1 || enc > 8 {
				return nil, errorf("chunked layout of dimensionality %d, %d bytes a dimension", rank, enc)
			}
			for i := 0; i < rank; i++ {
				l.chunk = append(l.chunk, d.uN(enc))
			}
			l.index = ChunkIndex(d.u8())
			switch l.index {
			case IndexSingleChunk:
				if l.flags&chunkFlagSingleFil != 0 {
					l.single.size = d.length()
					l.single.mask = d.u32()
				}
			case IndexImplicit:
			case IndexFixedArray:
				l.faPageBits = d.u8()
			case IndexExtensible:
				l.ea.maxBits = d.u8()
				l.ea.idxElems = d.u8()
				l.ea.minPtrs = d.u8()
				l.ea.minElems = d.u8()
				l.ea.pageBits = d.u8()
			case IndexBTree2:
				d.skip(6) // node size, split and merge percent
			default:
				if d.err == nil {
					return nil, errorf("chunk index type %d", l.index)
				}
			}
			l.indexAddr = d.addr()
		}
		if d.err != nil {
			return nil, d.err
		}
		// The last dimension is the size of an element.
		l.elemSize = l.chunk[len(l.chunk)-1]
		l.chunk = l.chunk[:len(l.chunk)-1]
		for i, c := range l.chunk {
			if c == 0 || c > 1<<32 {
				return nil, errorf("chunk dimension %d of %d", i, c)
			}
		}
	case Virtual:
		return nil, unsupported("virtual dataset layout")
	default:
		if d.err == nil {
			return nil, errorf("layout class %d", l.class)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return l, nil
}

// sharedMessage resolves a shared message: one stored in another object
// header (a committed datatype). Messages in the shared message heap are
// refused.
func (f *File) sharedMessage(ctx context.Context, m *message, depth int) ([]byte, error) {
	if m.flags&messageFlagShared == 0 {
		return m.data, nil
	}
	if depth > 4 {
		return nil, errorf("shared messages nested deeper than 4")
	}
	d := f.dec(m.data, "shared message")
	version := d.u8()
	typ := d.u8()
	var addr uint64
	switch version {
	case 1:
		d.skip(6)
		addr = d.addr()
	case 2:
		addr = d.addr()
	case 3:
		if typ == 1 {
			return nil, unsupported("messages in the shared object header message heap")
		}
		addr = d.addr()
	default:
		if d.err == nil {
			return nil, errorf("shared message version %d", version)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	h, err := f.object(ctx, addr)
	if err != nil {
		return nil, err
	}
	target := h.first(m.typ)
	if target == nil {
		return nil, errorf("shared message: object at %d has no message of type %d", addr, m.typ)
	}
	return f.sharedMessage(ctx, target, depth+1)
}
