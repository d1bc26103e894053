// Package pyjson reads JSON as Python's json module writes it
// (https://docs.python.org/3/library/json.html): standard JSON plus the
// bare tokens NaN, Infinity and -Infinity that allow_nan=True writes, as
// numcodecs' json2 object codec stores them. Values are JSON-like Go
// values; input is untrusted, so nesting and the number of values are
// bounded.
package pyjson

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax reports input that is not one JSON value within the limits.
var ErrSyntax = errors.New("malformed JSON")

// Limits bound what one call builds.
type Limits struct {
	MaxDepth  int // deepest nesting (default 64)
	MaxValues int // most values in all (default 1<<20)
}

type parser struct {
	b      []byte
	p      int
	values int
	lim    Limits
	build  bool // false: only check and skip
}

func newParser(b []byte, lim Limits, build bool) *parser {
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = 64
	}
	if lim.MaxValues <= 0 {
		lim.MaxValues = 1 << 20
	}
	return &parser{b: b, lim: lim, build: build}
}

func (r *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, r.p, fmt.Sprintf(format, args...))
}

// Decode returns the one value b holds (whitespace around it allowed):
// nil, bool, int64 for integers that fit (float64 past them), float64
// (NaN and the infinities included), string, []any, map[string]any.
func Decode(b []byte, lim Limits) (any, error) {
	r := newParser(b, lim, true)
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	r.space()
	if r.p != len(b) {
		return nil, r.errf("%d bytes after the value", len(b)-r.p)
	}
	return v, nil
}

// SplitArray returns the text of each element of the array b holds
// (sub-slices of b, without surrounding whitespace), every one checked
// to be well formed.
func SplitArray(b []byte, lim Limits) ([][]byte, error) {
	r := newParser(b, lim, false)
	r.space()
	if !r.eat('[') {
		return nil, r.errf("want an array")
	}
	var out [][]byte
	r.space()
	if r.eat(']') {
		return out, r.end()
	}
	for {
		r.space()
		start := r.p
		if _, err := r.value(1); err != nil {
			return nil, err
		}
		out = append(out, b[start:r.p:r.p])
		r.space()
		if r.eat(']') {
			return out, r.end()
		}
		if !r.eat(',') {
			return nil, r.errf("want , or ] in an array")
		}
	}
}

func (r *parser) end() error {
	r.space()
	if r.p != len(r.b) {
		return r.errf("%d bytes after the value", len(r.b)-r.p)
	}
	return nil
}

func (r *parser) space() {
	for r.p < len(r.b) {
		switch r.b[r.p] {
		case ' ', '\t', '\n', '\r':
			r.p++
		default:
			return
		}
	}
}

func (r *parser) eat(c byte) bool {
	if r.p < len(r.b) && r.b[r.p] == c {
		r.p++
		return true
	}
	return false
}

func (r *parser) word(w string) bool {
	if len(r.b)-r.p >= len(w) && string(r.b[r.p:r.p+len(w)]) == w {
		r.p += len(w)
		return true
	}
	return false
}

func (r *parser) value(depth int) (any, error) {
	if depth > r.lim.MaxDepth {
		return nil, r.errf("nested deeper than %d", r.lim.MaxDepth)
	}
	if r.values++; r.values > r.lim.MaxValues {
		return nil, r.errf("more than %d values", r.lim.MaxValues)
	}
	r.space()
	if r.p >= len(r.b) {
		return nil, r.errf("unexpected end")
	}
	switch c := r.b[r.p]; {
	case c == '{':
		return r.object(depth)
	case c == '[':
		return r.array(depth)
	case c == '"':
		return r.str()
	case r.word("null"):
		return nil, nil
	case r.word("true"):
		return true, nil
	case r.word("false"):
		return false, nil
	case r.word("NaN"):
		return math.NaN(), nil
	case r.word("Infinity"):
		return math.Inf(1), nil
	case r.word("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, r.errf("unexpected %q", r.b[r.p])
}

func (r *parser) number() (any, error) {
	start := r.p
	integer := true
	r.eat('-')
	digits := func() int {
		n := 0
		for r.p < len(r.b) && r.b[r.p] >= '0' && r.b[r.p] <= '9' {
			r.p++
			n++
		}
		return n
	}
	if r.eat('0') {
		// no leading zeros
	} else if digits() == 0 {
		return nil, r.errf("bad number")
	}
	if r.eat('.') {
		integer = false
		if digits() == 0 {
			return nil, r.errf("bad number")
		}
	}
	if r.eat('e') || r.eat('E') {
		integer = false
		if !r.eat('+') {
			r.eat('-')
		}
		if digits() == 0 {
			return nil, r.errf("bad exponent")
		}
	}
	if !r.build {
		return nil, nil
	}
	text := string(r.b[start:r.p])
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, r.errf("bad number %q", text)
	}
	return f, nil
}

func (r *parser) str() (any, error) {
	r.p++ // the quote
	var out []byte
	start := r.p
	for {
		if r.p >= len(r.b) {
			return nil, r.errf("unterminated string")
		}
		c := r.b[r.p]
		switch {
		case c == '"':
			if !utf8.Valid(r.b[start:r.p]) {
				return nil, r.errf("string is not UTF-8")
			}
			out = append(out, r.b[start:r.p]...)
			r.p++
			if !r.build {
				return nil, nil
			}
			return string(out), nil
		case c < 0x20:
			return nil, r.errf("control character in a string")
		case c == '\\':
			out = append(out, r.b[start:r.p]...)
			r.p++
			if r.p >= len(r.b) {
				return nil, r.errf("unterminated escape")
			}
			e := r.b[r.p]
			r.p++
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				u, err := r.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(rune(u)) && r.word(`\u`) {
					lo, err := r.hex4()
					if err != nil {
						return nil, err
					}
					out = utf8.AppendRune(out, utf16.DecodeRune(rune(u), rune(lo)))
				} else {
					out = utf8.AppendRune(out, rune(u)) // a lone surrogate becomes U+FFFD
				}
			default:
				return nil, r.errf("bad escape \\%c", e)
			}
			start = r.p
		default:
			r.p++
		}
	}
}

func (r *parser) hex4() (uint64, error) {
	if len(r.b)-r.p < 4 {
		return 0, r.errf("short \\u escape")
	}
	u, err := strconv.ParseUint(string(r.b[r.p:r.p+4]), 16, 16)
	if err != nil {
		return 0, r.errf("bad \\u escape")
	}
	r.p += 4
	return u, nil
}

func (r *parser) array(depth int) (any, error) {
	r.p++
	var out []any
	if r.build {
		out = []any{}
	}
	r.space()
	if r.eat(']') {
		return out, nil
	}
	for {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if r.build {
			out = append(out, v)
		}
		r.space()
		if r.eat(']') {
			return out, nil
		}
		if !r.eat(',') {
			return nil, r.errf("want , or ] in an array")
		}
	}
}

func (r *parser) object(depth int) (any, error) {
	r.p++
	var out map[string]any
	if r.build {
		out = map[string]any{}
	}
	r.space()
	if r.eat('}') {
		return out, nil
	}
	for {
		r.space()
		if r.p >= len(r.b) || r.b[r.p] != '"' {
			return nil, r.errf("want a string key")
		}
		wasBuild := r.build
		r.build = true
		k, err := r.str()
		r.build = wasBuild
		if err != nil {
			return nil, err
		}
		r.space()
		if !r.eat(':') {
			return nil, r.errf("want : after a key")
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if r.build {
			out[k.(string)] = v
		}
		r.space()
		if r.eat('}') {
			return out, nil
		}
		if !r.eat(',') {
			return nil, r.errf("want , or } in an object")
		}
	}
}

// FormatFloat formats a finite f as Python's repr does (and so its json
// module): the shortest digits that read back to f, positional between
// 1e-4 and 1e16 with at least one digit after the point ("1.0", "0.001"),
// else exponential with a signed two-digit exponent ("1e+16", "1.5e-07").
func FormatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde±XX"
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // position of the decimal point after the first digit group
	var out string
	if f == 0 {
		out = "0.0"
	} else if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			out = digits[:decpt] + "." + digits[decpt:]
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out = fmt.Sprintf("%se%s%02d", m, sign, exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}

// Append appends v as Python's json.dumps writes it with numcodecs' json2
// settings (ensure_ascii, allow_nan, sort_keys, separators "," and ":"):
// nil, bool, Go integers, float32/float64 (Python's repr; NaN, Infinity,
// -Infinity), string, []byte is refused (JSON has no bytes), []any,
// map[string]any (keys sorted). Other types are an error.
func Append(dst []byte, v any) ([]byte, error) { return appendValue(dst, v, true) }

// AppendText is Append for people: strings keep their non-ASCII text
// (json.dumps with ensure_ascii=False).
func AppendText(dst []byte, v any) ([]byte, error) { return appendValue(dst, v, false) }

func appendValue(dst []byte, v any, ascii bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float32:
		return appendFloat(dst, float64(x)), nil
	case float64:
		return appendFloat(dst, x), nil
	case string:
		return appendString(dst, x, ascii), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, ascii); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, k, ascii), ':')
			var err error
			if dst, err = appendValue(dst, x[k], ascii); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("pyjson: cannot encode %T", v)
}

func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return append(dst, FormatFloat(f)...)
}

// AppendString appends s quoted as json.dumps(ensure_ascii=True) writes
// it: ", \ and control characters escaped, every non-ASCII code point as
// \uXXXX (a surrogate pair past the BMP).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

func appendString(dst []byte, s string, ascii bool) []byte {
	const hex = "0123456789abcdef"
	u4 := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"':
			dst = append(dst, '\\', '"')
		case r == '\\':
			dst = append(dst, '\\', '\\')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r < 0x20:
			dst = u4(dst, r)
		case r < 0x80:
			dst = append(dst, byte(r))
		case !ascii:
			dst = utf8.AppendRune(dst, r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			dst = u4(u4(dst, hi), lo)
		default:
			dst = u4(dst, r)
		}
	}
	return append(dst, '"')
}
