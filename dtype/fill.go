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
	"math/big"
	"strconv"
	"strings"
)

// ErrInvalidFill reports a fill value that is malformed or does not fit its
// data type (wrong JSON type, integer out of range, hex string of the wrong
// length, ...).
var ErrInvalidFill = errors.New("invalid fill value")

// maxFillJSON bounds the size of a fill value document; no valid fill value
// of a core type comes near it.
const maxFillJSON = 1 << 16

// ParseFill decodes a Zarr v3 fill_value for data type d and returns one
// element in memory representation: little-endian, d.Size() bytes.
//
// Accepted encodings (Zarr v3 core, "permitted fill values"):
//   - bool: true or false.
//   - integers: a JSON number with no fraction or exponent, decoded exactly
//     (uint64 max and int64 min included) and range-checked.
//   - floats: a JSON number (rounded to nearest even, overflow becomes
//     infinity), "NaN" (the canonical quiet NaN), "Infinity", "-Infinity",
//     or "0x" followed by exactly 2*size hex digits giving the bit pattern
//     (any NaN payload and -0.0 are kept).
//   - complex: [re, im], each part in any float form of half the size.
//   - raw bits rN: a JSON array of N/8 integers in [0, 255]; also a base64
//     string of N/8 bytes, which is what zarr-python writes for raw bytes.
//   - variable-length "string": a JSON string; "variable_length_bytes": a
//     base64 string. The result is then the content, of any length.
//
// Errors wrap ErrInvalidFill. ParseFill never panics and is safe for
// concurrent use.
func ParseFill(d DataType, raw json.RawMessage) ([]byte, error) {
	if d.VarLen() {
		b, _, err := parseVarFill(d, raw, false)
		return b, err
	}
	v, err := decodeFillJSON(d, raw)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fillErr(d, raw, "null is not a fill value in Zarr v3")
	}
	out := make([]byte, d.Size())
	if err := parseFillValue(d, v, out, false); err != nil {
		return nil, fillErr(d, raw, err.Error())
	}
	return out, nil
}

// ParseFillV2 decodes a Zarr v2 .zarray fill_value for data type d. A JSON
// null means "no fill value": it returns (nil, false, nil). Otherwise it
// returns one element in memory representation (little-endian, whatever the
// array's stored byte order) and ok=true.
//
// The v2 encodings are those of v3 with these differences: floats take
// numbers, "NaN", "Infinity" and "-Infinity" but no hex strings; integers
// and bools may be written as integral numbers such as 0.0 (bool 0 or 1);
// raw/void types (|V, |S) take a base64 string. Errors wrap ErrInvalidFill.
func ParseFillV2(d DataType, raw json.RawMessage) (elem []byte, ok bool, err error) {
	if d.VarLen() {
		return parseVarFill(d, raw, true)
	}
	v, err := decodeFillJSON(d, raw)
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		return nil, false, nil
	}
	out := make([]byte, d.Size())
	if err := parseFillValue(d, v, out, true); err != nil {
		return nil, false, fillErr(d, raw, err.Error())
	}
	return out, true, nil
}

func fillErr(d DataType, raw json.RawMessage, msg string) error {
	s := string(raw)
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return fmt.Errorf("%w: %s for %s: %s", ErrInvalidFill, s, d.Name(), msg)
}

func decodeFillJSON(d DataType, raw json.RawMessage) (any, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("%w: invalid data type", ErrInvalidFill)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: missing for %s", ErrInvalidFill, d.Name())
	}
	if len(raw) > maxFillJSON {
		return nil, fmt.Errorf("%w: %d bytes of JSON for %s", ErrInvalidFill, len(raw), d.Name())
	}
	if !json.Valid(raw) {
		return nil, fillErr(d, raw, "malformed JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fillErr(d, raw, err.Error())
	}
	return v, nil
}

func parseFillValue(d DataType, v any, out []byte, v2 bool) error {
	switch d.kind {
	case String, Bytes, Datetime, Timedelta, BFloat:
		return parseExtFill(d, v, out, v2)
	case NarrowFloat, NarrowInt, NarrowUint:
		return parseNarrowFill(d, v, out)
	case Bool:
		switch x := v.(type) {
		case bool:
			if x {
				out[0] = 1
			}
			return nil
		case json.Number:
			if v2 {
				n, err := parseInteger(string(x), true)
				if err == nil && (n.Sign() == 0 || n.Cmp(big.NewInt(1)) == 0) {
					out[0] = byte(n.Int64())
					return nil
				}
			}
		}
		return errors.New("want true or false")
	case Int, Uint:
		num, ok := v.(json.Number)
		if !ok {
			return errors.New("want an integer")
		}
		n, err := parseInteger(string(num), v2)
		if err != nil {
			return err
		}
		return putInteger(d, n, out)
	case Float:
		return parseFloatInto(d.size, v, out, !v2)
	case Complex:
		arr, ok := v.([]any)
		if !ok || len(arr) != 2 {
			return errors.New("want [real, imaginary]")
		}
		h := d.size / 2
		if err := parseFloatInto(h, arr[0], out[:h], !v2); err != nil {
			return fmt.Errorf("real part: %v", err)
		}
		if err := parseFloatInto(h, arr[1], out[h:], !v2); err != nil {
			return fmt.Errorf("imaginary part: %v", err)
		}
		return nil
	case Raw:
		switch x := v.(type) {
		case []any:
			if v2 {
				break
			}
			if len(x) != d.size {
				return fmt.Errorf("want %d integers in [0, 255], got %d", d.size, len(x))
			}
			for i, e := range x {
				num, ok := e.(json.Number)
				if !ok {
					return fmt.Errorf("element %d is not an integer", i)
				}
				b, err := strconv.ParseUint(string(num), 10, 8)
				if err != nil {
					return fmt.Errorf("element %d: want an integer in [0, 255]", i)
				}
				out[i] = byte(b)
			}
			return nil
		case string:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return fmt.Errorf("bad base64: %v", err)
			}
			if len(b) != d.size {
				return fmt.Errorf("base64 holds %d bytes, want %d", len(b), d.size)
			}
			copy(out, b)
			return nil
		}
		if v2 {
			return fmt.Errorf("want a base64 string of %d bytes", d.size)
		}
		return fmt.Errorf("want an array of %d integers in [0, 255]", d.size)
	}
	return errors.New("unsupported data type")
}

// parseInteger parses a JSON number as an exact integer. Unless lenient,
// the number must have no fraction or exponent part (Zarr v3); lenient
// accepts integral values such as 1.0 or 1e3 (Zarr v2 writers).
func parseInteger(s string, lenient bool) (*big.Int, error) {
	if !strings.ContainsAny(s, ".eE") {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, errors.New("want an integer")
		}
		return n, nil
	}
	if !lenient {
		return nil, errors.New("want an integer with no fraction or exponent")
	}
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return nil, errors.New("want an integer")
		}
		exp = e
	}
	if strings.Trim(mant, "-+0.") == "" {
		return new(big.Int), nil // zero whatever the exponent
	}
	if exp > 64 || exp < -(int64(len(mant))+64) {
		return nil, errors.New("integer out of range")
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return nil, errors.New("want an integral number")
	}
	return new(big.Int).Set(r.Num()), nil
}

func putInteger(d DataType, n *big.Int, out []byte) error {
	bits := uint(8 * d.size)
	var u uint64
	if d.kind == Uint {
		if n.Sign() < 0 || n.BitLen() > int(bits) {
			return fmt.Errorf("%s out of range for %s", n, d.Name())
		}
		u = n.Uint64()
	} else {
		lo := new(big.Int).Lsh(big.NewInt(-1), bits-1)                                 // -2^(bits-1)
		hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1)) // 2^(bits-1)-1
		if n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
			return fmt.Errorf("%s out of range for %s", n, d.Name())
		}
		u = uint64(n.Int64())
	}
	for i := range out {
		out[i] = byte(u >> (8 * i))
	}
	return nil
}

// parseFloatInto parses one float of size bytes (2, 4 or 8) into out.
func parseFloatInto(size int, v any, out []byte, allowHex bool) error {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		switch size {
		case 2:
			binary.LittleEndian.PutUint16(out, uint16(float16FromDecimal(s)))
		case 4:
			f, err := strconv.ParseFloat(s, 32)
			if err != nil && !isRangeErr(err) {
				return err
			}
			binary.LittleEndian.PutUint32(out, math.Float32bits(float32(f)))
		case 8:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !isRangeErr(err) {
				return err
			}
			binary.LittleEndian.PutUint64(out, math.Float64bits(f))
		}
		return nil
	case string:
		var bits uint64
		switch {
		case x == "NaN":
			bits = map[int]uint64{2: 0x7e00, 4: 0x7fc00000, 8: 0x7ff8000000000000}[size]
		case x == "Infinity":
			bits = map[int]uint64{2: 0x7c00, 4: 0x7f800000, 8: 0x7ff0000000000000}[size]
		case x == "-Infinity":
			bits = map[int]uint64{2: 0xfc00, 4: 0xff800000, 8: 0xfff0000000000000}[size]
		case allowHex && (strings.HasPrefix(x, "0x") || strings.HasPrefix(x, "0X")):
			hex := x[2:]
			if len(hex) != 2*size {
				return fmt.Errorf("hex fill %q needs exactly %d hex digits", x, 2*size)
			}
			u, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				return fmt.Errorf("bad hex fill %q", x)
			}
			bits = u
		default:
			return fmt.Errorf("unknown float string %q", x)
		}
		for i := 0; i < size; i++ {
			out[i] = byte(bits >> (8 * i))
		}
		return nil
	}
	return errors.New("want a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

// float16FromDecimal rounds the decimal JSON number s to the nearest
// float16. It goes through float64 and, when the float64 lies exactly half
// way between two float16 values, settles the tie against the exact decimal
// so that no double rounding happens.
func float16FromDecimal(s string) Float16 {
	f, _ := strconv.ParseFloat(s, 64) // s is a valid JSON number; range errors give ±Inf/0
	h, tie := float16Round(f)
	if !tie || len(s) > 800 {
		return h
	}
	exact, ok := new(big.Rat).SetString(s)
	if !ok {
		return h
	}
	t := new(big.Rat).SetFloat64(f)
	switch exact.Cmp(t) {
	case 1:
		h, _ = float16Round(math.Nextafter(f, math.Inf(1)))
	case -1:
		h, _ = float16Round(math.Nextafter(f, math.Inf(-1)))
	}
	return h
}

// FormatFill returns the Zarr v3 JSON fill_value of one element elem (memory
// representation, d.Size() bytes), as zarr-python writes it: JSON booleans,
// exact integers, floats in Python's repr form (2.5, 0.0, -0.0, 1e-05),
// "NaN" for the canonical quiet NaN and "0x..." for any other NaN (so
// payloads survive), "Infinity"/"-Infinity", [re, im] for complex, and an
// array of byte values for raw types. Errors wrap ErrInvalidFill.
func FormatFill(d DataType, elem []byte) (json.RawMessage, error) {
	return formatFill(d, elem, false)
}

// FormatFillV2 returns the Zarr v2 JSON fill_value of elem: null when elem
// is nil, otherwise as FormatFill except that every NaN is written "NaN"
// (v2 has no way to write payloads) and raw types are base64 strings.
func FormatFillV2(d DataType, elem []byte) (json.RawMessage, error) {
	if elem == nil {
		return json.RawMessage("null"), nil
	}
	return formatFill(d, elem, true)
}

func formatFill(d DataType, elem []byte, v2 bool) (json.RawMessage, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("%w: invalid data type", ErrInvalidFill)
	}
	if d.VarLen() {
		return formatVarFill(d, elem)
	}
	if len(elem) != d.Size() {
		return nil, fmt.Errorf("%w: %d bytes for %s, want %d", ErrInvalidFill, len(elem), d.Name(), d.Size())
	}
	switch d.kind {
	case String, Bytes, Datetime, Timedelta, BFloat:
		return formatExtFill(d, elem, v2)
	case NarrowFloat, NarrowInt, NarrowUint:
		return formatNarrowFill(d, elem[0])
	case Bool:
		switch elem[0] {
		case 0:
			return json.RawMessage("false"), nil
		case 1:
			return json.RawMessage("true"), nil
		}
		return nil, fmt.Errorf("%w: bool byte %d", ErrInvalidFill, elem[0])
	case Int, Uint:
		var u uint64
		for i := range elem {
			u |= uint64(elem[i]) << (8 * i)
		}
		if d.kind == Uint {
			return json.RawMessage(strconv.FormatUint(u, 10)), nil
		}
		shift := uint(64 - 8*d.size)
		return json.RawMessage(strconv.FormatInt(int64(u<<shift)>>shift, 10)), nil
	case Float:
		return json.RawMessage(formatFloat(elem, v2)), nil
	case Complex:
		h := d.size / 2
		return json.RawMessage("[" + formatFloat(elem[:h], v2) + ", " + formatFloat(elem[h:], v2) + "]"), nil
	case Raw:
		if v2 {
			return json.RawMessage(strconv.Quote(base64.StdEncoding.EncodeToString(elem))), nil
		}
		var sb strings.Builder
		sb.WriteByte('[')
		for i, b := range elem {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(strconv.Itoa(int(b)))
		}
		sb.WriteByte(']')
		return json.RawMessage(sb.String()), nil
	}
	return nil, fmt.Errorf("%w: unsupported data type %s", ErrInvalidFill, d.Name())
}

// formatFloat writes one float (2, 4 or 8 bytes, little-endian) as JSON.
func formatFloat(b []byte, v2 bool) string {
	var f float64
	var bits uint64
	canonicalNaN := false
	switch len(b) {
	case 2:
		h := Float16(binary.LittleEndian.Uint16(b))
		bits, f, canonicalNaN = uint64(h), h.Float64(), h == Float16NaN
	case 4:
		u := binary.LittleEndian.Uint32(b)
		bits, f, canonicalNaN = uint64(u), float64(math.Float32frombits(u)), u == 0x7fc00000
	default:
		u := binary.LittleEndian.Uint64(b)
		bits, f, canonicalNaN = u, math.Float64frombits(u), u == 0x7ff8000000000000
	}
	switch {
	case math.IsNaN(f):
		if canonicalNaN || v2 {
			return `"NaN"`
		}
		return fmt.Sprintf(`"0x%0*x"`, 2*len(b), bits)
	case math.IsInf(f, 1):
		return `"Infinity"`
	case math.IsInf(f, -1):
		return `"-Infinity"`
	}
	return pyjson.FormatFloat(f)
}
