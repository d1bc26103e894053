package nd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A selection text is read as Python reads what stands between a[ and ]
// (a subscript: slices at the top, values below) and NumPy then reads the
// values: integers, True/False, None, Ellipsis, and lists or tuples of
// them, which NumPy turns into arrays (np.asarray) and refuses when they
// nest unevenly (ValueError) or hold what is neither integer nor boolean
// (IndexError). Python's syntax is checked first, over the whole text,
// as Python does; what NumPy raises is reported after it.

// pyKind is the kind of a parsed Python value.
type pyKind uint8

const (
	pyInt      pyKind = iota
	pyBig             // an integer beyond the int range
	pyFloat           // a float literal: no index
	pyBool            // True or False
	pyNone            // None, np.newaxis
	pyEllipsis        // ... or Ellipsis
	pyBad             // what Python refuses to compute (-[1], ~None): TypeError
	pyList
	pyTuple
)

// pyVal is a parsed value. A list or tuple keeps its elements only as an
// array would (seqAcc): its shape, and where it came from.
type pyVal struct {
	kind     pyKind
	n        int   // pyInt, pyBool (0 or 1); pyBig: its sign
	shape    []int // pyList, pyTuple: the array's shape (as far as NumPy finds one, when ragged)
	ragged   bool  // pyList, pyTuple: nests unevenly
	from, to int   // the value's text, s[from:to]
}

// seqAcc gathers the scalars of a list or tuple in C order, as np.asarray
// would, and what NumPy would make of them.
type seqAcc struct {
	vals              []int
	nInts, nBools     int
	nFloats, nObjects int // floats; None, Ellipsis and lists' other elements
	nBig              int // integers beyond the int range
	ragged            bool
	tooDeep           bool
}

// maxNesting is how deeply brackets and parentheses may nest: Python's
// parser refuses more than 200 ("too many nested parentheses").
const maxNesting = 200

// subParser reads a subscript text.
type subParser struct {
	s   string
	pos int
	// depth counts the open brackets and parentheses.
	depth int
	// acc gathers the scalars of the item being read.
	acc seqAcc
}

// syntaxError is a text Python would not parse as a subscript; ParseSelection
// then tries the text inside one pair of brackets or parentheses around
// the whole (the optional outer brackets of "[-4:, ...]").
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }
func (e *syntaxError) Unwrap() error { return ErrInvalidSelection }

func (p *subParser) errorf(format string, args ...any) error {
	return &syntaxError{msg: ErrInvalidSelection.Error() + ": " + fmt.Sprintf(format, args...)}
}

func (p *subParser) skip() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *subParser) eof() bool { p.skip(); return p.pos >= len(p.s) }

// peek returns the next byte after blanks, 0 at the end.
func (p *subParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.pos]
}

// rest quotes what is left of the text, for messages.
func (p *subParser) rest() string { return Clip(p.s[p.pos:]) }

// value reads one value at pos. The scalars inside a list or tuple go to
// acc (a scalar value itself does not); the value's array shape is
// returned for lists and tuples. Python's unary -, + and ~ apply to integers and
// booleans ("-1", "- 1", "~0", "-True"; a float stays a float);
// anything else they make a TypeError (pyBad).
func (p *subParser) value(acc *seqAcc) (pyVal, error) {
	from := p.pos
	var ops []byte
	for c := p.peek(); c == '-' || c == '+' || c == '~'; c = p.peek() {
		ops = append(ops, c)
		p.pos++
	}
	v, err := p.primary(acc)
	if err != nil || len(ops) == 0 {
		return v, err
	}
	v.from = from
	for i := len(ops) - 1; i >= 0; i-- {
		switch op := ops[i]; {
		case v.kind == pyBool:
			v.kind = pyInt
			fallthrough
		case v.kind == pyInt:
			switch {
			case op == '-' && v.n == math.MinInt:
				v.kind, v.n = pyBig, 1
			case op == '-':
				v.n = -v.n
			case op == '~':
				v.n = ^v.n
			}
		case v.kind == pyBig:
			if op != '+' {
				v.n = -v.n
			}
		case v.kind == pyFloat && op != '~':
		case v.kind == pyList || v.kind == pyTuple:
			v = pyVal{kind: pyBad, from: from, to: v.to} // its scalars stay in acc, which fails
		default:
			v.kind = pyBad
		}
	}
	return v, nil
}

// primary reads a value without unary operators.
func (p *subParser) primary(acc *seqAcc) (pyVal, error) {
	c := p.peek()
	from := p.pos
	switch {
	case c == 0:
		return pyVal{}, p.errorf("%s ends where a value is expected", Clip(p.s))
	case c == '[' || c == '(':
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		if p.depth >= maxNesting {
			return pyVal{}, p.errorf("brackets nest more than %d deep", maxNesting)
		}
		p.depth++
		defer func() { p.depth-- }()
		p.pos++
		// NumPy's discovery of the shape: the longest prefix the
		// elements' shapes share; uneven when one is longer or uneven.
		var common []int
		n, comma, ragged := 0, false, false
		var first pyVal
		for {
			if p.peek() == closer {
				p.pos++
				break
			}
			if n > 0 && !comma {
				return pyVal{}, p.errorf("a comma or %q expected at %s (a comma missing?)", closer, p.rest())
			}
			e, err := p.value(acc)
			if err != nil {
				return pyVal{}, err
			}
			if n == 0 {
				first = e
			}
			seq := e.kind == pyList || e.kind == pyTuple
			if !seq {
				acc.scalar(e)
			}
			if n == 0 {
				common, ragged = e.shape, e.ragged
			} else {
				l := 0
				for l < len(common) && l < len(e.shape) && common[l] == e.shape[l] {
					l++
				}
				ragged = ragged || e.ragged || l < len(common) || l < len(e.shape)
				common = common[:l]
			}
			n++
			comma = false
			switch p.peek() {
			case ',':
				p.pos++
				comma = true
			case closer:
			case 0:
				return pyVal{}, p.errorf("%s lacks its closing %q", Clip(p.s[from:]), closer)
			default:
				if p.s[p.pos] == ':' {
					return pyVal{}, p.errorf("a slice inside a list or tuple at %s (slices go at the top of a selection)", p.rest())
				}
				return pyVal{}, p.errorf("a comma or %q expected at %s (a comma missing?)", closer, p.rest())
			}
		}
		if c == '(' && n == 1 && !comma {
			// (x) is x, no tuple: its scalar is not the tuple's element.
			if first.kind != pyList && first.kind != pyTuple {
				acc.unscalar(first)
			}
			return first, nil
		}
		kind := pyList
		if c == '(' {
			kind = pyTuple
		}
		shape := append([]int{n}, common...)
		if len(shape) > maxArrayRank {
			acc.tooDeep = true
		}
		acc.ragged = acc.ragged || ragged
		return pyVal{kind: kind, shape: shape, ragged: ragged, from: from, to: p.pos}, nil
	case c == ']' || c == ')':
		return pyVal{}, p.errorf("unbalanced %q at %s", c, p.rest())
	}
	// A scalar token: up to the next delimiter.
	end := p.pos
	for end < len(p.s) && !strings.ContainsRune(",:[]() \t\n\r", rune(p.s[end])) {
		end++
	}
	tok := p.s[p.pos:end]
	p.pos = end
	v := pyVal{from: from, to: end}
	switch tok {
	case "True", "False":
		v.kind = pyBool
		if tok == "True" {
			v.n = 1
		}
		return v, nil
	case "None", "np.newaxis", "numpy.newaxis":
		v.kind = pyNone
		return v, nil
	case "...", "Ellipsis":
		v.kind = pyEllipsis
		return v, nil
	case "":
		return pyVal{}, p.errorf("an empty item in %s", Clip(p.s))
	}
	n, err := parsePyInt(tok)
	switch {
	case err == nil:
		v.kind, v.n = pyInt, n
	case errors.Is(err, strconv.ErrRange):
		v.kind, v.n = pyBig, 1
	case isFloat(tok):
		v.kind = pyFloat
	default:
		return pyVal{}, p.errorf("%s is not an integer, slice, ..., None, True, False or list", Clip(tok))
	}
	return v, nil
}

// parsePyInt parses a Python integer literal without sign: decimal
// ("42", "1_000"; no leading zeros but in "0", "00"), hexadecimal
// ("0x1F"), octal ("0o17") or binary ("0b101"), underscores between
// digits. Errors are strconv.ErrSyntax or strconv.ErrRange.
func parsePyInt(tok string) (int, error) {
	if tok == "" || tok[0] < '0' || tok[0] > '9' {
		return 0, strconv.ErrSyntax
	}
	if len(tok) > 1 && tok[0] == '0' && !strings.ContainsAny(tok[1:2], "xXoObB") && strings.Trim(tok, "0_") != "" {
		return 0, strconv.ErrSyntax // Python: leading zeros in decimal integer literals are not permitted
	}
	// Go's base 0 reads Python's prefixes and underscores the same way
	// (and "017" as octal, refused above).
	v, err := strconv.ParseInt(tok, 0, strconv.IntSize)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			return 0, ne.Err
		}
		return 0, err
	}
	return int(v), nil
}

// isFloat reports whether tok is a float literal ("1.5", "-2e3", ".5").
func isFloat(tok string) bool {
	t := tok
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t = t[1:]
	}
	if t == "" || !(t[0] >= '0' && t[0] <= '9' || t[0] == '.') || !strings.ContainsAny(t, ".eE") || strings.ContainsAny(t, "_xXpP") {
		return false
	}
	_, err := strconv.ParseFloat(t, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// scalar adds an element of a list or tuple.
func (acc *seqAcc) scalar(e pyVal) {
	switch e.kind {
	case pyInt:
		acc.vals = append(acc.vals, e.n)
		acc.nInts++
	case pyBool:
		acc.vals = append(acc.vals, e.n)
		acc.nBools++
	case pyBig:
		acc.vals = append(acc.vals, 0)
		acc.nBig++
	case pyFloat:
		acc.vals = append(acc.vals, 0)
		acc.nFloats++
	default:
		acc.vals = append(acc.vals, 0)
		acc.nObjects++
	}
}

// unscalar takes back the last scalar added, e.
func (acc *seqAcc) unscalar(e pyVal) {
	acc.vals = acc.vals[:len(acc.vals)-1]
	switch e.kind {
	case pyInt:
		acc.nInts--
	case pyBool:
		acc.nBools--
	case pyBig:
		acc.nBig--
	case pyFloat:
		acc.nFloats--
	default:
		acc.nObjects--
	}
}

// topItem is one item of a subscript as parsed: a slice or a value.
type topItem struct {
	from, to                   int // the item's text
	slice                      bool
	hasStart, hasStop, hasStep bool
	start, stop, step          pyVal // slice bounds
	val                        pyVal
}

// subscript parses the whole text as Python's subscript: items separated
// by commas, slices among them, each turned into an Item as it is read.
// What NumPy would raise (conv) waits for the syntax of the whole text,
// as Python checks it first. first is the first item as parsed, single
// whether it is the only one, with no comma.
func (p *subParser) subscript() (items []Item, first topItem, single bool, conv, err error) {
	if p.eof() {
		return nil, first, false, nil, nil
	}
	for {
		p.acc = seqAcc{}
		t, err := p.item()
		if err != nil {
			if se, ok := err.(*syntaxError); ok {
				se.msg = fmt.Sprintf("item %d: %s", len(items), se.msg)
			}
			return nil, first, false, nil, err
		}
		if len(items) == 0 {
			first = t
		}
		it, err := p.toItem(t)
		if err != nil && conv == nil {
			conv = fmt.Errorf("item %d: %w", len(items), err)
		}
		items = append(items, it)
		if p.eof() {
			return items, first, len(items) == 1, conv, nil
		}
		if p.s[p.pos] != ',' {
			if p.s[p.pos] == ':' {
				return nil, first, false, nil, p.errorf("a slice has at most two colons (at %s)", p.rest())
			}
			return nil, first, false, nil, p.errorf("a comma expected at %s (a comma missing between items?)", p.rest())
		}
		p.pos++
		if p.eof() {
			return items, first, false, conv, nil // one trailing comma, as in a Python tuple
		}
	}
}

// item reads a slice or a value.
func (p *subParser) item() (it topItem, err error) {
	p.skip()
	it.from = p.pos
	defer func() { it.to = p.pos }()
	bound := func(v *pyVal) (bool, error) {
		switch p.peek() {
		case ':', ',', 0:
			return false, nil
		}
		var err error
		*v, err = p.value(&p.acc)
		return true, err
	}
	if p.peek() != ':' {
		if p.peek() == ',' {
			return it, p.errorf("an empty item at %s", p.rest())
		}
		v, err := p.value(&p.acc)
		if err != nil {
			return it, err
		}
		if p.peek() != ':' {
			it.val = v
			return it, nil
		}
		it.hasStart, it.start = true, v
	}
	it.slice = true
	p.pos++ // the first colon
	if it.hasStop, err = bound(&it.stop); err != nil {
		return it, err
	}
	if p.peek() == ':' {
		p.pos++
		if it.hasStep, err = bound(&it.step); err != nil {
			return it, err
		}
	}
	return it, nil
}

// toItem turns a parsed item into an Item as NumPy reads it.
func (p *subParser) toItem(t topItem) (Item, error) {
	if t.slice {
		var it Item
		for k, b := range [3]*pyVal{&t.start, &t.stop, &t.step} {
			if !(t.hasStart && k == 0 || t.hasStop && k == 1 || t.hasStep && k == 2) || b.kind == pyNone {
				continue
			}
			var v int
			switch b.kind {
			case pyInt, pyBool:
				v = b.n
			case pyBig:
				// Python ints are unbounded; clamping keeps the slice's meaning.
				v = math.MaxInt
				if b.n < 0 {
					v = math.MinInt
				}
			default:
				// NumPy's TypeError comes as it walks the dimensions
				// (after the count of indices, before a later integer's
				// bounds): Normalize reports it.
				return Item{bad: strings.TrimSpace(p.s[t.from:t.to])}, nil
			}
			switch k {
			case 0:
				it.hasStart, it.start = true, v
			case 1:
				it.hasStop, it.stop = true, v
			case 2:
				it.hasStep, it.step = true, v // a zero step: Normalize reports it, in NumPy's order
			}
		}
		return it, nil
	}
	v := t.val
	text := func() string { return Clip(p.s[v.from:v.to]) }
	const onlyValid = "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices"
	switch v.kind {
	case pyInt:
		return Index(v.n), nil
	case pyBig:
		return Item{}, fmt.Errorf("%w: %w: index %s does not fit an int (NumPy's IndexError: %s)", ErrInvalidSelection, ErrOutOfBounds, text(), onlyValid)
	case pyFloat:
		return Item{}, fmt.Errorf("%w: %s is not an integer (NumPy's IndexError: %s)", ErrInvalidSelection, text(), onlyValid)
	case pyBad:
		return Item{}, fmt.Errorf("%w: %s: a unary operator on what is no number (Python's TypeError)", ErrInvalidSelection, text())
	case pyBool:
		// NumPy's 0-d boolean index: a new axis of length 1 or 0.
		return Item{kind: kindMask, mask: []bool{v.n == 1}, shape: []int{}, numpy: true}, nil
	case pyNone:
		return NewAxis, nil
	case pyEllipsis:
		return Ellipsis, nil
	}
	acc := &p.acc
	switch {
	case acc.ragged:
		return Item{}, fmt.Errorf("%w: %s nests unevenly (NumPy's ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after %d dimensions. The detected shape was %s + inhomogeneous part.)", ErrInvalidSelection, text(), len(v.shape), PyShape(v.shape))
	case acc.tooDeep:
		return Item{}, fmt.Errorf("%w: %s: an index array of more than %d dimensions", ErrInvalidSelection, text(), maxArrayRank)
	case acc.nObjects > 0 || acc.nFloats > 0:
		return Item{}, fmt.Errorf("%w: %s holds what is neither an integer nor a boolean (NumPy's IndexError: %s)", ErrInvalidSelection, text(), onlyValid)
	case acc.nBig > 0:
		return Item{}, fmt.Errorf("%w: %w: %s holds an index that does not fit an int (NumPy's IndexError: %s)", ErrInvalidSelection, ErrOutOfBounds, text(), onlyValid)
	}
	shape := v.shape
	if len(shape) == 1 {
		shape = nil
	}
	if acc.nBools > 0 && acc.nInts == 0 {
		mask := make([]bool, len(acc.vals))
		for i, x := range acc.vals {
			mask[i] = x != 0
		}
		return Item{kind: kindMask, mask: mask, shape: shape, numpy: true}, nil
	}
	vals := acc.vals
	if vals == nil {
		vals = []int{}
	}
	return Item{kind: kindIndices, list: vals, shape: shape, numpy: true}, nil
}

// maxArrayRank is the most dimensions an index array or mask may have:
// NumPy's limit.
const maxArrayRank = 64

// parseSubscript parses text as Python and NumPy read a[text]. A
// *syntaxError reports text Python would not parse.
func parseSubscript(text string) ([]Item, error) {
	p := &subParser{s: text}
	items, first, single, conv, err := p.subscript()
	if err != nil {
		return nil, err
	}
	if single && !first.slice && first.val.kind == pyTuple {
		// a[(0, 1)] is a[0, 1]: a tuple alone is the subscript itself.
		return parseSubscript(text[first.val.from+1 : first.val.to-1])
	}
	return items, conv
}

// PyShape writes a shape as Python writes a tuple, as NumPy's messages
// and repr show shapes: "()", "(2,)", "(2, 3)".
func PyShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, l := range shape {
		parts[i] = strconv.Itoa(l)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// enclosed reports whether t is one pair of brackets or parentheses, the
// first closing at the end.
func enclosed(t string) bool {
	if len(t) < 2 || !(t[0] == '[' && t[len(t)-1] == ']' || t[0] == '(' && t[len(t)-1] == ')') {
		return false
	}
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
			if depth == 0 {
				return i == len(t)-1
			}
		}
	}
	return false
}
