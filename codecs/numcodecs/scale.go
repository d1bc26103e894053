package numcodecs

// The numcodecs element-wise filters fixedscaleoffset, quantize and astype
// (bytes -> bytes, as Zarr v2 applies them; array -> array before "bytes").
//
// Formats: https://numcodecs.readthedocs.io/en/stable/filter/fixedscaleoffset.html,
// .../quantize.html, .../astype.html
// JSON names: "numcodecs.fixedscaleoffset", "numcodecs.quantize",
// "numcodecs.astype"
// Configuration examples (Zarr v2: {"id": "fixedscaleoffset", "offset":
// 1000, "scale": 10, "dtype": "<f8", "astype": "<u1"}):
//
//	{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<u1"}}
//	{"name": "numcodecs.quantize", "configuration": {"digits": 2, "dtype": "<f8", "astype": "<f4"}}
//	{"name": "numcodecs.astype", "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// number is a JSON number of a configuration, remembering whether it was
// written as an integer (NumPy keeps integer arithmetic then).
type number struct {
	f     float64
	isInt bool
	raw   json.Number
}

func parseNumber(codec, field string, raw json.Number) (number, error) {
	f, err := raw.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return number{}, fmt.Errorf("%w: %s: %s %q is not a finite number", codecs.ErrInvalidConfig, codec, field, raw)
	}
	return number{f: f, isInt: !strings.ContainsAny(string(raw), ".eE") && math.Abs(f) < 1<<53, raw: raw}, nil
}

// Elementwise is one of the numcodecs filters that map each element of
// "dtype" to one element of "astype" and back: fixedscaleoffset, quantize
// and astype. The bytes are read as elements of dtype (byte order
// included) and encoded as elements of astype, so the encoded buffer is
// len/size(dtype)*size(astype) bytes. Arithmetic follows NumPy 2 (NEP 50:
// a Python number meets an array in the array's precision; float16
// through float32), so chunks match numcodecs byte for byte; float to
// integer casts truncate, and casts of NaN or out-of-range values, which C
// leaves undefined, give the integer's minimum. An Elementwise is
// immutable and safe for concurrent use.
//
//   - fixedscaleoffset {"offset", "scale", "dtype", "astype"}: encode
//     round((x - offset) * scale) as astype; decode enc / scale + offset
//     as dtype.
//   - quantize {"digits", "dtype", "astype"} (floats only): encode
//     round(x * 2^b) / 2^b with b = ceil(log2(10^digits)) as astype (lossy);
//     decode casts back.
//   - astype {"encode_dtype", "decode_dtype"}: encode casts decode_dtype
//     to encode_dtype, decode the other way.
type Elementwise struct {
	id            string
	dt, as        elemType
	offset, scale number
	digits        int
	qscale        float64 // quantize: 2^bits
}

// NewFixedScaleOffset returns fixedscaleoffset for the NumPy dtypes dtype
// and astype ("" means dtype), offset and scale as JSON numbers.
func NewFixedScaleOffset(offset, scale json.Number, dtypeStr, astype string) (*Elementwise, error) {
	const id = "fixedscaleoffset"
	e := &Elementwise{id: id}
	var err error
	if e.offset, err = parseNumber(prefix+id, "offset", offset); err != nil {
		return nil, err
	}
	if e.scale, err = parseNumber(prefix+id, "scale", scale); err != nil {
		return nil, err
	}
	if e.scale.f == 0 {
		return nil, fmt.Errorf("%w: %s%s: scale 0", codecs.ErrInvalidConfig, prefix, id)
	}
	return e, e.types(dtypeStr, astype, "dtype", "astype", false)
}

// NewQuantize returns quantize keeping digits decimal digits, for the float
// dtypes dtype and astype ("" means dtype).
func NewQuantize(digits int, dtypeStr, astype string) (*Elementwise, error) {
	if digits < -300 || digits > 300 {
		return nil, fmt.Errorf("%w: numcodecs.quantize: digits %d out of range", codecs.ErrInvalidConfig, digits)
	}
	e := &Elementwise{id: "quantize", digits: digits}
	if err := e.types(dtypeStr, astype, "dtype", "astype", true); err != nil {
		return nil, err
	}
	// As numcodecs: precision 10^-digits, its decimal exponent rounded away
	// from zero, then the power of two just above.
	exp := math.Log10(math.Pow(10, -float64(digits)))
	if exp < 0 {
		exp = math.Floor(exp)
	} else {
		exp = math.Ceil(exp)
	}
	e.qscale = math.Pow(2, math.Ceil(math.Log2(math.Pow(10, -exp))))
	return e, nil
}

// NewAsType returns astype, storing elements of decodeDType as encodeDType.
func NewAsType(encodeDType, decodeDType string) (*Elementwise, error) {
	e := &Elementwise{id: "astype"}
	return e, e.types(decodeDType, encodeDType, "decode_dtype", "encode_dtype", false)
}

func (e *Elementwise) types(dtypeStr, astype, dField, aField string, floats bool) error {
	var err error
	if e.dt, err = parseElem(prefix+e.id, dField, dtypeStr); err != nil {
		return err
	}
	if astype == "" {
		astype = dtypeStr
	}
	if e.as, err = parseElem(prefix+e.id, aField, astype); err != nil {
		return err
	}
	if floats && (e.dt.kind != dtype.Float || e.as.kind != dtype.Float) {
		return fmt.Errorf("%w: %s%s: %s %q and %s %q must be floats", codecs.ErrInvalidConfig, prefix, e.id, dField, dtypeStr, aField, astype)
	}
	return nil
}

func init() {
	codecs.Register(prefix+"fixedscaleoffset", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Offset *json.Number `json:"offset"`
			Scale  *json.Number `json:"scale"`
			DType  *string      `json:"dtype"`
			AsType *string      `json:"astype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Offset == nil || cfg.Scale == nil || cfg.DType == nil {
			return nil, fmt.Errorf("%w: numcodecs.fixedscaleoffset: configuration needs \"offset\", \"scale\" and \"dtype\"", codecs.ErrInvalidConfig)
		}
		return NewFixedScaleOffset(*cfg.Offset, *cfg.Scale, *cfg.DType, deref(cfg.AsType))
	})
	codecs.Register(prefix+"quantize", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Digits *int    `json:"digits"`
			DType  *string `json:"dtype"`
			AsType *string `json:"astype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Digits == nil || cfg.DType == nil {
			return nil, fmt.Errorf("%w: numcodecs.quantize: configuration needs \"digits\" and \"dtype\"", codecs.ErrInvalidConfig)
		}
		return NewQuantize(*cfg.Digits, *cfg.DType, deref(cfg.AsType))
	})
	codecs.Register(prefix+"astype", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Encode *string `json:"encode_dtype"`
			Decode *string `json:"decode_dtype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Encode == nil || cfg.Decode == nil {
			return nil, fmt.Errorf("%w: numcodecs.astype: configuration needs \"encode_dtype\" and \"decode_dtype\"", codecs.ErrInvalidConfig)
		}
		return NewAsType(*cfg.Encode, *cfg.Decode)
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Name returns "numcodecs.<id>".
func (e *Elementwise) Name() string { return prefix + e.id }

// Configuration returns the configuration as numcodecs writes it.
func (e *Elementwise) Configuration() any {
	switch e.id {
	case "fixedscaleoffset":
		return struct {
			Offset json.Number `json:"offset"`
			Scale  json.Number `json:"scale"`
			DType  string      `json:"dtype"`
			AsType string      `json:"astype"`
		}{e.offset.raw, e.scale.raw, e.dt.descr, e.as.descr}
	case "quantize":
		return struct {
			Digits int    `json:"digits"`
			DType  string `json:"dtype"`
			AsType string `json:"astype"`
		}{e.digits, e.dt.descr, e.as.descr}
	}
	return struct {
		Encode string `json:"encode_dtype"`
		Decode string `json:"decode_dtype"`
	}{e.as.descr, e.dt.descr}
}

// MaxEncodedSize returns n/size(dtype) elements of astype, rounded up.
func (e *Elementwise) MaxEncodedSize(n int) int {
	return (max(n, 0) + e.dt.size - 1) / e.dt.size * e.as.size
}

// Encode appends the encoding of src's dtype elements to dst. Input that
// is not a whole number of elements is ErrInvalidConfig.
func (e *Elementwise) Encode(dst, src []byte) ([]byte, error) {
	return mapElems(dst, src, e.dt, e.as, -1, e.Name(), codecs.ErrInvalidConfig, e.encodeOne)
}

// Decode appends the decoding of src's astype elements to dst. Input that
// is not a whole number of elements, or decoding to more than limit bytes
// (checked before allocating), is ErrCorrupt.
func (e *Elementwise) Decode(dst, src []byte, limit int) ([]byte, error) {
	out, err := mapElems(dst, src, e.as, e.dt, limit, e.Name(), codecs.ErrCorrupt, e.decodeOne)
	if err != nil {
		// The chunk's size does not fit the filter's types: most likely
		// the metadata names other types than the chunk was written with.
		dField, aField := "dtype", "astype"
		if e.id == "astype" {
			dField, aField = "decode_dtype", "encode_dtype"
		}
		return out, fmt.Errorf("%w (%w: does the array's metadata give the types the chunk was written with? %s %q, %s %q)",
			err, codecs.ErrInvalidConfig, dField, e.dt.descr, aField, e.as.descr)
	}
	return out, nil
}

// mapElems appends f of each in element of src, as an out element, to dst.
// limit < 0 means no limit.
func mapElems(dst, src []byte, in, out elemType, limit int, name string, sentinel error, f func(uint64) uint64) ([]byte, error) {
	if len(src)%in.size != 0 {
		return dst, fmt.Errorf("%w: %s: %d bytes are not a whole number of %q elements", sentinel, name, len(src), in.descr)
	}
	n := len(src) / in.size
	if limit >= 0 && n > limit/out.size {
		return dst, fmt.Errorf("%w: %s: %d elements of %q decode as %q to %d bytes, more than the %d of the chunk", codecs.ErrCorrupt, name, n, in.descr, out.descr, n*out.size, limit)
	}
	start := len(dst)
	res := ensure(dst, n*out.size)
	o := res[start:]
	for i := range n {
		out.store(o[i*out.size:], f(in.load(src[i*in.size:])))
	}
	return res, nil
}

// floatArith returns the float type of size bytes NumPy computes in when
// an array of it meets a Python number (float16 rounds through float32).
func floatArith(size int) elemType { return elemType{kind: dtype.Float, size: size} }

// op computes a (op) b in the precision of float type p, as NumPy does:
// both operands rounded to p, the result rounded to p.
func op(p elemType, a, b float64, f func(x, y float64) float64) float64 {
	switch p.size {
	case 8:
		return f(a, b)
	case 4:
		return float64(float32(f(float64(float32(a)), float64(float32(b)))))
	}
	x := dtype.Float16FromFloat64(a).Float64()
	y := dtype.Float16FromFloat64(b).Float64()
	return dtype.Float16FromFloat32(float32(f(x, y))).Float64()
}

func sub(x, y float64) float64 { return x - y }
func mul(x, y float64) float64 { return x * y }
func div(x, y float64) float64 { return x / y }
func add(x, y float64) float64 { return x + y }

// value is an element read as NumPy sees it.
func value(t elemType, bits uint64) (f float64, i int64, isFloat bool) {
	switch t.kind {
	case dtype.Float:
		return t.float(bits), 0, true
	case dtype.Bool:
		return 0, int64(bits & 1), false
	case dtype.Uint:
		return 0, int64(bits), false // bits fit: at most 64 bits, read as two's complement for >= 2^63
	}
	return 0, int64(t.extend(bits)), false
}

// fromFloat casts a float to element type t (NumPy's astype).
func fromFloat(t elemType, f float64) uint64 {
	switch t.kind {
	case dtype.Float:
		return t.round(f)
	case dtype.Bool:
		if f != 0 {
			return 1
		}
		return 0
	}
	tr := math.Trunc(f)
	switch {
	case math.IsNaN(f) || tr >= 1<<64 || tr < -(1<<63):
		return 1 << 63 // undefined in C; x86's "integer indefinite"
	case tr >= 1<<63:
		return uint64(tr)
	}
	return uint64(int64(tr))
}

// fromInt casts an integer (uns: read as unsigned) to element type t.
func fromInt(t elemType, i int64, uns bool) uint64 {
	switch t.kind {
	case dtype.Float:
		if uns {
			return t.round(float64(uint64(i)))
		}
		return t.round(float64(i))
	case dtype.Bool:
		if i != 0 {
			return 1
		}
		return 0
	}
	return uint64(i)
}

// cast converts one element of from to one of to, as NumPy's astype.
func cast(from, to elemType, bits uint64) uint64 {
	f, i, isFloat := value(from, bits)
	if isFloat {
		return fromFloat(to, f)
	}
	return fromInt(to, i, from.kind == dtype.Uint)
}

func (e *Elementwise) encodeOne(bits uint64) uint64 {
	switch e.id {
	case "astype":
		return cast(e.dt, e.as, bits)
	case "quantize":
		p := floatArith(e.dt.size)
		t := op(p, e.qscale, e.dt.float(bits), mul)
		t = op(p, math.RoundToEven(t), e.qscale, div)
		return fromFloat(e.as, t)
	}
	f, i, isFloat := value(e.dt, bits)
	uns := e.dt.kind == dtype.Uint
	if !isFloat && e.offset.isInt {
		// Integer arithmetic in dtype, wrapping.
		i = int64(e.dt.extend(uint64(i - int64(e.offset.f))))
		if e.scale.isInt {
			i = int64(e.dt.extend(uint64(i * int64(e.scale.f))))
			return fromInt(e.as, i, uns)
		}
		if uns {
			f = float64(uint64(i))
		} else {
			f = float64(i)
		}
		return fromFloat(e.as, math.RoundToEven(f*e.scale.f))
	}
	p := floatArith(8)
	if isFloat {
		p = floatArith(e.dt.size)
	} else if uns {
		f = float64(uint64(i))
	} else {
		f = float64(i)
	}
	t := op(p, op(p, f, e.offset.f, sub), e.scale.f, mul)
	return fromFloat(e.as, math.RoundToEven(t))
}

func (e *Elementwise) decodeOne(bits uint64) uint64 {
	if e.id != "fixedscaleoffset" {
		return cast(e.as, e.dt, bits)
	}
	f, i, isFloat := value(e.as, bits)
	p := floatArith(8)
	if isFloat {
		p = floatArith(e.as.size)
	} else if e.as.kind == dtype.Uint {
		f = float64(uint64(i))
	} else {
		f = float64(i)
	}
	return fromFloat(e.dt, op(p, op(p, f, e.scale.f, div), e.offset.f, add))
}
