package hdf5

import (
	"context"
	"fmt"
)

// extensibleArray lists the chunks of an extensible array index (one
// unlimited dimension).
func (f *File) extensibleArray(ctx context.Context, ds *Dataset, cbytes uint64, emit func(Chunk) error) error {
	so, sl := int(f.sb.sizeOffsets), int(f.sb.sizeLengths)
	unlim := -1
	for i, m := range ds.MaxShape {
		if m == Unlimited {
			if unlim >= 0 {
				return errorf("an extensible array index for two unlimited dimensions")
			}
			unlim = i
		}
	}
	if unlim < 0 {
		return errorf("an extensible array index without an unlimited dimension")
	}
	g := ds.grid(ds.MaxShape)
	addr := ds.lay.indexAddr
	b, err := f.readAt(ctx, addr, uint64(12+6*sl+so+4), "extensible array header")
	if err != nil {
		return err
	}
	d := f.dec(b, "extensible array header")
	d.signature("EAHD")
	if v := d.u8(); v != 0 && d.err == nil {
		return errorf("extensible array version %d", v)
	}
	client := d.u8()
	esize := int(d.u8())
	maxBits := int(d.u8())
	idxElems := uint64(d.u8())
	minElems := uint64(d.u8())
	minPtrs := uint64(d.u8())
	pageBits := int(d.u8())
	d.skip(5 * sl)
	maxIdx := d.length() // one more than the largest element index set
	iblock := d.addr()
	d.checkSum(0)
	if d.err != nil {
		return d.err
	}
	filtered := client == 1
	lme, ok1 := log2Exact(minElems)
	lmp, ok2 := log2Exact(minPtrs)
	if client > 1 || (!filtered && esize != so) || (filtered && (esize < so+5 || esize > so+12)) ||
		!ok1 || !ok2 || maxBits < lme || maxBits > 64 || pageBits > 32 {
		return errorf("extensible array of client %d, %d-byte elements, %d bits, %d/%d minimum elements/pointers",
			client, esize, maxBits, minElems, minPtrs)
	}
	if maxIdx > uint64(f.cfg.maxChunks) {
		return fmt.Errorf("%w: an extensible array of %d chunks", ErrLimit, maxIdx)
	}
	if iblock == undef || maxIdx == 0 {
		return nil
	}
	// Super blocks: super block s holds 2^(s/2) data blocks of
	// 2^((s+1)/2)·minElems elements each.
	nsblks := 1 + maxBits - lme
	type sblkInfo struct{ ndblks, dblkElems, startIdx, startDblk uint64 }
	info := make([]sblkInfo, nsblks)
	var start, startD uint64
	for s := range info {
		info[s] = sblkInfo{1 << (s / 2), (1 << ((s + 1) / 2)) * minElems, start, startD}
		start += info[s].ndblks * info[s].dblkElems
		startD += info[s].ndblks
		if start > 1<<62 {
			nsblks = s + 1
			info = info[:nsblks]
			break
		}
	}
	iblkSblks := 2 * lmp
	ndblkAddrs := 2 * (minPtrs - 1)
	nsblkAddrs := 0
	if nsblks > iblkSblks {
		nsblkAddrs = nsblks - iblkSblks
	}
	offBytes := (maxBits + 7) / 8
	pageN := uint64(1) << pageBits
	count := uint64(0)
	visit := func(i uint64, c Chunk) error {
		if i >= maxIdx {
			return nil
		}
		c.Offset = ds.offsetOf(i, g, unlim)
		return emit(c)
	}
	// elements decodes n elements at the start of d.
	elements := func(d *dec, first, n uint64) error {
		for k := uint64(0); k < n; k++ {
			c, err := f.arrayElement(d, filtered, esize, cbytes)
			if err != nil {
				return err
			}
			if err := visit(first+k, c); err != nil {
				return err
			}
		}
		return nil
	}
	seen := map[uint64]bool{}
	dataBlock := func(a, first, n uint64, pageInit func(p uint64) bool) error {
		if a == undef || first >= maxIdx {
			return nil
		}
		if seen[a] {
			return errorf("extensible array blocks form a cycle at %d", a)
		}
		seen[a] = true
		if count += n; count > uint64(f.cfg.maxChunks)*2+1024 {
			return fmt.Errorf("%w: an extensible array of more than %d elements", ErrLimit, count)
		}
		prefix := uint64(4 + 1 + 1 + so + offBytes)
		if n <= pageN {
			b, err := f.readAt(ctx, a, prefix+n*uint64(esize)+4, "extensible array data block")
			if err != nil {
				return err
			}
			d := f.dec(b, "extensible array data block")
			d.signature("EADB")
			d.skip(int(prefix) - 4)
			start := d.p
			d.skip(int(n) * esize)
			d.checkSum(0)
			if d.err != nil {
				return d.err
			}
			d.p = start
			return elements(d, first, n)
		}
		at := a + prefix + 4
		for p := uint64(0); p*pageN < n; p++ {
			m := min(pageN, n-p*pageN)
			size := m*uint64(esize) + 4
			if pageInit(p) {
				b, err := f.readAt(ctx, at, size, "extensible array page")
				if err != nil {
					return err
				}
				d := f.dec(b, "extensible array page")
				d.skip(int(m) * esize)
				d.checkSum(0)
				if d.err != nil {
					return d.err
				}
				d.p = 0
				if err := elements(d, first+p*pageN, m); err != nil {
					return err
				}
			}
			at += size
		}
		return nil
	}
	all := func(uint64) bool { return true }

	n := uint64(4+1+1+so) + idxElems*uint64(esize) + (ndblkAddrs+uint64(nsblkAddrs))*uint64(so) + 4
	b, err = f.readAt(ctx, iblock, n, "extensible array index block")
	if err != nil {
		return err
	}
	d = f.dec(b, "extensible array index block")
	d.signature("EAIB")
	d.skip(2 + so)
	elems := d.p
	d.skip(int(idxElems) * esize)
	dblks := make([]uint64, ndblkAddrs)
	for i := range dblks {
		dblks[i] = d.addr()
	}
	sblks := make([]uint64, nsblkAddrs)
	for i := range sblks {
		sblks[i] = d.addr()
	}
	d.checkSum(0)
	if d.err != nil {
		return d.err
	}
	end := d.p
	d.p = elems
	if err := elements(d, 0, idxElems); err != nil {
		return err
	}
	d.p = end
	// Data blocks of the super blocks the index block holds directly, and
	// the secondary blocks: read ahead, concurrently.
	ahead := make([]span, 0, len(dblks)+len(sblks))
	for _, a := range append(append([]uint64(nil), dblks...), sblks...) {
		ahead = append(ahead, span{a, 1})
	}
	f.prefetch(ctx, ahead)
	for s := 0; s < min(iblkSblks, nsblks); s++ {
		for k := uint64(0); k < info[s].ndblks; k++ {
			di := info[s].startDblk + k
			if di >= uint64(len(dblks)) {
				return errorf("extensible array: data block %d of %d", di, len(dblks))
			}
			first := idxElems + info[s].startIdx + k*info[s].dblkElems
			if err := dataBlock(dblks[di], first, info[s].dblkElems, all); err != nil {
				return err
			}
		}
	}
	// Secondary blocks.
	for j, sa := range sblks {
		s := iblkSblks + j
		if sa == undef || idxElems+info[s].startIdx >= maxIdx {
			continue
		}
		if seen[sa] {
			return errorf("extensible array blocks form a cycle at %d", sa)
		}
		seen[sa] = true
		nd := info[s].ndblks
		pagesPer := uint64(0)
		if info[s].dblkElems > pageN {
			pagesPer = info[s].dblkElems / pageN
		}
		bitmap := (nd*pagesPer + 7) / 8
		sz := uint64(4+1+1+so+offBytes) + bitmap + nd*uint64(so) + 4
		b, err := f.readAt(ctx, sa, sz, "extensible array secondary block")
		if err != nil {
			return err
		}
		d := f.dec(b, "extensible array secondary block")
		d.signature("EASB")
		d.skip(2 + so + offBytes)
		bm := d.bytes(int(bitmap))
		addrs := make([]uint64, nd)
		for i := range addrs {
			addrs[i] = d.addr()
		}
		d.checkSum(0)
		if d.err != nil {
			return d.err
		}
		ahead := make([]span, len(addrs))
		for k, a := range addrs {
			ahead[k] = span{a, 1}
		}
		f.prefetch(ctx, ahead)
		for k, a := range addrs {
			first := idxElems + info[s].startIdx + uint64(k)*info[s].dblkElems
			base := uint64(k) * pagesPer
			init := func(p uint64) bool { bit := base + p; return bm[bit/8]&(0x80>>(bit%8)) != 0 }
			if err := dataBlock(a, first, info[s].dblkElems, init); err != nil {
				return err
			}
		}
	}
	return nil
}
