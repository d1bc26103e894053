package hdf5

import (
	"context"
	"fmt"
)

// Header message types used here.
const (
	msgNil          = 0x00
	msgDataspace    = 0x01
	msgLinkInfo     = 0x02
	msgDatatype     = 0x03
	msgFillOld      = 0x04
	msgFill         = 0x05
	msgLink         = 0x06
	msgExternal     = 0x07
	msgLayout       = 0x08
	msgGroupInfo    = 0x0a
	msgFilters      = 0x0b
	msgAttribute    = 0x0c
	msgContinuation = 0x10
	msgSymbolTable  = 0x11
	msgAttrInfo     = 0x15
)

// Limits of one object header.
const (
	maxMessages       = 1 << 16
	maxHeaderChunks   = 1 << 12
	messageFlagShared = 0x02
)

// message is one header message: its type, flags and data.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
}

// objectHeader is a parsed object header: its messages in order.
type objectHeader struct {
	addr  uint64
	flags uint8 // version 2 header flags (0 for version 1)
	msgs  []message
}

// first returns the first message of type typ, or nil.
func (h *objectHeader) first(typ uint16) *message {
	for i := range h.msgs {
		if h.msgs[i].typ == typ {
			return &h.msgs[i]
		}
	}
	return nil
}

// object returns the parsed object header at addr, from the cache when it
// was read before.
func (f *File) object(ctx context.Context, addr uint64) (*objectHeader, error) {
	f.objMu.Lock()
	h, ok := f.objects[addr]
	f.objMu.Unlock()
	if ok {
		return h, nil
	}
	h, err := f.readObjectHeader(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", addr, err)
	}
	f.objMu.Lock()
	if len(f.objects) < f.cfg.maxObjects {
		f.objects[addr] = h
	}
	f.objMu.Unlock()
	return h, nil
}

// headerChunk is a block of header messages still to parse.
type headerChunk struct{ addr, size uint64 }

func (f *File) readObjectHeader(ctx context.Context, addr uint64) (*objectHeader, error) {
	pre, err := f.readAt(ctx, addr, min(16, f.size-min(f.size, f.base+addr)), "object header")
	if err != nil {
		return nil, err
	}
	h := &objectHeader{addr: addr}
	seen := map[uint64]bool{addr: true}
	var todo []headerChunk
	var v2 bool
	if len(pre) >= 4 && string(pre[:4]) == "OHDR" {
		v2 = true
		d := f.dec(pre, "object header")
		d.skip(4)
		if v := d.u8(); v != 2 && d.err == nil {
			return nil, errorf("object header version %d", v)
		}
		flags := d.u8()
		h.flags = flags
		n := 6
		if flags&0x20 != 0 {
			n += 16
		}
		if flags&0x10 != 0 {
			n += 4
		}
		sizeBytes := 1 << (flags & 3)
		full, err := f.readAt(ctx, addr, uint64(n+sizeBytes), "object header")
		if err != nil {
			return nil, err
		}
		d = f.dec(full, "object header")
		d.skip(n)
		size := d.uN(sizeBytes)
		if d.err != nil {
			return nil, d.err
		}
		if err := f.checkRange(addr, uint64(n+sizeBytes)+size+4, "object header"); err != nil {
			return nil, err
		}
		chunk, err := f.readAt(ctx, addr, uint64(n+sizeBytes)+size+4, "object header")
		if err != nil {
			return nil, err
		}
		if err := f.parseV2Messages(h, chunk, n+sizeBytes, flags, &todo); err != nil {
			return nil, err
		}
	} else {
		d := f.dec(pre, "object header")
		if v := d.u8(); v != 1 {
			if d.err != nil {
				return nil, d.err
			}
			return nil, errorf("object header version %d", v)
		}
		d.skip(1)
		nmsgs := d.u16()
		d.skip(4) // reference count
		size := uint64(d.u32())
		if d.err != nil {
			return nil, d.err
		}
		_ = nmsgs // the block's size bounds the messages
		todo = append(todo, headerChunk{addr + 16, size})
	}
	for chunks := 0; len(todo) > 0; chunks++ {
		if chunks > maxHeaderChunks {
			return nil, fmt.Errorf("%w: more than %d object header continuation blocks", ErrLimit, maxHeaderChunks)
		}
		c := todo[0]
		todo = todo[1:]
		before := len(todo)
		if c.size == 0 {
			continue
		}
		if err := f.checkRange(c.addr, c.size, "object header continuation"); err != nil {
			return nil, err
		}
		b, err := f.readAt(ctx, c.addr, c.size, "object header continuation")
		if err != nil {
			return nil, err
		}
		if v2 {
			if len(b) < 8 || string(b[:4]) != "OCHK" {
				return nil, errorf("object header continuation at %d: no OCHK signature", c.addr)
			}
			if err := f.parseV2Messages(h, b, 4, h.flags, &todo); err != nil {
				return nil, err
			}
		} else if err := f.parseV1Messages(h, b, &todo); err != nil {
			return nil, err
		}
		for _, t := range todo[before:] {
			if seen[t.addr] {
				return nil, errorf("object header continuation blocks form a cycle at %d", t.addr)
			}
			seen[t.addr] = true
		}
	}
	return h, nil
}

// parseV1Messages parses the messages of a version 1 header block.
func (f *File) parseV1Messages(h *objectHeader, b []byte, todo *[]headerChunk) error {
	d := f.dec(b, "object header")
	for d.left() >= 8 {
		typ := d.u16()
		size := int(d.u16())
		flags := d.u8()
		d.skip(3)
		data := d.bytes(size)
		if d.err != nil {
			return d.err
		}
		if err := f.addMessage(h, typ, flags, data, todo); err != nil {
			return err
		}
	}
	return nil
}

// parseV2Messages parses the messages of a version 2 header chunk b, whose
// messages start at off and end 4 bytes (the checksum) before its end.
func (f *File) parseV2Messages(h *objectHeader, b []byte, off int, flags uint8, todo *[]headerChunk) error {
	if len(b) < off+4 {
		return errorf("object header chunk of %d bytes", len(b))
	}
	if lookup3(b[:len(b)-4]) != uint32(b[len(b)-4])|uint32(b[len(b)-3])<<8|uint32(b[len(b)-2])<<16|uint32(b[len(b)-1])<<24 {
		return errorf("object header chunk: checksum mismatch")
	}
	d := f.dec(b[:len(b)-4], "object header")
	d.p = off
	hdr := 4
	if flags&0x04 != 0 {
		hdr = 6
	}
	for d.left() >= hdr {
		typ := uint16(d.u8())
		size := int(d.u16())
		mflags := d.u8()
		if flags&0x04 != 0 {
			d.skip(2)
		}
		data := d.bytes(size)
		if d.err != nil {
			return d.err
		}
		if err := f.addMessage(h, typ, mflags, data, todo); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) addMessage(h *objectHeader, typ uint16, flags uint8, data []byte, todo *[]headerChunk) error {
	switch typ {
	case msgNil:
		return nil
	case msgContinuation:
		d := f.dec(data, "continuation message")
		a, n := d.addr(), d.length()
		if d.err != nil {
			return d.err
		}
		*todo = append(*todo, headerChunk{a, n})
		return nil
	}
	if len(h.msgs) >= maxMessages {
		return fmt.Errorf("%w: more than %d header messages", ErrLimit, maxMessages)
	}
	h.msgs = append(h.msgs, message{typ: typ, flags: flags, data: data})
	return nil
}
