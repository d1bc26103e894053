// Package blosc implements Blosc1 frames (the format of c-blosc 1.x) in
// pure Go, and the Zarr v3 "blosc" codec built on them (the Blosc
// compressor Zarr v2 arrays name stores the same frames).
//
// Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/
//
// JSON name "blosc"; configuration as zarr-python writes it:
//
//	{"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4",
//	 "clevel": 5, "shuffle": "shuffle", "blocksize": 0}}
//
// Decompress decodes any frame c-blosc 1.21 reads (inner codecs blosclz,
// lz4/lz4hc, snappy, zlib and zstd; byte and bit shuffle; split and whole
// blocks) into a caller's buffer; Compress writes frames with the block
// sizes and split choices c-blosc 1.21 makes; FrameInfo reads a header
// cheaply. Inner codecs: github.com/pierrec/lz4/v4 and
// github.com/klauspost/compress; blosclz is implemented here.
//
// Everything in this package is safe for concurrent use.
package blosc

import (
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
)

func init() {
	codecs.Register("blosc", func(cfg json.RawMessage) (codecs.Codec, error) { return NewCodec(cfg) })
}

// Config is the configuration of the Zarr v3 blosc codec, as written in
// metadata.
type Config struct {
	// Cname is the inner codec (default "zstd", as in zarr-python).
	Cname string `json:"cname"`
	// Clevel is the level, 0..9 (default 5); only encoding needs it in
	// range.
	Clevel int `json:"clevel"`
	// Shuffle is "noshuffle", "shuffle" or "bitshuffle". Absent means
	// zarr-python's choice: "bitshuffle" for 1-byte types, else "shuffle".
	Shuffle string `json:"shuffle,omitempty"`
	// Typesize is the element size; absent (0) means the size of the
	// array's data type, which the codec chain passes in (WithTypeSize).
	Typesize int `json:"typesize,omitempty"`
	// Blocksize forces the block size; 0 (default) means automatic.
	Blocksize int `json:"blocksize"`
}

// Codec is the Zarr v3 blosc codec (a codecs.BytesToBytes). It is
// immutable and safe for concurrent use.
type Codec struct {
	cfg  Config
	opts Options
}

var (
	_ codecs.BytesToBytes = (*Codec)(nil)
	_ codecs.TypeSizer    = (*Codec)(nil)
)

// NewCodec builds a codec from its JSON configuration (nil for all
// defaults). Errors wrap codecs.ErrInvalidConfig and name the field.
func NewCodec(configuration json.RawMessage) (*Codec, error) {
	cfg := Config{Cname: Zstd, Clevel: 5}
	if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
		return nil, err
	}
	return NewCodecFromConfig(cfg)
}

// NewCodecFromConfig builds a codec from a Config. Errors wrap
// codecs.ErrInvalidConfig and name the field. Any clevel is accepted, since
// decoding does not use it; one outside 0..9 makes CheckEncode and Encode
// fail with codecs.ErrInvalidConfig.
func NewCodecFromConfig(cfg Config) (*Codec, error) {
	if _, ok := compCode(cfg.Cname); !ok || cfg.Cname == "" {
		return nil, fmt.Errorf("%w: blosc cname %q (want one of %v)", codecs.ErrInvalidConfig, cfg.Cname, cnames)
	}
	if cfg.Typesize < 0 {
		return nil, fmt.Errorf("%w: blosc typesize %d", codecs.ErrInvalidConfig, cfg.Typesize)
	}
	if cfg.Blocksize < 0 {
		return nil, fmt.Errorf("%w: blosc blocksize %d", codecs.ErrInvalidConfig, cfg.Blocksize)
	}
	c := &Codec{cfg: cfg}
	c.opts = Options{Cname: cfg.Cname, Clevel: cfg.Clevel, Typesize: max(cfg.Typesize, 1), Blocksize: cfg.Blocksize}
	switch cfg.Shuffle {
	case "noshuffle":
		c.opts.Shuffle = NoShuffle
	case "shuffle":
		c.opts.Shuffle = ByteShuffle
	case "bitshuffle":
		c.opts.Shuffle = BitShuffle
	case "":
		c.opts.Shuffle = ByteShuffle
		if c.opts.Typesize == 1 {
			c.opts.Shuffle = BitShuffle
		}
	default:
		return nil, fmt.Errorf("%w: blosc shuffle %q (want noshuffle, shuffle or bitshuffle)", codecs.ErrInvalidConfig, cfg.Shuffle)
	}
	return c, nil
}

// Name returns "blosc".
func (c *Codec) Name() string { return "blosc" }

// Configuration returns the configuration as zarr-python writes it, with
// the shuffle resolved and the type size included once known.
func (c *Codec) Configuration() any {
	cfg := c.cfg
	cfg.Shuffle = c.opts.Shuffle.String()
	return cfg
}

// Options returns the compression options the codec encodes with.
func (c *Codec) Options() Options { return c.opts }

// WithTypeSize returns the codec with its typesize set to size, unless the
// configuration gave one. The chain calls it with the element size.
func (c *Codec) WithTypeSize(size int) codecs.BytesToBytes {
	if c.cfg.Typesize != 0 || size < 1 {
		return c
	}
	cfg := c.cfg
	cfg.Typesize = size
	n, err := NewCodecFromConfig(cfg)
	if err != nil {
		return c
	}
	return n
}

// CheckEncode reports whether the codec can encode: a clevel outside 0..9
// is codecs.ErrInvalidConfig.
func (c *Codec) CheckEncode() error {
	return codecs.CheckLevel("blosc", "clevel", c.cfg.Clevel, 0, 9)
}

// Encode appends the Blosc frame of src to dst.
func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	if err := c.CheckEncode(); err != nil {
		return dst, err
	}
	return Compress(dst, src, c.opts)
}

// Decode appends the decoding of the frame src to dst, in dst's memory
// when its capacity allows; frames announcing more than limit bytes are
// refused before allocation, and bytes after the frame's own size
// (cbytes) are ignored (see Decompress).
func (c *Codec) Decode(dst, src []byte, limit int) ([]byte, error) {
	return Decompress(dst, src, limit)
}

// MaxEncodedSize bounds the size of a stored chunk of n bytes: a frame of
// n + HeaderSize bytes (Compress stores data that does not compress), then
// up to HeaderSize elements (of the type size, at most MaxTypeSize bytes)
// of trailing bytes, which Decode ignores as c-blosc does. Some writers
// store them: z5 writes the frame and BLOSC_MAX_OVERHEAD (16) more bytes,
// its predecessor zarr++ 16 more elements.
func (c *Codec) MaxEncodedSize(n int) int {
	return n + HeaderSize + HeaderSize*min(c.opts.Typesize, MaxTypeSize)
}
