package codecs

import "fmt"

// PrepareOptions is the state of one operation that a chain is prepared
// with: it reaches the codecs as an argument of Prepare, never through a
// codec configuration, so nothing metadata says can name it.
type PrepareOptions struct {
	// VLen is the arena variable-length codecs (vlen-utf8, vlen-bytes,
	// the numcodecs object codecs; through sharding_indexed at every
	// level) decode into and encode from. Nil: they refuse, with
	// ErrVLenUnbound, as an array's own chain does.
	VLen *VLenArena
}

// PreparedArrayToBytes is an array->bytes codec prepared for one chunk
// representation and one set of PrepareOptions: what a Chain calls for
// every chunk. Whatever the codec derives from the representation (a
// shard's layout and inner chain, a byte-swap unit) is derived once, when
// it is prepared. It is safe for concurrent use.
type PreparedArrayToBytes interface {
	// Capabilities returns what the prepared codec declares about itself
	// (the same value on every call).
	Capabilities() Capabilities
	// Encode appends the encoding of the chunk src to dst and returns the
	// extended slice.
	Encode(dst, src []byte) ([]byte, error)
	// Decode decodes src into dst, which holds exactly the chunk's size.
	// Input that does not decode to exactly that is ErrCorrupt. With
	// Capabilities().InPlace, src may be dst itself.
	Decode(dst, src []byte) error
	// MaxEncodedSize returns an upper bound on an encoded chunk's size
	// (its exact size with Capabilities().FixedSize).
	MaxEncodedSize() int
}

// ArrayToBytesPreparer is implemented by array->bytes codecs that resolve
// themselves for a chunk representation (bytes, the vlen codecs,
// sharding_indexed). Prepare checks that the codec fits repr, so a chain
// that prepares never fails on that account when it decodes. A codec that
// is not one is prepared with BindRepr: each call passes it repr.
type ArrayToBytesPreparer interface {
	ArrayToBytes
	PrepareArrayToBytes(repr ChunkRepr, opts PrepareOptions) (PreparedArrayToBytes, error)
}

// BindRepr returns c prepared by binding it to repr, with capabilities
// caps: every call passes repr to c. It is how a codec with nothing to
// derive from its representation is prepared.
func BindRepr(c ArrayToBytes, repr ChunkRepr, caps Capabilities) PreparedArrayToBytes {
	return &boundRepr{c: c, repr: repr, caps: caps, max: c.MaxEncodedSize(repr)}
}

// boundRepr is an ArrayToBytes with its representation (BindRepr).
type boundRepr struct {
	c    ArrayToBytes
	repr ChunkRepr
	caps Capabilities
	max  int
}

func (b *boundRepr) Capabilities() Capabilities { return b.caps }
func (b *boundRepr) MaxEncodedSize() int        { return b.max }
func (b *boundRepr) Decode(dst, src []byte) error {
	return b.c.Decode(dst, src, b.repr)
}
func (b *boundRepr) Encode(dst, src []byte) ([]byte, error) {
	return b.c.Encode(dst, src, b.repr)
}

// ReprValidator is implemented by array->bytes codecs that are not
// ArrayToBytesPreparers but take only some representations (packbits,
// zfp, pcodec): a chain asks ValidateRepr once, when it is prepared.
type ReprValidator interface {
	ValidateRepr(repr ChunkRepr) error
}

// prepareArrayToBytes prepares c for repr with opts: its own Prepare, or
// (its ValidateRepr passed) BindRepr with the capabilities its FixedSizer
// declares.
func prepareArrayToBytes(c ArrayToBytes, repr ChunkRepr, opts PrepareOptions) (PreparedArrayToBytes, error) {
	if p, ok := c.(ArrayToBytesPreparer); ok {
		return p.PrepareArrayToBytes(repr, opts)
	}
	if v, ok := c.(ReprValidator); ok {
		if err := v.ValidateRepr(repr); err != nil {
			return nil, err
		}
	}
	var caps Capabilities
	if f, ok := c.(FixedSizer); ok {
		caps.FixedSize = f.FixedEncodedSize()
	}
	return BindRepr(c, repr, caps), nil
}

// PrepareArrayToBytes implements ArrayToBytesPreparer: the data type is
// checked (a multi-byte type needs a byte order) and the unit of the byte
// swap (none for little-endian) found once.
func (b *Bytes) PrepareArrayToBytes(repr ChunkRepr, _ PrepareOptions) (PreparedArrayToBytes, error) {
	if err := b.ValidateRepr(repr); err != nil {
		return nil, err
	}
	unit := b.swapUnit(repr)
	return &preparedBytes{repr: repr, n: repr.NumBytes(), unit: unit,
		caps: Capabilities{Identity: unit == 1, FixedSize: true, InPlace: true}}, nil
}

// preparedBytes is the bytes codec prepared for one representation.
type preparedBytes struct {
	repr ChunkRepr
	n    int
	unit int // byte-swap unit (1: none)
	caps Capabilities
}

func (p *preparedBytes) Capabilities() Capabilities { return p.caps }
func (p *preparedBytes) MaxEncodedSize() int        { return p.n }

func (p *preparedBytes) Encode(dst, src []byte) ([]byte, error) {
	if len(src) != p.n {
		return dst, fmt.Errorf("%w: bytes: encode of %d bytes, chunk of %v %s has %d",
			ErrCorrupt, len(src), p.repr.Shape, p.repr.DType, p.n)
	}
	start := len(dst)
	dst = append(dst, src...)
	if p.unit != 1 {
		swapBytes(dst[start:], dst[start:], p.unit)
	}
	return dst, nil
}

func (p *preparedBytes) Decode(dst, src []byte) error {
	if len(src) != p.n {
		return fmt.Errorf("%w: bytes: %d encoded bytes, chunk of %v %s has %d",
			ErrCorrupt, len(src), p.repr.Shape, p.repr.DType, p.n)
	}
	if len(dst) != p.n {
		return fmt.Errorf("%w: bytes: decode into %d bytes, chunk has %d", ErrCorrupt, len(dst), p.n)
	}
	if p.unit == 1 && p.n > 0 && &dst[0] == &src[0] {
		return nil // in place, nothing to swap
	}
	swapBytes(dst, src, p.unit)
	return nil
}

// PrepareArrayToBytes implements ArrayToBytesPreparer: the data type is
// checked and the codec bound to opts.VLen (nil: it refuses to decode or
// encode, ErrVLenUnbound).
func (c *VLen) PrepareArrayToBytes(repr ChunkRepr, opts PrepareOptions) (PreparedArrayToBytes, error) {
	if err := c.ValidateRepr(repr); err != nil {
		return nil, err
	}
	return BindRepr(c.bind(opts.VLen), repr, Capabilities{}), nil
}
