package numcodecs

// The array -> array forms of the typed filters (fixedscaleoffset,
// quantize, astype, bitround, packbits), for v3 metadata where
// zarr-python 3 writes them before "bytes".

import (
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// arrayForm runs a bytes -> bytes filter on the in-memory chunk (C order,
// little-endian), as zarr-python 3 hands numcodecs the chunk array when
// the filter comes before "bytes": the encoded chunk is an array of
// repr's data type and shape.
type arrayForm struct {
	b    codecs.BytesToBytes
	repr func(decoded codecs.ChunkRepr) (codecs.ChunkRepr, error)
	// sized: the filter is told the element size of each chunk
	// (codecs.TypeSizer), bitround's need.
	sized bool
}

// codec returns the filter for chunks of decoded's data type.
func (a *arrayForm) codec(decoded codecs.ChunkRepr) codecs.BytesToBytes {
	if ts, ok := a.b.(codecs.TypeSizer); ok && a.sized {
		return ts.WithTypeSize(decoded.DType.Size())
	}
	return a.b
}

var _ codecs.ArrayToArray = (*arrayForm)(nil)

// Name returns the filter's name.
func (a *arrayForm) Name() string { return a.b.Name() }

// Configuration returns the filter's configuration.
func (a *arrayForm) Configuration() any { return a.b.Configuration() }

// EncodedRepr returns the encoded chunk's representation.
func (a *arrayForm) EncodedRepr(d codecs.ChunkRepr) (codecs.ChunkRepr, error) { return a.repr(d) }

// Encode runs the filter's encoder on the chunk src into dst.
func (a *arrayForm) Encode(dst, src []byte, decoded codecs.ChunkRepr) error {
	out, err := a.codec(decoded).Encode(dst[:0], src)
	return a.check(err, out, dst, "encode")
}

// Decode runs the filter's decoder on the encoded chunk src into dst.
func (a *arrayForm) Decode(dst, src []byte, decoded codecs.ChunkRepr) error {
	out, err := a.codec(decoded).Decode(dst[:0], src, len(dst))
	return a.check(err, out, dst, "decode")
}

// check holds a filter result to the ArrayToArray contract: out must be
// exactly dst.
func (a *arrayForm) check(err error, out, dst []byte, op string) error {
	if err != nil {
		return err
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return fmt.Errorf("%w: %s: %s gives %d bytes, the chunk has %d", codecs.ErrCorrupt, a.Name(), op, len(out), len(dst))
	}
	return nil
}

// AsArrayToArray returns the filter's array -> array form: the chunk of
// "dtype" (which must be the array's data type, little-endian) becomes a
// chunk of "astype" of the same shape, the fill value cast to it.
func (e *Elementwise) AsArrayToArray() (codecs.ArrayToArray, error) {
	for _, t := range []elemType{e.dt, e.as} {
		if t.big {
			return nil, fmt.Errorf("%w: %s before \"bytes\": big-endian %q", codecs.ErrInvalidConfig, e.Name(), t.descr)
		}
	}
	as, _, err := dtype.ParseNumpy(e.as.descr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", codecs.ErrInvalidConfig, e.Name(), err)
	}
	return &arrayForm{b: e, repr: func(d codecs.ChunkRepr) (codecs.ChunkRepr, error) {
		if d.DType.Size() != e.dt.size || d.DType.Kind() != e.dt.kind || len(d.Fill) != e.dt.size {
			return codecs.ChunkRepr{}, fmt.Errorf("%w: %s: dtype %q does not fit the chunk's data type %s", codecs.ErrInvalidConfig, e.Name(), e.dt.descr, d.DType)
		}
		enc := d
		enc.DType = as
		enc.Fill = make([]byte, e.as.size)
		e.as.store(enc.Fill, e.encodeOne(e.dt.load(d.Fill)))
		return enc, nil
	}}, nil
}

// AsArrayToArray returns bitround's array -> array form, for float chunks.
func (b *BitRound) AsArrayToArray() (codecs.ArrayToArray, error) {
	return &arrayForm{b: b, repr: func(d codecs.ChunkRepr) (codecs.ChunkRepr, error) {
		if d.DType.Kind() != dtype.Float {
			return codecs.ChunkRepr{}, fmt.Errorf("%w: numcodecs.bitround: %s chunks (floats only)", codecs.ErrInvalidConfig, d.DType)
		}
		return d, nil
	}, sized: true}, nil
}

// AsArrayToArray returns packbits' array -> array form: a bool chunk of n
// elements becomes a uint8 chunk of shape [1 + ceil(n/8)], as zarr-python
// resolves it.
func (PackBits) AsArrayToArray() (codecs.ArrayToArray, error) {
	return &arrayForm{b: PackBits{}, repr: func(d codecs.ChunkRepr) (codecs.ChunkRepr, error) {
		if d.DType != dtype.TypeBool {
			return codecs.ChunkRepr{}, fmt.Errorf("%w: numcodecs.packbits: %s chunks (bool only)", codecs.ErrInvalidConfig, d.DType)
		}
		return codecs.ChunkRepr{Shape: []int{1 + (d.NumElements()+7)/8}, DType: dtype.TypeUint8, Fill: []byte{0}}, nil
	}}, nil
}
