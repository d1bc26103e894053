package hdf5

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
)

// fractalHeap is a fractal heap: its header and the direct blocks that
// hold its managed objects.
type fractalHeap struct {
	idLen      int
	offBytes   int // bytes of a heap offset (in IDs and block headers)
	lenBytes   int // bytes of an object length in IDs
	checksumDB bool
	width      uint64
	start      uint64
	maxDirect  uint64
	maxDirRows int
	blocks     []heapBlock // direct blocks by heap offset
	cache      map[uint64][]byte
}

type heapBlock struct {
	offset, addr, size uint64
}

func log2Exact(n uint64) (int, bool) {
	if n == 0 || n&(n-1) != 0 {
		return 0, false
	}
	return bits.Len64(n) - 1, true
}

// readFractalHeap reads the header of the fractal heap at addr and lists
// its direct blocks.
func (f *File) readFractalHeap(ctx context.Context, addr uint64) (*fractalHeap, error) {
	so, sl := int(f.sb.sizeOffsets), int(f.sb.sizeLengths)
	n := 4 + 1 + 2 + 2 + 1 + 4 + sl + so + sl + so + 8*sl + 2 + sl + sl + 2 + 2 + so + 2 + 4
	b, err := f.readAt(ctx, addr, uint64(n), "fractal heap header")
	if err != nil {
		return nil, err
	}
	d := f.dec(b, "fractal heap header")
	d.signature("FRHP")
	if v := d.u8(); v != 0 && d.err == nil {
		return nil, errorf("fractal heap version %d", v)
	}
	h := &fractalHeap{cache: map[uint64][]byte{}}
	h.idLen = int(d.u16())
	filterLen := d.u16()
	flags := d.u8()
	h.checksumDB = flags&2 != 0
	maxMan := uint64(d.u32())
	d.skip(sl + so + sl + so + 8*sl)
	h.width = uint64(d.u16())
	h.start = d.length()
	h.maxDirect = d.length()
	maxHeapBits := int(d.u16())
	d.u16() // starting rows of the root indirect block
	root := d.addr()
	rows := int(d.u16())
	if d.err != nil {
		return nil, d.err
	}
	if filterLen != 0 {
		return nil, unsupported("fractal heap with I/O filters")
	}
	d.checkSum(0)
	if d.err != nil {
		return nil, d.err
	}
	lw, ok1 := log2Exact(h.width)
	ls, ok2 := log2Exact(h.start)
	lm, ok3 := log2Exact(h.maxDirect)
	if !ok1 || !ok2 || !ok3 || lm < ls || maxHeapBits < 1 || maxHeapBits > 64 || h.maxDirect > maxStructure {
		return nil, errorf("fractal heap of width %d, blocks %d to %d bytes, %d bits", h.width, h.start, h.maxDirect, maxHeapBits)
	}
	h.offBytes = (maxHeapBits + 7) / 8
	h.lenBytes = min((lm+7)/8, encSize(maxMan))
	h.maxDirRows = lm - ls + 2
	if root == undef {
		return h, nil
	}
	if rows == 0 {
		h.blocks = append(h.blocks, heapBlock{0, root, h.start})
		return h, nil
	}
	seen := map[uint64]bool{}
	if err := f.heapIndirect(ctx, h, root, rows, 0, seen, lw, ls); err != nil {
		return nil, err
	}
	sort.Slice(h.blocks, func(i, j int) bool { return h.blocks[i].offset < h.blocks[j].offset })
	return h, nil
}

// rowSize is the size of the blocks of row r of a heap's doubling table.
func (h *fractalHeap) rowSize(r int) uint64 {
	if r == 0 {
		return h.start
	}
	return h.start << (r - 1)
}

func (f *File) heapIndirect(ctx context.Context, h *fractalHeap, addr uint64, rows int, offset uint64, seen map[uint64]bool, lw, ls int) error {
	if seen[addr] {
		return errorf("fractal heap blocks form a cycle at %d", addr)
	}
	seen[addr] = true
	if len(seen) > 1<<16 || rows > 64 {
		return fmt.Errorf("%w: a fractal heap of more than %d indirect blocks or %d rows", ErrLimit, 1<<16, rows)
	}
	so := int(f.sb.sizeOffsets)
	n := 4 + 1 + so + h.offBytes + rows*int(h.width)*so + 4
	b, err := f.readAt(ctx, addr, uint64(n), "fractal heap indirect block")
	if err != nil {
		return err
	}
	d := f.dec(b, "fractal heap indirect block")
	d.signature("FHIB")
	d.skip(1 + so)
	d.uN(h.offBytes)
	off := offset
	for r := 0; r < rows; r++ {
		size := h.rowSize(r)
		for c := uint64(0); c < h.width; c++ {
			a := d.addr()
			if d.err != nil {
				return d.err
			}
			if a != undef {
				if r < h.maxDirRows {
					h.blocks = append(h.blocks, heapBlock{off, a, size})
					if len(h.blocks) > 1<<20 {
						return fmt.Errorf("%w: a fractal heap of more than %d blocks", ErrLimit, 1<<20)
					}
				} else {
					// A child indirect block covering size bytes of the heap.
					lsz := bits.Len64(size) - 1
					if err := f.heapIndirect(ctx, h, a, lsz-(ls+lw)+1, off, seen, lw, ls); err != nil {
						return err
					}
				}
			}
			off += size
		}
	}
	d.checkSum(0)
	return d.err
}

// object returns the bytes of the heap object with the given ID.
func (f *File) heapObject(ctx context.Context, h *fractalHeap, id []byte) ([]byte, error) {
	if len(id) < 1 {
		return nil, errorf("empty fractal heap ID")
	}
	if id[0]>>6 != 0 {
		return nil, errorf("fractal heap ID version %d", id[0]>>6)
	}
	switch (id[0] >> 4) & 3 {
	case 0:
		d := f.dec(id, "fractal heap ID")
		d.skip(1)
		off := d.uN(h.offBytes)
		n := d.uN(h.lenBytes)
		if d.err != nil {
			return nil, d.err
		}
		i := sort.Search(len(h.blocks), func(i int) bool { return h.blocks[i].offset+h.blocks[i].size > off })
		if i == len(h.blocks) || h.blocks[i].offset > off {
			return nil, errorf("fractal heap offset %d in no block", off)
		}
		blk := h.blocks[i]
		in := off - blk.offset
		if n > blk.size || in > blk.size-n {
			return nil, errorf("fractal heap object of %d bytes at %d overruns its %d-byte block", n, off, blk.size)
		}
		data, ok := h.cache[blk.addr]
		if !ok {
			var err error
			data, err = f.readAt(ctx, blk.addr, blk.size, "fractal heap direct block")
			if err != nil {
				return nil, err
			}
			if len(data) < 4 || string(data[:4]) != "FHDB" {
				return nil, errorf("fractal heap direct block at %d: no FHDB signature", blk.addr)
			}
			h.cache[blk.addr] = data
		}
		return data[in : in+n], nil
	case 2:
		if len(id) <= 18 {
			n := int(id[0]&0x0f) + 1
			if 1+n > len(id) {
				return nil, errorf("tiny fractal heap object of %d bytes in a %d-byte ID", n, len(id))
			}
			return id[1 : 1+n], nil
		}
		n := (int(id[0]&0x0f)<<8 | int(id[1])) + 1
		if 2+n > len(id) {
			return nil, errorf("tiny fractal heap object of %d bytes in a %d-byte ID", n, len(id))
		}
		return id[2 : 2+n], nil
	}
	return nil, unsupported("huge fractal heap objects")
}

// denseLinks lists the links of a group stored in a fractal heap, in the
// order of its name index.
func (f *File) denseLinks(ctx context.Context, heapAddr, nameIndex uint64) ([]link, error) {
	h, err := f.readFractalHeap(ctx, heapAddr)
	if err != nil {
		return nil, err
	}
	var out []link
	_, err = f.walkBTree2(ctx, nameIndex, 5, f.cfg.maxObjects, func(rec []byte) error {
		if len(rec) < 4+h.idLen {
			return errorf("link name record of %d bytes", len(rec))
		}
		obj, err := f.heapObject(ctx, h, rec[4:4+h.idLen])
		if err != nil {
			return err
		}
		l, err := f.parseLink(obj)
		if err != nil {
			return err
		}
		out = append(out, l)
		return nil
	})
	return out, err
}
