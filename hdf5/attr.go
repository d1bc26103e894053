package hdf5

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Attribute is an attribute of a group or dataset.
type Attribute struct {
	Name  string
	Type  *Datatype
	Shape []uint64 // nil for a scalar
	// Value is the decoded value: int64, uint64, float64, string or
	// []uint64 (object reference addresses) for a scalar, and []int64,
	// []uint64, []float64, []string or [][]uint64 (a variable-length
	// sequence of references, as in DIMENSION_LIST) for an array. It is
	// nil for types this package does not decode (compound, opaque, ...).
	Value any
	// Raw holds the stored bytes of a fixed-size value (nil for
	// variable-length types).
	Raw []byte
}

// parseAttribute parses an attribute message.
func (f *File) parseAttribute(ctx context.Context, b []byte) (Attribute, error) {
	d := f.dec(b, "attribute message")
	version := d.u8()
	flags := d.u8()
	nameSize := int(d.u16())
	dtSize := int(d.u16())
	dsSize := int(d.u16())
	pad := func(n int) int { return n }
	switch version {
	case 1:
		pad = func(n int) int { return (n + 7) &^ 7 }
	case 2:
	case 3:
		d.skip(1) // name character set
	default:
		if d.err == nil {
			return Attribute{}, errorf("attribute message version %d", version)
		}
	}
	name := d.bytes(pad(nameSize))
	dt := d.bytes(pad(dtSize))
	ds := d.bytes(pad(dsSize))
	if d.err != nil {
		return Attribute{}, d.err
	}
	if nameSize > 0 {
		name = name[:nameSize]
	}
	a := Attribute{Name: strings.TrimRight(string(name), "\x00")}
	dt = dt[:dtSize]
	ds = ds[:dsSize]
	if flags&1 != 0 {
		var err error
		dt, err = f.sharedMessage(ctx, &message{typ: msgDatatype, flags: messageFlagShared, data: dt}, 0)
		if err != nil {
			return Attribute{}, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
	}
	if flags&2 != 0 {
		return Attribute{}, unsupported("attribute %q with a shared dataspace", a.Name)
	}
	t, _, err := f.parseDatatype(dt, 0)
	if err != nil {
		return Attribute{}, fmt.Errorf("attribute %q: %w", a.Name, err)
	}
	a.Type = t
	space, err := f.parseDataspace(ds)
	if err != nil {
		return Attribute{}, fmt.Errorf("attribute %q: %w", a.Name, err)
	}
	a.Shape = space.dims
	n, err := space.numElements()
	if err != nil {
		return Attribute{}, err
	}
	data := d.b[d.p:]
	if t.Size > 0 && n > uint64(len(data)/t.Size) {
		return Attribute{}, errorf("attribute %q: %d elements of %d bytes in %d bytes", a.Name, n, t.Size, len(data))
	}
	data = data[:int(n)*t.Size]
	v, err := f.decodeValue(ctx, t, data, int(n), len(a.Shape) == 0)
	if err != nil {
		return Attribute{}, fmt.Errorf("attribute %q: %w", a.Name, err)
	}
	a.Value = v
	if !(t.Class == ClassVarLen || t.VarLenString) {
		a.Raw = data
	}
	return a, nil
}

// decodeValue decodes n elements of type t.
func (f *File) decodeValue(ctx context.Context, t *Datatype, data []byte, n int, scalar bool) (any, error) {
	var order binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		order = binary.BigEndian
	}
	if t.Class == ClassEnum && t.Base != nil {
		return f.decodeValue(ctx, t.Base, data, n, scalar)
	}
	switch {
	case t.Class == ClassInteger && (t.Size == 1 || t.Size == 2 || t.Size == 4 || t.Size == 8):
		if t.Signed {
			out := make([]int64, n)
			for i := range out {
				e := data[i*t.Size:]
				switch t.Size {
				case 1:
					out[i] = int64(int8(e[0]))
				case 2:
					out[i] = int64(int16(order.Uint16(e)))
				case 4:
					out[i] = int64(int32(order.Uint32(e)))
				case 8:
					out[i] = int64(order.Uint64(e))
				}
			}
			if scalar && n == 1 {
				return out[0], nil
			}
			return out, nil
		}
		out := make([]uint64, n)
		for i := range out {
			e := data[i*t.Size:]
			switch t.Size {
			case 1:
				out[i] = uint64(e[0])
			case 2:
				out[i] = uint64(order.Uint16(e))
			case 4:
				out[i] = uint64(order.Uint32(e))
			case 8:
				out[i] = order.Uint64(e)
			}
		}
		if scalar && n == 1 {
			return out[0], nil
		}
		return out, nil
	case t.Class == ClassFloat && (t.Size == 4 || t.Size == 8):
		out := make([]float64, n)
		for i := range out {
			if t.Size == 4 {
				out[i] = float64(math.Float32frombits(order.Uint32(data[i*4:])))
			} else {
				out[i] = math.Float64frombits(order.Uint64(data[i*8:]))
			}
		}
		if scalar && n == 1 {
			return out[0], nil
		}
		return out, nil
	case t.Class == ClassString && !t.VarLenString:
		out := make([]string, n)
		for i := range out {
			out[i] = trimString(data[i*t.Size:(i+1)*t.Size], t.Pad)
		}
		if scalar && n == 1 {
			return out[0], nil
		}
		return out, nil
	case t.Class == ClassReference && t.RefType == 0 && t.Size == int(f.sb.sizeOffsets):
		out := make([]uint64, n)
		for i := range out {
			out[i] = f.dec(data[i*t.Size:], "").addr()
		}
		return out, nil
	case t.Class == ClassString && t.VarLenString, t.Class == ClassVarLen:
		so := int(f.sb.sizeOffsets)
		if t.Size != 4+so+4 {
			return nil, errorf("variable-length element of %d bytes", t.Size)
		}
		strs := make([]string, 0, n)
		var seqs [][]uint64
		for i := 0; i < n; i++ {
			d := f.dec(data[i*t.Size:(i+1)*t.Size], "variable-length element")
			count := uint64(d.u32())
			coll := d.addr()
			idx := d.u32()
			if d.err != nil {
				return nil, d.err
			}
			var obj []byte
			if coll != undef && coll != 0 {
				var err error
				obj, err = f.globalObject(ctx, coll, idx)
				if err != nil {
					return nil, err
				}
			}
			if t.VarLenString {
				if count > uint64(len(obj)) {
					return nil, errorf("variable-length string of %d bytes in a %d-byte heap object", count, len(obj))
				}
				strs = append(strs, trimString(obj[:count], 0))
				continue
			}
			if t.Base == nil || t.Base.Class != ClassReference || t.Base.Size != so {
				return nil, nil // sequences of other types are not decoded
			}
			if count > uint64(len(obj)/so) {
				return nil, errorf("variable-length sequence of %d references in a %d-byte heap object", count, len(obj))
			}
			refs := make([]uint64, count)
			for j := range refs {
				refs[j] = f.dec(obj[j*so:], "").addr()
			}
			seqs = append(seqs, refs)
		}
		if t.VarLenString {
			if scalar && n == 1 {
				return strs[0], nil
			}
			return strs, nil
		}
		return seqs, nil
	}
	return nil, nil
}

// trimString cuts a fixed-length string at its first null (null
// terminated or padded) or its trailing spaces (space padded).
func trimString(b []byte, pad int) string {
	if pad == 2 {
		return strings.TrimRight(string(b), " ")
	}
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// globalObject returns object idx of the global heap collection at addr.
func (f *File) globalObject(ctx context.Context, addr uint64, idx uint32) ([]byte, error) {
	f.objMu.Lock()
	coll, ok := f.gheaps[addr]
	f.objMu.Unlock()
	if !ok {
		sl := int(f.sb.sizeLengths)
		b, err := f.readAt(ctx, addr, uint64(8+sl), "global heap collection")
		if err != nil {
			return nil, err
		}
		d := f.dec(b, "global heap collection")
		d.signature("GCOL")
		if v := d.u8(); v != 1 && d.err == nil {
			return nil, errorf("global heap version %d", v)
		}
		d.skip(3)
		size := d.length()
		if d.err != nil {
			return nil, d.err
		}
		if size < uint64(8+sl) {
			return nil, errorf("global heap collection of %d bytes", size)
		}
		coll, err = f.readAt(ctx, addr, size, "global heap collection")
		if err != nil {
			return nil, err
		}
		f.objMu.Lock()
		if len(f.gheaps) < 1024 {
			f.gheaps[addr] = coll
		}
		f.objMu.Unlock()
	}
	sl := int(f.sb.sizeLengths)
	d := f.dec(coll, "global heap collection")
	d.skip(8 + sl)
	for d.left() >= 8+sl {
		i := d.u16()
		d.skip(6)
		size := d.length()
		if i == 0 {
			break
		}
		if size > uint64(d.left()) {
			return nil, errorf("global heap object of %d bytes in a %d-byte collection", size, len(coll))
		}
		obj := d.bytes(int(size))
		if uint32(i) == idx {
			return obj, nil
		}
		d.skip(min(d.left(), int((8-size%8)%8)))
	}
	return nil, errorf("global heap collection at %d has no object %d", addr, idx)
}

// denseAttributes reads the attributes stored in a fractal heap.
func (f *File) denseAttributes(ctx context.Context, heapAddr, nameIndex uint64) ([]Attribute, error) {
	h, err := f.readFractalHeap(ctx, heapAddr)
	if err != nil {
		return nil, err
	}
	var out []Attribute
	_, err = f.walkBTree2(ctx, nameIndex, 8, 1<<16, func(rec []byte) error {
		if len(rec) < 8+1 {
			return errorf("attribute name record of %d bytes", len(rec))
		}
		if rec[8]&messageFlagShared != 0 {
			return unsupported("attributes in the shared message heap")
		}
		obj, err := f.heapObject(ctx, h, rec[:min(8, h.idLen)])
		if err != nil {
			return err
		}
		a, err := f.parseAttribute(ctx, obj)
		if err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

// attributes returns the attributes of an object header, compact and
// dense.
func (f *File) attributes(ctx context.Context, h *objectHeader) ([]Attribute, error) {
	var out []Attribute
	for i := range h.msgs {
		m := &h.msgs[i]
		if m.typ != msgAttribute {
			continue
		}
		if m.flags&messageFlagShared != 0 {
			return nil, unsupported("shared attribute messages")
		}
		a, err := f.parseAttribute(ctx, m.data)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if m := h.first(msgAttrInfo); m != nil {
		d := f.dec(m.data, "attribute info message")
		if v := d.u8(); v != 0 && d.err == nil {
			return nil, errorf("attribute info message version %d", v)
		}
		flags := d.u8()
		if flags&1 != 0 {
			d.skip(2)
		}
		heap := d.addr()
		name := d.addr()
		if d.err != nil {
			return nil, d.err
		}
		if heap != undef && name != undef {
			dense, err := f.denseAttributes(ctx, heap, name)
			if err != nil {
				return nil, err
			}
			out = append(out, dense...)
		}
	}
	return out, nil
}
