package numcodecs

// The zarr-extensions bitround codec (array -> array), the v3 successor of
// numcodecs.bitround that zarrs writes: floats keep keepbits mantissa bits,
// integers keepbits bits from their most significant set bit, both rounded
// to nearest with ties to even; decoding is the identity.
//
// Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround
// JSON name: "bitround"
// Configuration example:
//
//	{"name": "bitround", "configuration": {"keepbits": 3}}

import (
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// BitRoundV3 is the "bitround" codec. It is immutable and safe for
// concurrent use.
type BitRoundV3 struct{ keepbits int }

// NewBitRoundV3 returns bitround keeping keepbits bits (at least 1).
func NewBitRoundV3(keepbits int) (*BitRoundV3, error) {
	if keepbits < 1 || keepbits > 64 {
		return nil, fmt.Errorf("%w: bitround: keepbits %d, want 1..64", codecs.ErrInvalidConfig, keepbits)
	}
	return &BitRoundV3{keepbits: keepbits}, nil
}

func init() {
	codecs.Register("bitround", func(configuration json.RawMessage) (codecs.Codec, error) {
		k, err := keepbitsOf(configuration, "bitround")
		if err != nil {
			return nil, err
		}
		return NewBitRoundV3(k)
	})
}

// keepbitsOf reads the {"keepbits": n} configuration of both bitround
// codecs.
func keepbitsOf(configuration json.RawMessage, name string) (int, error) {
	var cfg struct {
		Keepbits *int `json:"keepbits"`
	}
	if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
		return 0, err
	}
	if cfg.Keepbits == nil {
		return 0, fmt.Errorf("%w: %s: configuration has no \"keepbits\"", codecs.ErrInvalidConfig, name)
	}
	return *cfg.Keepbits, nil
}

// Name returns "bitround".
func (b *BitRoundV3) Name() string { return "bitround" }

// Configuration returns {"keepbits": n}.
func (b *BitRoundV3) Configuration() any {
	return struct {
		Keepbits int `json:"keepbits"`
	}{b.keepbits}
}

// mantissaBits is the mantissa width of the float types bitround takes.
var mantissaBits = map[int]int{2: 10, 4: 23, 8: 52}

// EncodedRepr returns decoded: the chunk keeps its type. Types other than
// integers and float16/32/64, and keepbits past a float's mantissa or an
// integer's width, are ErrInvalidConfig.
func (b *BitRoundV3) EncodedRepr(decoded codecs.ChunkRepr) (codecs.ChunkRepr, error) {
	d := decoded.DType
	switch d.Kind() {
	case dtype.Float:
		if m := mantissaBits[d.Size()]; b.keepbits > m {
			return decoded, fmt.Errorf("%w: bitround: keepbits %d, more than the %d mantissa bits of %s", codecs.ErrInvalidConfig, b.keepbits, m, d)
		}
	case dtype.Int, dtype.Uint:
		if b.keepbits > 8*d.Size() {
			return decoded, fmt.Errorf("%w: bitround: keepbits %d, more than the %d bits of %s", codecs.ErrInvalidConfig, b.keepbits, 8*d.Size(), d)
		}
	default:
		return decoded, fmt.Errorf("%w: bitround: %s chunks (integers and floats only)", codecs.ErrInvalidConfig, d)
	}
	return decoded, nil
}

// Encode writes src with every element rounded into dst.
func (b *BitRoundV3) Encode(dst, src []byte, decoded codecs.ChunkRepr) error {
	if _, err := b.EncodedRepr(decoded); err != nil {
		return err
	}
	d := decoded.DType
	if len(src) != decoded.NumBytes() || len(dst) != len(src) {
		return fmt.Errorf("%w: bitround: %d bytes into %d, chunk has %d", codecs.ErrCorrupt, len(src), len(dst), decoded.NumBytes())
	}
	copy(dst, src)
	if d.Kind() == dtype.Float {
		roundMantissas(dst, d.Size(), b.keepbits)
		return nil
	}
	n := d.Size()
	width := 8 * n
	for i := 0; i < len(dst); i += n {
		var u uint64
		for k := n - 1; k >= 0; k-- {
			u = u<<8 | uint64(dst[i+k])
		}
		neg := false
		if d.Kind() == dtype.Int && u>>(width-1)&1 == 1 {
			neg = true
			u = -u & (^uint64(0) >> (64 - width)) // magnitude
		}
		limit := ^uint64(0) >> (64 - width) // the largest magnitude
		if d.Kind() == dtype.Int {
			limit >>= 1
			if neg {
				limit++
			}
		}
		u = roundInteger(u, b.keepbits, limit)
		if neg {
			u = -u
		}
		for k := range n {
			dst[i+k] = byte(u >> (8 * k))
		}
	}
	return nil
}

// roundInteger rounds u to keepbits significant bits, ties to even; a
// result past limit saturates to the largest value with keepbits bits at
// u's most significant bit (255 keeping 3 bits is 224, as zarrs rounds).
func roundInteger(u uint64, keepbits int, limit uint64) uint64 {
	top := bits.Len64(u)
	if top <= keepbits {
		return u
	}
	drop := uint(top - keepbits)
	mask := ^uint64(0) << drop
	r := u + (u>>drop)&1 + (uint64(1)<<(drop-1) - 1)
	if r < u || r&mask > limit { // carried past the type
		return u & mask
	}
	return r & mask
}

// roundMantissas rounds the little-endian floats of size bytes in b to
// keepbits mantissa bits, as numcodecs.bitround does.
func roundMantissas(b []byte, size, keepbits int) {
	maxbits := mantissaBits[size]
	if keepbits >= maxbits {
		return
	}
	maskbits := uint(maxbits - keepbits)
	mask := ^uint64(0) << maskbits
	half := uint64(1)<<(maskbits-1) - 1
	e := elemType{size: size}
	for i := 0; i < len(b); i += size {
		v := e.load(b[i:])
		v += (v>>maskbits)&1 + half
		e.store(b[i:], v&mask)
	}
}

// Decode copies src to dst: rounding is not reversed.
func (b *BitRoundV3) Decode(dst, src []byte, decoded codecs.ChunkRepr) error {
	if len(src) != len(dst) || len(dst) != decoded.NumBytes() {
		return fmt.Errorf("%w: bitround: %d bytes into %d, chunk has %d", codecs.ErrCorrupt, len(src), len(dst), decoded.NumBytes())
	}
	copy(dst, src)
	return nil
}
