// Package codecs holds the Zarr v3 codec interfaces, the registry of codecs
// by name, the resolved codec Chain of an array, and the core codecs:
// bytes, transpose, gzip, zstd and crc32c. Blosc lives in codecs/blosc and
// sharding_indexed in package sharding; both register themselves here.
//
// A codec is one of three kinds, applied in this order when encoding:
// zero or more ArrayToArray codecs, exactly one ArrayToBytes codec, then zero
// or more BytesToBytes codecs. Decoding runs the chain backwards. A
// BytesToBytes codec that is an ArrayToArrayForm (numcodecs.delta) may
// also come before the ArrayToBytes codec, where it acts on the array.
//
// Decoded chunks are held in memory in C order with every element
// little-endian (see package dtype). All codecs are safe for concurrent use.
package codecs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/gozarr/gozarr/dtype"
)

// Sentinel errors, wrapped with context by codecs.
var (
	// ErrCorrupt reports encoded data that cannot be decoded: truncated,
	// malformed, or decoding to more or fewer bytes than the chunk holds.
	ErrCorrupt = errors.New("corrupt chunk data")
	// ErrChecksum reports a checksum mismatch (crc32c, zstd content checksum).
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnknownCodec reports a codec name with no registered factory.
	ErrUnknownCodec = errors.New("unknown codec")
	// ErrInvalidConfig reports a codec configuration that is malformed or
	// does not fit the chunk it applies to (wrong kind order, bad
	// permutation, unknown option, ...).
	ErrInvalidConfig = errors.New("invalid codec configuration")
)

// LimitError reports decoded data over the limit a decoder was given:
// the chain's bound for the chunk. It comes wrapped with ErrCorrupt, since
// for a fixed-size data type the bound is the chunk's own size; for
// variable-length elements the bound is a configured limit (a chunk's
// content, DefaultVLenChunkBytes unless raised), so a valid chunk may be
// over it, and readers of such arrays tell "over a limit" apart with
// errors.As.
type LimitError struct {
	Codec string // the codec whose output is too long ("": the caller names it)
	What  string // what is too long ("": "decoded data")
	Limit int    // the bound it was given, in bytes
}

func (e *LimitError) Error() string {
	what := cmp.Or(e.What, "decoded data")
	if e.Codec == "" {
		return fmt.Sprintf("%s exceeds the limit of %d bytes", what, e.Limit)
	}
	return fmt.Sprintf("%s: %s exceeds the limit of %d bytes", e.Codec, what, e.Limit)
}

// overLimit is ErrCorrupt with a *LimitError of codec and limit.
func overLimit(codec string, limit int) error {
	return fmt.Errorf("%w: %w", ErrCorrupt, &LimitError{Codec: codec, Limit: limit})
}

// DecodeSlack is how many spare bytes of capacity past a decoded chunk let
// the zstd decoder run its fast copy loops (which may write scratch bytes
// past the end of the output) instead of its bounds-exact ones: about a
// third less CPU. Scratch buffers that chunks decode into are allocated
// with this much spare capacity; a caller's output, whose bytes past the
// chunk belong to other chunks, is passed capped (dst[:n:n]).
const DecodeSlack = 128<<10 + 64

// ChunkRepr describes a chunk as an array: its shape, data type and fill
// value. Codecs receive the representation of their input (when encoding)
// or output (when decoding).
type ChunkRepr struct {
	Shape []int
	DType dtype.DataType
	// Fill is one element of the fill value in memory representation
	// (little-endian); len(Fill) == DType.Size().
	Fill []byte
}

// NumElements returns the number of elements in the chunk (1 for shape []).
func (r ChunkRepr) NumElements() int {
	n := 1
	for _, s := range r.Shape {
		n *= s
	}
	return n
}

// NumBytes returns the size of the decoded chunk in bytes.
func (r ChunkRepr) NumBytes() int { return r.NumElements() * r.DType.Size() }

// Codec is what every codec is. Name is the name the codec is registered
// under and written in metadata; Configuration returns the value written as
// its "configuration" (nil for none), which must marshal to JSON.
type Codec interface {
	Name() string
	Configuration() any
}

// ArrayToArray is a codec that turns an array into another array
// (transpose, numcodecs.delta before "bytes").
type ArrayToArray interface {
	Codec
	// EncodedRepr returns the representation Encode produces from decoded.
	EncodedRepr(decoded ChunkRepr) (ChunkRepr, error)
	// Encode writes the encoding of src (decoded.NumBytes() bytes) into
	// dst (EncodedRepr(decoded).NumBytes() bytes). They do not overlap.
	Encode(dst, src []byte, decoded ChunkRepr) error
	// Decode writes the decoding of src (EncodedRepr(decoded).NumBytes()
	// bytes) into dst (decoded.NumBytes() bytes). They do not overlap.
	Decode(dst, src []byte, decoded ChunkRepr) error
}

// ArrayToArrayForm is implemented by BytesToBytes codecs that are
// array->array codecs when they come before the array->bytes codec: the
// numcodecs filters, which Zarr v2 applies to the serialised chunk (so
// zarr.ArrayMetadataV2.ToV3 places them after "bytes") and zarr-python 3
// writes before "bytes" in v3 metadata. Prepare uses the form
// AsArrayToArray returns in that position; its Name and Configuration are
// the codec's own.
type ArrayToArrayForm interface {
	AsArrayToArray() (ArrayToArray, error)
}

// ArrayToBytes is the codec that serialises an array (bytes, sharding_indexed).
type ArrayToBytes interface {
	Codec
	// Encode appends the encoding of the chunk src (repr.NumBytes() bytes)
	// to dst and returns the extended slice.
	Encode(dst, src []byte, repr ChunkRepr) ([]byte, error)
	// Decode decodes src into dst, which holds exactly repr.NumBytes()
	// bytes. Input that does not decode to exactly that is ErrCorrupt.
	Decode(dst, src []byte, repr ChunkRepr) error
	// MaxEncodedSize returns an upper bound on the size of an encoded
	// chunk of repr; decoders use it to refuse oversized input.
	MaxEncodedSize(repr ChunkRepr) int
}

// BytesToBytes is a codec that turns bytes into bytes (gzip, zstd, crc32c,
// blosc).
type BytesToBytes interface {
	Codec
	// Encode appends the encoding of src to dst.
	Encode(dst, src []byte) ([]byte, error)
	// Decode appends the decoding of src to dst and returns the extended
	// slice. When cap(dst)-len(dst) is large enough the result must use
	// dst's memory (so a chain can decode into the caller's buffer). It
	// may write anywhere in dst's spare capacity (see DecodeSlack).
	// Decoded output longer than limit bytes is ErrCorrupt, detected
	// before more than limit bytes are allocated (no decompression bombs).
	Decode(dst, src []byte, limit int) ([]byte, error)
	// MaxEncodedSize returns an upper bound on the encoded size of n bytes.
	MaxEncodedSize(n int) int
}

// EncodeChecker is implemented by codecs whose configuration may be fine
// for reading but not for writing: a compression level only matters to the
// encoder, so a level out of the encoder's range (gzip -1, zstd 100, as
// other writers store them) is accepted when the codec is built and
// decodes, and CheckEncode, like every Encode, reports it as
// ErrInvalidConfig (or, for a codec with no encoder, its own error).
// Chain.CheckEncode asks every codec of a chain.
type EncodeChecker interface {
	CheckEncode() error
}

// CheckLevel returns nil when level is in lo..hi, else an error wrapping
// ErrInvalidConfig that names the codec and its range: what a codec's
// CheckEncode and Encode return for a level it can only decode with.
func CheckLevel(codec, key string, level, lo, hi int) error {
	if level < lo || level > hi {
		return fmt.Errorf("%w: %s: %s %d is not in %d..%d, needed to encode (decoding ignores it)",
			ErrInvalidConfig, codec, key, level, lo, hi)
	}
	return nil
}

// TypeSizer is implemented by BytesToBytes codecs that want to know the
// element size of the data they will see (blosc's typesize). The chain calls
// WithTypeSize once when it is resolved and uses the codec it returns.
type TypeSizer interface {
	WithTypeSize(size int) BytesToBytes
}

// Spec is a codec as written in metadata: {"name": ..., "configuration":
// {...}}. A bare JSON string is accepted as a name with no configuration.
type Spec struct {
	Name          string          `json:"name"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
	// MustUnderstand is false only when the metadata says
	// "must_understand": false; such an unknown codec is an error all the
	// same, since a chunk cannot be decoded without it.
	MustUnderstand *bool `json:"must_understand,omitempty"`
}

// UnmarshalJSON accepts an object or a bare name.
func (s *Spec) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '"' {
		*s = Spec{}
		return json.Unmarshal(t, &s.Name)
	}
	type plain Spec
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if p.Name == "" {
		return fmt.Errorf("%w: codec without a name", ErrInvalidConfig)
	}
	*s = Spec(p)
	return nil
}

// SpecOf returns the metadata Spec of a codec.
func SpecOf(c Codec) (Spec, error) {
	s := Spec{Name: c.Name()}
	if cfg := c.Configuration(); cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			return Spec{}, fmt.Errorf("codec %s: %w", c.Name(), err)
		}
		s.Configuration = b
	}
	return s, nil
}

// Factory builds a codec from its JSON configuration (nil when absent).
type Factory func(configuration json.RawMessage) (Codec, error)

var registry = struct {
	sync.RWMutex
	m map[string]Factory
}{m: map[string]Factory{}}

// Register makes a codec available by name. It is meant for init
// functions and is safe for concurrent use. A name registered twice is a
// programming error (which of two packages' codecs reads an array would
// depend on init order), so Register panics; a package that replaces a
// codec on purpose (an alternative implementation) calls Replace.
func Register(name string, f Factory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic(fmt.Sprintf("codecs: Register called twice for %q (use Replace to replace a codec)", name))
	}
	registry.m[name] = f
}

// Replace registers f under name in place of the factory registered there,
// and returns that one (nil if none): an alternative implementation
// (codecs/zstdc for "zstd") replaces a codec, and may build on the one it
// replaces. It is safe for concurrent use.
func Replace(name string, f Factory) (previous Factory) {
	registry.Lock()
	defer registry.Unlock()
	previous = registry.m[name]
	registry.m[name] = f
	return previous
}

// Lookup returns the factory registered under name, if any.
func Lookup(name string) (Factory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.m[name]
	return f, ok
}

// Registered returns the registered codec names, sorted.
func Registered() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the codec a Spec names.
func New(s Spec) (Codec, error) {
	registry.RLock()
	f := registry.m[s.Name]
	registry.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w: %q (registered: %v)", ErrUnknownCodec, s.Name, Registered())
	}
	c, err := f(s.Configuration)
	if err != nil {
		return nil, nameCodec(s.Name, err) // once, if the factory named it
	}
	return c, nil
}

// DecodeConfig unmarshals a codec configuration into v, refusing unknown
// fields; a nil configuration leaves v as it is. Errors wrap ErrInvalidConfig.
func DecodeConfig(configuration json.RawMessage, v any) error {
	if len(configuration) == 0 || string(bytes.TrimSpace(configuration)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(configuration))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return nil
}
