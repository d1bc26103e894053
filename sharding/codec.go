package sharding

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs"
)

// Name is the codec's registered and metadata name.
const Name = "sharding_indexed"

// Sentinel errors of the package.
var (
	// ErrCorruptIndex reports a shard index that cannot be right: of the
	// wrong size (the shard is shorter than its index, for one), an entry
	// pointing outside the shard or into the index, an offset or length
	// that overflows, an entry with only one of its two halves 2^64-1.
	// It wraps codecs.ErrCorrupt.
	ErrCorruptIndex = fmt.Errorf("corrupt shard index: %w", codecs.ErrCorrupt)
	// ErrSelection reports a selection or destination that does not fit
	// a shard (Layout.CheckSelection; a programming error of the caller).
	ErrSelection = errors.New("sharding: selection does not fit the shard")
)

func init() {
	codecs.Register(Name, func(cfg json.RawMessage) (codecs.Codec, error) {
		var c config
		if len(cfg) == 0 {
			return nil, fmt.Errorf("%w: sharding_indexed needs a configuration", codecs.ErrInvalidConfig)
		}
		if err := codecs.DecodeConfig(cfg, &c); err != nil {
			return nil, err
		}
		if c.ChunkShape == nil {
			return nil, fmt.Errorf("%w: sharding_indexed: chunk_shape missing", codecs.ErrInvalidConfig)
		}
		if c.Codecs == nil {
			return nil, fmt.Errorf("%w: sharding_indexed: codecs missing", codecs.ErrInvalidConfig)
		}
		if c.IndexCodecs == nil {
			return nil, fmt.Errorf("%w: sharding_indexed: index_codecs missing", codecs.ErrInvalidConfig)
		}
		loc := c.IndexLocation
		if loc == "" {
			loc = IndexEnd
		}
		return New(c.ChunkShape, c.Codecs, c.IndexCodecs, loc)
	})
}

// IndexLocation is where a shard's index sits: IndexEnd (the default) or
// IndexStart.
type IndexLocation string

// The two index locations.
const (
	IndexEnd   IndexLocation = "end"
	IndexStart IndexLocation = "start"
)

// config is the JSON configuration of the codec.
type config struct {
	ChunkShape    []int         `json:"chunk_shape"`
	Codecs        []codecs.Spec `json:"codecs"`
	IndexCodecs   []codecs.Spec `json:"index_codecs"`
	IndexLocation IndexLocation `json:"index_location,omitempty"`
}

// Codec is the sharding_indexed codec: a codecs.ArrayToBytes that stores a
// shard's inner chunks, each encoded with the inner codecs, plus an index
// encoded with the index codecs. It is registered in init under Name.
//
// Its configuration: chunk_shape (the inner chunk shape, dividing the shard
// shape), codecs (the inner chain: any codecs, nested sharding included),
// index_codecs (a chain of fixed encoded size; bytes + crc32c is the usual
// one), index_location "start" or "end" (default "end").
//
// A Codec is immutable and safe for concurrent use. A chain prepares it
// (codecs.ArrayToBytesPreparer) into the Layout of its shard
// representation, inner chain and nested layouts included, once; the
// Encode, Decode and MaxEncodedSize that take a representation resolve a
// Layout on every call.
type Codec struct {
	chunkShape []int
	innerSpecs []codecs.Spec
	indexSpecs []codecs.Spec
	inner      []codecs.Codec
	index      []codecs.Codec
	loc        IndexLocation
}

// New builds a sharding_indexed codec with inner chunks of chunkShape,
// inner codecs inner, index codecs index, and the index at loc (IndexEnd
// when empty). Errors wrap codecs.ErrInvalidConfig or codecs.ErrUnknownCodec.
func New(chunkShape []int, inner, index []codecs.Spec, loc IndexLocation) (*Codec, error) {
	if loc == "" {
		loc = IndexEnd
	}
	if loc != IndexEnd && loc != IndexStart {
		return nil, fmt.Errorf("%w: sharding_indexed: index_location %q (want \"start\" or \"end\")", codecs.ErrInvalidConfig, loc)
	}
	for d, s := range chunkShape {
		if s <= 0 {
			return nil, fmt.Errorf("%w: sharding_indexed: chunk_shape[%d] = %d (must be positive)", codecs.ErrInvalidConfig, d, s)
		}
	}
	if len(inner) == 0 {
		return nil, fmt.Errorf("%w: sharding_indexed: empty codecs", codecs.ErrInvalidConfig)
	}
	if len(index) == 0 {
		return nil, fmt.Errorf("%w: sharding_indexed: empty index_codecs", codecs.ErrInvalidConfig)
	}
	c := &Codec{
		chunkShape: append([]int{}, chunkShape...),
		innerSpecs: append([]codecs.Spec(nil), inner...),
		indexSpecs: append([]codecs.Spec(nil), index...),
		loc:        loc,
	}
	for _, s := range inner {
		k, err := codecs.New(s)
		if err != nil {
			return nil, fmt.Errorf("sharding_indexed codecs: %w", err)
		}
		c.inner = append(c.inner, k)
	}
	for _, s := range index {
		k, err := codecs.New(s)
		if err != nil {
			return nil, fmt.Errorf("sharding_indexed index_codecs: %w", err)
		}
		c.index = append(c.index, k)
	}
	return c, nil
}

// Name returns "sharding_indexed".
func (c *Codec) Name() string { return Name }

// Configuration returns the codec's configuration, index_location included.
func (c *Codec) Configuration() any {
	return config{ChunkShape: c.chunkShape, Codecs: c.innerSpecs, IndexCodecs: c.indexSpecs, IndexLocation: c.loc}
}

// ChunkShape returns the inner chunk shape (a copy).
func (c *Codec) ChunkShape() []int { return append([]int{}, c.chunkShape...) }

// InnerSpecs returns the inner codecs as written in metadata (a copy).
func (c *Codec) InnerSpecs() []codecs.Spec { return append([]codecs.Spec(nil), c.innerSpecs...) }

// IndexSpecs returns the index codecs as written in metadata (a copy).
func (c *Codec) IndexSpecs() []codecs.Spec { return append([]codecs.Spec(nil), c.indexSpecs...) }

// IndexLocation returns where the index sits in a shard.
func (c *Codec) IndexLocation() IndexLocation { return c.loc }

// PrepareArrayToBytes implements codecs.ArrayToBytesPreparer: the Layout
// of shards of repr, its inner chain prepared with opts (and through it
// every nested level). Its Capabilities declare PartialDecode.
func (c *Codec) PrepareArrayToBytes(repr codecs.ChunkRepr, opts codecs.PrepareOptions) (codecs.PreparedArrayToBytes, error) {
	l, err := c.prepare(repr, opts)
	if err != nil {
		return nil, err
	}
	return prepared{l}, nil
}

// prepared is a Layout as a codecs.PreparedArrayToBytes.
type prepared struct{ l *Layout }

func (p prepared) Capabilities() codecs.Capabilities {
	return codecs.Capabilities{PartialDecode: true}
}
func (p prepared) MaxEncodedSize() int { return p.l.MaxEncodedSize() }
func (p prepared) Decode(dst, src []byte) error {
	return p.l.DecodeShard(dst, src)
}
func (p prepared) Encode(dst, src []byte) ([]byte, error) {
	out, _, err := p.l.EncodeShard(dst, src)
	return out, err
}

// Encode appends the encoded shard src (repr.NumBytes() bytes, C order) to
// dst. Inner chunks equal to the fill value are omitted. A shard whose
// inner chunks are all fill encodes to an index with only empty entries, a
// valid shard; callers that delete such shards instead (as zarr-python
// does) use Layout.EncodeShard, which reports it.
func (c *Codec) Encode(dst, src []byte, repr codecs.ChunkRepr) ([]byte, error) {
	l, err := c.Layout(repr)
	if err != nil {
		return nil, err
	}
	out, _, err := l.EncodeShard(dst, src)
	return out, err
}

// Decode decodes the whole shard src into dst (repr.NumBytes() bytes),
// validating the index against the shard's size. Missing inner chunks read
// as the fill value.
func (c *Codec) Decode(dst, src []byte, repr codecs.ChunkRepr) error {
	l, err := c.Layout(repr)
	if err != nil {
		return err
	}
	return l.DecodeShard(dst, src)
}

// MaxEncodedSize returns the index size plus the inner chain's bound for
// every inner chunk (saturating at math.MaxInt), or math.MaxInt when repr
// does not fit the codec.
func (c *Codec) MaxEncodedSize(repr codecs.ChunkRepr) int {
	l, err := c.Layout(repr)
	if err != nil {
		return math.MaxInt
	}
	return l.MaxEncodedSize()
}

// LayoutOf returns the shard layout of a chain that is sharding_indexed
// alone (its Capabilities().PartialDecode), as the chain prepared it for
// its chunk (shard) representation, or nil when the chain is anything
// else. The error is always nil (the chain was prepared already).
func LayoutOf(chain *codecs.Chain) (*Layout, error) {
	p, ok := chain.PreparedArrayToBytes().(prepared)
	if !ok || !chain.Capabilities().PartialDecode {
		return nil, nil
	}
	return p.l, nil
}
