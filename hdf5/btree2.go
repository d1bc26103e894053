package hdf5

import (
	"context"
	"fmt"
	"math/bits"
)

// encSize is the number of bytes that encode values up to n (HDF5's
// "limit encoded size": one more than floor(log2 n)/8).
func encSize(n uint64) int {
	if n == 0 {
		return 1
	}
	return (bits.Len64(n)-1)/8 + 1
}

// btree2 is a version 2 B-tree header.
type btree2 struct {
	typ      uint8
	nodeSize uint64
	recSize  int
	depth    int
	root     uint64
	rootNrec uint64
	total    uint64
	// Per level: the most records a node holds and the bytes of the
	// total-records field of pointers to nodes of that level.
	maxNrec    []uint64
	cumNrec    []uint64
	cumSize    []int
	maxNrecLen int
}

// prefix of every version 2 B-tree node: signature, version, type and
// the checksum.
const btree2Prefix = 10

func (f *File) readBTree2Header(ctx context.Context, addr uint64, wantType uint8) (*btree2, error) {
	so, sl := int(f.sb.sizeOffsets), int(f.sb.sizeLengths)
	n := 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + so + 2 + sl + 4
	b, err := f.readAt(ctx, addr, uint64(n), "v2 B-tree header")
	if err != nil {
		return nil, err
	}
	d := f.dec(b, "v2 B-tree header")
	d.signature("BTHD")
	if v := d.u8(); v != 0 && d.err == nil {
		return nil, errorf("v2 B-tree header version %d", v)
	}
	t := &btree2{}
	t.typ = d.u8()
	t.nodeSize = uint64(d.u32())
	t.recSize = int(d.u16())
	t.depth = int(d.u16())
	d.skip(2)
	t.root = d.addr()
	t.rootNrec = uint64(d.u16())
	t.total = d.length()
	d.checkSum(0)
	if d.err != nil {
		return nil, d.err
	}
	if t.typ != wantType {
		return nil, errorf("v2 B-tree of type %d, want %d", t.typ, wantType)
	}
	if t.nodeSize < btree2Prefix+16 || t.nodeSize > 1<<24 || t.recSize == 0 || t.recSize > 1<<12 {
		return nil, errorf("v2 B-tree with %d-byte nodes and %d-byte records", t.nodeSize, t.recSize)
	}
	if t.depth > maxDepth {
		return nil, fmt.Errorf("%w: v2 B-tree of depth %d", ErrLimit, t.depth)
	}
	t.maxNrec = make([]uint64, t.depth+1)
	t.cumNrec = make([]uint64, t.depth+1)
	t.cumSize = make([]int, t.depth+1)
	t.maxNrec[0] = (t.nodeSize - btree2Prefix) / uint64(t.recSize)
	t.cumNrec[0] = t.maxNrec[0]
	t.cumSize[0] = encSize(t.cumNrec[0])
	t.maxNrecLen = encSize(t.maxNrec[0])
	for u := 1; u <= t.depth; u++ {
		ptr := uint64(t.pointerSize(u, so))
		if t.nodeSize < btree2Prefix+ptr {
			return nil, errorf("v2 B-tree nodes too small for depth %d", t.depth)
		}
		t.maxNrec[u] = (t.nodeSize - (btree2Prefix + ptr)) / (uint64(t.recSize) + ptr)
		hi, lo := bits.Mul64(t.maxNrec[u]+1, t.cumNrec[u-1])
		if hi != 0 || lo+t.maxNrec[u] < lo {
			return nil, errorf("v2 B-tree of depth %d overflows", t.depth)
		}
		t.cumNrec[u] = lo + t.maxNrec[u]
		t.cumSize[u] = encSize(t.cumNrec[u])
	}
	return t, nil
}

// pointerSize is the size of a child pointer in a node of level u.
func (t *btree2) pointerSize(u, so int) int {
	n := so + t.maxNrecLen
	if u > 1 {
		n += t.cumSize[u-1]
	}
	return n
}

// walkBTree2 calls fn with every record of the version 2 B-tree at addr,
// in order. budget bounds the records.
func (f *File) walkBTree2(ctx context.Context, addr uint64, wantType uint8, budget int, fn func(rec []byte) error) (*btree2, error) {
	t, err := f.readBTree2Header(ctx, addr, wantType)
	if err != nil {
		return nil, err
	}
	if t.root == undef || t.total == 0 {
		return t, nil
	}
	if t.total > uint64(budget) {
		return nil, fmt.Errorf("%w: a v2 B-tree of %d records (limit %d)", ErrLimit, t.total, budget)
	}
	seen := map[uint64]bool{}
	count := uint64(0)
	var walk func(addr, nrec uint64, level int) error
	walk = func(addr, nrec uint64, level int) error {
		if seen[addr] {
			return errorf("v2 B-tree nodes form a cycle at %d", addr)
		}
		seen[addr] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		if nrec > t.maxNrec[level] {
			return errorf("v2 B-tree node at %d with %d records (at most %d)", addr, nrec, t.maxNrec[level])
		}
		b, err := f.readAt(ctx, addr, t.nodeSize, "v2 B-tree node")
		if err != nil {
			return err
		}
		d := f.dec(b, "v2 B-tree node")
		if level == 0 {
			d.signature("BTLF")
		} else {
			d.signature("BTIN")
		}
		if v := d.u8(); v != 0 && d.err == nil {
			return errorf("v2 B-tree node version %d", v)
		}
		if ty := d.u8(); ty != t.typ && d.err == nil {
			return errorf("v2 B-tree node of type %d in a tree of type %d", ty, t.typ)
		}
		recs := d.bytes(int(nrec) * t.recSize)
		type child struct {
			addr, nrec uint64
		}
		var children []child
		if level > 0 {
			for i := uint64(0); i <= nrec; i++ {
				a := d.addr()
				n := d.uN(t.maxNrecLen)
				if level > 1 {
					d.uN(t.cumSize[level-1])
				}
				children = append(children, child{a, n})
			}
		}
		d.checkSum(0)
		if d.err != nil {
			return d.err
		}
		if len(children) > 1 {
			spans := make([]span, len(children))
			for i, c := range children {
				spans[i] = span{c.addr, t.nodeSize}
			}
			f.prefetch(ctx, spans)
		}
		for i := uint64(0); i <= nrec; i++ {
			if level > 0 {
				if err := walk(children[i].addr, children[i].nrec, level-1); err != nil {
					return err
				}
			}
			if i < nrec {
				count++
				if count > t.total {
					return errorf("v2 B-tree holds more records than its header's %d", t.total)
				}
				if err := fn(recs[int(i)*t.recSize : int(i+1)*t.recSize]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(t.root, t.rootNrec, t.depth); err != nil {
		return nil, err
	}
	return t, nil
}
