package hdf5

import (
	"context"
	"fmt"
)

// btree1Entry is one entry of a version 1 B-tree leaf: its key (the key
// before the child) and the child's address.
type btree1Entry struct {
	key   []byte
	child uint64
}

// walkBTree1 calls fn for every leaf entry of the version 1 B-tree of node
// type typ (0 group, 1 raw data chunks) rooted at addr, in key order.
// keySize is the size of one key. Node addresses seen twice are a cycle.
func (f *File) walkBTree1(ctx context.Context, addr uint64, typ uint8, keySize int, fn func(btree1Entry) error) error {
	seen := map[uint64]bool{}
	var walk func(addr uint64, wantLevel int, depth int) error
	walk = func(addr uint64, wantLevel int, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("%w: B-tree deeper than %d", ErrLimit, maxDepth)
		}
		if seen[addr] {
			return errorf("B-tree nodes form a cycle at %d", addr)
		}
		seen[addr] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		so := int(f.sb.sizeOffsets)
		head, err := f.readAt(ctx, addr, uint64(8+2*so), "B-tree node")
		if err != nil {
			return err
		}
		d := f.dec(head, "B-tree node")
		d.signature("TREE")
		if t := d.u8(); t != typ && d.err == nil {
			return errorf("B-tree node at %d of type %d, want %d", addr, t, typ)
		}
		level := int(d.u8())
		n := int(d.u16())
		if d.err != nil {
			return d.err
		}
		if wantLevel >= 0 && level != wantLevel {
			return errorf("B-tree node at %d of level %d under a node of level %d", addr, level, wantLevel+1)
		}
		size := uint64(8+2*so) + uint64(n)*uint64(keySize+so) + uint64(keySize)
		if err := f.checkRange(addr, size, "B-tree node"); err != nil {
			return err
		}
		b, err := f.readAt(ctx, addr, size, "B-tree node")
		if err != nil {
			return err
		}
		d = f.dec(b, "B-tree node")
		d.skip(8 + 2*so)
		if level > 0 || typ == 0 {
			// Children: nodes, or a group's symbol table nodes.
			spans := make([]span, 0, n)
			for i := 0; i < n; i++ {
				e := f.dec(b[8+2*so+i*(keySize+so)+keySize:], "")
				spans = append(spans, span{e.addr(), 1})
			}
			f.prefetch(ctx, spans)
		}
		for i := 0; i < n; i++ {
			key := d.bytes(keySize)
			child := d.addr()
			if d.err != nil {
				return d.err
			}
			if level == 0 {
				if err := fn(btree1Entry{key: key, child: child}); err != nil {
					return err
				}
				continue
			}
			if err := walk(child, level-1, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(addr, -1, 0)
}
