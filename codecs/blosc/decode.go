package blosc

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/gozarr/gozarr/codecs"
)

// Decompress decodes the Blosc1 frame src and appends the decoded bytes to
// dst, returning the extended slice. When cap(dst)-len(dst) holds the
// decoded size, the result uses dst's memory and Decompress allocates
// nothing but pooled scratch for shuffled blocks.
//
// limit bounds the decoded size: a frame announcing more than limit bytes is
// refused with ErrTooLarge before anything is allocated (limit < 0 means
// MaxBufferSize). Every valid frame c-blosc 1.21 writes or reads is decoded:
// stored (memcpyed) frames, split and whole blocks, any type size, a short
// last block, byte shuffle and bit shuffle, and the inner codecs blosclz,
// lz4/lz4hc, snappy, zlib and zstd. Hostile frames yield errors wrapping
// ErrCorrupt, never a panic or an out-of-bounds access. Bytes after the
// frame's recorded size are ignored.
//
// Decompress is safe for concurrent use. On error the contents of
// dst[len(dst):cap(dst)] are unspecified.
func Decompress(dst, src []byte, limit int) ([]byte, error) {
	h, err := ReadInfo(src)
	if err != nil {
		return dst, err
	}
	if limit < 0 {
		limit = MaxBufferSize
	}
	if h.NBytes > limit {
		return dst, fmt.Errorf("%w: frame holds %d bytes: %w", ErrTooLarge, h.NBytes, &codecs.LimitError{Limit: limit})
	}
	n0 := len(dst)
	dst = slices.Grow(dst, h.NBytes)[:n0+h.NBytes]
	if err := decodeInto(dst[n0:], src[:h.CBytes], h); err != nil {
		return dst[:n0], err
	}
	return dst, nil
}

// decodeInto decodes the frame src with header h into out
// (len(out) == h.NBytes).
func decodeInto(out, src []byte, h Info) error {
	if h.NBytes == 0 {
		return nil
	}
	if h.Flags&FlagMemcpyed != 0 {
		copy(out, src[HeaderSize:HeaderSize+h.NBytes])
		return nil
	}
	dec := innerDecoders[h.Flags>>5]
	doShuffle := h.Flags&FlagShuffle != 0 && h.TypeSize > 1
	doBitShuffle := h.Flags&FlagBitShuffle != 0
	nblocks := h.nblocks()
	var scratch, scratch2 *[]byte
	if doShuffle || doBitShuffle {
		scratch = getScratch(min(h.BlockSize, h.NBytes))
		defer scratchPool.Put(scratch)
	}
	if !doShuffle && doBitShuffle && h.TypeSize > 1 {
		scratch2 = getScratch(min(h.BlockSize, h.NBytes))
		defer scratchPool.Put(scratch2)
	}
	for j := range nblocks {
		start := j * h.BlockSize
		bsize := min(h.BlockSize, h.NBytes-start)
		leftover := bsize < h.BlockSize
		bstart := int(int32(binary.LittleEndian.Uint32(src[HeaderSize+4*j:])))
		blockOut := out[start : start+bsize]
		shuf := doShuffle
		bshuf := !doShuffle && doBitShuffle && bsize >= h.TypeSize
		target := blockOut
		if shuf || bshuf {
			target = (*scratch)[:bsize]
		}
		if err := decodeBlock(target, src, bstart, h, bsize, leftover, dec); err != nil {
			return fmt.Errorf("%w (block %d of %d)", err, j, nblocks)
		}
		switch {
		case shuf:
			unshuffle(blockOut, target, h.TypeSize)
		case bshuf:
			var tmp []byte
			if scratch2 != nil {
				tmp = (*scratch2)[:bsize]
			}
			bitunshuffle(blockOut, target, h.TypeSize, tmp)
		}
	}
	return nil
}

// decodeBlock decodes the streams of one block, starting at offset off of
// the frame src, into target (len(target) == bsize).
func decodeBlock(target, src []byte, off int, h Info, bsize int, leftover bool, dec innerDecoder) error {
	nsplits := splits(h.Flags, h.TypeSize, bsize, leftover)
	neblock := bsize / nsplits
	if neblock*nsplits != bsize {
		return fmt.Errorf("%w: block of %d bytes does not split into %d streams", ErrCorrupt, bsize, nsplits)
	}
	for s := range nsplits {
		if off < HeaderSize || off > len(src)-4 {
			return fmt.Errorf("%w: stream offset %d outside the %d-byte frame", ErrCorrupt, off, len(src))
		}
		csize := int(int32(binary.LittleEndian.Uint32(src[off:])))
		off += 4
		if csize < 0 || csize > len(src)-off {
			return fmt.Errorf("%w: stream of %d bytes at offset %d overruns the %d-byte frame", ErrCorrupt, csize, off, len(src))
		}
		in := src[off : off+csize]
		o := target[s*neblock : (s+1)*neblock]
		if csize == neblock {
			copy(o, in)
		} else if err := dec(o, in); err != nil {
			return err
		}
		off += csize
	}
	return nil
}

// scratchPool holds block-sized buffers for unshuffling.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

func getScratch(n int) *[]byte {
	b := scratchPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	return b
}
