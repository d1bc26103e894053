package dtype

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gozarr/gozarr/internal/pyjson"
	"math"
	"strconv"
	"unicode/utf8"
)

// parseExtFill decodes the fill value of an extension type (v2 and v3 take
// the same forms, as zarr-python 3.4 writes them): a JSON string for
// fixed_length_utf32, base64 for null_terminated_bytes (shorter values are
// zero-padded), an integer or "NaT" for datetime64/timedelta64, and a float
// form for bfloat16.
func parseExtFill(d DataType, v any, out []byte, v2 bool) error {
	switch d.kind {
	case String:
		s, ok := v.(string)
		if n, isNum := v.(json.Number); !ok && v2 && isNum && n == "0" {
			// zarr-python 2 wrote 0 for "<U" arrays and read it as
			// np.zeros of the dtype: "".
			clear(out)
			return nil
		}
		if !ok {
			return errors.New("want a string")
		}
		return EncodeString(d, s, out)
	case Bytes:
		s, ok := v.(string)
		if !ok {
			return errors.New("want a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("bad base64: %v", err)
		}
		if len(b) > d.size {
			return fmt.Errorf("base64 holds %d bytes, more than %d", len(b), d.size)
		}
		copy(out, b)
		return nil
	case Datetime, Timedelta:
		if s, ok := v.(string); ok && s == "NaT" {
			binary.LittleEndian.PutUint64(out, 1<<63) // NaT
			return nil
		}
		if _, ok := v.(json.Number); !ok {
			return errors.New("want an integer or \"NaT\"")
		}
		return parseFillValue(TypeInt64, v, out, v2)
	case BFloat:
		return parseBFloatInto(v, out, !v2)
	}
	return errors.New("unsupported data type")
}

func parseBFloatInto(v any, out []byte, allowHex bool) error {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !isRangeErr(err) {
			return err
		}
		binary.LittleEndian.PutUint16(out, uint16(BFloat16FromFloat64(f)))
		return nil
	case string:
		var bits uint16
		switch {
		case x == "NaN":
			bits = 0x7fc0
		case x == "Infinity":
			bits = 0x7f80
		case x == "-Infinity":
			bits = 0xff80
		case allowHex && len(x) == 6 && (x[:2] == "0x" || x[:2] == "0X"):
			u, err := strconv.ParseUint(x[2:], 16, 16)
			if err != nil {
				return fmt.Errorf("bad hex fill %q", x)
			}
			bits = uint16(u)
		default:
			return fmt.Errorf("unknown float string %q (hex fills need exactly 4 digits)", x)
		}
		binary.LittleEndian.PutUint16(out, bits)
		return nil
	}
	return errors.New("want a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
}

func formatExtFill(d DataType, elem []byte, v2 bool) (json.RawMessage, error) {
	switch d.kind {
	case String:
		s, err := DecodeString(d, elem)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidFill, err)
		}
		b, _ := json.Marshal(s)
		return b, nil
	case Bytes:
		return json.RawMessage(strconv.Quote(base64.StdEncoding.EncodeToString(bytes.TrimRight(elem, "\x00")))), nil
	case Datetime, Timedelta:
		return json.RawMessage(strconv.FormatInt(int64(binary.LittleEndian.Uint64(elem)), 10)), nil
	case BFloat:
		h := BFloat16(binary.LittleEndian.Uint16(elem))
		f := float64(h.Float32())
		switch {
		case math.IsNaN(f):
			if h&0x7fff == 0x7fc0 || v2 {
				return json.RawMessage(`"NaN"`), nil
			}
			return json.RawMessage(fmt.Sprintf(`"0x%04x"`, uint16(h))), nil
		case math.IsInf(f, 1):
			return json.RawMessage(`"Infinity"`), nil
		case math.IsInf(f, -1):
			return json.RawMessage(`"-Infinity"`), nil
		}
		return json.RawMessage(pyjson.FormatFloat(f)), nil
	}
	return nil, fmt.Errorf("%w: unsupported data type %s", ErrInvalidFill, d)
}

// BFloat16 is a bfloat16 number held as its bit pattern: the top half of a
// float32 (1 sign, 8 exponent, 7 mantissa bits).
type BFloat16 uint16

// Float32 returns h as a float32; the conversion is exact.
func (h BFloat16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

// BFloat16FromFloat64 rounds f to the nearest bfloat16, ties to even, with
// one rounding (no double rounding through float32). NaN stays a quiet NaN
// of the same sign.
func BFloat16FromFloat64(f float64) BFloat16 {
	if math.IsNaN(f) {
		return BFloat16(uint16(math.Float64bits(f)>>48)&0x8000 | 0x7fc0)
	}
	// Round to float32 by truncation with a sticky bit (round to odd); 24
	// bits then round correctly to bfloat16's 8.
	f32 := float32(f)
	t := math.Float32bits(f32)
	if float64(f32) != f {
		if math.Abs(float64(f32)) > math.Abs(f) {
			t-- // the truncated neighbour (magnitude one ulp less)
		}
		t |= 1
	}
	return BFloat16((t + 0x7fff + (t>>16)&1) >> 16)
}

// BFloat16FromFloat32 rounds f to the nearest bfloat16, ties to even.
func BFloat16FromFloat32(f float32) BFloat16 { return BFloat16FromFloat64(float64(f)) }

// DecodeString returns the text of one fixed_length_utf32 element (its
// trailing NUL code points removed, as NumPy does) or one
// null_terminated_bytes element (its trailing NUL bytes removed). A code
// point that is not valid Unicode is an error wrapping ErrUnknown.
func DecodeString(d DataType, elem []byte) (string, error) {
	if len(elem) != d.size {
		return "", fmt.Errorf("%w: %d bytes for %s", ErrUnknown, len(elem), d)
	}
	switch d.kind {
	case Bytes:
		return string(bytes.TrimRight(elem, "\x00")), nil
	case String:
		n := len(elem) / 4
		for n > 0 && binary.LittleEndian.Uint32(elem[4*(n-1):]) == 0 {
			n--
		}
		buf := make([]byte, 0, n)
		for i := range n {
			r := rune(binary.LittleEndian.Uint32(elem[4*i:]))
			if !utf8.ValidRune(r) {
				return "", fmt.Errorf("%w: %s element holds code point %#x", ErrUnknown, d, uint32(r))
			}
			buf = utf8.AppendRune(buf, r)
		}
		return string(buf), nil
	}
	return "", fmt.Errorf("%w: %s is not a fixed-width string type", ErrUnknown, d)
}

// EncodeString writes s as one element of d (fixed_length_utf32 or
// null_terminated_bytes) into out (d.Size() bytes), zero-padded. Text
// longer than the type holds, or invalid UTF-8 for fixed_length_utf32, is
// an error wrapping ErrUnknown.
func EncodeString(d DataType, s string, out []byte) error {
	if len(out) != d.size {
		return fmt.Errorf("%w: %d bytes for %s", ErrUnknown, len(out), d)
	}
	switch d.kind {
	case Bytes:
		if len(s) > d.size {
			return fmt.Errorf("%w: %d bytes do not fit %s", ErrUnknown, len(s), d)
		}
		clear(out[copy(out, s):])
		return nil
	case String:
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: %q is not valid UTF-8", ErrUnknown, s)
		}
		if n := utf8.RuneCountInString(s); n > d.size/4 {
			return fmt.Errorf("%w: %d code points do not fit %s", ErrUnknown, n, d)
		}
		clear(out)
		i := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(out[i:], uint32(r))
			i += 4
		}
		return nil
	}
	return fmt.Errorf("%w: %s is not a fixed-width string type", ErrUnknown, d)
}

// Strings decodes a buffer of fixed-width string elements (memory
// representation, as ReadBytesInto returns it) into Go strings.
func Strings(d DataType, b []byte) ([]string, error) {
	if d.kind != String && d.kind != Bytes {
		return nil, fmt.Errorf("%w: %s is not a fixed-width string type", ErrUnknown, d)
	}
	if len(b)%d.size != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %s elements", ErrUnknown, len(b), d)
	}
	out := make([]string, len(b)/d.size)
	for i := range out {
		s, err := DecodeString(d, b[i*d.size:(i+1)*d.size])
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = s
	}
	return out, nil
}

// PutStrings encodes ss as fixed-width string elements of d into a new
// buffer, ready for WriteBytes.
func PutStrings(d DataType, ss []string) ([]byte, error) {
	if d.kind != String && d.kind != Bytes {
		return nil, fmt.Errorf("%w: %s is not a fixed-width string type", ErrUnknown, d)
	}
	out := make([]byte, len(ss)*d.size)
	for i, s := range ss {
		if err := EncodeString(d, s, out[i*d.size:(i+1)*d.size]); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return out, nil
}
