package icechunk

import (
	"encoding/binary"
	"math"
	"slices"
)

// A flatbuffers writer that builds front to back: a table's inline part is
// written, then the objects it references after it, their offsets patched
// in (flatbuffers offsets point forward, so this layout is valid). Every
// scalar is aligned to its size from the buffer's start, tables to 8, as
// verifying readers require.

type fbBuilder struct{ buf []byte }

// fbField is one field of a table being written: an inline scalar or
// struct (data), or a reference whose target write writes.
type fbField struct {
	data  []byte
	align int
	write func(b *fbBuilder) int // returns the target's position
}

func newFB() *fbBuilder { return &fbBuilder{buf: make([]byte, 4, 256)} }

func (b *fbBuilder) pad(align int) {
	for len(b.buf)%align != 0 {
		b.buf = append(b.buf, 0)
	}
}

// finish writes root as the root table and returns the buffer.
func (b *fbBuilder) finish(root func(b *fbBuilder) int) []byte {
	p := root(b)
	binary.LittleEndian.PutUint32(b.buf, uint32(p))
	b.pad(8)
	return b.buf
}

func (b *fbBuilder) patch(at, target int) {
	binary.LittleEndian.PutUint32(b.buf[at:], uint32(target-at))
}

// table writes a table of fields (nil entries are absent fields).
func (b *fbBuilder) table(fields []*fbField) int {
	n := len(fields)
	for n > 0 && fields[n-1] == nil {
		n--
	}
	// inline layout after the 4-byte soffset, each field at its alignment
	offs := make([]int, n)
	size := 4
	for i := 0; i < n; i++ {
		f := fields[i]
		if f == nil {
			continue
		}
		sz, al := len(f.data), f.align
		if f.write != nil {
			sz, al = 4, 4
		}
		for size%al != 0 {
			size++
		}
		offs[i] = size
		size += sz
	}
	for size%4 != 0 {
		size++
	}
	vt := 4 + 2*n
	for (len(b.buf)+vt)%8 != 0 {
		b.buf = append(b.buf, 0)
	}
	vtPos := len(b.buf)
	b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(vt))
	b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(size))
	for i := 0; i < n; i++ {
		b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(offs[i]))
	}
	tab := len(b.buf)
	b.buf = append(b.buf, make([]byte, size)...)
	binary.LittleEndian.PutUint32(b.buf[tab:], uint32(int32(tab-vtPos)))
	for i := 0; i < n; i++ {
		if f := fields[i]; f != nil && f.write == nil {
			copy(b.buf[tab+offs[i]:], f.data)
		}
	}
	for i := 0; i < n; i++ {
		if f := fields[i]; f != nil && f.write != nil {
			target := f.write(b)
			b.patch(tab+offs[i], target)
		}
	}
	return tab
}

// vectorRaw writes a vector of n elements of elem bytes (aligned to
// align), data their bytes; extra bytes follow (a string's NUL).
func (b *fbBuilder) vectorRaw(n, align int, data []byte, extra int) int {
	al := max(align, 4)
	for (len(b.buf)+4)%al != 0 {
		b.buf = append(b.buf, 0)
	}
	p := len(b.buf)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(n))
	b.buf = append(b.buf, data...)
	b.buf = append(b.buf, make([]byte, extra)...)
	return p
}

// vectorTables writes a vector of n tables, table(i) writing the i-th.
func (b *fbBuilder) vectorTables(n int, table func(b *fbBuilder, i int) int) int {
	p := b.vectorRaw(n, 4, make([]byte, 4*n), 0)
	for i := 0; i < n; i++ {
		b.patch(p+4+4*i, table(b, i))
	}
	return p
}

// Field constructors.

func fU8(v uint8) *fbField { return &fbField{data: []byte{v}, align: 1} }
func fU16(v uint16) *fbField {
	return &fbField{data: binary.LittleEndian.AppendUint16(nil, v), align: 2}
}
func fU32(v uint32) *fbField {
	return &fbField{data: binary.LittleEndian.AppendUint32(nil, v), align: 4}
}
func fU64(v uint64) *fbField {
	return &fbField{data: binary.LittleEndian.AppendUint64(nil, v), align: 8}
}

// fStruct is an inline struct of the given alignment.
func fStruct(data []byte, align int) *fbField { return &fbField{data: data, align: align} }

func fRef(w func(b *fbBuilder) int) *fbField { return &fbField{write: w} }

func fString(s string) *fbField {
	return fRef(func(b *fbBuilder) int { return b.vectorRaw(len(s), 1, []byte(s), 1) })
}

func fBytes(v []byte) *fbField {
	return fRef(func(b *fbBuilder) int { return b.vectorRaw(len(v), 1, v, 0) })
}

// fStructs is a vector of n structs of elem bytes each.
func fStructs(n, align int, data []byte) *fbField {
	return fRef(func(b *fbBuilder) int { return b.vectorRaw(n, align, data, 0) })
}

func fU32s(v []uint32) *fbField {
	data := make([]byte, 0, 4*len(v))
	for _, x := range v {
		data = binary.LittleEndian.AppendUint32(data, x)
	}
	return fStructs(len(v), 4, data)
}

func fTables(n int, table func(b *fbBuilder, i int) int) *fbField {
	return fRef(func(b *fbBuilder) int { return b.vectorTables(n, table) })
}

func fStrings(v []string) *fbField {
	return fTables(len(v), func(b *fbBuilder, i int) int { return b.vectorRaw(len(v[i]), 1, []byte(v[i]), 1) })
}

// A FlexBuffers writer, every value 8 bytes wide (valid for any reader).

type flexWriter struct{ buf []byte }

// encodeFlex encodes a JSON-like value (as decodeFlex returns, or as
// encoding/json decodes: float64, string, bool, nil, []any, map[string]any,
// and Go integers).
func encodeFlex(v any) []byte {
	w := &flexWriter{}
	slot, typ := w.value(v)
	w.pad()
	w.buf = binary.LittleEndian.AppendUint64(w.buf, slot.resolve(len(w.buf)))
	w.buf = append(w.buf, typ<<2|3, 8)
	return w.buf
}

// flexSlot is a value as its parent stores it: inline bits, or the
// position of the target it points back to.
type flexSlot struct {
	bits   uint64
	target int
	ref    bool
}

func (s flexSlot) resolve(at int) uint64 {
	if s.ref {
		return uint64(at - s.target)
	}
	return s.bits
}

func (w *flexWriter) pad() {
	for len(w.buf)%8 != 0 {
		w.buf = append(w.buf, 0)
	}
}

func (w *flexWriter) key(k string) int {
	p := len(w.buf)
	w.buf = append(append(w.buf, k...), 0)
	return p
}

func (w *flexWriter) value(v any) (flexSlot, byte) {
	switch x := v.(type) {
	case nil:
		return flexSlot{}, flexNull
	case bool:
		if x {
			return flexSlot{bits: 1}, flexBool
		}
		return flexSlot{}, flexBool
	case int:
		return flexSlot{bits: uint64(x)}, flexInt
	case int64:
		return flexSlot{bits: uint64(x)}, flexInt
	case uint64:
		return flexSlot{bits: x}, flexUint
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return flexSlot{bits: uint64(int64(x))}, flexInt
		}
		return flexSlot{bits: math.Float64bits(x)}, flexFloat
	case string:
		w.pad()
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(x)))
		p := len(w.buf)
		w.buf = append(append(w.buf, x...), 0)
		return flexSlot{target: p, ref: true}, flexString
	case []byte:
		w.pad()
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(x)))
		p := len(w.buf)
		w.buf = append(w.buf, x...)
		return flexSlot{target: p, ref: true}, flexBlob
	case []any:
		slots := make([]flexSlot, len(x))
		types := make([]byte, len(x))
		for i, e := range x {
			var t byte
			slots[i], t = w.value(e)
			types[i] = t<<2 | 3
		}
		return w.vector(slots, types, -1), flexVector
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slots := make([]flexSlot, len(keys))
		types := make([]byte, len(keys))
		for i, k := range keys {
			var t byte
			slots[i], t = w.value(x[k])
			types[i] = t<<2 | 3
		}
		kpos := make([]int, len(keys))
		for i, k := range keys {
			kpos[i] = w.key(k)
		}
		w.pad()
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(keys)))
		kv := len(w.buf)
		for _, p := range kpos {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(w.buf)-p))
		}
		return w.vector(slots, types, kv), flexMap
	}
	return w.value(nil)
}

// vector writes a vector (or, with keys >= 0, a map's values) of slots.
func (w *flexWriter) vector(slots []flexSlot, types []byte, keys int) flexSlot {
	w.pad()
	if keys >= 0 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(w.buf)-keys))
		w.buf = binary.LittleEndian.AppendUint64(w.buf, 8)
	}
	w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(slots)))
	p := len(w.buf)
	for _, s := range slots {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, s.resolve(len(w.buf)))
	}
	w.buf = append(w.buf, types...)
	return flexSlot{target: p, ref: true}
}
