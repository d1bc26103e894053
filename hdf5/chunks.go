package hdf5

import (
	"context"
	"fmt"
	"math/bits"
)

// Chunk is one stored chunk of a chunked dataset.
type Chunk struct {
	// Offset is the chunk's first element in each dimension (a multiple of
	// the chunk shape).
	Offset []uint64
	// Address and Size locate the chunk's stored (filtered) bytes.
	Address, Size uint64
	// FilterMask has bit i set when filter i of the pipeline was skipped
	// for this chunk.
	FilterMask uint32
}

// grid returns the number of chunks along each dimension of dims (the
// shape or the maximum shape), with unlimited dimensions as 0.
func (ds *Dataset) grid(dims []uint64) []uint64 {
	g := make([]uint64, len(dims))
	for i, n := range dims {
		if n == Unlimited {
			continue
		}
		g[i] = (n + ds.ChunkShape[i] - 1) / ds.ChunkShape[i]
	}
	return g
}

// product returns the product of g, or false when it overflows the chunk
// limit's range.
func product(g []uint64) (uint64, bool) {
	n := uint64(1)
	for _, x := range g {
		hi, lo := bits.Mul64(n, x)
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// Chunks calls fn for every stored chunk of a chunked dataset whose
// offset lies inside the dataset's shape, in the index's order (missing
// chunks read as the fill value). It lists a dataset with no storage
// allocated as no chunks. The Offset slice passed to fn is fn's to keep.
func (ds *Dataset) Chunks(ctx context.Context, fn func(Chunk) error) error {
	if ds.Layout != Chunked {
		return fmt.Errorf("hdf5: %s: %w: %s dataset has no chunks", ds.path, ErrNotFound, ds.Layout)
	}
	err := ds.chunks(ctx, fn)
	if err != nil {
		return fmt.Errorf("hdf5: %s: %w", ds.path, err)
	}
	return nil
}

func (ds *Dataset) chunks(ctx context.Context, fn func(Chunk) error) error {
	f, lay := ds.f, ds.lay
	if lay.indexAddr == undef {
		return nil
	}
	rank := len(ds.Shape)
	limit := f.cfg.maxChunks
	count := 0
	cbytes, err := ds.chunkBytes()
	if err != nil {
		return err
	}
	emit := func(c Chunk) error {
		for i, o := range c.Offset {
			if o%ds.ChunkShape[i] != 0 {
				return errorf("chunk offset %v is not a multiple of the chunk shape %v", c.Offset, ds.ChunkShape)
			}
			if o >= ds.Shape[i] {
				return nil // outside the current extent
			}
		}
		if c.Address == undef {
			return nil
		}
		if err := f.checkRange(c.Address, c.Size, "chunk"); err != nil {
			return err
		}
		if count++; count > limit {
			return fmt.Errorf("%w: more than %d chunks", ErrLimit, limit)
		}
		return fn(c)
	}
	switch lay.index {
	case IndexBTree1:
		keySize := 8 + 8*(rank+1)
		return f.walkBTree1(ctx, lay.indexAddr, 1, keySize, func(e btree1Entry) error {
			d := f.dec(e.key, "chunk B-tree key")
			c := Chunk{Size: uint64(d.u32()), FilterMask: d.u32(), Address: e.child, Offset: make([]uint64, rank)}
			for i := range c.Offset {
				c.Offset[i] = d.u64()
			}
			if d.err != nil {
				return d.err
			}
			return emit(c)
		})
	case IndexSingleChunk:
		c := Chunk{Address: lay.indexAddr, Size: cbytes, Offset: make([]uint64, rank)}
		if lay.flags&chunkFlagSingleFil != 0 {
			c.Size, c.FilterMask = lay.single.size, lay.single.mask
		}
		return emit(c)
	case IndexImplicit:
		g := ds.grid(ds.MaxShape)
		n, ok := product(g)
		if !ok || n > uint64(limit) {
			return fmt.Errorf("%w: an implicit index of %v chunks", ErrLimit, g)
		}
		if err := f.checkRange(lay.indexAddr, n*cbytes, "implicit chunk index"); err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			if err := emit(Chunk{Address: lay.indexAddr + i*cbytes, Size: cbytes, Offset: ds.offsetOf(i, g, -1)}); err != nil {
				return err
			}
		}
		return nil
	case IndexFixedArray:
		return f.fixedArray(ctx, ds, cbytes, emit)
	case IndexExtensible:
		return f.extensibleArray(ctx, ds, cbytes, emit)
	case IndexBTree2:
		filtered := len(ds.Filters) > 0
		typ := uint8(10)
		if filtered {
			typ = 11
		}
		so := int(f.sb.sizeOffsets)
		_, err := f.walkBTree2(ctx, lay.indexAddr, typ, limit, func(rec []byte) error {
			d := f.dec(rec, "chunk record")
			c := Chunk{Address: d.addr(), Size: cbytes, Offset: make([]uint64, rank)}
			if filtered {
				sizeLen := len(rec) - so - 4 - 8*rank
				if sizeLen < 1 || sizeLen > 8 {
					return errorf("filtered chunk record of %d bytes for rank %d", len(rec), rank)
				}
				c.Size = d.uN(sizeLen)
				c.FilterMask = d.u32()
			}
			for i := range c.Offset {
				s := d.u64()
				hi, lo := bits.Mul64(s, ds.ChunkShape[i])
				if hi != 0 {
					return errorf("chunk record with scaled offset %d", s)
				}
				c.Offset[i] = lo
			}
			if d.err != nil {
				return d.err
			}
			return emit(c)
		})
		return err
	}
	return unsupported("chunk index %s", lay.index)
}

// offsetOf returns the element offset of the chunk with linear index i in
// a grid g (row-major). With unlim ≥ 0, the index is that of an
// extensible array: dimension unlim is the slowest, the others follow in
// order.
func (ds *Dataset) offsetOf(i uint64, g []uint64, unlim int) []uint64 {
	rank := len(g)
	out := make([]uint64, rank)
	order := make([]int, 0, rank)
	if unlim >= 0 {
		order = append(order, unlim)
	}
	for d := 0; d < rank; d++ {
		if d != unlim {
			order = append(order, d)
		}
	}
	for k := rank - 1; k >= 0; k-- {
		d := order[k]
		if k == 0 && unlim >= 0 {
			out[d] = i * ds.ChunkShape[d]
			break
		}
		if g[d] == 0 {
			break
		}
		out[d] = (i % g[d]) * ds.ChunkShape[d]
		i /= g[d]
	}
	return out
}

// arrayElement decodes one element of a fixed or extensible array.
func (f *File) arrayElement(d *dec, filtered bool, esize int, cbytes uint64) (Chunk, error) {
	so := int(f.sb.sizeOffsets)
	c := Chunk{Address: d.addr(), Size: cbytes}
	if filtered {
		c.Size = d.uN(esize - so - 4)
		c.FilterMask = d.u32()
	}
	return c, d.err
}

// fixedArray lists the chunks of a fixed array index.
func (f *File) fixedArray(ctx context.Context, ds *Dataset, cbytes uint64, emit func(Chunk) error) error {
	so, sl := int(f.sb.sizeOffsets), int(f.sb.sizeLengths)
	addr := ds.lay.indexAddr
	b, err := f.readAt(ctx, addr, uint64(4+4+sl+so+4), "fixed array header")
	if err != nil {
		return err
	}
	d := f.dec(b, "fixed array header")
	d.signature("FAHD")
	if v := d.u8(); v != 0 && d.err == nil {
		return errorf("fixed array version %d", v)
	}
	client := d.u8()
	esize := int(d.u8())
	pageBits := int(d.u8())
	nelmts := d.length()
	dblk := d.addr()
	d.checkSum(0)
	if d.err != nil {
		return d.err
	}
	filtered := client == 1
	if client > 1 || (!filtered && esize != so) || (filtered && (esize < so+5 || esize > so+12)) || pageBits > 32 {
		return errorf("fixed array of client %d, %d-byte elements, %d page bits", client, esize, pageBits)
	}
	if nelmts > uint64(f.cfg.maxChunks) {
		return fmt.Errorf("%w: a fixed array of %d chunks", ErrLimit, nelmts)
	}
	g, err := ds.arrayGrid(nelmts)
	if err != nil {
		return err
	}
	if dblk == undef {
		return nil
	}
	pageN := uint64(1) << pageBits
	paged := nelmts > pageN
	npages := (nelmts + pageN - 1) / pageN
	bitmap := 0
	if paged {
		bitmap = int((npages + 7) / 8)
	}
	prefix := uint64(4 + 1 + 1 + so + bitmap)
	if !paged {
		b, err := f.readAt(ctx, dblk, prefix+nelmts*uint64(esize)+4, "fixed array data block")
		if err != nil {
			return err
		}
		d := f.dec(b, "fixed array data block")
		d.signature("FADB")
		d.skip(2 + so)
		elems := d.p
		d.skip(int(nelmts) * esize)
		d.checkSum(0)
		if d.err != nil {
			return d.err
		}
		d.p = elems
		for i := uint64(0); i < nelmts; i++ {
			c, err := f.arrayElement(d, filtered, esize, cbytes)
			if err != nil {
				return err
			}
			c.Offset = ds.offsetOf(i, g, -1)
			if err := emit(c); err != nil {
				return err
			}
		}
		return nil
	}
	b, err = f.readAt(ctx, dblk, prefix+4, "fixed array data block")
	if err != nil {
		return err
	}
	d = f.dec(b, "fixed array data block")
	d.signature("FADB")
	d.skip(2 + so)
	bits := d.bytes(bitmap)
	d.checkSum(0)
	if d.err != nil {
		return d.err
	}
	at := dblk + prefix + 4
	for p := uint64(0); p < npages; p++ {
		n := min(pageN, nelmts-p*pageN)
		size := n*uint64(esize) + 4
		if p%64 == 0 {
			// The next pages (contiguous): read ahead, concurrently.
			f.prefetch(ctx, []span{{at, min(npages-p, 64) * (pageN*uint64(esize) + 4)}})
		}
		if bits[p/8]&(0x80>>(p%8)) == 0 {
			at += size
			continue
		}
		b, err := f.readAt(ctx, at, size, "fixed array page")
		if err != nil {
			return err
		}
		d := f.dec(b, "fixed array page")
		d.skip(int(n) * esize)
		d.checkSum(0)
		if d.err != nil {
			return d.err
		}
		d.p = 0
		for i := uint64(0); i < n; i++ {
			c, err := f.arrayElement(d, filtered, esize, cbytes)
			if err != nil {
				return err
			}
			c.Offset = ds.offsetOf(p*pageN+i, g, -1)
			if err := emit(c); err != nil {
				return err
			}
		}
		at += size
	}
	return nil
}

// arrayGrid returns the chunk grid a fixed array of nelmts elements
// linearises: that of the maximum shape.
func (ds *Dataset) arrayGrid(nelmts uint64) ([]uint64, error) {
	g := ds.grid(ds.MaxShape)
	n, ok := product(g)
	if !ok || n != nelmts {
		return nil, errorf("a fixed array of %d elements for a grid of %v chunks", nelmts, g)
	}
	return g, nil
}
