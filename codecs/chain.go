package codecs

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Chain is an array's codec pipeline resolved for one chunk representation:
// kinds checked, intermediate representations and size bounds computed once.
// A Chain is immutable and safe for concurrent use.
//
// A Chain is the prepared value of its codecs: Prepare resolves them once
// per array and chunk shape (and per operation, for the options it takes),
// each array->bytes codec prepares itself (ArrayToBytesPreparer), and what
// the chain can do is worked out then and kept (Capabilities), so nothing
// is resolved again per chunk.
type Chain struct {
	built    []Codec // the codecs as given to Prepare, for preparing again
	codecs   []Codec
	a2a      []ArrayToArray
	a2aReprs []ChunkRepr // a2aReprs[i] is the decoded repr a2a[i] sees
	a2b      ArrayToBytes
	a2bRepr  ChunkRepr
	a2bP     PreparedArrayToBytes // a2b prepared for a2bRepr
	b2b      []BytesToBytes
	// limits[i] bounds the size of b2b[i]'s decoded output (the encoded
	// size of everything before it in the chain).
	limits []int
	repr   ChunkRepr
	caps   Capabilities
}

// NewChain builds the codecs that specs name and resolves them for chunks of
// repr. Errors wrap ErrUnknownCodec or ErrInvalidConfig.
func NewChain(specs []Spec, repr ChunkRepr) (*Chain, error) {
	cs := make([]Codec, 0, len(specs))
	for _, s := range specs {
		c, err := New(s)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return Prepare(cs, repr, PrepareOptions{})
}

// Prepare resolves already-built codecs for chunks of repr and the
// operation opts: kinds and order checked, representations and size bounds
// computed, the array->bytes codec prepared (which checks that it fits
// the representation it will see), capabilities found. A bytes->bytes
// codec before the array->bytes codec that is an ArrayToArrayForm is used
// in its array->array form. Errors wrap ErrInvalidConfig.
func Prepare(cs []Codec, repr ChunkRepr, opts PrepareOptions) (*Chain, error) {
	c := &Chain{repr: repr, built: cs}
	if !repr.DType.Valid() {
		return nil, fmt.Errorf("%w: invalid data type", ErrInvalidConfig)
	}
	if len(repr.Fill) != repr.DType.Size() {
		return nil, fmt.Errorf("%w: fill value has %d bytes, data type %s needs %d",
			ErrInvalidConfig, len(repr.Fill), repr.DType, repr.DType.Size())
	}
	cur := repr
	for i, codec := range cs {
		if f, ok := codec.(ArrayToArrayForm); ok && c.a2b == nil {
			// A numcodecs filter before the array->bytes codec.
			a, err := f.AsArrayToArray()
			if err != nil {
				return nil, fmt.Errorf("codec %s: %w", codec.Name(), err)
			}
			codec = a
		}
		switch k := codec.(type) {
		case ArrayToArray:
			if c.a2b != nil {
				return nil, fmt.Errorf("%w: array->array codec %q after the array->bytes codec", ErrInvalidConfig, codec.Name())
			}
			next, err := k.EncodedRepr(cur)
			if err != nil {
				return nil, fmt.Errorf("codec %s: %w", codec.Name(), err)
			}
			c.a2a = append(c.a2a, k)
			c.a2aReprs = append(c.a2aReprs, cur)
			cur = next
		case ArrayToBytes:
			if c.a2b != nil {
				return nil, fmt.Errorf("%w: second array->bytes codec %q (position %d)", ErrInvalidConfig, codec.Name(), i)
			}
			p, err := prepareArrayToBytes(k, cur, opts)
			if err != nil {
				return nil, nameCodec(codec.Name(), err)
			}
			c.a2b, c.a2bRepr, c.a2bP = k, cur, p
		case BytesToBytes:
			if c.a2b == nil {
				return nil, fmt.Errorf("%w: bytes->bytes codec %q before the array->bytes codec", ErrInvalidConfig, codec.Name())
			}
			if ts, ok := k.(TypeSizer); ok {
				k = ts.WithTypeSize(c.a2bRepr.DType.Size())
				codec = k
			}
			c.b2b = append(c.b2b, k)
		default:
			return nil, fmt.Errorf("%w: codec %q is of no known kind", ErrInvalidConfig, codec.Name())
		}
		c.codecs = append(c.codecs, codec)
	}
	if c.a2b == nil {
		return nil, fmt.Errorf("%w: no array->bytes codec (such as \"bytes\")", ErrInvalidConfig)
	}
	n := c.a2bP.MaxEncodedSize()
	for _, b := range c.b2b {
		c.limits = append(c.limits, n)
		n = b.MaxEncodedSize(n)
	}
	c.caps = c.capabilities()
	return c, nil
}

// Prepare returns the chain's codecs prepared again, for chunks of repr
// and the operation opts: another chunk shape of a rectilinear grid, or a
// string read's arena (PrepareOptions.VLen). The receiver is left as it
// is, so an array's own chain stays unbound.
func (c *Chain) Prepare(repr ChunkRepr, opts PrepareOptions) (*Chain, error) {
	return Prepare(c.built, repr, opts)
}

// nameCodec prefixes err with the codec's name unless its text already
// names it: the name once in a configuration error.
func nameCodec(name string, err error) error {
	if msg := err.Error(); strings.Contains(msg, name+":") || strings.Contains(msg, name+" ") {
		return err
	}
	return fmt.Errorf("codec %s: %w", name, err)
}

// CheckEncode reports whether the chain can encode: nil, or the first
// error of a codec that is an EncodeChecker (wrapping ErrInvalidConfig,
// such as a compression level out of range). Decoding never needs it;
// writers may call it once at setup rather than meet the error on the
// first Encode.
func (c *Chain) CheckEncode() error {
	for _, codec := range c.codecs {
		if ec, ok := codec.(EncodeChecker); ok {
			if err := ec.CheckEncode(); err != nil {
				return fmt.Errorf("codec %s: %w", codec.Name(), err)
			}
		}
	}
	return nil
}

// Repr returns the decoded chunk representation the chain was resolved for.
func (c *Chain) Repr() ChunkRepr { return c.repr }

// Codecs returns the chain's codecs in encoding order.
func (c *Chain) Codecs() []Codec { return c.codecs }

// ArrayToBytes returns the chain's array->bytes codec.
func (c *Chain) ArrayToBytes() ArrayToBytes { return c.a2b }

// ArrayToArrayCount returns how many array->array codecs precede it.
func (c *Chain) ArrayToArrayCount() int { return len(c.a2a) }

// BytesToBytesCount returns how many bytes->bytes codecs follow it.
func (c *Chain) BytesToBytesCount() int { return len(c.b2b) }

// Specs returns the metadata form of the chain.
func (c *Chain) Specs() ([]Spec, error) {
	out := make([]Spec, len(c.codecs))
	for i, codec := range c.codecs {
		s, err := SpecOf(codec)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// PreparedArrayToBytes returns the chain's array->bytes codec as prepared
// for the representation it sees: for the package that implements the
// codec, the value it made (sharding's layout).
func (c *Chain) PreparedArrayToBytes() PreparedArrayToBytes { return c.a2bP }

// MaxEncodedSize returns an upper bound on the size of an encoded chunk.
func (c *Chain) MaxEncodedSize() int {
	if len(c.b2b) == 0 {
		return c.a2bP.MaxEncodedSize()
	}
	return c.b2b[len(c.b2b)-1].MaxEncodedSize(c.limits[len(c.limits)-1])
}

// Identity reports whether an encoded chunk is byte for byte its decoded
// form (only "bytes" with little-endian or single-byte elements), so a
// reader may read it straight into its destination: Capabilities().Identity.
func (c *Chain) Identity() bool { return c.caps.Identity }

// Decode decodes the encoded chunk src into dst, which must hold exactly
// Repr().NumBytes() bytes. dst and src must not overlap. Decoders may use
// dst's spare capacity (bytes past len(dst)) as scratch: pass dst[:n:n]
// when those bytes belong to someone else, and give scratch buffers
// DecodeSlack spare bytes for speed. Where the chain
// allows (no array->array codec, an array->bytes codec whose Capabilities say InPlace), the
// last bytes->bytes decoder writes straight into dst with no extra copy.
func (c *Chain) Decode(dst, src []byte) error {
	if len(dst) != c.repr.NumBytes() {
		return fmt.Errorf("codecs: Decode into %d bytes, chunk has %d", len(dst), c.repr.NumBytes())
	}
	data := src
	var scratch [2]*[]byte
	defer func() {
		for _, s := range scratch {
			if s != nil {
				putBuf(s)
			}
		}
	}()
	direct := c.caps.InPlace
	for i := len(c.b2b) - 1; i >= 0; i-- {
		var out []byte
		var err error
		if i == 0 && direct {
			out, err = c.b2b[i].Decode(dst[:0], data, c.limits[i])
			if err == nil && len(out) == len(dst) && len(out) > 0 && unsafe.SliceData(out) == unsafe.SliceData(dst) {
				return c.a2bP.Decode(dst, dst)
			}
		} else {
			s := scratch[i%2]
			if s == nil {
				s = getBuf()
				scratch[i%2] = s
			}
			out, err = c.b2b[i].Decode((*s)[:0], data, c.limits[i])
			*s = out[:0]
		}
		if err != nil {
			return fmt.Errorf("codec %s: %w", c.b2b[i].Name(), err)
		}
		data = out
	}
	if len(c.a2a) == 0 {
		return c.a2bP.Decode(dst, data)
	}
	// Array->array codecs: decode through scratch, the last one into dst.
	n := c.a2bRepr.NumBytes()
	bufA := getBuf()
	defer putBuf(bufA)
	cur := grow(bufA, n)
	if err := c.a2bP.Decode(cur, data); err != nil {
		return fmt.Errorf("codec %s: %w", c.a2b.Name(), err)
	}
	bufB := getBuf()
	defer putBuf(bufB)
	for i := len(c.a2a) - 1; i >= 0; i-- {
		var out []byte
		if i == 0 {
			out = dst
		} else {
			out = grow(bufB, c.a2aReprs[i].NumBytes())
		}
		if err := c.a2a[i].Decode(out, cur, c.a2aReprs[i]); err != nil {
			return fmt.Errorf("codec %s: %w", c.a2a[i].Name(), err)
		}
		bufA, bufB = bufB, bufA
		cur = out
	}
	return nil
}

// DecodeNew decodes the encoded chunk src into a new buffer of exactly
// Repr().NumBytes() bytes (and capacity), for callers that keep the result
// (a chunk cache). A chunk small next to DecodeSlack is decoded into pooled
// scratch with that spare room and copied out, which costs less than
// decoding without it; a large one (2 MiB and more) is decoded with the
// spare room at the end of the new buffer, trimmed from its capacity (at
// most 6% more memory than its length).
func (c *Chain) DecodeNew(src []byte) ([]byte, error) {
	n := c.repr.NumBytes()
	if c.caps.Identity {
		out := make([]byte, n)
		if err := c.Decode(out, src); err != nil {
			return nil, err
		}
		return out, nil
	}
	if n >= 16*DecodeSlack {
		out := make([]byte, n, n+DecodeSlack)
		if err := c.Decode(out, src); err != nil {
			return nil, err
		}
		return out[:n:n], nil
	}
	s := getBuf()
	defer putBuf(s)
	if cap(*s) < n+DecodeSlack {
		*s = make([]byte, 0, n+DecodeSlack)
	}
	buf := (*s)[:n]
	if err := c.Decode(buf, src); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	copy(out, buf)
	return out, nil
}

// Encode appends the encoding of the decoded chunk src (Repr().NumBytes()
// bytes) to dst.
func (c *Chain) Encode(dst, src []byte) ([]byte, error) {
	if len(src) != c.repr.NumBytes() {
		return nil, fmt.Errorf("codecs: Encode of %d bytes, chunk has %d", len(src), c.repr.NumBytes())
	}
	cur := src
	var held []*[]byte
	defer func() {
		for _, h := range held {
			putBuf(h)
		}
	}()
	for i, a := range c.a2a {
		b := getBuf()
		held = append(held, b)
		next := c.a2bRepr
		if i+1 < len(c.a2a) {
			next = c.a2aReprs[i+1]
		}
		out := grow(b, next.NumBytes())
		if err := a.Encode(out, cur, c.a2aReprs[i]); err != nil {
			return nil, fmt.Errorf("codec %s: %w", a.Name(), err)
		}
		cur = out
	}
	if len(c.b2b) == 0 {
		out, err := c.a2bP.Encode(dst, cur)
		if err != nil {
			return nil, fmt.Errorf("codec %s: %w", c.a2b.Name(), err)
		}
		return out, nil
	}
	b := getBuf()
	held = append(held, b)
	enc, err := c.a2bP.Encode((*b)[:0], cur)
	if err != nil {
		return nil, fmt.Errorf("codec %s: %w", c.a2b.Name(), err)
	}
	*b = enc[:0]
	cur = enc
	for i, bb := range c.b2b {
		var out []byte
		if i == len(c.b2b)-1 {
			out, err = bb.Encode(dst, cur)
		} else {
			nb := getBuf()
			held = append(held, nb)
			out, err = bb.Encode((*nb)[:0], cur)
			*nb = out[:0]
		}
		if err != nil {
			return nil, fmt.Errorf("codec %s: %w", bb.Name(), err)
		}
		cur = out
	}
	return cur, nil
}

// bufPool holds scratch buffers for the chain. Buffers over maxPooled are
// dropped rather than kept, so one huge chunk does not pin memory.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 64 << 20

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		*b = nil
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// grow sets *b to a slice of length n, reusing its memory when large enough.
func grow(b *[]byte, n int) []byte {
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return *b
}
