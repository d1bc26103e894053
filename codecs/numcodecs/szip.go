package numcodecs

// The imagecodecs_szip and imagecodecs_aec codecs (bytes -> bytes): the
// Adaptive Entropy Coding of aec.go as HDF5's szip filter (4) stores it,
// and as libaec's own API writes it, under the ids imagecodecs' numcodecs
// codecs (https://github.com/cgohlke/imagecodecs, numcodecs.py Szip and
// Aec) give them.
//
// szip (libaec's SZIP compatibility layer, sz_compat, which HDF5 calls):
// options_mask SZ_NN (32) turns the preprocessor on, SZ_MSB (16) stores
// samples big-endian, the other bits (SZ_RAW 128, SZ_LSB 8, SZ_EC 4,
// SZ_CHIP 2, SZ_ALLOW_K13 1) change nothing in the stream. A reference
// sample interval is one scanline: ceil(pixels_per_scanline /
// pixels_per_block) blocks, each scanline padded to whole blocks (with its
// last pixel under SZ_NN, else zeros). 32- and 64-bit pixels are coded as
// 8-bit samples after a byte transposition of the whole buffer (all first
// bytes, then all second bytes, ...). HDF5's filter prefixes the stream
// with the decoded size, 4 bytes little-endian ("header": true, the
// default, as imagecodecs' codec reads HDF5's chunks).
//
// "optional": true (gozarr's, with the header only) reads the chunks of an
// HDF5 dataset whose szip filter was skipped for some chunks: szip is an
// optional filter, and HDF5 stores a chunk it cannot shrink as it is, with
// the filter's bit set in the chunk's filter mask. Such a chunk is exactly
// the decoded size (the chain's limit) long, while a coded one starts with
// its header, which says that size: a chunk of the decoded size whose first
// four bytes do not say it is returned as it is. (Raw chunks whose first
// bytes happen to say it are not left to this rule: hdf5.References
// writes them re-coded, inline.) imagecodecs does not know the key, so a
// Python reader refuses such references rather than misread them.
// JSON name: "numcodecs.imagecodecs_szip"
// Configuration example (Zarr v2 {"id": "imagecodecs_szip", ...}; an HDF5
// dataset's filter cd_values are mask, pixels per block, bits per pixel,
// pixels per scanline):
//
//	{"name": "numcodecs.imagecodecs_szip", "configuration": {"options_mask": 141,
//	 "pixels_per_block": 32, "bits_per_pixel": 32, "pixels_per_scanline": 120}}
//
// aec: libaec's stream as aec_buffer_encode writes it, with imagecodecs'
// parameters and their defaults (bitspersample 8, flags 8 =
// AEC_DATA_PREPROCESS, blocksize 8, rsi 2); flags are libaec's: 1 signed,
// 2 3-byte samples, 4 big-endian, 8 preprocessor, 16 restricted code set,
// 32 intervals padded to bytes, 64 any even block size.
// JSON name: "numcodecs.imagecodecs_aec"
// Configuration example:
//
//	{"name": "numcodecs.imagecodecs_aec", "configuration": {"bitspersample": 16,
//	 "flags": 8, "blocksize": 16, "rsi": 128}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/codecs"
)

// szip option mask bits (szlib.h) that change the stream.
const (
	szMSB = 16
	szNN  = 32
	// szMaxPixelsPerBlock is szlib.h's SZ_MAX_PIXELS_PER_BLOCK.
	szMaxPixelsPerBlock = 32
)

// Szip is the "numcodecs.imagecodecs_szip" codec: HDF5's szip filter.
// Decoding allocates at most the chain's limit (a header saying more is
// ErrCorrupt before anything is allocated) plus, for scanlines padded to
// whole blocks, less than as much again. Encoding writes streams libaec
// decodes (checked against libaec in the fixtures' test). A Szip is
// immutable and safe for concurrent use.
type Szip struct {
	mask, ppb, bpp, ppsl int
	header               bool
	optional             bool
}

// NewSzip returns the szip codec for an HDF5 filter's parameters (its
// cd_values: options mask, pixels per block, bits per pixel, pixels per
// scanline), with HDF5's 4-byte size header or without. Bits per pixel
// are 1 to 32 or 64, pixels per block even and at most 32, pixels per
// scanline at least pixels per block (HDF5 writes no other) and at most
// 4096 blocks: else ErrInvalidConfig.
func NewSzip(mask, pixelsPerBlock, bitsPerPixel, pixelsPerScanline int, header bool) (*Szip, error) {
	c := &Szip{mask: mask, ppb: pixelsPerBlock, bpp: bitsPerPixel, ppsl: pixelsPerScanline, header: header}
	name := c.Name()
	switch {
	case mask < 0 || mask > math.MaxInt32:
		return nil, fmt.Errorf("%w: %s: options_mask %d", codecs.ErrInvalidConfig, name, mask)
	case bitsPerPixel < 1 || bitsPerPixel > 32 && bitsPerPixel != 64:
		return nil, fmt.Errorf("%w: %s: bits_per_pixel %d, want 1 to 32 or 64", codecs.ErrInvalidConfig, name, bitsPerPixel)
	case pixelsPerBlock < 2 || pixelsPerBlock > szMaxPixelsPerBlock || pixelsPerBlock%2 != 0:
		return nil, fmt.Errorf("%w: %s: pixels_per_block %d, want an even number up to %d", codecs.ErrInvalidConfig, name, pixelsPerBlock, szMaxPixelsPerBlock)
	case pixelsPerScanline < pixelsPerBlock || pixelsPerScanline > aecMaxRSI*pixelsPerBlock:
		return nil, fmt.Errorf("%w: %s: pixels_per_scanline %d, want %d to %d", codecs.ErrInvalidConfig, name, pixelsPerScanline, pixelsPerBlock, aecMaxRSI*pixelsPerBlock)
	}
	return c, nil
}

func init() {
	codecs.Register(prefix+"imagecodecs_szip", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Mask     *int  `json:"options_mask"`
			PPB      *int  `json:"pixels_per_block"`
			BPP      *int  `json:"bits_per_pixel"`
			PPSL     *int  `json:"pixels_per_scanline"`
			Header   *bool `json:"header"`
			Optional bool  `json:"optional"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Mask == nil || cfg.PPB == nil || cfg.BPP == nil || cfg.PPSL == nil {
			return nil, fmt.Errorf("%w: %simagecodecs_szip: options_mask, pixels_per_block, bits_per_pixel and pixels_per_scanline are required", codecs.ErrInvalidConfig, prefix)
		}
		header := cfg.Header == nil || *cfg.Header
		c, err := NewSzip(*cfg.Mask, *cfg.PPB, *cfg.BPP, *cfg.PPSL, header)
		if err != nil || !cfg.Optional {
			return c, err
		}
		return c.Optional()
	})
	codecs.Register(prefix+"imagecodecs_aec", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Bits  *int `json:"bitspersample"`
			Flags *int `json:"flags"`
			Block *int `json:"blocksize"`
			RSI   *int `json:"rsi"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		def := func(v *int, d int) int {
			if v == nil {
				return d
			}
			return *v
		}
		return NewAEC(def(cfg.Bits, 8), def(cfg.Flags, aecPreprocess), def(cfg.Block, 8), def(cfg.RSI, 2))
	})
}

// Optional returns the codec that also reads the chunks HDF5 stored
// without the filter (the "optional" key): a chunk of exactly the decoded
// size whose first four bytes do not say that size is returned as it is.
// It needs the size header: without, ErrInvalidConfig.
func (c *Szip) Optional() (*Szip, error) {
	if !c.header {
		return nil, fmt.Errorf("%w: %s: \"optional\" needs the size header", codecs.ErrInvalidConfig, c.Name())
	}
	o := *c
	o.optional = true
	return &o, nil
}

// Name returns "numcodecs.imagecodecs_szip".
func (c *Szip) Name() string { return prefix + "imagecodecs_szip" }

// Configuration returns the four parameters, "header" and, when set,
// "optional".
func (c *Szip) Configuration() any {
	return struct {
		Mask     int  `json:"options_mask"`
		PPB      int  `json:"pixels_per_block"`
		BPP      int  `json:"bits_per_pixel"`
		PPSL     int  `json:"pixels_per_scanline"`
		Header   bool `json:"header"`
		Optional bool `json:"optional,omitempty"`
	}{c.mask, c.ppb, c.bpp, c.ppsl, c.header, c.optional}
}

// params returns the AEC parameters of the stream, and the bytes of a
// coded sample.
func (c *Szip) params() (aecParams, int) {
	p := aecParams{bits: c.bpp, block: c.ppb, rsi: (c.ppsl + c.ppb - 1) / c.ppb, flags: aecNotEnforce}
	if c.bpp == 32 || c.bpp == 64 {
		p.bits = 8
	}
	if c.mask&szMSB != 0 {
		p.flags |= aecMSB
	}
	if c.mask&szNN != 0 {
		p.flags |= aecPreprocess
	}
	return p, p.size()
}

// padded returns the samples of n bytes once every scanline is padded to
// whole blocks.
func (c *Szip) padded(n int) int64 {
	p, pixel := c.params()
	lines := (int64(n/pixel) + int64(c.ppsl) - 1) / int64(c.ppsl)
	return lines * int64(p.rsi) * int64(p.block)
}

// MaxEncodedSize bounds the header and the stream of n bytes: every block
// of the padded scanlines uncompressed, with its identifier.
func (c *Szip) MaxEncodedSize(n int) int {
	p, _ := c.params()
	blocks := c.padded(max(n, 0)) / int64(p.block)
	b := 4 + (blocks*int64(p.block*p.bits+p.idLen()+1)+7)/8 + 8
	if b > math.MaxInt {
		return math.MaxInt
	}
	return int(b)
}

// Encode appends the szip stream of src (with the size header when the
// codec has one) to dst. src must be a whole number of pixels; with a
// header, under 4 GiB.
func (c *Szip) Encode(dst, src []byte) ([]byte, error) {
	p, pixel := c.params()
	word := pixel
	if c.bpp == 32 || c.bpp == 64 {
		word = c.bpp / 8
	}
	if len(src)%word != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-bit pixels", codecs.ErrInvalidConfig, c.Name(), len(src), c.bpp)
	}
	if c.header {
		if uint64(len(src)) > math.MaxUint32 {
			return dst, fmt.Errorf("%w: %s: %d bytes do not fit the size header", codecs.ErrInvalidConfig, c.Name(), len(src))
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
	}
	if len(src) == 0 {
		return dst, nil
	}
	data := src
	if word != pixel {
		data = make([]byte, len(src))
		transpose(data, src, len(src)/word, word) // numcodecs shuffle's byte planes
	}
	// Scanlines padded to whole blocks: with the line's last pixel under
	// the preprocessor (a zero prediction error), else zeros.
	line := c.ppsl * pixel
	full := p.rsi * p.block * pixel
	buf := make([]byte, 0, int(c.padded(len(data)))*pixel)
	for i := 0; i < len(data); i += line {
		l := data[i:min(i+line, len(data))]
		buf = append(buf, l...)
		last := make([]byte, pixel)
		if p.flags&aecPreprocess != 0 {
			copy(last, l[len(l)-pixel:])
		}
		for k := len(l); k < full; k += pixel {
			buf = append(buf, last...)
		}
	}
	return aecEncode(dst, buf, p), nil
}

// Decode appends the decoding of src to dst. Without a header the decoded
// size is the chain's limit. A header saying more than limit, a stream
// that ends early or is corrupt is ErrCorrupt. An optional codec returns
// a chunk HDF5 stored without the filter as it is (see Optional).
func (c *Szip) Decode(dst, src []byte, limit int) ([]byte, error) {
	size := max(limit, 0)
	if c.optional && len(src) == size && (size < 4 || int64(binary.LittleEndian.Uint32(src)) != int64(size)) {
		return append(dst, src...), nil
	}
	if c.header {
		if len(src) < 4 {
			return dst, fmt.Errorf("%w: %s: %d bytes, too short for the size header", codecs.ErrCorrupt, c.Name(), len(src))
		}
		h := binary.LittleEndian.Uint32(src)
		if int64(h) > int64(size) {
			return dst, fmt.Errorf("%w: %s: header says %d bytes, at most %d expected", codecs.ErrCorrupt, c.Name(), h, size)
		}
		size, src = int(h), src[4:]
	}
	p, pixel := c.params()
	word := pixel
	if c.bpp == 32 || c.bpp == 64 {
		word = c.bpp / 8
	}
	if size%word != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-bit pixels", codecs.ErrCorrupt, c.Name(), size, c.bpp)
	}
	start := len(dst)
	dst = ensure(dst, size)
	out := dst[start:]
	target := out
	if word != pixel {
		target = make([]byte, size)
	}
	if c.ppsl%c.ppb == 0 {
		if err := aecDecode(c.Name(), target, src, p); err != nil {
			return dst[:start], err
		}
	} else {
		// Scanlines of rsi*block samples of which the first ppsl are data.
		buf := make([]byte, int(c.padded(size))*pixel)
		if err := aecDecode(c.Name(), buf, src, p); err != nil {
			return dst[:start], err
		}
		line, full := c.ppsl*pixel, p.rsi*p.block*pixel
		for i, j := 0, 0; i < size; i, j = i+line, j+full {
			copy(target[i:min(i+line, size)], buf[j:])
		}
	}
	if word != pixel {
		transpose(out, target, word, size/word)
	}
	return dst, nil
}

// AEC is the "numcodecs.imagecodecs_aec" codec: libaec's stream with its
// parameters given out of band. Decoding fills exactly the chain's limit
// (a whole number of samples: the decoded chunk), as libaec's decoder
// fills its output buffer; a stream that ends before is ErrCorrupt. An AEC
// is immutable and safe for concurrent use.
type AEC struct {
	p aecParams
}

// NewAEC returns the AEC codec for libaec's parameters: bits per sample 1
// to 32, libaec's flags, block size 8, 16, 32 or 64 (any even size up to
// 64 with flag 64), reference sample interval 1 to 4096 blocks; else
// ErrInvalidConfig.
func NewAEC(bitsPerSample, flags, blockSize, rsi int) (*AEC, error) {
	if flags < 0 || flags > aecAllFlags {
		return nil, fmt.Errorf("%w: %simagecodecs_aec: flags %d, want 0 to %d", codecs.ErrInvalidConfig, prefix, flags, aecAllFlags)
	}
	c := &AEC{p: aecParams{bits: bitsPerSample, block: blockSize, rsi: rsi, flags: uint32(flags)}}
	if err := c.p.check(c.Name()); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns "numcodecs.imagecodecs_aec".
func (c *AEC) Name() string { return prefix + "imagecodecs_aec" }

// Configuration returns the four parameters.
func (c *AEC) Configuration() any {
	return struct {
		Bits  int `json:"bitspersample"`
		Flags int `json:"flags"`
		Block int `json:"blocksize"`
		RSI   int `json:"rsi"`
	}{c.p.bits, int(c.p.flags), c.p.block, c.p.rsi}
}

// MaxEncodedSize bounds the stream of n bytes: every block uncompressed,
// with its identifier, and every interval padded.
func (c *AEC) MaxEncodedSize(n int) int {
	samples := int64(max(n, 0) / c.p.size())
	blocks := (samples + int64(c.p.block) - 1) / int64(c.p.block)
	b := (blocks*int64(c.p.block*c.p.bits+c.p.idLen()+1)+7)/8 + blocks/int64(c.p.rsi) + 8
	if b > math.MaxInt {
		return math.MaxInt
	}
	return int(b)
}

// Encode appends the AEC stream of src (whole samples; signed samples may
// be sign-extended) to dst.
func (c *AEC) Encode(dst, src []byte) ([]byte, error) {
	if len(src)%c.p.size() != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-byte samples", codecs.ErrInvalidConfig, c.Name(), len(src), c.p.size())
	}
	return aecEncode(dst, src, c.p), nil
}

// Decode appends the decoding of src, limit bytes rounded down to whole
// samples, to dst.
func (c *AEC) Decode(dst, src []byte, limit int) ([]byte, error) {
	size := max(limit, 0)
	size -= size % c.p.size()
	start := len(dst)
	dst = ensure(dst, size)
	if err := aecDecode(c.Name(), dst[start:], src, c.p); err != nil {
		return dst[:start], err
	}
	return dst, nil
}
