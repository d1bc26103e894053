// Package npy reads NumPy .npy files (format versions 1.0, 2.0 and 3.0)
// and writes version 1.0 files byte for byte like numpy.save, for test
// fixtures and the reference corpus. Only plain dtypes
// (a descr string such as "<f4", "|b1", ">c16", "|S5", "<M8[ns]") are
// supported; structured and object arrays are refused with
// ErrUnsupported. Untrusted input never panics and never makes the reader
// allocate more than the header promises or than the input holds.
//
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Errors returned by this package wrap one of these.
var (
	// ErrFormat reports input that is not a well-formed .npy file: bad magic,
	// a malformed header dictionary, a data section of the wrong length.
	ErrFormat = errors.New("npy: malformed file")
	// ErrUnsupported reports a well-formed file this package does not
	// handle: an unknown format version, a structured or object dtype.
	ErrUnsupported = errors.New("npy: unsupported")
	// ErrInvalid reports bad arguments to a writer.
	ErrInvalid = errors.New("npy: invalid argument")
)

// Limits on what Read accepts.
const (
	// MaxHeaderLen is the largest header Read accepts (NumPy refuses
	// headers over 10000 bytes by default; a plain dtype needs far fewer).
	MaxHeaderLen = 1 << 16
	// MaxDims is the largest rank Read accepts (NumPy's NPY_MAXDIMS).
	MaxDims = 64
)

var magic = []byte("\x93NUMPY")

// Array is the contents of a .npy file: its dtype descr, memory order,
// shape and the raw data bytes exactly as stored (in the descr's byte
// order, C order unless FortranOrder).
type Array struct {
	Descr        string
	FortranOrder bool
	Shape        []int
	Data         []byte
}

// NumElements returns the product of the shape (1 for a 0-d array).
func (a *Array) NumElements() int {
	n := 1
	for _, s := range a.Shape {
		n *= s
	}
	return n
}

// ItemSize returns the size in bytes of one element of descr, a NumPy
// array-protocol type string: an optional byte-order character (<, >, |,
// =), a kind (b, i, u, f, c, S, a, U, V, M, m) and a size, with an
// optional [unit] for datetimes. "U" sizes count 4-byte characters.
func ItemSize(descr string) (int, error) {
	s := descr
	if s != "" && strings.IndexByte("<>|=", s[0]) >= 0 {
		s = s[1:]
	}
	if s == "" {
		return 0, fmt.Errorf("%w: empty descr %q", ErrUnsupported, descr)
	}
	kind := s[0]
	s = s[1:]
	if kind == 'M' || kind == 'm' {
		if i := strings.IndexByte(s, '['); i >= 0 {
			unit := s[i:]
			if len(unit) < 3 || unit[len(unit)-1] != ']' || !isIdent(unit[1:len(unit)-1]) {
				return 0, fmt.Errorf("%w: descr %q has a bad datetime unit", ErrUnsupported, descr)
			}
			s = s[:i]
		}
	}
	if strings.IndexByte("biufcSaUVMm", kind) < 0 {
		return 0, fmt.Errorf("%w: descr %q (kind %q)", ErrUnsupported, descr, kind)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<30 || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%w: descr %q has no valid item size", ErrUnsupported, descr)
	}
	if kind == 'U' {
		if n > 1<<28 {
			return 0, fmt.Errorf("%w: descr %q has no valid item size", ErrUnsupported, descr)
		}
		n *= 4
	}
	return n, nil
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// dataLen returns prod(shape)*itemSize, or an error if a dimension is
// negative or the size overflows.
func dataLen(shape []int, itemSize int) (int, error) {
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %v", s, shape)
		}
		if s == 0 {
			return 0, nil // NumPy allows any other extents then
		}
	}
	n := itemSize
	for _, s := range shape {
		if n > math.MaxInt/s {
			return 0, fmt.Errorf("shape %v of %d-byte items is too large", shape, itemSize)
		}
		n *= s
	}
	return n, nil
}

// header is a parsed .npy header.
type header struct {
	descr        string
	fortranOrder bool
	shape        []int
	itemSize     int
	dataLen      int
}

// readHeader reads the magic, version and header dictionary, returning the
// header and the number of bytes consumed.
func readHeader(r io.Reader) (header, int, error) {
	var pre [10]byte
	n, err := io.ReadFull(r, pre[:8])
	if n < 6 || !bytes.Equal(pre[:6], magic) {
		if n == 0 && err != nil && err != io.EOF {
			return header{}, 0, fmt.Errorf("%w: reading magic: %v", ErrFormat, err)
		}
		return header{}, 0, fmt.Errorf("%w: not a .npy file: it starts with %q, not \"\\x93NUMPY\"", ErrFormat, pre[:min(n, 6)])
	}
	if err != nil {
		return header{}, 0, fmt.Errorf("%w: reading the version after the magic: %v", ErrFormat, noEOF(err))
	}
	major, minor := pre[6], pre[7]
	var hlen, consumed int
	switch {
	case major == 1 && minor == 0:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return header{}, 0, fmt.Errorf("%w: reading header length: %v", ErrFormat, noEOF(err))
		}
		hlen, consumed = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case (major == 2 || major == 3) && minor == 0:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return header{}, 0, fmt.Errorf("%w: reading header length: %v", ErrFormat, noEOF(err))
		}
		h := binary.LittleEndian.Uint32(l[:])
		if h > MaxHeaderLen {
			return header{}, 0, fmt.Errorf("%w: header of %d bytes (limit %d)", ErrFormat, h, MaxHeaderLen)
		}
		hlen, consumed = int(h), 12
	default:
		return header{}, 0, fmt.Errorf("%w: format version %d.%d", ErrUnsupported, major, minor)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return header{}, 0, fmt.Errorf("%w: reading %d-byte header: %v", ErrFormat, hlen, noEOF(err))
	}
	h, err := parseHeader(buf)
	if err != nil {
		return header{}, 0, err
	}
	return h, consumed + hlen, nil
}

// noEOF turns a bare EOF into ErrUnexpectedEOF: inside a file it is one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHeader parses the header dictionary.
func parseHeader(buf []byte) (header, error) {
	p := &parser{s: buf}
	v, err := p.parseValue(0)
	if err == nil {
		p.skipSpace()
		if p.i != len(p.s) {
			err = p.errorf("trailing text")
		}
	}
	if err != nil {
		return header{}, fmt.Errorf("%w: header %q: %v", ErrFormat, clip(buf), err)
	}
	d, ok := v.(dict)
	if !ok {
		return header{}, fmt.Errorf("%w: header %q is not a dictionary", ErrFormat, clip(buf))
	}
	var h header
	seen := map[string]bool{}
	for _, kv := range d {
		if seen[kv.key] {
			return header{}, fmt.Errorf("%w: header key %q repeated", ErrFormat, kv.key)
		}
		seen[kv.key] = true
		switch kv.key {
		case "descr":
			s, ok := kv.val.(string)
			if !ok {
				return header{}, fmt.Errorf("%w: descr is not a string (structured dtypes are not supported)", ErrUnsupported)
			}
			h.descr = s
		case "fortran_order":
			b, ok := kv.val.(bool)
			if !ok {
				return header{}, fmt.Errorf("%w: fortran_order is not True or False", ErrFormat)
			}
			h.fortranOrder = b
		case "shape":
			t, ok := kv.val.(tuple)
			if !ok {
				return header{}, fmt.Errorf("%w: shape is not a tuple", ErrFormat)
			}
			if len(t) > MaxDims {
				return header{}, fmt.Errorf("%w: shape has %d dimensions (limit %d)", ErrFormat, len(t), MaxDims)
			}
			h.shape = make([]int, len(t))
			for i, e := range t {
				n, ok := e.(int)
				if !ok || n < 0 {
					return header{}, fmt.Errorf("%w: shape entry %d is not a non-negative integer", ErrFormat, i)
				}
				h.shape[i] = n
			}
		default:
			return header{}, fmt.Errorf("%w: unexpected header key %q", ErrFormat, kv.key)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return header{}, fmt.Errorf("%w: header has no %q", ErrFormat, k)
		}
	}
	if h.descr == "|O" || h.descr == "O" {
		return header{}, fmt.Errorf("%w: object arrays (descr %q) hold pickles", ErrUnsupported, h.descr)
	}
	var err2 error
	if h.itemSize, err2 = ItemSize(h.descr); err2 != nil {
		return header{}, err2
	}
	if h.dataLen, err2 = dataLen(h.shape, h.itemSize); err2 != nil {
		return header{}, fmt.Errorf("%w: %v", ErrFormat, err2)
	}
	return h, nil
}

func clip(b []byte) []byte {
	if len(b) > 120 {
		return b[:120]
	}
	return b
}

// Read reads a .npy file from r: the header, then exactly the data bytes it
// promises (bytes after them are not read). A short data section is an
// error wrapping ErrFormat. Memory grows with the data actually read, so a
// header promising more than the input holds costs no large allocation.
func Read(r io.Reader) (*Array, error) {
	h, _, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	data, err := readData(r, h.dataLen)
	if err != nil {
		return nil, err
	}
	return &Array{Descr: h.descr, FortranOrder: h.fortranOrder, Shape: h.shape, Data: data}, nil
}

// readData reads exactly n bytes, growing the buffer as data arrives.
func readData(r io.Reader, n int) ([]byte, error) {
	const step = 1 << 20
	buf := make([]byte, 0, min(n, step))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(n-len(buf), max(len(buf), step)))...)[:len(buf)]
		}
		// Never past n: append may give more capacity than asked for.
		m, err := io.ReadFull(r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, fmt.Errorf("%w: data section has %d bytes, header promises %d", ErrFormat, len(buf), n)
		}
	}
	return buf, nil
}

// openFile opens the .npy file at path and reads its header, checking
// that the file holds exactly the data it promises: the file is left at
// the data, which starts at offset.
func openFile(path string) (f *os.File, h header, offset int, err error) {
	if f, err = os.Open(path); err != nil {
		return nil, header{}, 0, err
	}
	fail := func(err error) (*os.File, header, int, error) {
		f.Close()
		return nil, header{}, 0, err
	}
	if h, offset, err = readHeader(f); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if want := int64(offset) + int64(h.dataLen); fi.Mode().IsRegular() && fi.Size() != want {
		return fail(fmt.Errorf("%w: %s: file has %d bytes, header promises %d", ErrFormat, path, fi.Size(), want))
	}
	return f, h, offset, nil
}

// ReadFileHeader reads the header of the .npy file at path, not its data:
// the Array's Descr, FortranOrder and Shape (Data nil), and the offset in
// the file where the data starts, checked as ReadFile checks it (the file
// holds exactly the data promised). For data read in parts.
func ReadFileHeader(path string) (*Array, int64, error) {
	f, h, offset, err := openFile(path)
	if err != nil {
		return nil, 0, err
	}
	f.Close()
	return &Array{Descr: h.descr, FortranOrder: h.fortranOrder, Shape: h.shape}, int64(offset), nil
}

// ReadFile reads the .npy file at path. Unlike Read it also refuses
// trailing bytes after the data, and it checks the file's size before
// allocating.
func ReadFile(path string) (*Array, error) {
	f, h, _, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readData(f, h.dataLen)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Array{Descr: h.descr, FortranOrder: h.fortranOrder, Shape: h.shape, Data: data}, nil
}

// growthDigits mirrors NumPy's GROWTH_AXIS_MAX_DIGITS: NumPy pads the
// header so the first axis can grow to this many digits in place.
const growthDigits = 21

// headerBytes returns the full header (magic to newline) NumPy writes for a
// C-order array of the given descr and shape.
func headerBytes(descr string, shape []int) ([]byte, error) {
	isz, err := ItemSize(descr)
	if err != nil || strings.IndexByte("<>|", descr[0]) < 0 || strings.ContainsAny(descr, `'\`) {
		return nil, fmt.Errorf("%w: descr %q (want a plain dtype with an explicit byte order: <, > or |)", ErrInvalid, descr)
	}
	if _, err := dataLen(shape, isz); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(shape) > MaxDims {
		return nil, fmt.Errorf("%w: %d dimensions (limit %d)", ErrInvalid, len(shape), MaxDims)
	}
	var d strings.Builder
	d.WriteString("{'descr': '")
	d.WriteString(descr)
	d.WriteString("', 'fortran_order': False, 'shape': (")
	for i, s := range shape {
		if i > 0 {
			d.WriteString(", ")
		}
		d.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		d.WriteByte(',')
	}
	d.WriteString("), }")
	if len(shape) > 0 {
		d.WriteString(strings.Repeat(" ", max(0, growthDigits-len(strconv.Itoa(shape[0])))))
	}
	dict := d.String()
	// Format 1.0 has a 2-byte header length; with at most MaxDims
	// dimensions the header always fits.
	const prefix = 10
	hlen := len(dict) + 1
	pad := 64 - (prefix+hlen)%64
	out := make([]byte, 0, prefix+hlen+pad)
	out = append(out, magic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	out = append(out, dict...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n'), nil
}

// WriteHeader writes the header NumPy's numpy.save would write for a
// C-order array with the given descr and shape: format 1.0, the dictionary
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } with NumPy's
// padding, the whole header a multiple of 64 bytes ending in a newline.
// descr must be a plain dtype with an explicit byte order ('<', '>' or '|')
// and shape at most MaxDims non-negative entries.
func WriteHeader(w io.Writer, descr string, shape []int) error {
	h, err := headerBytes(descr, shape)
	if err != nil {
		return err
	}
	_, err = w.Write(h)
	return err
}

// Write writes a complete .npy file: the header, then data, which must hold
// exactly prod(shape) elements of descr in C order.
func Write(w io.Writer, descr string, shape []int, data []byte) error {
	isz, err := ItemSize(descr)
	if err != nil {
		return fmt.Errorf("%w: descr %q", ErrInvalid, descr)
	}
	n, err := dataLen(shape, isz)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(data) != n {
		return fmt.Errorf("%w: %d data bytes for shape %v of %q (want %d)", ErrInvalid, len(data), shape, descr, n)
	}
	if err := WriteHeader(w, descr, shape); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// WriteFile writes a .npy file at path (see Write), replacing any file
// there.
func WriteFile(path, descr string, shape []int, data []byte) error {
	var b bytes.Buffer
	if err := Write(&b, descr, shape, data); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
