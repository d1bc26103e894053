package numcodecs

// The numcodecs object codecs other than vlen-utf8 and vlen-bytes, as
// array -> bytes codecs of Zarr v2 object ("|O") arrays: json2 and
// msgpack2 (JSON-like values), vlen-array (ragged arrays of one numeric
// type) and categorize over object arrays (strings as label codes).
//
// Formats: https://numcodecs.readthedocs.io/en/stable/other/json.html,
// .../other/msgpacks.html, .../other/vlen.html#vlenarray,
// .../filter/categorize.html
// JSON names: "numcodecs.json2", "numcodecs.msgpack2",
// "numcodecs.vlen-array", "numcodecs.categorize" (Zarr v2: the first
// filter of a "|O" array, {"id": "json2", ...}).
// Configuration examples:
//
//	{"name": "numcodecs.json2", "configuration": {"allow_nan": true, "check_circular": true, "encoding": "utf-8",
//	  "ensure_ascii": true, "indent": null, "separators": [",", ":"], "skipkeys": false, "sort_keys": true, "strict": true}}
//	{"name": "numcodecs.msgpack2", "configuration": {"raw": false, "use_bin_type": true, "use_single_float": false}}
//	{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}}
//	{"name": "numcodecs.categorize", "configuration": {"labels": ["a", "b"], "dtype": "|O", "astype": "|u1"}}
//
// Every one decodes a chunk into one encoded value per element, which the
// operation's variable-length arena keeps as it keeps vlen-bytes chunks
// (the chunk becomes handles, codecs.VLenArena); zarr.ReadObjects,
// zarr.ReadRagged and zarr.ReadStrings resolve them. json2 and msgpack2
// store the chunk as one document, the list of the elements (nested by
// dimension, as NumPy's tolist makes it) followed by the dtype ("|O") and
// the shape; vlen-array has vlen-bytes' layout; categorize stores one
// integer code per element. Python's pickle codec is never read: it would
// run code from the data.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/msgpack"
	"github.com/gozarr/gozarr/internal/pyjson"
)

// ObjectElements is implemented by the json2 and msgpack2 codecs: how one
// element's encoded bytes (as the arena holds them) become a Go value and
// back. Values are nil, bool, int64 (uint64 past it), float64, string,
// []byte (msgpack2 only), []any and map[string]any.
type ObjectElements interface {
	DecodeElement(b []byte) (any, error)
	AppendElement(dst []byte, v any) ([]byte, error)
}

// objectFormat is what differs between the object codecs: how a chunk's
// encoding splits into its elements' encodings and joins back.
type objectFormat interface {
	// split returns the encoding of each element of the chunk src of
	// repr (sub-slices of src or new).
	split(src []byte, repr codecs.ChunkRepr) ([][]byte, error)
	// join appends the chunk encoding of elems (C order, shape) to dst.
	join(dst []byte, elems [][]byte, shape []int) ([]byte, error)
	// maxSize bounds the encoding of a chunk of repr whose elements
	// hold at most content bytes in all.
	maxSize(repr codecs.ChunkRepr, content int) int
}

// ObjectCodec is one of the object codecs. Unbound (as metadata builds it)
// it refuses to decode; prepared with an operation's arena
// (codecs.PrepareOptions.VLen) it decodes chunks into handles. It is
// immutable and safe for concurrent use.
type ObjectCodec struct {
	name   string
	config any
	dt     dtype.DataType // the array's: VarObject, VarArray or VarString
	format objectFormat
	inner  *codecs.VLen // vlen-bytes or vlen-utf8 (unbound; bound when prepared)
}

// Name returns the codec's name ("numcodecs.json2", ...).
func (c *ObjectCodec) Name() string { return c.name }

// Configuration returns the configuration the codec was made with.
func (c *ObjectCodec) Configuration() any { return c.config }

// DataType returns the variable-length type of the arrays the codec
// stores: dtype.TypeVarObject (json2, msgpack2), TypeVarArray
// (vlen-array) or TypeVarString (categorize).
func (c *ObjectCodec) DataType() dtype.DataType { return c.dt }

// PrepareArrayToBytes implements codecs.ArrayToBytesPreparer: the data
// type is checked and the codec bound to opts.VLen (nil: it refuses to
// decode, codecs.ErrVLenUnbound).
func (c *ObjectCodec) PrepareArrayToBytes(repr codecs.ChunkRepr, opts codecs.PrepareOptions) (codecs.PreparedArrayToBytes, error) {
	if err := c.ValidateRepr(repr); err != nil {
		return nil, err
	}
	inner, err := c.inner.PrepareArrayToBytes(c.innerRepr(repr), opts)
	if err != nil {
		return nil, err
	}
	return &preparedObject{c: c, repr: repr, inner: inner}, nil
}

// preparedObject is an object codec prepared for one representation.
type preparedObject struct {
	c     *ObjectCodec
	repr  codecs.ChunkRepr
	inner codecs.PreparedArrayToBytes // vlen-bytes or vlen-utf8, bound
}

func (p *preparedObject) Capabilities() codecs.Capabilities { return codecs.Capabilities{} }

func (p *preparedObject) MaxEncodedSize() int {
	content := p.inner.MaxEncodedSize() - 4 - 4*p.repr.NumElements()
	return p.c.format.maxSize(p.repr, max(content, 0))
}

func (p *preparedObject) Decode(dst, src []byte) error {
	buf, err := p.c.vlenOf(src, p.repr)
	if err != nil {
		return err
	}
	return p.inner.Decode(dst, buf)
}

func (p *preparedObject) Encode(dst, src []byte) ([]byte, error) {
	buf, err := p.inner.Encode(nil, src)
	if err != nil {
		return dst, err
	}
	return p.c.joinVLen(dst, buf, p.repr)
}

// innerRepr is repr as the inner vlen codec sees it.
func (c *ObjectCodec) innerRepr(repr codecs.ChunkRepr) codecs.ChunkRepr {
	r := repr
	r.DType = dtype.TypeVarBytes
	if c.dt == dtype.TypeVarString {
		r.DType = c.dt
	}
	return r
}

// ValidateRepr refuses chunks of another data type.
func (c *ObjectCodec) ValidateRepr(repr codecs.ChunkRepr) error {
	if repr.DType != c.dt {
		return fmt.Errorf("%w: %s stores %s elements, not %s", codecs.ErrInvalidConfig, c.name, c.dt, repr.DType)
	}
	return nil
}

// MaxEncodedSize bounds an encoded chunk of repr.
func (c *ObjectCodec) MaxEncodedSize(repr codecs.ChunkRepr) int {
	content := c.inner.MaxEncodedSize(c.innerRepr(repr)) - 4 - 4*repr.NumElements()
	return c.format.maxSize(repr, max(content, 0))
}

// Decode splits the chunk src into its elements and keeps them in the
// arena, writing a handle per element into dst. A malformed document, a
// shape other than the chunk's number of elements or an element the
// format refuses is codecs.ErrCorrupt.
func (c *ObjectCodec) Decode(dst, src []byte, repr codecs.ChunkRepr) error {
	if err := c.ValidateRepr(repr); err != nil {
		return err
	}
	buf, err := c.vlenOf(src, repr)
	if err != nil {
		return err
	}
	return c.inner.Decode(dst, buf, c.innerRepr(repr))
}

// vlenOf returns the chunk src of repr in the vlen-bytes encoding.
func (c *ObjectCodec) vlenOf(src []byte, repr codecs.ChunkRepr) ([]byte, error) {
	elems, err := c.format.split(src, repr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", codecs.ErrCorrupt, c.name, err)
	}
	if len(elems) != repr.NumElements() {
		return nil, fmt.Errorf("%w: %s: chunk holds %d elements, want %d", codecs.ErrCorrupt, c.name, len(elems), repr.NumElements())
	}
	n := int64(4 + 4*len(elems))
	for _, e := range elems {
		n += int64(len(e))
	}
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %s: chunk of more than 4 GiB", codecs.ErrCorrupt, c.name)
	}
	buf := make([]byte, 0, n)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(elems)))
	for _, e := range elems {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(e)))
		buf = append(buf, e...)
	}
	return buf, nil
}

// Encode appends the encoding of the chunk of handles src to dst.
func (c *ObjectCodec) Encode(dst, src []byte, repr codecs.ChunkRepr) ([]byte, error) {
	if err := c.ValidateRepr(repr); err != nil {
		return dst, err
	}
	buf, err := c.inner.Encode(nil, src, c.innerRepr(repr))
	if err != nil {
		return dst, err
	}
	return c.joinVLen(dst, buf, repr)
}

// joinVLen appends the chunk of repr whose vlen-bytes encoding is buf,
// in the codec's format, to dst.
func (c *ObjectCodec) joinVLen(dst, buf []byte, repr codecs.ChunkRepr) ([]byte, error) {
	elems, err := splitVLen(buf)
	if err != nil {
		return dst, err
	}
	return c.format.join(dst, elems, repr.Shape)
}

// splitVLen returns the elements of a vlen-bytes encoding (which
// codecs.VLen wrote, so well formed).
func splitVLen(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: vlen chunk of %d bytes", codecs.ErrCorrupt, len(b))
	}
	n := int(binary.LittleEndian.Uint32(b))
	out := make([][]byte, 0, min(n, len(b)/4))
	p := 4
	for range n {
		if len(b)-p < 4 {
			return nil, fmt.Errorf("%w: vlen chunk ends early", codecs.ErrCorrupt)
		}
		l := int(binary.LittleEndian.Uint32(b[p:]))
		if l > len(b)-p-4 {
			return nil, fmt.Errorf("%w: vlen element past the end", codecs.ErrCorrupt)
		}
		out = append(out, b[p+4:p+4+l])
		p += 4 + l
	}
	return out, nil
}

// docShape checks the trailing dtype and shape of a json2 or msgpack2
// document against the chunk and returns the shape.
func docShape(dt any, shape any, repr codecs.ChunkRepr) ([]int, error) {
	if s, ok := dt.(string); !ok || s != "|O" {
		return nil, fmt.Errorf("document's dtype is %v, want \"|O\"", dt)
	}
	dims, ok := shape.([]any)
	if !ok || len(dims) > 32 {
		return nil, fmt.Errorf("document's shape %v is not a list of dimensions", shape)
	}
	out := make([]int, len(dims))
	n := int64(1)
	for i, d := range dims {
		v, ok := d.(int64)
		if !ok || v < 0 || v > math.MaxInt32 {
			return nil, fmt.Errorf("document's shape %v", shape)
		}
		out[i] = int(v)
		n *= v
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("document's shape %v is too large", shape)
		}
	}
	if n != int64(repr.NumElements()) {
		return nil, fmt.Errorf("document's shape %v holds %d elements, the chunk %d", out, n, repr.NumElements())
	}
	return out, nil
}

// flatten takes the elements nested by dimension (the first len(shape)
// levels of lists) out of items; split is the format's list splitter.
func flatten(items [][]byte, shape []int, split func([]byte) ([][]byte, error)) ([][]byte, error) {
	if len(shape) == 0 { // a 0-d chunk: the one element
		if len(items) != 1 {
			return nil, fmt.Errorf("0-d chunk with %d items", len(items))
		}
		return items, nil
	}
	if len(items) != shape[0] {
		return nil, fmt.Errorf("%d items where the shape says %d", len(items), shape[0])
	}
	if len(shape) == 1 {
		return items, nil
	}
	var out [][]byte
	for _, it := range items {
		sub, err := split(it)
		if err != nil {
			return nil, fmt.Errorf("a row of the chunk: %v", err)
		}
		flat, err := flatten(sub, shape[1:], split)
		if err != nil {
			return nil, err
		}
		out = append(out, flat...)
	}
	return out, nil
}

// nest appends elems (C order) to dst as lists nested by shape, with
// open/sep/close writing a list's brackets for the format.
func nest(dst []byte, elems [][]byte, shape []int, list func(dst []byte, n int) []byte, sep []byte, end []byte) []byte {
	if len(shape) == 0 {
		return append(dst, elems[0]...)
	}
	dst = list(dst, shape[0])
	if len(shape) == 1 {
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, sep...)
			}
			dst = append(dst, e...)
		}
		return append(dst, end...)
	}
	step := len(elems) / max(shape[0], 1)
	for i := range shape[0] {
		if i > 0 {
			dst = append(dst, sep...)
		}
		dst = nest(dst, elems[i*step:(i+1)*step], shape[1:], list, sep, end)
	}
	return append(dst, end...)
}

// ---- json2

// objectLimits bounds one chunk document's values.
var (
	jsonLimits = pyjson.Limits{MaxDepth: 64, MaxValues: 1 << 24}
	mpLimits   = msgpack.Limits{MaxDepth: 64, MaxValues: 1 << 24}
)

// jsonConfig is json2's configuration, as numcodecs writes it.
type jsonConfig struct {
	AllowNaN      *bool     `json:"allow_nan,omitempty"`
	CheckCircular *bool     `json:"check_circular,omitempty"`
	Encoding      *string   `json:"encoding,omitempty"`
	EnsureASCII   *bool     `json:"ensure_ascii,omitempty"`
	Indent        any       `json:"indent"`
	Separators    *[]string `json:"separators,omitempty"`
	SkipKeys      *bool     `json:"skipkeys,omitempty"`
	SortKeys      *bool     `json:"sort_keys,omitempty"`
	Strict        *bool     `json:"strict,omitempty"`
}

type json2Format struct{}

func (json2Format) split(src []byte, repr codecs.ChunkRepr) ([][]byte, error) {
	items, err := pyjson.SplitArray(src, jsonLimits)
	if err != nil {
		return nil, err
	}
	if len(items) < 2 {
		return nil, fmt.Errorf("document has %d items, no dtype and shape", len(items))
	}
	dt, err := pyjson.Decode(items[len(items)-2], jsonLimits)
	if err != nil {
		return nil, err
	}
	sh, err := pyjson.Decode(items[len(items)-1], jsonLimits)
	if err != nil {
		return nil, err
	}
	shape, err := docShape(dt, sh, repr)
	if err != nil {
		return nil, err
	}
	return flatten(items[:len(items)-2], shape, func(b []byte) ([][]byte, error) { return pyjson.SplitArray(b, jsonLimits) })
}

func (json2Format) join(dst []byte, elems [][]byte, shape []int) ([]byte, error) {
	dst = append(dst, '[')
	if len(shape) == 0 {
		dst = append(dst, elems[0]...)
	} else if len(elems) > 0 {
		inner := nest(nil, elems, shape, func(d []byte, _ int) []byte { return append(d, '[') }, []byte{','}, []byte{']'})
		dst = append(dst, inner[1:len(inner)-1]...) // the outer list is the document's
	}
	if len(shape) > 0 && len(elems) > 0 || len(shape) == 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"|O",[`...)
	for i, d := range shape {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fmt.Appendf(dst, "%d", d)
	}
	return append(dst, "]]"...), nil
}

func (json2Format) maxSize(repr codecs.ChunkRepr, content int) int {
	return content + 2*repr.NumElements() + 64 + 24*len(repr.Shape)
}

// JSON2 is numcodecs' json2 object codec's element format.
type JSON2 struct{}

// DecodeElement decodes one element's JSON (Python's NaN and infinities
// included).
func (JSON2) DecodeElement(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil // the fill value of an object array: None
	}
	v, err := pyjson.Decode(b, jsonLimits)
	if err != nil {
		return nil, fmt.Errorf("%w: numcodecs.json2: %v", codecs.ErrCorrupt, err)
	}
	return v, nil
}

// AppendElement appends v's JSON, as numcodecs' default settings write it.
func (JSON2) AppendElement(dst []byte, v any) ([]byte, error) {
	out, err := pyjson.Append(dst, v)
	if err != nil {
		return dst, fmt.Errorf("numcodecs.json2: %w", err)
	}
	return out, nil
}

// ---- msgpack2

type msgpackConfig struct {
	Raw            *bool `json:"raw,omitempty"`
	UseBinType     *bool `json:"use_bin_type,omitempty"`
	UseSingleFloat *bool `json:"use_single_float,omitempty"`
}

type msgpack2Format struct{}

func (msgpack2Format) split(src []byte, repr codecs.ChunkRepr) ([][]byte, error) {
	items, err := msgpack.SplitArray(src, mpLimits)
	if err != nil {
		return nil, err
	}
	if len(items) < 2 {
		return nil, fmt.Errorf("document has %d items, no dtype and shape", len(items))
	}
	dt, err := msgpack.Decode(items[len(items)-2], mpLimits)
	if err != nil {
		return nil, err
	}
	sh, err := msgpack.Decode(items[len(items)-1], mpLimits)
	if err != nil {
		return nil, err
	}
	shape, err := docShape(dt, sh, repr)
	if err != nil {
		return nil, err
	}
	items = items[:len(items)-2]
	if len(shape) == 0 {
		return items, nil
	}
	return flatten(items, shape, func(b []byte) ([][]byte, error) { return msgpack.SplitArray(b, mpLimits) })
}

func (msgpack2Format) join(dst []byte, elems [][]byte, shape []int) ([]byte, error) {
	rows := 1
	if len(shape) > 0 {
		rows = shape[0]
	}
	if len(shape) == 0 {
		dst = msgpack.AppendArrayHeader(dst, 3)
		dst = append(dst, elems[0]...)
	} else {
		dst = msgpack.AppendArrayHeader(dst, rows+2)
		inner := nest(nil, elems, shape, msgpack.AppendArrayHeader, nil, nil)
		dst = append(dst, inner[len(msgpack.AppendArrayHeader(nil, rows)):]...)
	}
	dst, _ = msgpack.Append(dst, "|O")
	dims := make([]any, len(shape))
	for i, d := range shape {
		dims[i] = int64(d)
	}
	return msgpack.Append(dst, dims)
}

func (msgpack2Format) maxSize(repr codecs.ChunkRepr, content int) int {
	return content + 6*repr.NumElements() + 64 + 10*len(repr.Shape)
}

// MsgPack2 is numcodecs' msgpack2 object codec's element format.
type MsgPack2 struct{}

// DecodeElement decodes one element's MessagePack.
func (MsgPack2) DecodeElement(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	v, err := msgpack.Decode(b, mpLimits)
	if err != nil {
		return nil, fmt.Errorf("%w: numcodecs.msgpack2: %v", codecs.ErrCorrupt, err)
	}
	return v, nil
}

// AppendElement appends v's MessagePack (bin for []byte, as
// use_bin_type=True writes).
func (MsgPack2) AppendElement(dst []byte, v any) ([]byte, error) {
	out, err := msgpack.Append(dst, v)
	if err != nil {
		return dst, fmt.Errorf("numcodecs.msgpack2: %w", err)
	}
	return out, nil
}

// ---- vlen-array

type vlenArrayFormat struct{ elem elemType }

func (f vlenArrayFormat) split(src []byte, repr codecs.ChunkRepr) ([][]byte, error) {
	elems, err := splitVLenChecked(src, repr.NumElements())
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		if len(e)%f.elem.size != 0 {
			return nil, fmt.Errorf("element %d has %d bytes, not whole %q values", i, len(e), f.elem.descr)
		}
	}
	return elems, nil
}

func (vlenArrayFormat) join(dst []byte, elems [][]byte, _ []int) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(elems)))
	for _, e := range elems {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e)))
		dst = append(dst, e...)
	}
	return dst, nil
}

func (vlenArrayFormat) maxSize(repr codecs.ChunkRepr, content int) int {
	return 4 + 4*repr.NumElements() + content
}

// splitVLenChecked splits an untrusted vlen-bytes layout of n elements.
func splitVLenChecked(src []byte, n int) ([][]byte, error) {
	if len(src) < 4 || uint64(binary.LittleEndian.Uint32(src)) != uint64(n) {
		return nil, fmt.Errorf("chunk does not start with its %d elements' count", n)
	}
	if uint64(len(src)-4) < 4*uint64(n) {
		return nil, fmt.Errorf("%d bytes cannot hold %d lengths", len(src), n)
	}
	return splitVLen(src)
}

// RaggedElement returns the element type of a vlen-array codec's arrays
// and whether they are stored big-endian; ok is false for other codecs.
func RaggedElement(c codecs.Codec) (d dtype.DataType, bigEndian, ok bool) {
	o, isObj := c.(*ObjectCodec)
	if !isObj {
		return dtype.DataType{}, false, false
	}
	f, isArr := o.format.(vlenArrayFormat)
	if !isArr {
		return dtype.DataType{}, false, false
	}
	d, big, err := dtype.ParseNumpy(f.elem.descr)
	return d, big, err == nil
}

// ---- categorize over object arrays

type categorizeFormat struct {
	labels [][]byte
	as     elemType
	index  map[string]int
}

func (f categorizeFormat) split(src []byte, repr codecs.ChunkRepr) ([][]byte, error) {
	n := repr.NumElements()
	if len(src) != n*f.as.size {
		return nil, fmt.Errorf("%d bytes, %d codes of %q take %d", len(src), n, f.as.descr, n*f.as.size)
	}
	out := make([][]byte, n)
	for i := range out {
		code := f.as.load(src[i*f.as.size:])
		if f.as.kind == dtype.Int {
			shift := 64 - 8*f.as.size
			code = uint64(int64(code<<shift) >> shift)
		}
		if code >= 1 && code <= uint64(len(f.labels)) {
			out[i] = f.labels[code-1]
		} else {
			out[i] = []byte{} // 0 and unknown codes: "", as numcodecs decodes
		}
	}
	return out, nil
}

func (f categorizeFormat) join(dst []byte, elems [][]byte, _ []int) ([]byte, error) {
	for _, e := range elems {
		dst = slices.Grow(dst, f.as.size)
		dst = dst[:len(dst)+f.as.size]
		f.as.store(dst[len(dst)-f.as.size:], uint64(f.index[string(e)]))
	}
	return dst, nil
}

func (f categorizeFormat) maxSize(repr codecs.ChunkRepr, _ int) int {
	return repr.NumElements() * f.as.size
}

// newObjectCategorize is categorize with dtype "|O".
func newObjectCategorize(labels []string, astype string) (*ObjectCodec, error) {
	as, err := parseElem("numcodecs.categorize", "astype", astype)
	if err != nil {
		return nil, err
	}
	if !as.integer() || as.big {
		return nil, fmt.Errorf("%w: numcodecs.categorize: astype %q is not a little-endian integer type", codecs.ErrInvalidConfig, astype)
	}
	if len(labels) > 1<<20 {
		return nil, fmt.Errorf("%w: numcodecs.categorize: %d labels", codecs.ErrInvalidConfig, len(labels))
	}
	f := categorizeFormat{as: as, index: map[string]int{}}
	for i, l := range labels {
		f.labels = append(f.labels, []byte(l))
		f.index[l] = i + 1 // the last equal label wins, as numcodecs assigns in order
	}
	inner, _ := codecs.NewVLen(dtype.TypeVarString)
	cfg := struct {
		AsType string   `json:"astype"`
		DType  string   `json:"dtype"`
		Labels []string `json:"labels"`
	}{astype, "|O", labels}
	return &ObjectCodec{name: prefix + "categorize", config: cfg, dt: dtype.TypeVarString, format: f, inner: inner}, nil
}

func init() {
	bytesVLen := func() *codecs.VLen {
		v, _ := codecs.NewVLen(dtype.TypeVarBytes)
		return v
	}
	codecs.Register(prefix+"json2", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg jsonConfig
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Encoding != nil && *cfg.Encoding != "utf-8" && *cfg.Encoding != "utf8" {
			return nil, fmt.Errorf("%w: numcodecs.json2: encoding %q (only UTF-8 is read)", codecs.ErrInvalidConfig, *cfg.Encoding)
		}
		if configuration == nil || bytes.Equal(bytes.TrimSpace(configuration), []byte("null")) {
			configuration = json.RawMessage(`{}`)
		}
		return &ObjectCodec{name: prefix + "json2", config: configuration, dt: dtype.TypeVarObject, format: json2Format{}, inner: bytesVLen()}, nil
	})
	codecs.Register(prefix+"msgpack2", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg msgpackConfig
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Raw != nil && *cfg.Raw {
			return nil, fmt.Errorf("%w: numcodecs.msgpack2: raw=true (strings as bytes) is not read", codecs.ErrInvalidConfig)
		}
		if configuration == nil || bytes.Equal(bytes.TrimSpace(configuration), []byte("null")) {
			configuration = json.RawMessage(`{"raw":false,"use_bin_type":true,"use_single_float":false}`)
		}
		return &ObjectCodec{name: prefix + "msgpack2", config: configuration, dt: dtype.TypeVarObject, format: msgpack2Format{}, inner: bytesVLen()}, nil
	})
	codecs.Register(prefix+"vlen-array", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			DType *string `json:"dtype"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.DType == nil {
			return nil, fmt.Errorf("%w: numcodecs.vlen-array: configuration has no \"dtype\"", codecs.ErrInvalidConfig)
		}
		e, err := parseElem("numcodecs.vlen-array", "dtype", *cfg.DType)
		if err != nil {
			return nil, err
		}
		if _, _, err := dtype.ParseNumpy(e.descr); err != nil || !(e.integer() || e.kind == dtype.Float) {
			return nil, fmt.Errorf("%w: numcodecs.vlen-array: dtype %q is not a numeric type", codecs.ErrInvalidConfig, *cfg.DType)
		}
		c := struct {
			DType string `json:"dtype"`
		}{*cfg.DType}
		return &ObjectCodec{name: prefix + "vlen-array", config: c, dt: dtype.TypeVarArray, format: vlenArrayFormat{elem: e}, inner: bytesVLen()}, nil
	})
}

// ElementsOf returns the element format of a json2 or msgpack2 codec; ok
// is false for other codecs.
func ElementsOf(c codecs.Codec) (ObjectElements, bool) {
	o, isObj := c.(*ObjectCodec)
	if !isObj {
		return nil, false
	}
	switch o.format.(type) {
	case json2Format:
		return JSON2{}, true
	case msgpack2Format:
		return MsgPack2{}, true
	}
	return nil, false
}
