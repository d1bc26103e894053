package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
)

// formats are get's output formats.
var formats = []string{"npy", "text", "csv", "json", "raw", "png"}

// formatOf picks get's format: --format when given, else from -o's
// extension (.npy, .txt, .csv, .json, .raw or .bin), else npy for a file
// and text for stdout.
func formatOf(flag, out string) (string, error) {
	if flag != "" {
		for _, f := range formats {
			if f == flag {
				return f, nil
			}
		}
		return "", fmt.Errorf("%w: --format must be one of %s, not %q", errUsage, strings.Join(formats, ", "), flag)
	}
	switch strings.ToLower(filepath.Ext(out)) {
	case ".txt":
		return "text", nil
	case ".csv":
		return "csv", nil
	case ".json":
		return "json", nil
	case ".raw", ".bin":
		return "raw", nil
	case ".png":
		return "png", nil
	}
	if out != "" && out != "-" && !isTerminalPath(out) {
		return "npy", nil
	}
	return "text", nil
}

// isTerminalPath reports whether path is a terminal (/dev/tty,
// /dev/pts/N): -o there gets text, as stdout on a terminal does.
func isTerminalPath(path string) bool {
	info, err := os.Stat(path)
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	p := filepath.Clean(path)
	return p == "/dev/tty" || p == "/dev/console" || strings.HasPrefix(p, "/dev/pts/") || strings.HasPrefix(p, "/dev/tty")
}

// encoder writes a selection's values in one format, block by block:
// begin once, values for consecutive runs of elements in C order, end once.
type encoder struct {
	w     io.Writer
	dt    dtype.DataType
	shape []int
	form  string
	i     int    // elements written so far
	buf   []byte // formatting scratch
}

// newEncoder returns an encoder of the given format for values of dt
// in the given output shape.
func newEncoder(w io.Writer, form string, dt dtype.DataType, shape []int) *encoder {
	return &encoder{w: w, dt: dt, shape: shape, form: form, buf: make([]byte, 0, 1<<16)}
}

// begin writes what precedes the values: the .npy header, JSON's opening
// brackets.
func (e *encoder) begin() error {
	switch e.form {
	case "npy":
		return npy.WriteHeader(e.w, e.dt.NumpyDescr(), e.shape)
	case "json":
		if nd.NumElements(e.shape) == 0 {
			return nil // end writes NumPy's tolist() of an empty array
		}
		_, err := io.WriteString(e.w, strings.Repeat("[", len(e.shape)))
		return err
	}
	return nil
}

// emptyJSON appends what NumPy's tolist() gives for an empty array of
// shape, as JSON: the lists down to the first dimension of length 0, which
// is empty ([] for (0, 19), [[], []] for (2, 0) and (2, 0, 3)).
func emptyJSON(dst []byte, shape []int) []byte {
	if len(shape) == 0 || shape[0] == 0 {
		return append(dst, "[]"...)
	}
	dst = append(dst, '[')
	for i := range shape[0] {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = emptyJSON(dst, shape[1:])
	}
	return append(dst, ']')
}

// appendCSV appends one CSV field as RFC 4180 writes it: quoted, with
// quotes doubled, when it holds a comma, a quote or a line break.
func appendCSV(dst []byte, field string) []byte {
	if !strings.ContainsAny(field, ",\"\r\n") {
		return append(dst, field...)
	}
	dst = append(dst, '"')
	dst = append(dst, strings.ReplaceAll(field, `"`, `""`)...)
	return append(dst, '"')
}

// csvText is a value's text for a CSV field: a string's own characters
// rather than the quoted form text output prints.
func csvText(text []byte) string {
	if len(text) > 1 && text[0] == '"' {
		if u, err := strconv.Unquote(string(text)); err == nil {
			return u
		}
	}
	return string(text)
}

// values writes the next elements (memory representation, little-endian).
func (e *encoder) values(data []byte) error {
	if e.form == "npy" || e.form == "raw" {
		_, err := e.w.Write(data)
		return err
	}
	n := e.dt.Size()
	return e.each(len(data)/n, func(dst []byte, k int) []byte {
		switch e.form {
		case "json":
			return appendJSONValue(dst, e.dt, data[k*n:(k+1)*n])
		case "csv":
			return appendCSV(dst, csvText(appendValue(nil, e.dt, data[k*n:(k+1)*n])))
		}
		return appendValue(dst, e.dt, data[k*n:(k+1)*n])
	})
}

// each writes the next count elements in text, csv or json, element k
// formatted by appendOne, with the separators between them.
func (e *encoder) each(count int, appendOne func(dst []byte, k int) []byte) error {
	for k := range count {
		if e.i > 0 {
			e.buf = e.separator(e.buf)
		}
		e.buf = appendOne(e.buf, k)
		e.i++
		if len(e.buf) > 1<<15 {
			if _, err := e.w.Write(e.buf); err != nil {
				return err
			}
			e.buf = e.buf[:0]
		}
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// separator appends what goes between element e.i-1 and element e.i: in
// text, a space within a row, a newline between rows and a blank line
// between 2-D planes; in csv, a comma within a row and a newline between
// rows; in JSON, the brackets closing and opening the dimensions that roll
// over, and a comma, with a new line (indented under the brackets, as
// NumPy prints arrays) where a row ends, so that each innermost list is
// one line.
func (e *encoder) separator(dst []byte) []byte {
	// rolled: how many trailing dimensions start again at element e.i.
	rolled, rem := 0, e.i
	for d := len(e.shape) - 1; d >= 0 && e.shape[d] > 0 && rem%e.shape[d] == 0; d-- {
		rolled++
		rem /= e.shape[d]
	}
	switch e.form {
	case "json":
		if rolled == 0 {
			return append(dst, ", "...)
		}
		dst = append(dst, strings.Repeat("]", rolled)...)
		dst = append(dst, ",\n"...)
		dst = append(dst, strings.Repeat(" ", len(e.shape)-rolled)...)
		return append(dst, strings.Repeat("[", rolled)...)
	case "csv":
		if rolled > 0 {
			return append(dst, '\n')
		}
		return append(dst, ',')
	}
	switch {
	case rolled == 0:
		return append(dst, ' ')
	case rolled >= 2 && len(e.shape) > 2:
		return append(dst, "\n\n"...)
	}
	return append(dst, '\n')
}

// end writes what follows the values: a final newline, JSON's closing
// brackets.
func (e *encoder) end() error {
	switch e.form {
	case "json":
		if e.i == 0 && len(e.shape) == 0 {
			return nil
		}
		if nd.NumElements(e.shape) == 0 {
			_, err := e.w.Write(append(emptyJSON(nil, e.shape), '\n'))
			return err
		}
		_, err := io.WriteString(e.w, strings.Repeat("]", len(e.shape))+"\n")
		return err
	case "text", "csv":
		if e.i > 0 {
			_, err := io.WriteString(e.w, "\n")
			return err
		}
	}
	return nil
}

// appendJSONValue formats one element as JSON: numbers, true/false,
// complex as [re, im], NaN and infinities as null (JSON has no spelling for
// them), anything else (raw bits "0x...") as a string of its text form.
func appendJSONValue(dst []byte, dt dtype.DataType, b []byte) []byte {
	switch dt.Kind() {
	case dtype.Bool, dtype.Int, dtype.Uint, dtype.NarrowInt, dtype.NarrowUint:
		return appendValue(dst, dt, b)
	case dtype.NarrowFloat:
		if v := dtype.NarrowToFloat64(dt, b[0]); math.IsNaN(v) || math.IsInf(v, 0) {
			return append(dst, "null"...)
		}
		return appendValue(dst, dt, b)
	case dtype.Float:
		return appendJSONFloat(dst, b)
	case dtype.Complex:
		h := len(b) / 2
		dst = append(dst, '[')
		dst = appendJSONFloat(dst, b[:h])
		dst = append(dst, ", "...)
		dst = appendJSONFloat(dst, b[h:])
		return append(dst, ']')
	}
	return strconv.AppendQuote(dst, string(appendValue(nil, dt, b)))
}

// appendJSONFloat is appendFloat with null for NaN and infinities.
func appendJSONFloat(dst []byte, b []byte) []byte {
	if v := floatOf(b); math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	return appendFloat(dst, b)
}
