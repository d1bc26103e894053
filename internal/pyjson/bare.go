package pyjson

import "bytes"

// Bare is a bare NaN, Infinity or -Infinity token in a document, as
// Python's json.dumps writes non-finite floats (allow_nan=True).
type Bare struct {
	Offset int    // of the token's first byte
	Token  string // "NaN", "Infinity" or "-Infinity"
	Key    string // the object member it is the value of; "" in an array or at the top
	Line   int    // 1-based line of Offset
}

// BareTokens lists the bare tokens of b, outside strings, in order. b need
// not be valid JSON otherwise: the scan only follows strings, objects and
// arrays, and stops at the first unterminated string.
func BareTokens(b []byte) []Bare {
	var out []Bare
	type frame struct {
		object bool
		key    string
	}
	stack := []frame{{}}
	line := 1
	var last string // the last string, a member name when ':' follows
	for i := 0; i < len(b); i++ {
		top := &stack[len(stack)-1]
		switch c := b[i]; c {
		case '\n':
			line++
		case '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return out
			}
			last = string(b[i+1 : j])
			i = j
		case ':':
			if top.object {
				top.key = last
			}
		case ',':
			top.key = ""
		case '{', '[':
			stack = append(stack, frame{object: c == '{'})
		case '}', ']':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case 'N', 'I', '-':
			for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
				if bytes.HasPrefix(b[i:], []byte(tok)) {
					out = append(out, Bare{Offset: i, Token: tok, Key: top.key, Line: line})
					i += len(tok) - 1
					break
				}
			}
		}
	}
	return out
}

// QuoteBare returns a copy of b with each of the tokens bs (from
// BareTokens(b)) replaced by the JSON string of its name ("NaN",
// "Infinity", "-Infinity"): the spelling Zarr metadata gives a
// non-finite float fill value.
func QuoteBare(b []byte, bs []Bare) []byte {
	out := make([]byte, 0, len(b)+2*len(bs))
	prev := 0
	for _, t := range bs {
		out = append(out, b[prev:t.Offset]...)
		out = append(out, '"')
		out = append(out, t.Token...)
		out = append(out, '"')
		prev = t.Offset + len(t.Token)
	}
	return append(out, b[prev:]...)
}
