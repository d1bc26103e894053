package npy

import (
	"fmt"
	"math"
)

// The header dictionary is a Python literal. parser reads the subset NumPy
// writes (and older versions wrote): dicts, tuples, lists, quoted strings
// with optional u/b prefixes, integers with an optional L suffix, True,
// False and None.

type (
	tuple []any // a tuple or list
	dict  []pair
	pair  struct {
		key string
		val any
	}
)

const maxDepth = 16

type parser struct {
	s []byte
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: "+format, append([]any{p.i}, args...)...)
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	p.skipSpace()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) parseValue(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	c := p.peek()
	switch {
	case c == '{':
		return p.parseDict(depth)
	case c == '(':
		return p.parseSeq(depth, ')')
	case c == '[':
		return p.parseSeq(depth, ']')
	case c == '\'' || c == '"':
		return p.parseString()
	case (c == 'u' || c == 'b' || c == 'U' || c == 'B') && p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"'):
		p.i++
		return p.parseString()
	case c == '-' || c == '+' || c >= '0' && c <= '9':
		return p.parseInt()
	}
	for _, w := range []struct {
		word string
		val  any
	}{{"True", true}, {"False", false}, {"None", nil}} {
		if p.hasWord(w.word) {
			p.i += len(w.word)
			return w.val, nil
		}
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	return nil, p.errorf("unexpected %q", p.s[p.i])
}

func (p *parser) hasWord(w string) bool {
	if len(p.s)-p.i < len(w) || string(p.s[p.i:p.i+len(w)]) != w {
		return false
	}
	if j := p.i + len(w); j < len(p.s) {
		c := p.s[j]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}

func (p *parser) parseString() (string, error) {
	q := p.s[p.i]
	p.i++
	var out []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case q:
			return string(out), nil
		case '\\':
			if p.i >= len(p.s) {
				return "", p.errorf("unterminated string")
			}
			out = append(out, p.s[p.i])
			p.i++
		case '\n':
			return "", p.errorf("newline in string")
		default:
			out = append(out, c)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) parseInt() (int, error) {
	neg := false
	if c := p.s[p.i]; c == '-' || c == '+' {
		neg = c == '-'
		p.i++
	}
	start := p.i
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		d := int(p.s[p.i] - '0')
		if n > (math.MaxInt-d)/10 {
			return 0, p.errorf("integer too large")
		}
		n = n*10 + d
		p.i++
	}
	if p.i == start {
		return 0, p.errorf("expected digits")
	}
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') { // Python 2 long
		p.i++
	}
	if neg {
		n = -n
	}
	return n, nil
}

func (p *parser) parseSeq(depth int, end byte) (tuple, error) {
	p.i++ // opening bracket
	out := tuple{}
	lastComma := false
	for {
		if p.peek() == end {
			p.i++
			if end == ')' && len(out) == 1 && !lastComma {
				// (x) is x in Python, not a tuple; NumPy writes (x,).
				return nil, p.errorf("parenthesised value is not a tuple")
			}
			return out, nil
		}
		v, err := p.parseValue(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		lastComma = false
		switch p.peek() {
		case ',':
			p.i++
			lastComma = true
		case end:
		default:
			return nil, p.errorf("expected ',' or %q", end)
		}
	}
}

func (p *parser) parseDict(depth int) (dict, error) {
	p.i++
	out := dict{}
	for {
		c := p.peek()
		if c == '}' {
			p.i++
			return out, nil
		}
		k, err := p.parseValue(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, p.errorf("dictionary key is not a string")
		}
		if p.peek() != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.i++
		v, err := p.parseValue(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, pair{key, v})
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}
