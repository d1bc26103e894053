package icechunk

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// A verifying flatbuffers reader. Every offset and length read from a buffer
// is checked against the buffer before it is followed, so a truncated or
// hostile buffer yields an error wrapping ErrCorrupt, never a panic, and no
// allocation is sized by a number read from the buffer (vectors are views).

// fbTable is a table found in buf at pos, with its vtable checked.
type fbTable struct {
	buf    []byte
	pos    int // the table's first byte (its soffset to the vtable)
	vt     int // the vtable's first byte
	vtLen  int // bytes in the vtable
	tabLen int // bytes of the table's inline data, from pos
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// fbRoot returns the root table of a flatbuffer.
func fbRoot(buf []byte) (fbTable, error) {
	if len(buf) < 8 {
		return fbTable{}, corruptf("flatbuffer of %d bytes", len(buf))
	}
	p, err := follow(buf, 0)
	if err != nil {
		return fbTable{}, err
	}
	return fbTableAt(buf, p)
}

// follow returns the position the uoffset at p points to, checked to
// leave room for a 4-byte header there.
func follow(buf []byte, p int) (int, error) {
	to := int64(p) + int64(binary.LittleEndian.Uint32(buf[p:]))
	if to > int64(len(buf))-4 {
		return 0, corruptf("offset at %d points to %d, outside %d bytes", p, to, len(buf))
	}
	return int(to), nil
}

// fbTableAt checks the table at pos and its vtable.
func fbTableAt(buf []byte, pos int) (fbTable, error) {
	if pos < 0 || pos > len(buf)-4 {
		return fbTable{}, corruptf("table offset %d outside %d bytes", pos, len(buf))
	}
	vt := int64(pos) - int64(int32(binary.LittleEndian.Uint32(buf[pos:])))
	if vt < 0 || vt > int64(len(buf))-4 {
		return fbTable{}, corruptf("vtable offset %d outside %d bytes", vt, len(buf))
	}
	v := int(vt)
	vtLen := int(binary.LittleEndian.Uint16(buf[v:]))
	tabLen := int(binary.LittleEndian.Uint16(buf[v+2:]))
	if vtLen < 4 || vtLen%2 != 0 || v+vtLen > len(buf) {
		return fbTable{}, corruptf("vtable of %d bytes at %d", vtLen, v)
	}
	if tabLen < 4 || pos+tabLen > len(buf) {
		return fbTable{}, corruptf("table of %d bytes at %d", tabLen, pos)
	}
	return fbTable{buf: buf, pos: pos, vt: v, vtLen: vtLen, tabLen: tabLen}, nil
}

// field returns the position of field i's inline data, and whether the
// field is present, checking that size bytes of it lie inside the table.
func (t fbTable) field(i, size int) (int, bool, error) {
	slot := 4 + 2*i
	if slot+2 > t.vtLen {
		return 0, false, nil
	}
	off := int(binary.LittleEndian.Uint16(t.buf[t.vt+slot:]))
	if off == 0 {
		return 0, false, nil
	}
	if off+size > t.tabLen {
		return 0, false, corruptf("field %d (%d bytes at %d) outside a table of %d bytes", i, size, off, t.tabLen)
	}
	return t.pos + off, true, nil
}

func (t fbTable) u8(i int, def uint8) (uint8, error) {
	p, ok, err := t.field(i, 1)
	if !ok || err != nil {
		return def, err
	}
	return t.buf[p], nil
}

func (t fbTable) u16(i int, def uint16) (uint16, error) {
	p, ok, err := t.field(i, 2)
	if !ok || err != nil {
		return def, err
	}
	return binary.LittleEndian.Uint16(t.buf[p:]), nil
}

func (t fbTable) u32(i int, def uint32) (uint32, error) {
	p, ok, err := t.field(i, 4)
	if !ok || err != nil {
		return def, err
	}
	return binary.LittleEndian.Uint32(t.buf[p:]), nil
}

func (t fbTable) u64(i int, def uint64) (uint64, error) {
	p, ok, err := t.field(i, 8)
	if !ok || err != nil {
		return def, err
	}
	return binary.LittleEndian.Uint64(t.buf[p:]), nil
}

// inline returns the size bytes of a struct field, or nil when absent.
func (t fbTable) inline(i, size int) ([]byte, error) {
	p, ok, err := t.field(i, size)
	if !ok || err != nil {
		return nil, err
	}
	return t.buf[p : p+size], nil
}

// ref follows the uoffset of a reference field (table, vector, string).
func (t fbTable) ref(i int) (int, bool, error) {
	p, ok, err := t.field(i, 4)
	if !ok || err != nil {
		return 0, false, err
	}
	to, err := follow(t.buf, p)
	return to, err == nil, err
}

// fbVector is a checked vector: n elements of elem bytes from start.
type fbVector struct {
	buf   []byte
	start int
	n     int
	elem  int
}

func fbVectorAt(buf []byte, pos, elem int) (fbVector, error) {
	if pos < 0 || pos > len(buf)-4 {
		return fbVector{}, corruptf("vector at %d outside %d bytes", pos, len(buf))
	}
	n := uint64(binary.LittleEndian.Uint32(buf[pos:]))
	if n*uint64(elem) > uint64(len(buf)-pos-4) {
		return fbVector{}, corruptf("vector of %d elements of %d bytes at %d overruns %d bytes", n, elem, pos, len(buf))
	}
	return fbVector{buf: buf, start: pos + 4, n: int(n), elem: elem}, nil
}

// vector returns field i as a vector of elem-byte elements (empty when
// absent; required reports its absence as corrupt).
func (t fbTable) vector(i, elem int, required bool) (fbVector, error) {
	p, ok, err := t.ref(i)
	if err != nil {
		return fbVector{}, err
	}
	if !ok {
		if required {
			return fbVector{}, corruptf("required field %d missing", i)
		}
		return fbVector{buf: t.buf, elem: elem}, nil
	}
	return fbVectorAt(t.buf, p, elem)
}

// bytes returns field i, a [ubyte] vector, as a view (nil when absent).
func (t fbTable) bytes(i int, required bool) ([]byte, error) {
	v, err := t.vector(i, 1, required)
	if err != nil || v.n == 0 {
		return nil, err
	}
	return v.buf[v.start : v.start+v.n : v.start+v.n], nil
}

// str returns field i, a string, checked to be UTF-8.
func (t fbTable) str(i int, required bool) (string, error) {
	b, err := t.bytes(i, required)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", corruptf("field %d is not UTF-8", i)
	}
	return string(b), nil
}

// table returns field i, a table.
func (t fbTable) table(i int, required bool) (fbTable, bool, error) {
	p, ok, err := t.ref(i)
	if err != nil || !ok {
		if err == nil && required {
			err = corruptf("required field %d missing", i)
		}
		return fbTable{}, false, err
	}
	tab, err := fbTableAt(t.buf, p)
	return tab, err == nil, err
}

// at returns element j's bytes.
func (v fbVector) at(j int) []byte {
	p := v.start + j*v.elem
	return v.buf[p : p+v.elem : p+v.elem]
}

// u32 returns element j of a [uint32] vector.
func (v fbVector) u32(j int) uint32 { return binary.LittleEndian.Uint32(v.buf[v.start+4*j:]) }

// table returns element j of a vector of tables.
func (v fbVector) table(j int) (fbTable, error) {
	p, err := follow(v.buf, v.start+4*j)
	if err != nil {
		return fbTable{}, err
	}
	return fbTableAt(v.buf, p)
}

// eachTable calls fn with each element of a vector of tables, in order,
// stopping at the first error.
func (v fbVector) eachTable(fn func(j int, t fbTable) error) error {
	for j := 0; j < v.n; j++ {
		t, err := v.table(j)
		if err != nil {
			return err
		}
		if err := fn(j, t); err != nil {
			return err
		}
	}
	return nil
}

// str returns element j of a vector of strings.
func (v fbVector) str(j int) (string, error) {
	p, err := follow(v.buf, v.start+4*j)
	if err != nil {
		return "", err
	}
	s, err := fbVectorAt(v.buf, p, 1)
	if err != nil {
		return "", err
	}
	b := s.buf[s.start : s.start+s.n]
	if !utf8.Valid(b) {
		return "", corruptf("string %d is not UTF-8", j)
	}
	return string(b), nil
}
