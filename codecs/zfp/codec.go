package zfp

// The Zarr codec.
//
// JSON name "numcodecs.zfpy" (an array -> bytes codec, as zarr-python 3's
// numcodecs.zarr3.ZFPY); Zarr v2 names the same stream compressor "zfpy".
// Configuration as numcodecs' ZFPY takes it, for example
//
//	{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.001}}
//	{"name": "numcodecs.zfpy", "configuration": {"mode": 2, "rate": 8}}
//	{"name": "numcodecs.zfpy", "configuration": {"mode": 3, "precision": 20}}
//	{"id": "zfpy", "mode": 4, "tolerance": -1, "rate": -1, "precision": -1, "compression_kwargs": {"tolerance": -1}}  (v2)

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// Name is the codec's registered (Zarr v3) name.
const Name = "numcodecs.zfpy"

func init() {
	codecs.Register(Name, func(cfg json.RawMessage) (codecs.Codec, error) { return NewCodec(cfg) })
}

// Config is the codec's configuration, numcodecs' ZFPY arguments. As in
// numcodecs, Mode picks which of Tolerance, Rate and Precision is used,
// and a negative (or absent) value of that one means the reversible
// (lossless) mode. Mode 5 (reversible) is accepted too, though numcodecs
// itself cannot encode with it; other modes decode (the stream's header
// says how) but do not encode.
type Config struct {
	// Mode is 2 (fixed rate), 3 (fixed precision), 4 (fixed accuracy,
	// numcodecs' default) or 5 (reversible).
	Mode int `json:"mode"`
	// Tolerance is the absolute error bound of mode 4.
	Tolerance *float64 `json:"tolerance,omitempty"`
	// Rate is the number of bits per value of mode 2.
	Rate *float64 `json:"rate,omitempty"`
	// Precision is the number of bit planes of mode 3.
	Precision *int `json:"precision,omitempty"`
	// CompressionKwargs is what numcodecs records of the arguments it
	// passes to zfpy; it is kept for metadata and otherwise ignored.
	CompressionKwargs map[string]json.Number `json:"compression_kwargs,omitempty"`
}

// Codec is the numcodecs.zfpy codec (a codecs.ArrayToBytes). It is
// immutable and safe for concurrent use.
type Codec struct {
	cfg Config
}

var (
	_ codecs.ArrayToBytes  = (*Codec)(nil)
	_ codecs.EncodeChecker = (*Codec)(nil)
)

// NewCodec builds the codec from its JSON configuration (nil: numcodecs'
// defaults, mode 4 with no tolerance, which is the reversible mode).
// Errors wrap codecs.ErrInvalidConfig.
func NewCodec(configuration json.RawMessage) (*Codec, error) {
	cfg := Config{Mode: int(ModeFixedAccuracy)}
	if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return New(cfg)
}

// New returns the codec of cfg. Errors wrap codecs.ErrInvalidConfig.
func New(cfg Config) (*Codec, error) {
	for _, v := range []*float64{cfg.Tolerance, cfg.Rate} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return nil, fmt.Errorf("%w: %s: %v is not a finite number", codecs.ErrInvalidConfig, Name, *v)
		}
	}
	if cfg.Mode < int(ModeNull) || cfg.Mode > int(ModeReversible) {
		return nil, fmt.Errorf("%w: %s: mode %d (zfp modes are 0..5)", codecs.ErrInvalidConfig, Name, cfg.Mode)
	}
	return &Codec{cfg: cfg}, nil
}

// Name returns "numcodecs.zfpy".
func (c *Codec) Name() string { return Name }

// Configuration returns the configuration as given.
func (c *Codec) Configuration() any { return c.cfg }

// params returns the compression parameters for chunks of d dimensions.
// Errors wrap codecs.ErrInvalidConfig.
func (c *Codec) params(d int) (Params, error) {
	p, err := c.zfpParams(d)
	if err != nil && !errors.Is(err, codecs.ErrInvalidConfig) {
		err = fmt.Errorf("%w: %s: %w", codecs.ErrInvalidConfig, Name, err)
	}
	return p, err
}

func (c *Codec) zfpParams(d int) (Params, error) {
	switch Mode(c.cfg.Mode) {
	case ModeFixedAccuracy:
		if neg(c.cfg.Tolerance) {
			return Reversible(), nil
		}
		return FixedAccuracy(*c.cfg.Tolerance)
	case ModeFixedRate:
		if neg(c.cfg.Rate) {
			return Reversible(), nil
		}
		return FixedRate(*c.cfg.Rate, d)
	case ModeFixedPrecision:
		if c.cfg.Precision == nil || *c.cfg.Precision < 0 {
			return Reversible(), nil
		}
		return FixedPrecision(uint(*c.cfg.Precision)), nil
	case ModeReversible:
		return Reversible(), nil
	}
	return Params{}, fmt.Errorf("%w: %s: mode %d cannot encode (numcodecs encodes modes 2, 3 and 4)", codecs.ErrInvalidConfig, Name, c.cfg.Mode)
}

// CheckEncode reports whether the configuration can encode (a rate too
// high for the header is found for 1-D chunks here, for chunks of more
// dimensions by Encode).
func (c *Codec) CheckEncode() error {
	_, err := c.params(1)
	return err
}

func neg(v *float64) bool { return v == nil || !(*v >= 0) }

// zfpType returns the ZFP type of a Zarr data type.
func zfpType(d dtype.DataType) (Type, bool) {
	switch d {
	case dtype.TypeFloat32:
		return Float32, true
	case dtype.TypeFloat64:
		return Float64, true
	case dtype.TypeInt32:
		return Int32, true
	case dtype.TypeInt64:
		return Int64, true
	}
	return 0, false
}

// ValidateRepr reports whether chunks of repr can be coded: float32,
// float64, int32 or int64, 1 to 4 dimensions that fit the header.
func (c *Codec) ValidateRepr(repr codecs.ChunkRepr) error {
	t, ok := zfpType(repr.DType)
	if !ok {
		return fmt.Errorf("%w: %s codes float32, float64, int32 and int64, not %s", codecs.ErrInvalidConfig, Name, repr.DType)
	}
	if err := checkShape(t, repr.Shape); err != nil {
		return fmt.Errorf("%w: %w", codecs.ErrInvalidConfig, err)
	}
	for _, s := range repr.Shape {
		if uint64(s-1)>>dimBits[len(repr.Shape)] != 0 {
			return fmt.Errorf("%w: %s: chunk shape %v does not fit a zfp header", codecs.ErrInvalidConfig, Name, repr.Shape)
		}
	}
	return nil
}

// Encode appends the zfpy stream of the chunk src to dst.
func (c *Codec) Encode(dst, src []byte, repr codecs.ChunkRepr) ([]byte, error) {
	if err := c.ValidateRepr(repr); err != nil {
		return dst, err
	}
	p, err := c.params(len(repr.Shape))
	if err != nil {
		return dst, err
	}
	t, _ := zfpType(repr.DType)
	out, err := Compress(dst, src, t, repr.Shape, p)
	if err != nil {
		return dst, fmt.Errorf("%w: %s: %w", codecs.ErrInvalidConfig, Name, err)
	}
	return out, nil
}

// Decode decodes the zfpy stream src into dst, the chunk's memory. The
// stream's header decides how (any mode, whatever the configuration
// says); it must hold the chunk's data type and number of elements (its
// shape may differ, as zarr-python reshapes what zfpy returns).
func (c *Codec) Decode(dst, src []byte, repr codecs.ChunkRepr) error {
	t, ok := zfpType(repr.DType)
	if !ok {
		return fmt.Errorf("%w: %s: %s chunks", codecs.ErrInvalidConfig, Name, repr.DType)
	}
	if len(dst) != repr.NumBytes() {
		return fmt.Errorf("%w: %s: output of %d bytes for a chunk of %d", codecs.ErrCorrupt, Name, len(dst), repr.NumBytes())
	}
	r := bitReader{data: src}
	h, err := readHeader(&r)
	if err == nil && overrun(&r) {
		err = fmt.Errorf("%w: %d bytes, too short for a header", ErrCorrupt, len(src))
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", codecs.ErrCorrupt, Name, err)
	}
	if h.Type != t || h.NumElements() != repr.NumElements() {
		return fmt.Errorf("%w: %s: stream holds %s %v, the chunk is %s %v", codecs.ErrCorrupt, Name, h.Type, h.Shape, repr.DType, repr.Shape)
	}
	if err := decompressBody(&r, h, dst); err != nil {
		return fmt.Errorf("%w: %s: %w", codecs.ErrCorrupt, Name, err)
	}
	return nil
}

// MaxEncodedSize bounds the size of an encoded chunk of repr: the C
// library's bound for the configured mode, or for the reversible mode if
// that is larger (numcodecs' negative parameters select it).
func (c *Codec) MaxEncodedSize(repr codecs.ChunkRepr) int {
	t, ok := zfpType(repr.DType)
	if !ok || checkShape(t, repr.Shape) != nil {
		return 0
	}
	n := MaxSize(t, repr.Shape, Reversible())
	if p, err := c.params(len(repr.Shape)); err == nil {
		n = max(n, MaxSize(t, repr.Shape, p))
	}
	return n
}
