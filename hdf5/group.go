package hdf5

import (
	"context"
	"fmt"
	"strings"
)

// Link kinds.
const (
	linkHard     = 0
	linkSoft     = 1
	linkExternal = 64
)

// link is a named link of a group.
type link struct {
	name   string
	kind   int
	addr   uint64 // hard links
	target string
}

// localHeap reads the data segment of the local heap at addr.
func (f *File) localHeap(ctx context.Context, addr uint64) ([]byte, error) {
	so, sl := int(f.sb.sizeOffsets), int(f.sb.sizeLengths)
	b, err := f.readAt(ctx, addr, uint64(8+2*sl+so), "local heap")
	if err != nil {
		return nil, err
	}
	d := f.dec(b, "local heap")
	d.signature("HEAP")
	if v := d.u8(); v != 0 && d.err == nil {
		return nil, errorf("local heap version %d", v)
	}
	d.skip(3)
	size := d.length()
	d.length() // free list
	data := d.addr()
	if d.err != nil {
		return nil, d.err
	}
	if err := f.checkRange(data, size, "local heap data"); err != nil {
		return nil, err
	}
	return f.readAt(ctx, data, size, "local heap data")
}

// heapString returns the null-terminated string at off of a local heap.
func heapString(heap []byte, off uint64) (string, error) {
	if off >= uint64(len(heap)) {
		return "", errorf("local heap offset %d past its %d bytes", off, len(heap))
	}
	s := heap[off:]
	for i, c := range s {
		if c == 0 {
			return string(s[:i]), nil
		}
	}
	return "", errorf("unterminated string in a local heap")
}

// links returns the links of the group whose object header is h.
func (f *File) links(ctx context.Context, h *objectHeader) ([]link, error) {
	if m := h.first(msgSymbolTable); m != nil {
		return f.symbolTableLinks(ctx, m.data)
	}
	var out []link
	for i := range h.msgs {
		if h.msgs[i].typ == msgLink {
			l, err := f.parseLink(h.msgs[i].data)
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
	}
	if m := h.first(msgLinkInfo); m != nil {
		d := f.dec(m.data, "link info message")
		if v := d.u8(); v != 0 && d.err == nil {
			return nil, errorf("link info message version %d", v)
		}
		flags := d.u8()
		if flags&1 != 0 {
			d.skip(8)
		}
		heap := d.addr()
		name := d.addr()
		if d.err != nil {
			return nil, d.err
		}
		if heap != undef && name != undef {
			dense, err := f.denseLinks(ctx, heap, name)
			if err != nil {
				return nil, err
			}
			out = append(out, dense...)
		}
	}
	return out, nil
}

// symbolTableLinks lists an old-style group: a version 1 B-tree of symbol
// table nodes, names in a local heap.
func (f *File) symbolTableLinks(ctx context.Context, msg []byte) ([]link, error) {
	d := f.dec(msg, "symbol table message")
	tree, heapAddr := d.addr(), d.addr()
	if d.err != nil {
		return nil, d.err
	}
	heap, err := f.localHeap(ctx, heapAddr)
	if err != nil {
		return nil, err
	}
	so := int(f.sb.sizeOffsets)
	entrySize := 2*so + 24
	var out []link
	err = f.walkBTree1(ctx, tree, 0, int(f.sb.sizeLengths), func(e btree1Entry) error {
		b, err := f.readAt(ctx, e.child, 8, "symbol table node")
		if err != nil {
			return err
		}
		d := f.dec(b, "symbol table node")
		d.signature("SNOD")
		if v := d.u8(); v != 1 && d.err == nil {
			return errorf("symbol table node version %d", v)
		}
		d.skip(1)
		n := int(d.u16())
		if d.err != nil {
			return d.err
		}
		b, err = f.readAt(ctx, e.child+8, uint64(n*entrySize), "symbol table node")
		if err != nil {
			return err
		}
		d = f.dec(b, "symbol table node")
		for i := 0; i < n; i++ {
			nameOff := d.uN(so)
			addr := d.addr()
			cache := d.u32()
			d.skip(4)
			scratch := d.bytes(16)
			if d.err != nil {
				return d.err
			}
			name, err := heapString(heap, nameOff)
			if err != nil {
				return err
			}
			l := link{name: name, kind: linkHard, addr: addr}
			if cache == 2 {
				// A soft link: the scratch pad holds the offset of its
				// value in the heap.
				off := uint64(scratch[0]) | uint64(scratch[1])<<8 | uint64(scratch[2])<<16 | uint64(scratch[3])<<24
				target, err := heapString(heap, off)
				if err != nil {
					return err
				}
				l = link{name: name, kind: linkSoft, target: target}
			}
			out = append(out, l)
			if len(out) > f.cfg.maxObjects {
				return fmt.Errorf("%w: a group of more than %d links", ErrLimit, f.cfg.maxObjects)
			}
		}
		return nil
	})
	return out, err
}

// parseLink parses a link message.
func (f *File) parseLink(b []byte) (link, error) {
	d := f.dec(b, "link message")
	if v := d.u8(); v != 1 && d.err == nil {
		return link{}, errorf("link message version %d", v)
	}
	flags := d.u8()
	var l link
	if flags&0x08 != 0 {
		l.kind = int(d.u8())
	}
	if flags&0x04 != 0 {
		d.skip(8)
	}
	if flags&0x10 != 0 {
		d.skip(1)
	}
	n := d.uN(1 << (flags & 3))
	if n > uint64(d.left()) {
		return link{}, errorf("link name of %d bytes in a %d-byte message", n, len(b))
	}
	l.name = string(d.bytes(int(n)))
	switch l.kind {
	case linkHard:
		l.addr = d.addr()
	case linkSoft, linkExternal:
		m := int(d.u16())
		l.target = string(d.bytes(m))
	default:
		// User-defined link types are skipped.
	}
	if d.err != nil {
		return link{}, d.err
	}
	if l.name == "" || strings.Contains(l.name, "/") {
		return link{}, errorf("link name %q", l.name)
	}
	return l, nil
}
