package kerchunk

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file renders kerchunk's "jinja-str": literal text with "{{ expr }}"
// annotations. It implements the subset references use (kerchunk's spec
// and what kerchunk and VirtualiZarr write): names of templates and gen
// dimensions, integer and string literals, + - * // % and parentheses,
// unary minus, string concatenation with + or ~, and calls of a template
// with keyword arguments ({{f(c='text')}}). Anything else (filters,
// statements, attribute access) is ErrInvalid, never evaluated.

// maxRendered bounds one rendered string, and maxDepth nested template
// calls and parentheses: references are untrusted.
const (
	maxRendered = 1 << 16
	maxDepth    = 32
)

// value is a rendered expression's value: an integer or a string.
type value struct {
	s     string
	i     int64
	isInt bool
}

func (v value) String() string {
	if v.isInt {
		return strconv.FormatInt(v.i, 10)
	}
	return v.s
}

// renderer renders jinja-strs against templates and variables.
type renderer struct {
	templates map[string]string
}

// render renders s with vars (gen dimensions; nil for none).
func (r *renderer) render(s string, vars map[string]value) (string, error) {
	return r.renderDepth(s, vars, 0)
}

func (r *renderer) renderDepth(s string, vars map[string]value, depth int) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if depth > maxDepth {
		return "", fmt.Errorf("%w: templates nest deeper than %d", ErrInvalid, maxDepth)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			return "", fmt.Errorf("%w: unclosed {{ in %q", ErrInvalid, s)
		}
		p := &parser{src: s[i+2 : i+2+j], r: r, vars: vars, depth: depth}
		v, err := p.expr()
		if err == nil {
			p.space()
			if p.pos != len(p.src) {
				err = fmt.Errorf("%w: unexpected %q in {{%s}}", ErrInvalid, p.src[p.pos:], p.src)
			}
		}
		if err != nil {
			return "", err
		}
		b.WriteString(v.String())
		if b.Len() > maxRendered {
			return "", fmt.Errorf("%w: a rendered string longer than %d bytes", ErrInvalid, maxRendered)
		}
		s = s[i+2+j+2:]
	}
	if b.Len() > maxRendered {
		return "", fmt.Errorf("%w: a rendered string longer than %d bytes", ErrInvalid, maxRendered)
	}
	return b.String(), nil
}

// parser is a recursive-descent parser and evaluator of one expression.
type parser struct {
	src   string
	pos   int
	r     *renderer
	vars  map[string]value
	depth int
	nest  int
}

func (p *parser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: in {{%s}}: %s", ErrInvalid, p.src, fmt.Sprintf(format, args...))
}

// expr: term (('+'|'-'|'~') term)*
func (p *parser) expr() (value, error) {
	p.nest++
	defer func() { p.nest-- }()
	if p.nest > maxDepth {
		return value{}, p.errf("nested too deep")
	}
	return p.chain(p.term, func(rest string) (byte, int) {
		if rest != "" && strings.IndexByte("+-~", rest[0]) >= 0 {
			return rest[0], 1
		}
		return 0, 0
	})
}

// term: unary (('*'|'//'|'%') unary)*
func (p *parser) term() (value, error) {
	return p.chain(p.unary, func(rest string) (byte, int) {
		switch {
		case strings.HasPrefix(rest, "//"):
			return '/', 2
		case strings.HasPrefix(rest, "*") && !strings.HasPrefix(rest, "**"):
			return '*', 1
		case strings.HasPrefix(rest, "%"):
			return '%', 1
		}
		return 0, 0
	})
}

// chain parses operand (operator operand)*, applied left to right; op
// reads an operator at the start of what is left of the source and
// returns it and its length, or a length of 0 where there is none.
func (p *parser) chain(operand func() (value, error), op func(rest string) (byte, int)) (value, error) {
	v, err := operand()
	for err == nil {
		p.space()
		o, n := op(p.src[p.pos:])
		if n == 0 {
			return v, nil
		}
		p.pos += n
		var w value
		if w, err = operand(); err == nil {
			v, err = p.binary(o, v, w)
		}
	}
	return v, err
}

func (p *parser) unary() (value, error) {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '-' {
		p.pos++
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		if !v.isInt || v.i == math.MinInt64 {
			return v, p.errf("minus of a string or overflow")
		}
		return value{i: -v.i, isInt: true}, nil
	}
	return p.primary()
}

func (p *parser) primary() (value, error) {
	p.space()
	if p.pos >= len(p.src) {
		return value{}, p.errf("expression ends early")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		v, err := p.expr()
		if err != nil {
			return v, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return v, p.errf("missing )")
		}
		p.pos++
		return v, nil
	case c >= '0' && c <= '9':
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
		if err != nil {
			return value{}, p.errf("integer %q: %v", p.src[start:p.pos], err)
		}
		return value{i: n, isInt: true}, nil
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.src[p.pos+1:], c)
		if end < 0 {
			return value{}, p.errf("unclosed string")
		}
		s := p.src[p.pos+1 : p.pos+1+end]
		if strings.ContainsRune(s, '\\') {
			return value{}, p.errf("escapes in strings are not supported")
		}
		p.pos += end + 2
		return value{s: s}, nil
	case isIdentStart(c):
		name := p.ident()
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == '(' {
			p.pos++
			return p.call(name)
		}
		if v, ok := p.vars[name]; ok {
			return v, nil
		}
		if t, ok := p.r.templates[name]; ok {
			return value{s: t}, nil
		}
		return value{}, p.errf("unknown name %q", name)
	}
	return value{}, p.errf("unexpected %q", c)
}

// call renders template name with keyword arguments.
func (p *parser) call(name string) (value, error) {
	t, ok := p.r.templates[name]
	if !ok {
		return value{}, p.errf("unknown template %q", name)
	}
	args := map[string]value{}
	for {
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ')' {
			p.pos++
			break
		}
		if len(args) > 0 {
			if p.pos >= len(p.src) || p.src[p.pos] != ',' {
				return value{}, p.errf("missing , between arguments")
			}
			p.pos++
			p.space()
		}
		if p.pos >= len(p.src) || !isIdentStart(p.src[p.pos]) {
			return value{}, p.errf("arguments are name=value")
		}
		k := p.ident()
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '=' {
			return value{}, p.errf("arguments are name=value")
		}
		p.pos++
		v, err := p.expr()
		if err != nil {
			return v, err
		}
		args[k] = v
	}
	s, err := p.r.renderDepth(t, args, p.depth+1)
	return value{s: s}, err
}

func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.src) && (isIdentStart(p.src[p.pos]) || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
		p.pos++
	}
	return p.src[start:p.pos]
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// binary applies op to v and w: integer arithmetic with overflow checks
// and Python's floor division and modulo, or string concatenation.
func (p *parser) binary(op byte, v, w value) (value, error) {
	if op == '~' {
		s := v.String() + w.String()
		if len(s) > maxRendered {
			return value{}, p.errf("string too long")
		}
		return value{s: s}, nil
	}
	if !v.isInt || !w.isInt {
		if op == '+' && !v.isInt && !w.isInt {
			if len(v.s)+len(w.s) > maxRendered {
				return value{}, p.errf("string too long")
			}
			return value{s: v.s + w.s}, nil
		}
		return value{}, p.errf("%q of %v and %v", op, v, w)
	}
	a, b := v.i, w.i
	var r int64
	switch op {
	case '+':
		r = a + b
		if (b > 0 && r < a) || (b < 0 && r > a) {
			return value{}, p.errf("integer overflow")
		}
	case '-':
		r = a - b
		if (b < 0 && r < a) || (b > 0 && r > a) {
			return value{}, p.errf("integer overflow")
		}
	case '*':
		if a != 0 && b != 0 {
			r = a * b
			if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
				return value{}, p.errf("integer overflow")
			}
		}
	case '/', '%':
		if b == 0 {
			return value{}, p.errf("division by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return value{}, p.errf("integer overflow")
		}
		q, m := a/b, a%b
		if m != 0 && (m < 0) != (b < 0) { // Python floors
			q--
			m += b
		}
		r = q
		if op == '%' {
			r = m
		}
	}
	return value{i: r, isInt: true}, nil
}
