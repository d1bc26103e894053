package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
)

// floatPrecision is NumPy's default print precision: at most this many
// digits after the decimal point (np.set_printoptions(precision=8)).
const floatPrecision = 8

// floatLayout lays out the float values of one text view as NumPy's
// default printing does (floatmode "maxprec", precision 8, suppress
// False): every value is written with the fewest digits that read back to
// it, cut at 8 digits after the point; the values share one width, aligned
// on the decimal point, an integral value keeps its point ("10."); and the
// view switches to scientific notation when its nonzero magnitudes are
// below 1e-4, reach 1e8 (1e6 for float32, 1e3 for float16), or span more
// than a factor of 1000, with every mantissa given the same number of
// digits.
//
// A layout is made in two steps, as the streamed view reads its values
// twice: add every value shown, then format each.
type floatLayout struct {
	bits int  // 16, 32 or 64: the precision digits are chosen at
	plus bool // a sign on every value, + included

	// What add has seen.
	finite, nonFinite, negInf bool
	minAbs, maxAbs            float64 // of the finite nonzero values
	posInt, posFrac           int     // longest integer and fraction parts, positional
	sciInt, sciFrac, sciExp   int     // the same for scientific, and exponent digits

	// Set by done.
	exp                bool
	padLeft, padRight  int
	precision, expSize int
}

// numpyLayout is the text view's layout of one view's values, made as
// NumPy makes it: every value shown is added, then done fixes the layout,
// then each is formatted, padded to width.
type numpyLayout interface {
	add(b []byte)
	done()
	width() int
	format(b []byte) string
}

// newNumpyLayout returns an empty layout for the values of dt: floats of
// 2, 4 or 8 bytes and complex numbers of 8 or 16, or nil for the other
// types (which keep appendValue's form, right-aligned).
func newNumpyLayout(dt dtype.DataType) numpyLayout {
	switch {
	case dt.Kind() == dtype.Float && (dt.Size() == 2 || dt.Size() == 4 || dt.Size() == 8):
		return floatBytes{newFloatLayout(dt.Size()*8, false)}
	case dt.Kind() == dtype.Complex && (dt.Size() == 8 || dt.Size() == 16):
		bits := dt.Size() * 4
		return &complexLayout{re: newFloatLayout(bits, false), im: newFloatLayout(bits, true)}
	}
	return nil
}

// newFloatLayout returns an empty layout for floats of the given bits;
// plus writes a sign on every value (NumPy's sign='+', used for the
// imaginary parts of complex numbers).
func newFloatLayout(bits int, plus bool) *floatLayout {
	return &floatLayout{bits: bits, plus: plus, minAbs: math.Inf(1)}
}

// floatBytes is a floatLayout over the values' little-endian bytes.
type floatBytes struct{ *floatLayout }

func (f floatBytes) add(b []byte)           { f.floatLayout.add(floatOf(b)) }
func (f floatBytes) format(b []byte) string { return f.floatLayout.format(floatOf(b)) }

// complexLayout lays out complex numbers as NumPy does: the real parts in
// one float layout, the imaginary parts in another with a sign on each,
// then 'j' after the imaginary part's digits ("1.5 +2.j ").
type complexLayout struct{ re, im *floatLayout }

func (c *complexLayout) add(b []byte) {
	h := len(b) / 2
	c.re.add(floatOf(b[:h]))
	c.im.add(floatOf(b[h:]))
}

func (c *complexLayout) done()      { c.re.done(); c.im.done() }
func (c *complexLayout) width() int { return c.re.width() + c.im.width() + 1 }

func (c *complexLayout) format(b []byte) string {
	h := len(b) / 2
	im := c.im.format(floatOf(b[h:]))
	end := len(strings.TrimRight(im, " "))
	return c.re.format(floatOf(b[:h])) + im[:end] + "j" + im[end:]
}

// shortest returns v's shortest decimal that reads back to v at the
// layout's precision, in format 'f' or 'e', cut at floatPrecision digits
// after the point (of the mantissa for 'e') and rounded there.
func (l *floatLayout) shortest(v float64, format byte) string {
	exact, s := v, ""
	switch l.bits {
	case 16:
		// strconv has no 16-bit floats: the shortest decimal that reads back
		// to the same float16 is found as appendFloat finds it, then written
		// in the format asked (its digits are few, so float64's shortest
		// writes exactly them).
		h := dtype.Float16FromFloat64(v)
		for prec := 1; prec <= 5; prec++ {
			g := strconv.FormatFloat(v, 'g', prec, 64)
			if f, err := strconv.ParseFloat(g, 64); err == nil && dtype.Float16FromFloat64(f) == h {
				v = f
				break
			}
		}
		s = strconv.FormatFloat(v, format, -1, 64)
	default:
		s = strconv.FormatFloat(v, format, -1, l.bits)
	}
	mant, exp, _ := strings.Cut(s, "e")
	if _, frac, ok := strings.Cut(mant, "."); ok && len(frac) > floatPrecision {
		// Too many digits: round the value itself at the cut, then drop
		// trailing zeros.
		s = strconv.FormatFloat(exact, format, floatPrecision, 64)
		mant, exp, _ = strings.Cut(s, "e")
		mant = strings.TrimRight(mant, "0")
	}
	if !strings.Contains(mant, ".") {
		mant += "."
	}
	if l.plus && !strings.HasPrefix(mant, "-") {
		mant = "+" + mant
	}
	if format == 'e' {
		return mant + "e" + exp
	}
	return mant
}

// add takes one value shown in the view.
func (l *floatLayout) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		l.nonFinite = true
		l.negInf = l.negInf || math.IsInf(v, -1)
		return
	}
	l.finite = true
	if a := math.Abs(v); a != 0 {
		l.minAbs, l.maxAbs = min(l.minAbs, a), max(l.maxAbs, a)
	}
	ip, fp, _ := strings.Cut(l.shortest(v, 'f'), ".")
	l.posInt, l.posFrac = max(l.posInt, len(ip)), max(l.posFrac, len(fp))
	mant, exp, _ := strings.Cut(l.shortest(v, 'e'), "e")
	ip, fp, _ = strings.Cut(mant, ".")
	l.sciInt, l.sciFrac, l.sciExp = max(l.sciInt, len(ip)), max(l.sciFrac, len(fp)), max(l.sciExp, len(exp)-1)
}

// done fixes the layout from the values added.
func (l *floatLayout) done() {
	if l.maxAbs > 0 {
		// NumPy's cutoff is 10^min(8, the type's decimal precision):
		// 1e3 for float16, 1e6 for float32, 1e8 for float64.
		cutoff := map[int]float64{16: 1e3, 32: 1e6, 64: 1e8}[l.bits]
		l.exp = l.maxAbs >= cutoff || l.minAbs < 1e-4 || l.maxAbs/l.minAbs > 1e3
	}
	switch {
	case !l.finite:
		l.exp, l.padLeft, l.padRight = false, 0, 0
	case l.exp:
		l.precision, l.expSize = l.sciFrac, l.sciExp
		l.padLeft, l.padRight = l.sciInt, l.sciExp+2+l.sciFrac
	default:
		l.padLeft, l.padRight = l.posInt, l.posFrac
	}
	if l.nonFinite {
		neg := 0
		if l.negInf || l.plus {
			neg = 1
		}
		offset := l.padRight + 1
		l.padLeft = max(l.padLeft, len("nan")-offset, len("inf")+neg-offset)
	}
}

// width is the width of every formatted value.
func (l *floatLayout) width() int { return l.padLeft + 1 + l.padRight }

// format writes v in the layout, padded to its width.
func (l *floatLayout) format(v float64) string {
	var s string
	switch {
	case math.IsNaN(v) && l.plus:
		s = "+nan"
	case math.IsNaN(v):
		s = "nan"
	case math.IsInf(v, 1) && l.plus:
		s = "+inf"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case l.exp:
		e := l.shortest(v, 'e')
		if _, fp, _ := strings.Cut(e[:strings.IndexByte(e, 'e')], "."); len(fp) < l.precision {
			// Every mantissa has the same digits: one shorter than the
			// longest gets the value's own next digits, rounded (NumPy's
			// min_digits), not zeros.
			e = strconv.FormatFloat(v, 'e', l.precision, 64)
		}
		mant, exp, _ := strings.Cut(e, "e")
		ip, fp, _ := strings.Cut(mant, ".")
		sign, digits := exp[:1], exp[1:]
		return strings.Repeat(" ", max(0, l.padLeft-len(ip))) + ip + "." + fp +
			"e" + sign + strings.Repeat("0", max(0, l.expSize-len(digits))) + digits
	default:
		ip, fp, _ := strings.Cut(l.shortest(v, 'f'), ".")
		return strings.Repeat(" ", max(0, l.padLeft-len(ip))) + ip + "." + fp +
			strings.Repeat(" ", max(0, l.padRight-len(fp)))
	}
	return strings.Repeat(" ", max(0, l.width()-len(s))) + s
}
