package blosc

import (
	"encoding/binary"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
)

// Sentinel errors. Every error this package returns for bad input wraps one
// of them, and each of them wraps the matching codecs sentinel, so both
// errors.Is(err, blosc.ErrCorrupt) and errors.Is(err, codecs.ErrCorrupt) hold.
var (
	// ErrCorrupt reports a frame that cannot be decoded: truncated, with
	// offsets or sizes out of bounds, or with a block that does not decode
	// to its size.
	ErrCorrupt = fmt.Errorf("blosc: %w", codecs.ErrCorrupt)
	// ErrTooLarge reports a frame whose header announces more decoded bytes
	// than the caller's limit. It is detected before any allocation.
	ErrTooLarge = fmt.Errorf("blosc: decoded size over the limit: %w", codecs.ErrCorrupt)
	// ErrUnsupported reports a frame of a format version, compressor or
	// flag this package (like c-blosc 1.21) does not read.
	ErrUnsupported = fmt.Errorf("blosc: unsupported frame: %w", codecs.ErrCorrupt)
	// ErrInvalidOptions reports compression options out of range.
	ErrInvalidOptions = fmt.Errorf("blosc: %w", codecs.ErrInvalidConfig)
)

// Format constants of Blosc1 frames (c-blosc 1.x).
const (
	// HeaderSize is the size of a Blosc1 frame header, and the most a frame
	// can be larger than its data (MaxOverhead in c-blosc).
	HeaderSize = 16
	// MaxBufferSize is the largest buffer a Blosc1 frame can hold.
	MaxBufferSize = 1<<31 - 1 - HeaderSize
	// MaxTypeSize is the largest type size a frame records; larger type
	// sizes are compressed as type size 1, as c-blosc does.
	MaxTypeSize = 255
	// maxBlockSize is BLOSC_MAX_BLOCKSIZE.
	maxBlockSize = (1<<31 - 1 - MaxTypeSize*4) / 3

	formatVersion = 2 // BLOSC_VERSION_FORMAT
	codecVersion  = 1 // version byte of every inner codec format

	minBufferSize = 128 // below this a buffer is stored, not compressed
	maxSplits     = 16  // largest type size whose blocks are split
)

// Header flag bits (byte 2 of the header).
const (
	// FlagShuffle marks byte-shuffled blocks.
	FlagShuffle = 0x01
	// FlagMemcpyed marks a frame holding its data uncompressed after the header.
	FlagMemcpyed = 0x02
	// FlagBitShuffle marks bit-shuffled blocks.
	FlagBitShuffle = 0x04
	// flagFuture is a bit no c-blosc 1.x writes; frames with it are refused.
	flagFuture = 0x08
	// FlagDontSplit marks blocks that are compressed whole rather than one
	// stream per byte of the type.
	FlagDontSplit = 0x10
)

// inner codec formats, in the top three bits of the flags.
const (
	formatBloscLZ = 0
	formatLZ4     = 1 // lz4 and lz4hc
	formatSnappy  = 2
	formatZlib    = 3
	formatZstd    = 4
)

// Info is what a frame's header says, as returned by ReadInfo.
type Info struct {
	// NBytes is the size of the decoded data.
	NBytes int
	// CBytes is the size of the whole frame, header included.
	CBytes int
	// BlockSize is the size of every block but the last.
	BlockSize int
	// TypeSize is the element size used by the shuffle filters.
	TypeSize int
	// Flags is header byte 2 (Flag* bits, inner codec in the top 3 bits).
	Flags byte
}

// Compressor returns the name of the inner codec family the frame uses:
// "blosclz", "lz4" (lz4 and lz4hc share a format), "snappy", "zlib" or
// "zstd", or "" for a code no c-blosc 1.x writes.
func (h Info) Compressor() string {
	switch h.Flags >> 5 {
	case formatBloscLZ:
		return "blosclz"
	case formatLZ4:
		return "lz4"
	case formatSnappy:
		return "snappy"
	case formatZlib:
		return "zlib"
	case formatZstd:
		return "zstd"
	}
	return ""
}

// FrameInfo reads the header of the Blosc1 frame src and returns its
// decoded size, frame size, block size, type size and flags. It reads only
// the header (and, for compressed frames, checks that the block offset table
// fits), allocates nothing, and is safe for concurrent use. Errors wrap
// ErrCorrupt or ErrUnsupported.
func FrameInfo(src []byte) (nbytes, cbytes, blocksize, typesize int, flags byte, err error) {
	h, err := ReadInfo(src)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	return h.NBytes, h.CBytes, h.BlockSize, h.TypeSize, h.Flags, nil
}

// ReadInfo is FrameInfo returning an Info. A frame may be followed by
// trailing bytes (CBytes <= len(src)); they are ignored by Decompress.
func ReadInfo(src []byte) (Info, error) {
	if len(src) < HeaderSize {
		return Info{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(src), HeaderSize)
	}
	h := Info{
		Flags:     src[2],
		TypeSize:  int(src[3]),
		NBytes:    int(int32(binary.LittleEndian.Uint32(src[4:]))),
		BlockSize: int(int32(binary.LittleEndian.Uint32(src[8:]))),
		CBytes:    int(int32(binary.LittleEndian.Uint32(src[12:]))),
	}
	if src[0] != formatVersion {
		return h, fmt.Errorf("%w: format version %d (want %d)", ErrUnsupported, src[0], formatVersion)
	}
	if h.NBytes < 0 || h.NBytes > MaxBufferSize {
		return h, fmt.Errorf("%w: decoded size %d out of range", ErrCorrupt, h.NBytes)
	}
	if h.CBytes < HeaderSize || h.CBytes > len(src) {
		return h, fmt.Errorf("%w: header frame size %d, have %d bytes", ErrCorrupt, h.CBytes, len(src))
	}
	if h.NBytes == 0 {
		return h, nil // c-blosc ignores the rest of the header then
	}
	if h.BlockSize <= 0 || h.BlockSize > maxBlockSize {
		return h, fmt.Errorf("%w: block size %d out of range", ErrCorrupt, h.BlockSize)
	}
	if h.TypeSize == 0 {
		return h, fmt.Errorf("%w: type size 0", ErrCorrupt)
	}
	if h.Flags&flagFuture != 0 {
		return h, fmt.Errorf("%w: flags %#x", ErrUnsupported, h.Flags)
	}
	if h.Flags&FlagMemcpyed != 0 {
		if h.CBytes != h.NBytes+HeaderSize {
			return h, fmt.Errorf("%w: stored frame of %d bytes holds %d", ErrCorrupt, h.CBytes, h.NBytes)
		}
		return h, nil
	}
	if h.Flags>>5 > formatZstd {
		return h, fmt.Errorf("%w: compressor code %d", ErrUnsupported, h.Flags>>5)
	}
	if src[1] != codecVersion {
		return h, fmt.Errorf("%w: %s format version %d", ErrUnsupported, h.Compressor(), src[1])
	}
	if nb := h.nblocks(); nb > (h.CBytes-HeaderSize)/4 {
		return h, fmt.Errorf("%w: %d blocks do not fit a %d-byte frame", ErrCorrupt, nb, h.CBytes)
	}
	return h, nil
}

// nblocks returns the number of blocks of a frame.
func (h Info) nblocks() int {
	return (h.NBytes + h.BlockSize - 1) / h.BlockSize
}

// splits returns the number of streams a block of bsize bytes is stored
// as: the decoder side of c-blosc's split rule, which also covers frames
// written before the "don't split" flag existed.
func splits(flags byte, typesize, bsize int, leftover bool) int {
	if flags&FlagDontSplit == 0 && typesize <= maxSplits && bsize/typesize >= minBufferSize && !leftover {
		return typesize
	}
	return 1
}
