package codecs

// The vlen-utf8 and vlen-bytes codecs (array -> bytes), for the
// variable-length data types "string" and "variable_length_bytes".
//
// Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8
// JSON names: "vlen-utf8", "vlen-bytes" (Zarr v2: the numcodecs filters
// {"id": "vlen-utf8"} and {"id": "vlen-bytes"}).
// Configuration example:
//
//	{"name": "vlen-utf8", "configuration": {}}
//
// Encoding: a little-endian u32 element count, then for each element in C
// order a little-endian u32 byte length and that many bytes (UTF-8 for
// vlen-utf8).
//
// In memory a variable-length chunk is an array of 8-byte handles
// (dtype.HandleSize) into a VLenArena: a codec bound to an arena decodes a
// chunk by keeping its bytes in the arena and writing one handle per
// element, and encodes handles by looking their values up there. The
// engine moves handles like any fixed-size element. Handle 0 is the fill
// value.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gozarr/gozarr/dtype"
)

// ErrVLenUnbound reports a variable-length chunk decoded or encoded by a
// codec bound to no VLenArena: such arrays are read and written with the
// string API (zarr.ReadStrings, zarr.WriteStrings, ...), not as bytes.
var ErrVLenUnbound = errors.New("variable-length elements need the string API (zarr.ReadStrings, zarr.ReadByteStrings)")

// DefaultVLenChunkBytes bounds the content of one variable-length chunk (its
// element bytes, besides the 4 bytes of count and of each length), as
// decoded before the vlen codec, unless an arena says otherwise: 4 MiB.
// The bound is also the chunk's share of the in-flight cap and the size
// of the write engine's encode buffers, so it is kept well under
// pipeline.DefaultMaxBytesInFlight.
const DefaultVLenChunkBytes = 4 << 20

func init() {
	for _, name := range []string{"vlen-utf8", "vlen-bytes"} {
		Register(name, func(configuration json.RawMessage) (Codec, error) {
			// The configuration is empty: any field (an arena named in
			// metadata included) is refused. An operation gives its arena
			// to Prepare (PrepareOptions.VLen), never through the
			// configuration.
			var cfg struct{}
			if err := DecodeConfig(configuration, &cfg); err != nil {
				return nil, err
			}
			return &VLen{name: name, utf8: name == "vlen-utf8"}, nil
		})
	}
}

// VLen is the vlen-utf8 or vlen-bytes codec. Unbound (as an array's
// metadata builds it) it refuses to decode or encode (ErrVLenUnbound);
// prepared with a VLenArena (PrepareOptions.VLen) it decodes chunks into
// handles of the arena. It is safe for concurrent use.
type VLen struct {
	name  string
	utf8  bool
	arena *VLenArena
}

// NewVLen returns the unbound codec for a variable-length data type
// (vlen-utf8 for dtype.TypeVarString, vlen-bytes for TypeVarBytes).
func NewVLen(d dtype.DataType) (*VLen, error) {
	name := d.VarCodec()
	if name == "" {
		return nil, fmt.Errorf("%w: vlen codec for %s, which is not variable-length", ErrInvalidConfig, d)
	}
	return &VLen{name: name, utf8: name == "vlen-utf8"}, nil
}

// bind returns a copy of the codec bound to arena.
func (c *VLen) bind(arena *VLenArena) *VLen {
	b := *c
	b.arena = arena
	return &b
}

// Name returns "vlen-utf8" or "vlen-bytes".
func (c *VLen) Name() string { return c.name }

// Configuration returns {} (zarr-python writes an empty configuration).
func (c *VLen) Configuration() any { return struct{}{} }

// ValidateRepr refuses a data type that is not the codec's own
// variable-length type.
func (c *VLen) ValidateRepr(repr ChunkRepr) error {
	if d, _ := dtype.VarLenOf(c.name); repr.DType != d {
		return fmt.Errorf("%w: %s encodes %s, not %s", ErrInvalidConfig, c.name, d, repr.DType)
	}
	return nil
}

// limit returns the content bound of one chunk.
func (c *VLen) limit() int {
	if c.arena != nil {
		return c.arena.limit
	}
	return DefaultVLenChunkBytes
}

// MaxEncodedSize returns the bound of an encoded chunk of repr: the count,
// a length per element, and the content bound.
func (c *VLen) MaxEncodedSize(repr ChunkRepr) int {
	n := int64(4) + 4*int64(repr.NumElements()) + int64(c.limit())
	return int(min(n, math.MaxUint32, math.MaxInt))
}

// Decode parses the encoded chunk src, keeps it in the codec's arena and
// writes one handle per element into dst (repr.NumBytes() bytes). A count
// other than the chunk's number of elements, a length past the end,
// trailing bytes or (vlen-utf8) invalid UTF-8 is ErrCorrupt, found before
// anything is allocated.
func (c *VLen) Decode(dst, src []byte, repr ChunkRepr) error {
	n := repr.NumElements()
	if len(dst) != n*dtype.HandleSize {
		return fmt.Errorf("%s: decode into %d bytes, chunk has %d", c.name, len(dst), n*dtype.HandleSize)
	}
	if c.arena == nil {
		return fmt.Errorf("%s: %w", c.name, ErrVLenUnbound)
	}
	if err := c.check(src, n, dst); err != nil {
		return err
	}
	seg := c.arena.addRaw(src)
	fill := c.arena.fill
	for i := 0; i < len(dst); i += 8 {
		off := binary.LittleEndian.Uint64(dst[i:])
		h := seg<<32 | off
		// A value equal to the fill value is the fill handle, so a chunk
		// a write leaves all fill is recognised as empty.
		if l := int(binary.LittleEndian.Uint32(src[off:])); l == len(fill) && string(src[int(off)+4:int(off)+4+l]) == string(fill) {
			h = 0
		}
		binary.LittleEndian.PutUint64(dst[i:], h)
	}
	return nil
}

// check validates the encoded chunk src of n elements, writing each
// element's offset (of its length prefix) into offs when not nil.
func (c *VLen) check(src []byte, n int, offs []byte) error {
	if len(src) < 4 {
		return fmt.Errorf("%w: %s: %d bytes, shorter than the element count", ErrCorrupt, c.name, len(src))
	}
	if count := binary.LittleEndian.Uint32(src); uint64(count) != uint64(n) {
		return fmt.Errorf("%w: %s: chunk claims %d elements, it has %d", ErrCorrupt, c.name, count, n)
	}
	if uint64(len(src)-4) < 4*uint64(n) {
		return fmt.Errorf("%w: %s: %d bytes cannot hold %d element lengths", ErrCorrupt, c.name, len(src), n)
	}
	if len(src) > c.MaxEncodedSize(ChunkRepr{Shape: []int{n}}) {
		return fmt.Errorf("%w: %s: chunk of %d bytes: %w", ErrCorrupt, c.name, len(src), &LimitError{Limit: c.MaxEncodedSize(ChunkRepr{Shape: []int{n}})})
	}
	// UTF-8 is checked element by element unless the whole chunk, lengths
	// included, is ASCII (lengths under 128): then every element is.
	check := c.utf8 && !isASCII(src)
	off := 4
	for i := range n {
		if len(src)-off < 4 {
			return fmt.Errorf("%w: %s: element %d: length past the end of the chunk", ErrCorrupt, c.name, i)
		}
		l := binary.LittleEndian.Uint32(src[off:])
		if uint64(l) > uint64(len(src)-off-4) {
			return fmt.Errorf("%w: %s: element %d claims %d bytes, %d are left", ErrCorrupt, c.name, i, l, len(src)-off-4)
		}
		if check && !utf8.Valid(src[off+4:off+4+int(l)]) {
			return fmt.Errorf("%w: %s: element %d is not valid UTF-8", ErrCorrupt, c.name, i)
		}
		if offs != nil {
			binary.LittleEndian.PutUint64(offs[8*i:], uint64(off))
		}
		off += 4 + int(l)
	}
	if off != len(src) {
		return fmt.Errorf("%w: %s: %d bytes after the last element", ErrCorrupt, c.name, len(src)-off)
	}
	return nil
}

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	var acc uint64
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc&0x8080808080808080 == 0
}

// Encode appends the encoding of the handles src to dst, looking each up
// in the codec's arena.
func (c *VLen) Encode(dst, src []byte, repr ChunkRepr) ([]byte, error) {
	n := repr.NumElements()
	if len(src) != n*dtype.HandleSize {
		return nil, fmt.Errorf("%s: encode of %d bytes, chunk has %d", c.name, len(src), n*dtype.HandleSize)
	}
	if c.arena == nil {
		return nil, fmt.Errorf("%s: %w", c.name, ErrVLenUnbound)
	}
	a := c.arena
	a.mu.RLock()
	defer a.mu.RUnlock()
	total := 4 + 4*n
	for i := 0; i < len(src); i += 8 {
		v, err := a.valueLocked(binary.LittleEndian.Uint64(src[i:]))
		if err != nil {
			return nil, fmt.Errorf("%s: element %d: %w", c.name, i/8, err)
		}
		if int64(total)+4+int64(len(v)) > math.MaxUint32 {
			return nil, fmt.Errorf("%w: %s: chunk of more than 4 GiB", ErrInvalidConfig, c.name)
		}
		total += 4 + len(v)
	}
	start := len(dst)
	if cap(dst)-start < total {
		grown := make([]byte, start, start+total)
		copy(grown, dst)
		dst = grown
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	for i := 0; i < len(src); i += 8 {
		v, _ := a.valueLocked(binary.LittleEndian.Uint64(src[i:]))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	return dst, nil
}

// ValidateVLen reports whether src is a well-formed encoded chunk of n
// elements (ErrCorrupt otherwise), allocating nothing: for fuzzing and
// for checking stored chunks.
func ValidateVLen(d dtype.DataType, src []byte, n int) error {
	c, err := NewVLen(d)
	if err != nil {
		return err
	}
	return c.check(src, n, nil)
}

// VLenArena holds the variable-length values of one read or write: the
// decoded chunks (kept as encoded, each element found by the offset of
// its length) and the caller's values to write. A handle is the segment
// number (high 32 bits) and the offset or element index in it (low 32);
// handle 0 is the fill value. An arena is safe for concurrent use. It
// reaches the codecs as an argument of the operation (Chain.Prepare with
// PrepareOptions.VLen), never through metadata.
type VLenArena struct {
	fill  []byte
	limit int

	mu    sync.RWMutex
	segs  []vlenSeg
	bytes atomic.Int64 // decoded chunk bytes kept so far
}

// vlenSeg is one segment: an encoded chunk (raw), or a slice of the
// caller's strings or byte strings to write.
type vlenSeg struct {
	raw   []byte
	strs  []string
	blobs [][]byte
}

// maxSegElems is how many caller values one segment takes (the index
// must fit the handle's low 32 bits).
const maxSegElems = min(1<<31, math.MaxInt)

// NewVLenArena returns an arena whose handle 0 is fill (the fill value's
// content) and whose decoded chunks may hold at most chunkBytes of content
// each (0: DefaultVLenChunkBytes; at most 4 GiB less the counts).
func NewVLenArena(fill []byte, chunkBytes int64) *VLenArena {
	if chunkBytes <= 0 {
		chunkBytes = DefaultVLenChunkBytes
	}
	return &VLenArena{fill: fill, limit: int(min(chunkBytes, math.MaxUint32/2, math.MaxInt)),
		segs: make([]vlenSeg, 1)}
}

// Release drops every value the arena holds but the fill value: the
// decoded chunks and the caller's values of a write batch that is over.
// Their handles name nothing afterwards.
func (a *VLenArena) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.segs[1:])
}

// addRaw keeps a copy of the encoded chunk src and returns its segment.
func (a *VLenArena) addRaw(src []byte) uint64 {
	raw := make([]byte, len(src))
	copy(raw, src)
	a.bytes.Add(int64(len(raw)))
	return a.add(vlenSeg{raw: raw})
}

// Bytes returns how many bytes of decoded chunks the arena has taken in
// all (released ones included).
func (a *VLenArena) Bytes() int64 { return a.bytes.Load() }

func (a *VLenArena) add(s vlenSeg) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.segs = append(a.segs, s)
	return uint64(len(a.segs) - 1)
}

// PutStrings writes the handles of ss into dst (8 bytes each, little-
// endian), keeping ss (not a copy: it must not change until the write is
// over). Values equal to the fill value get handle 0, so chunks of fill
// are recognised as empty.
func (a *VLenArena) PutStrings(dst []byte, ss []string) {
	for len(ss) > 0 {
		part := ss[:min(len(ss), maxSegElems)]
		seg := a.add(vlenSeg{strs: part})
		for i, s := range part {
			h := seg<<32 | uint64(i)
			if len(s) == len(a.fill) && s == string(a.fill) {
				h = 0
			}
			binary.LittleEndian.PutUint64(dst[8*i:], h)
		}
		ss, dst = ss[len(part):], dst[8*len(part):]
	}
}

// PutBytes is PutStrings for byte strings.
func (a *VLenArena) PutBytes(dst []byte, bs [][]byte) {
	for len(bs) > 0 {
		part := bs[:min(len(bs), maxSegElems)]
		seg := a.add(vlenSeg{blobs: part})
		for i, b := range part {
			h := seg<<32 | uint64(i)
			if len(b) == len(a.fill) && string(b) == string(a.fill) {
				h = 0
			}
			binary.LittleEndian.PutUint64(dst[8*i:], h)
		}
		bs, dst = bs[len(part):], dst[8*len(part):]
	}
}

// errHandle reports a handle that names no value of the arena.
var errHandle = fmt.Errorf("%w: handle of no value (the chunk was not decoded by this read's arena)", ErrCorrupt)

// valueLocked returns the bytes handle h names (read-only), with a.mu held.
func (a *VLenArena) valueLocked(h uint64) ([]byte, error) {
	if h == 0 {
		return a.fill, nil
	}
	seg, off := h>>32, h&(1<<32-1)
	if seg >= uint64(len(a.segs)) {
		return nil, errHandle
	}
	s := &a.segs[seg]
	switch {
	case s.raw != nil:
		if off+4 > uint64(len(s.raw)) {
			return nil, errHandle
		}
		l := uint64(binary.LittleEndian.Uint32(s.raw[off:]))
		if l > uint64(len(s.raw))-off-4 {
			return nil, errHandle
		}
		return s.raw[off+4 : off+4+l : off+4+l], nil
	case s.strs != nil:
		if off >= uint64(len(s.strs)) {
			return nil, errHandle
		}
		str := s.strs[off]
		return unsafeBytes(str), nil
	case s.blobs != nil:
		if off >= uint64(len(s.blobs)) {
			return nil, errHandle
		}
		return s.blobs[off], nil
	}
	return nil, errHandle
}
