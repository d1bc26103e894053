package sharding

import (
	"fmt"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// This file is the chunk locator: what a reader needs to find inner chunks
// in a shard. The reader itself (fetching, decoding, placing, concurrency,
// store policy) is package pipeline's; this package does no I/O of its own.

// Linear returns the C-order index, within a shard, of the inner chunk at
// coords (coordinates in the shard's inner chunk grid): the index of its
// entry in an Index.
func (l *Layout) Linear(coords []int) int {
	lin := 0
	for d, c := range coords {
		lin += c * l.cpsStrides[d]
	}
	return lin
}

// InnerBytes returns the decoded size of one inner chunk.
func (l *Layout) InnerBytes() int { return l.innerBytes }

// Identity reports whether inner chunks are stored as their decoded bytes
// (inner chain "bytes" in memory byte order): such a chunk can be read, in
// part or whole, straight from its byte range.
func (l *Layout) Identity() bool { return l.identity }

// Fill returns one element of the fill value (do not modify).
func (l *Layout) Fill() []byte { return l.fill }

// ItemSize returns the element size.
func (l *Layout) ItemSize() int { return l.itemSize }

// IndexRangeIn returns where the index of a shard stored as size bytes at
// offset base of a value lies in that value (size 0: the shard runs to the
// end of the value, its size unknown). A size shorter than the index is
// ErrCorruptIndex.
func (l *Layout) IndexRangeIn(base, size int64) (store.ByteRange, error) {
	n := int64(l.indexSize)
	if size > 0 && size < n {
		return store.ByteRange{}, fmt.Errorf("%w: shard of %d bytes is shorter than its %d-byte index", ErrCorruptIndex, size, n)
	}
	switch {
	case l.codec.loc == IndexStart:
		return store.OffsetLen(base, n), nil
	case size > 0:
		return store.OffsetLen(base+size-n, n), nil
	default:
		return store.Suffix(n), nil
	}
}

// IndexOf decodes and validates the index of the whole shard b.
func (l *Layout) IndexOf(b []byte) (*Index, error) {
	if len(b) < l.indexSize {
		return nil, fmt.Errorf("%w: shard of %d bytes is shorter than its %d-byte index", ErrCorruptIndex, len(b), l.indexSize)
	}
	if l.codec.loc == IndexStart {
		return l.DecodeIndex(b[:l.indexSize], int64(len(b)))
	}
	return l.DecodeIndex(b[len(b)-l.indexSize:], int64(len(b)))
}

// CheckSelection reports ErrSelection when sel is not a selection within
// one shard (one Dim per dimension, inside the shard; steps may be
// negative) or dst not a view of sel's full shape with the array's item
// size.
func (l *Layout) CheckSelection(sel nd.Selection, dst nd.View) error {
	shape := l.shard.Shape
	if len(sel) != len(shape) || len(dst.Shape) != len(shape) {
		return fmt.Errorf("%w: %d-d selection into a %d-d view, shard is %d-d", ErrSelection, len(sel), len(dst.Shape), len(shape))
	}
	if dst.ItemSize != l.itemSize {
		return fmt.Errorf("%w: view of %d-byte items, shard has %d-byte items", ErrSelection, dst.ItemSize, l.itemSize)
	}
	for d, s := range sel {
		if s.Count < 0 || s.Step == 0 || dst.Shape[d] != s.Count || len(dst.Strides) != len(shape) {
			return fmt.Errorf("%w: dimension %d: %+v into a view of shape %v", ErrSelection, d, s, dst.Shape)
		}
		if s.Count == 0 {
			continue
		}
		last := s.Start + (s.Count-1)*s.Step
		if s.Start < 0 || s.Start >= shape[d] || last < 0 || last >= shape[d] {
			return fmt.Errorf("%w: dimension %d: %+v outside 0..%d", ErrSelection, d, s, shape[d]-1)
		}
	}
	return nil
}

// DecodeShard decodes the whole shard src into dst (Shard().NumBytes()
// bytes), validating the index against len(src). Missing inner chunks read
// as the fill value. It runs on the calling goroutine and does no I/O: it
// is the codec's own Decode, for chains that wrap sharding_indexed in
// other codecs; arrays whose chain is sharding_indexed alone are read
// through package pipeline, which reads only the inner chunks it needs.
func (l *Layout) DecodeShard(dst, src []byte) error {
	if len(dst) != l.shard.NumBytes() {
		return fmt.Errorf("sharding_indexed: Decode into %d bytes, shard has %d", len(dst), l.shard.NumBytes())
	}
	if nd.NumElements(l.shard.Shape) == 0 {
		return nil
	}
	return l.decodeMem(src, nd.Contiguous(dst, l.shard.Shape, l.itemSize))
}

// decodeMem decodes every inner chunk of the in-memory shard src into dst,
// a view of the whole shard.
func (l *Layout) decodeMem(src []byte, dst nd.View) error {
	ix, err := l.IndexOf(src)
	if err != nil {
		return err
	}
	for p := range l.fullSelection().Chunks(l.chunkShape) {
		out := p.DstView(dst)
		off, n, ok := ix.Entry(l.Linear(p.Coords))
		if !ok {
			nd.Fill(out, l.fill)
			continue
		}
		enc := src[off : off+n]
		if l.nested != nil {
			err = l.nested.decodeMem(enc, out)
		} else if b, contiguous := out.IsContiguous(); contiguous {
			err = l.inner.Decode(b[:len(b):len(b)], enc)
		} else {
			bufp := getScratch(l.innerBytes)
			if err = l.inner.Decode(*bufp, enc); err == nil {
				nd.Copy(out, nd.Contiguous(*bufp, l.chunkShape, l.itemSize))
			}
			putScratch(bufp)
		}
		if err != nil {
			return fmt.Errorf("inner chunk %v: %w", p.Coords, err)
		}
	}
	return nil
}
