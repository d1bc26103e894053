package numcodecs

// The numcodecs delta filter (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/filter/delta.html
// JSON name: "numcodecs.delta"
// Configuration example (Zarr v2: {"id": "delta", "dtype": "<i8",
// "astype": "<i2"}):
//
//	{"name": "numcodecs.delta", "configuration": {"dtype": "<i8", "astype": "<i2"}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// Delta is the "numcodecs.delta" filter
// (https://numcodecs.readthedocs.io/en/stable/filter/delta.html),
// configured as {"dtype": "<i8", "astype": "<i2"}: the bytes are read as
// elements of dtype (byte order included), and encoding writes the first
// element, then the difference of each element from the one before, as
// elements of astype (default: dtype). The encoded buffer is
// len/size(dtype)*size(astype) bytes, smaller than the input when astype is
// narrower.
//
// Arithmetic follows NumPy exactly, so chunks match numcodecs byte for
// byte: integer differences wrap in dtype and are cast to astype (keeping
// the low bytes, or extending by dtype's signedness), decoding sums in
// dtype with wrap-around; float differences and sums are rounded to dtype's
// precision (float16 through float32, as NumPy does) and cast to astype
// with round-to-nearest-even. Booleans, as NumPy treats them, encode
// "changed" flags and decode by a running OR, which does not round-trip (a
// numcodecs quirk kept for compatibility). dtype and astype must both be
// integers (signed or not), both floats, or both bool; complex and other
// types are ErrInvalidConfig. A Delta is immutable and safe for concurrent
// use.
type Delta struct {
	dt, as elemType
}

// NewDelta returns the delta filter for the NumPy dtype strings dtype and
// astype ("" for astype means dtype). Errors wrap ErrInvalidConfig.
func NewDelta(dtypeStr, astype string) (*Delta, error) {
	dt, err := parseElem("numcodecs.delta", "dtype", dtypeStr)
	if err != nil {
		return nil, err
	}
	if astype == "" {
		astype = dtypeStr
	}
	as, err := parseElem("numcodecs.delta", "astype", astype)
	if err != nil {
		return nil, err
	}
	if dt.integer() != as.integer() || (dt.kind == dtype.Bool) != (as.kind == dtype.Bool) {
		return nil, fmt.Errorf("%w: numcodecs.delta: dtype %q and astype %q must both be integers, both floats or both bool", codecs.ErrInvalidConfig, dtypeStr, astype)
	}
	return &Delta{dt: dt, as: as}, nil
}

func init() {
	codecs.Register(prefix+"delta", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			DType  *string `json:"dtype"`
			AsType *string `json:"astype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.DType == nil {
			return nil, fmt.Errorf("%w: numcodecs.delta: configuration has no \"dtype\"", codecs.ErrInvalidConfig)
		}
		as := ""
		if cfg.AsType != nil {
			as = *cfg.AsType
		}
		return NewDelta(*cfg.DType, as)
	})
}

// Name returns "numcodecs.delta".
func (d *Delta) Name() string { return prefix + "delta" }

// Configuration returns {"dtype": ..., "astype": ...}, as numcodecs writes
// it (both always present).
func (d *Delta) Configuration() any {
	return struct {
		DType  string `json:"dtype"`
		AsType string `json:"astype"`
	}{d.dt.descr, d.as.descr}
}

// MaxEncodedSize returns the encoded size of n bytes: n/size(dtype)
// elements of astype, rounded up.
func (d *Delta) MaxEncodedSize(n int) int {
	return (max(n, 0) + d.dt.size - 1) / d.dt.size * d.as.size
}

// Encode appends the differences of src's dtype elements, as astype, to
// dst. Input that is not a whole number of dtype elements is
// ErrInvalidConfig.
func (d *Delta) Encode(dst, src []byte) ([]byte, error) {
	ds, as := d.dt.size, d.as.size
	if len(src)%ds != 0 {
		return dst, fmt.Errorf("%w: numcodecs.delta: %d bytes are not a whole number of %q elements", codecs.ErrInvalidConfig, len(src), d.dt.descr)
	}
	n := len(src) / ds
	start := len(dst)
	out := ensure(dst, n*as)
	enc := out[start:]
	switch {
	case d.dt.integer() && ds == as && !d.dt.big && !d.as.big && ds >= 4:
		if ds == 8 {
			var prev uint64
			for i := range n {
				x := binary.LittleEndian.Uint64(src[8*i:])
				binary.LittleEndian.PutUint64(enc[8*i:], x-prev)
				prev = x
			}
		} else {
			var prev uint32
			for i := range n {
				x := binary.LittleEndian.Uint32(src[4*i:])
				binary.LittleEndian.PutUint32(enc[4*i:], x-prev)
				prev = x
			}
		}
	case d.dt.integer():
		var prev uint64
		for i := range n {
			x := d.dt.load(src[i*ds:])
			// NumPy: enc[0] = arr[0]; enc[1:] = diff(arr), the difference
			// wrapping in dtype; each then cast to astype.
			d.as.store(enc[i*as:], d.dt.extend(x-prev))
			prev = x
		}
	case d.dt.kind == dtype.Float:
		prev := 0.0
		for i := range n {
			x := d.dt.float(d.dt.load(src[i*ds:]))
			v := x
			if i > 0 {
				v = d.dt.float(d.dt.add(x, -prev))
			}
			d.as.store(enc[i*as:], d.as.round(v))
			prev = x
		}
	default: // bool: diff is "not equal"
		prev := false
		for i := range n {
			x := src[i] != 0
			v := x
			if i > 0 {
				v = x != prev
			}
			enc[i] = b2u(v)
			prev = x
		}
	}
	return out, nil
}

// Decode appends the running sums of src's astype elements, as dtype, to
// dst. Input that is not a whole number of astype elements, or decoding to
// more than limit bytes (checked before allocating), is ErrCorrupt.
func (d *Delta) Decode(dst, src []byte, limit int) ([]byte, error) {
	ds, as := d.dt.size, d.as.size
	if len(src)%as != 0 {
		return dst, fmt.Errorf("%w: numcodecs.delta: %d bytes are not a whole number of %q elements", codecs.ErrCorrupt, len(src), d.as.descr)
	}
	n := len(src) / as
	if n > max(limit, 0)/ds {
		return dst, fmt.Errorf("%w: numcodecs.delta: %d elements decode to %d bytes, at most %d expected", codecs.ErrCorrupt, n, n*ds, max(limit, 0))
	}
	start := len(dst)
	out := ensure(dst, n*ds)
	dec := out[start:]
	switch {
	case d.dt.integer() && ds == as && !d.dt.big && !d.as.big && ds >= 4:
		// Same width, little-endian: a plain running sum.
		if ds == 8 {
			var acc uint64
			for i := range n {
				acc += binary.LittleEndian.Uint64(src[8*i:])
				binary.LittleEndian.PutUint64(dec[8*i:], acc)
			}
		} else {
			var acc uint32
			for i := range n {
				acc += binary.LittleEndian.Uint32(src[4*i:])
				binary.LittleEndian.PutUint32(dec[4*i:], acc)
			}
		}
	case d.dt.integer():
		var acc uint64
		for i := range n {
			acc += d.as.extend(d.as.load(src[i*as:]))
			d.dt.store(dec[i*ds:], acc)
		}
	case d.dt.kind == dtype.Float:
		// NumPy's cumsum with out= accumulates in dtype: each astype
		// element is cast to dtype, then added with dtype rounding.
		acc := 0.0
		for i := range n {
			v := d.dt.float(d.dt.round(d.as.float(d.as.load(src[i*as:]))))
			bits := d.dt.round(v)
			if i > 0 {
				bits = d.dt.add(acc, v)
			}
			d.dt.store(dec[i*ds:], bits)
			acc = d.dt.float(bits)
		}
	default: // bool: adding booleans is OR
		acc := false
		for i := range n {
			acc = acc || src[i] != 0
			dec[i] = b2u(acc)
		}
	}
	return out, nil
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// DeltaArray is the array->array form of the delta filter: the codec
// "numcodecs.delta" when it comes before "bytes", as zarr-python 3 writes
// numcodecs filters in v3 metadata (zarr.codecs.numcodecs.Delta, formerly
// numcodecs.zarr3.Delta), for example
//
//	"codecs": [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}},
//	           {"name": "bytes", "configuration": {"endian": "little"}}, ...]
//
// zarr-python hands the filter the chunk as an array of the array's data
// type and serialises what it returns, an array of "astype" (default:
// "dtype"), with the codecs after it; DeltaArray does the same with the
// in-memory (C order, little-endian) chunk, with Delta's arithmetic, so the
// encoded chunk is an array of astype. "dtype" must have the size of the
// array's data type and its family (integers, signed or not, floats, or
// bool; zarr-python views the chunk through it). Big-endian
// "dtype" or "astype" are refused with ErrInvalidConfig: zarr-python views
// native memory through them when encoding but decodes the serialised
// values, so such chunks do not round-trip there either. The encoded
// chunk's fill value is the fill value cast to astype, as zarr-python's
// resolve_metadata leaves it. A DeltaArray is immutable and safe for
// concurrent use.
type DeltaArray struct {
	d  *Delta
	as dtype.DataType // the encoded chunk's data type
}

var _ codecs.ArrayToArray = (*DeltaArray)(nil)

// AsArrayToArray returns the array->array form of the filter (see
// DeltaArray); codecs.Prepare calls it for a delta before "bytes".
func (d *Delta) AsArrayToArray() (codecs.ArrayToArray, error) {
	for _, e := range []elemType{d.dt, d.as} {
		if e.big {
			return nil, fmt.Errorf("%w: numcodecs.delta before \"bytes\": big-endian %q (zarr-python round-trips only native byte order there)", codecs.ErrInvalidConfig, e.descr)
		}
	}
	as, _, err := dtype.ParseNumpy(d.as.descr)
	if err != nil {
		return nil, fmt.Errorf("%w: numcodecs.delta: astype: %w", codecs.ErrInvalidConfig, err)
	}
	return &DeltaArray{d: d, as: as}, nil
}

// Name returns "numcodecs.delta".
func (a *DeltaArray) Name() string { return a.d.Name() }

// Configuration returns {"dtype": ..., "astype": ...}, as Delta does.
func (a *DeltaArray) Configuration() any { return a.d.Configuration() }

// family returns the kind family a delta element type must share with the
// array's data type: integers of either sign are one.
func family(k dtype.Kind) dtype.Kind {
	if k == dtype.Uint {
		return dtype.Int
	}
	return k
}

// EncodedRepr returns decoded with the data type astype and the fill value
// cast to it. A dtype that does not fit decoded's data type is
// ErrInvalidConfig.
func (a *DeltaArray) EncodedRepr(decoded codecs.ChunkRepr) (codecs.ChunkRepr, error) {
	dt := decoded.DType
	if dt.Size() != a.d.dt.size || family(dt.Kind()) != family(a.d.dt.kind) {
		return codecs.ChunkRepr{}, fmt.Errorf("%w: numcodecs.delta: dtype %q does not fit the chunk's data type %s",
			codecs.ErrInvalidConfig, a.d.dt.descr, dt)
	}
	enc := decoded
	enc.DType = a.as
	if len(decoded.Fill) != a.d.dt.size {
		return codecs.ChunkRepr{}, fmt.Errorf("%w: numcodecs.delta: fill value of %d bytes", codecs.ErrInvalidConfig, len(decoded.Fill))
	}
	enc.Fill = make([]byte, a.d.as.size)
	a.d.cast(enc.Fill, decoded.Fill)
	return enc, nil
}

// Encode writes the differences of the chunk src into dst.
func (a *DeltaArray) Encode(dst, src []byte, decoded codecs.ChunkRepr) error {
	out, err := a.d.Encode(dst[:0], src)
	return a.check(err, out, dst, "encode")
}

// Decode writes the running sums of the encoded chunk src into dst.
func (a *DeltaArray) Decode(dst, src []byte, decoded codecs.ChunkRepr) error {
	out, err := a.d.Decode(dst[:0], src, len(dst))
	return a.check(err, out, dst, "decode")
}

// check turns a Delta result into the ArrayToArray contract: out must be
// exactly dst.
func (a *DeltaArray) check(err error, out, dst []byte, op string) error {
	if err != nil {
		return err
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return fmt.Errorf("%w: numcodecs.delta: %s gives %d bytes, the chunk has %d", codecs.ErrCorrupt, op, len(out), len(dst))
	}
	return nil
}

// cast writes the dtype element src as an astype element into dst, as
// NumPy's astype does (see Delta).
func (d *Delta) cast(dst, src []byte) {
	x := d.dt.load(src)
	switch {
	case d.dt.integer():
		d.as.store(dst, d.dt.extend(x))
	case d.dt.kind == dtype.Float:
		d.as.store(dst, d.as.round(d.dt.float(x)))
	default:
		dst[0] = b2u(x != 0)
	}
}
