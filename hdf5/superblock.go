package hdf5

import "context"

// signature is the 8-byte format signature that starts a superblock.
const signature = "\x89HDF\r\n\x1a\n"

// superblock holds what the package uses of a superblock.
type superblock struct {
	version     uint8
	sizeOffsets uint8
	sizeLengths uint8
	groupLeafK  uint16 // symbol table nodes hold up to 2K entries (v0, v1)
	groupIntK   uint16
	base        uint64
	eof         uint64
	root        uint64 // object header address of the root group
}

// readSuperblock finds the superblock (at 0, 512, 1024, 2048, ...) and
// parses it.
func (f *File) readSuperblock(ctx context.Context) error {
	var at uint64
	var head []byte
	for at = 0; ; at = max(512, at*2) {
		if at >= f.size || at > 1<<30 {
			return errorf("no HDF5 signature found")
		}
		n := min(uint64(pageSize), f.size-at)
		b, err := f.readAbs(ctx, at, n)
		if err != nil {
			if at == 0 {
				return err
			}
			return errorf("no HDF5 signature found")
		}
		if len(b) >= 8 && string(b[:8]) == signature {
			head = b
			break
		}
	}
	d := &dec{b: head, p: 8, what: "superblock"}
	sb := &f.sb
	sb.version = d.u8()
	switch sb.version {
	case 0, 1:
		d.skip(3) // free-space, root symbol table entry and reserved versions
		if v := d.u8(); v != 0 && d.err == nil {
			return errorf("superblock: shared header message format version %d", v)
		}
		sb.sizeOffsets = d.u8()
		sb.sizeLengths = d.u8()
		d.skip(1)
		sb.groupLeafK = d.u16()
		sb.groupIntK = d.u16()
		d.skip(4) // file consistency flags
		if sb.version == 1 {
			d.skip(4) // indexed storage internal node K, reserved
		}
	case 2, 3:
		sb.sizeOffsets = d.u8()
		sb.sizeLengths = d.u8()
		d.skip(1) // file consistency flags
	default:
		if d.err == nil {
			return unsupported("superblock version %d", sb.version)
		}
	}
	if d.err != nil {
		return d.err
	}
	for _, s := range []uint8{sb.sizeOffsets, sb.sizeLengths} {
		if s != 2 && s != 4 && s != 8 {
			return errorf("superblock: size of offsets/lengths %d", s)
		}
	}
	d.so, d.sl = int(sb.sizeOffsets), int(sb.sizeLengths)
	sb.base = d.addr()
	switch sb.version {
	case 0, 1:
		d.addr() // free-space info
		sb.eof = d.addr()
		d.addr() // driver info block
		d.addr() // root entry: link name offset
		sb.root = d.addr()
		d.skip(4 + 4 + 16)
	case 2, 3:
		d.addr() // superblock extension
		sb.eof = d.addr()
		sb.root = d.addr()
		d.checkSum(0) // from the signature on
	}
	if d.err != nil {
		return d.err
	}
	if sb.base == undef {
		sb.base = at
	}
	if sb.base > f.size {
		return errorf("superblock: base address %d past the end of the file", sb.base)
	}
	f.base = sb.base
	if sb.eof != undef && sb.eof < f.size-f.base {
		// Read no further than the file's own end of file address.
		f.size = f.base + sb.eof
	}
	if sb.root == undef {
		return errorf("superblock: no root group")
	}
	if sb.version < 2 && (sb.groupLeafK == 0 || sb.groupIntK == 0) {
		return errorf("superblock: group B-tree K of 0")
	}
	return nil
}
