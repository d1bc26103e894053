package zarr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// Numcodec is a Zarr v2 filter or compressor: a numcodecs configuration
// object whose "id" names the codec.
type Numcodec struct {
	// ID is the numcodecs codec id ("blosc", "zlib", "delta", ...).
	ID string
	// Object is the whole JSON object as written, "id" included.
	Object json.RawMessage
}

// ArrayMetadataV2 is a Zarr v2 array: its .zarray document and, optionally,
// its .zattrs. Parse it with ParseArrayMetadataV2; ToV3 gives the
// equivalent v3 view the rest of gozarr works with. It is not safe for
// concurrent mutation.
type ArrayMetadataV2 struct {
	// Shape is the length of each dimension; Chunks the chunk shape.
	Shape, Chunks []int
	// DType is the NumPy dtype string as written ("<f4", ">i8", "|b1").
	DType string
	// DataType is the element type DType describes; BigEndian tells the
	// stored byte order of multi-byte numbers.
	DataType  dtype.DataType
	BigEndian bool
	// FillValue is one element in memory representation (little-endian),
	// or nil when the document says null (no fill value); for "|O" arrays
	// (variable-length strings or bytes), the fill value's content.
	FillValue []byte
	// Order is "C" or "F", the layout of elements inside a chunk.
	Order string
	// Filters is nil when the document says null; Compressor nil when null.
	Filters    []Numcodec
	Compressor *Numcodec
	// DimensionSeparator is "." (the default) or "/".
	DimensionSeparator string
	// Attributes holds the .zattrs content (numbers as json.Number);
	// empty, never nil, when there is none.
	Attributes map[string]any
}

func parseNumcodec(field string, raw json.RawMessage) (*Numcodec, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, metaErr(field, "not a codec object")
	}
	var id string
	if err := json.Unmarshal(obj["id"], &id); err != nil || id == "" {
		return nil, metaErr(field, "codec object without a string \"id\"")
	}
	return &Numcodec{ID: id, Object: append(json.RawMessage(nil), bytes.TrimSpace(raw)...)}, nil
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// ParseArrayMetadataV2 parses a Zarr v2 .zarray document and, when zattrs is
// not empty, the .zattrs document beside it. Absent optional fields take
// their v2 defaults (order "C", dimension_separator ".", no compressor, no
// filters, fill_value null); unknown fields are ignored, as v2 has no
// extension mechanism. Errors wrap ErrInvalidMetadata (or ErrUnsupported
// for dtypes gozarr lacks: structured, object, string, datetime) and name
// the field; it never panics. Fill values of NumPy "S" and "V" dtypes are
// read as zarr-python reads them: base64 of at most the item size, zero-padded
// ("" is all zeros), and for "S" an integer as its decimal digits, as
// zarr-python 2 did (0 for |S1 is b"0").
func ParseArrayMetadataV2(zarray, zattrs []byte) (*ArrayMetadataV2, error) {
	top, err := decodeTop(zarray, V2ArrayKey)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(top, 2); err != nil {
		return nil, err
	}
	for _, f := range []string{"shape", "chunks", "dtype"} {
		if _, ok := top[f]; !ok {
			return nil, metaErr(f, "missing")
		}
	}
	m := &ArrayMetadataV2{Order: "C", DimensionSeparator: "."}
	if m.Shape, err = parseIntList("shape", top["shape"]); err != nil {
		return nil, err
	}
	if m.Chunks, err = parseIntList("chunks", top["chunks"]); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(top["dtype"], &m.DType); err != nil {
		return nil, fmt.Errorf("%w: dtype: only simple dtype strings are supported (structured dtypes are not)", ErrUnsupported)
	}
	if isObjectDType(m.DType) {
		if m.DataType, err = objectTypeV2(top["filters"]); err != nil {
			return nil, err
		}
	} else if m.DataType, m.BigEndian, err = dtype.ParseNumpy(m.DType); err != nil {
		return nil, fmt.Errorf("%w: dtype: %w", ErrUnsupported, err)
	}
	if raw, ok := top["fill_value"]; ok {
		fill, ok, err := parseFillV2(m.DataType, m.DType, bytes.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: fill_value: %w", ErrInvalidMetadata, err)
		}
		if ok {
			m.FillValue = fill
		}
	}
	if raw, ok := top["order"]; ok {
		if err := json.Unmarshal(raw, &m.Order); err != nil {
			return nil, metaErr("order", "not a string")
		}
	}
	if raw, ok := top["dimension_separator"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &m.DimensionSeparator); err != nil {
			return nil, metaErr("dimension_separator", "not a string")
		}
	}
	if raw := top["compressor"]; !isNull(raw) {
		if m.Compressor, err = parseNumcodec("compressor", raw); err != nil {
			return nil, err
		}
	}
	if raw := top["filters"]; !isNull(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, metaErr("filters", "not an array")
		}
		for i, it := range items {
			c, err := parseNumcodec(fmt.Sprintf("filters[%d]", i), it)
			if err != nil {
				return nil, err
			}
			m.Filters = append(m.Filters, *c)
		}
	}
	if m.Attributes, err = ParseAttributes(zattrs); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Validate checks the v2 metadata: shapes as for v3 (see
// ArrayMetadata.Validate), order "C" or "F", separator "." or "/", a fill
// value of the element size, codec ids present. Errors wrap
// ErrInvalidMetadata.
func (m *ArrayMetadataV2) Validate() error {
	if m == nil {
		return metaErr("array", "nil metadata")
	}
	if m.Order != "C" && m.Order != "F" {
		return metaErr("order", "%q, want \"C\" or \"F\"", m.Order)
	}
	if m.DimensionSeparator != "." && m.DimensionSeparator != "/" {
		return metaErr("dimension_separator", "%q, want \".\" or \"/\"", m.DimensionSeparator)
	}
	if m.FillValue != nil && len(m.FillValue) != m.DataType.Size() && !m.DataType.VarLen() {
		return metaErr("fill_value", "%d bytes, want %d", len(m.FillValue), m.DataType.Size())
	}
	if m.Compressor != nil && m.Compressor.ID == "" {
		return metaErr("compressor", "no id")
	}
	for i, f := range m.Filters {
		if f.ID == "" {
			return metaErr("filters", "filter %d has no id", i)
		}
	}
	// Shapes, rank and sizes: the same rules as v3.
	v3 := ArrayMetadata{Shape: m.Shape, ChunkShape: m.Chunks, DataType: m.DataType,
		FillValue: make([]byte, m.DataType.Size()), ChunkKeyEncoding: V2KeyEncoding("."),
		Codecs: []codecs.Spec{{Name: "bytes"}}}
	if len(m.Chunks) != len(m.Shape) {
		return metaErr("chunks", "%d dimensions, shape has %d", len(m.Chunks), len(m.Shape))
	}
	return v3.Validate()
}

// Marshal validates m and returns its .zarray document as zarr-python
// writes it: shape, chunks, dtype, fill_value, order, filters,
// dimension_separator, compressor, zarr_format, two-space indent. Every NaN
// fill is written "NaN" (v2 cannot carry NaN payloads).
func (m *ArrayMetadataV2) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	fill, err := dtype.FormatFillV2(m.DataType, m.FillValue)
	if err != nil {
		return nil, fmt.Errorf("%w: fill_value: %w", ErrInvalidMetadata, err)
	}
	var filters any
	if m.Filters != nil {
		fs := make([]json.RawMessage, len(m.Filters))
		for i, f := range m.Filters {
			if !json.Valid(f.Object) {
				return nil, metaErr("filters", "filter %d is not valid JSON", i)
			}
			fs[i] = f.Object
		}
		filters = fs
	}
	var comp any
	if m.Compressor != nil {
		if !json.Valid(m.Compressor.Object) {
			return nil, metaErr("compressor", "not valid JSON")
		}
		comp = m.Compressor.Object
	}
	return writeDoc([]field{
		{"shape", m.Shape},
		{"chunks", m.Chunks},
		{"dtype", m.DType},
		{"fill_value", fill},
		{"order", m.Order},
		{"filters", filters},
		{"dimension_separator", m.DimensionSeparator},
		{"compressor", comp},
		{"zarr_format", 2},
	}, nil)
}

// MarshalAttributes returns a .zattrs document (or any attributes object)
// with two-space indent; nil gives {}.
func MarshalAttributes(attrs map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(attrsOrEmpty(attrs)); err != nil {
		return nil, fmt.Errorf("%w: attributes: %v", ErrInvalidMetadata, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ToV3 returns the Zarr v3 view of a v2 array, so one code path can read
// both formats:
//
//   - shape and chunk shape as they are; data type from the NumPy dtype;
//     chunk key encoding "v2" with the array's dimension_separator.
//   - fill value: the v2 fill value, or zero bytes when it is null (v2 null
//     means "undefined"; zarr-python reads missing chunks of such arrays
//     as zeros too).
//   - attributes: the .zattrs; dimension names from xarray's
//     "_ARRAY_DIMENSIONS" attribute when it is a list of one string per
//     dimension (the attribute is kept).
//   - codecs, in this order:
//     1. transpose {"order": [n-1, ..., 0]} when order is "F" and ndim > 1
//     (a v2 F-order chunk is the C-order serialisation of the
//     axis-reversed chunk);
//     2. bytes, {"endian": "big"|"little"} for every type wider than one
//     byte (no configuration for one-byte types): the bytes codec asks an
//     endian of each, raw types ("|S5", "|V8": "little", which changes
//     nothing for them) included;
//     3. each v2 filter, in order, as a BYTES -> BYTES codec named
//     "numcodecs.<id>" whose configuration is the filter object without
//     "id" (compressors, which kerchunk writes as filters too, map as in
//     step 4). In v2, filters see the serialised chunk (elements in C/F
//     order, in the dtype's byte order) and reinterpret it through their
//     own configuration (delta's "dtype"/"astype", shuffle's
//     "elementsize"), so a bytes -> bytes codec over exactly those bytes
//     reproduces v2 byte for byte and keeps the filters' order even when a
//     byte filter precedes a typed one. Implementations of these codecs
//     must follow numcodecs' buffer semantics (delta of astype narrower
//     than dtype shrinks the buffer).
//     4. the compressor, through the mapping its codec's package
//     registered (codecs.RegisterV2): "blosc" with the v3 configuration (shuffle 0/1/2
//     → "noshuffle"/"shuffle"/"bitshuffle"; -1, AUTOSHUFFLE, →
//     "bitshuffle" for one-byte items else "shuffle"; typesize = the
//     element size reaching the compressor: the last filter's "astype"
//     when it has one, else the data type's size — only encoding depends
//     on it), "zstd" {"level", "checksum"}, "gzip" {"level"}, and any other
//     compressor (or one of these with fields gozarr does not know) as
//     "numcodecs.<id>" with the object minus "id" as configuration
//     ("numcodecs.zlib", "numcodecs.lz4", "numcodecs.bz2", ...).
//     The compressors "pcodec" and "zfpy" are different: they serialise
//     the array, so "numcodecs.pcodec" and "numcodecs.zfpy" (array -> bytes
//     codecs) take the place of bytes; they are refused after filters and
//     on big-endian types.
//     A crc32c checksum (filter or compressor) with its default location,
//     "end", is the core "crc32c" codec, which has the same layout;
//     "location": "start" is "numcodecs.crc32c".
func (m *ArrayMetadataV2) ToV3() (*ArrayMetadata, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	fill := m.FillValue
	if m.DataType.VarLen() {
		fill = varFillV3(fill)
	} else if fill == nil {
		fill = make([]byte, m.DataType.Size())
	}
	fillJSON, err := dtype.FormatFill(m.DataType, fill)
	if err != nil {
		return nil, fmt.Errorf("%w: fill_value: %w", ErrInvalidMetadata, err)
	}
	v3 := &ArrayMetadata{
		Shape:            append([]int(nil), m.Shape...),
		ChunkShape:       append([]int(nil), m.Chunks...),
		DataType:         m.DataType,
		ChunkKeyEncoding: V2KeyEncoding(m.DimensionSeparator),
		FillValue:        append([]byte(nil), fill...),
		FillValueJSON:    fillJSON,
		Attributes:       attrsOrEmpty(m.Attributes),
	}
	if names, ok := m.Attributes["_ARRAY_DIMENSIONS"].([]any); ok && len(names) == len(m.Shape) {
		dn := make([]*string, len(names))
		for i, n := range names {
			s, ok := n.(string)
			if !ok {
				dn = nil
				break
			}
			dn[i] = &s
		}
		v3.DimensionNames = dn
	}
	n := len(m.Shape)
	if m.Order == "F" && n > 1 {
		perm := make([]int, n)
		for i := range perm {
			perm[i] = n - 1 - i
		}
		cfg, _ := json.Marshal(map[string]any{"order": perm})
		v3.Codecs = append(v3.Codecs, codecs.Spec{Name: "transpose", Configuration: cfg})
	}
	bytesSpec := codecs.Spec{Name: "bytes"}
	if m.DataType.Size() > 1 {
		endian := "little"
		if m.BigEndian {
			endian = "big"
		}
		bytesSpec.Configuration, _ = json.Marshal(map[string]string{"endian": endian})
	}
	filters := m.Filters
	if m.DataType.VarLen() {
		var err error
		if bytesSpec, filters, err = v2VarCodecs(m); err != nil {
			return nil, metaErr("filters", "%v", err)
		}
	}
	if c := m.Compressor; c != nil && arrayCompressors[c.ID] && !m.DataType.VarLen() {
		// pcodec and zfpy serialise the array itself (numcodecs hands them
		// the chunk array): they take the place of bytes.
		if len(filters) > 0 {
			return nil, metaErr("compressor", "%s after filters is not supported", c.ID)
		}
		if m.BigEndian && m.DataType.Size() > 1 {
			return nil, metaErr("compressor", "%s on big-endian %s is not supported", c.ID, m.DataType)
		}
		spec, err := numcodecSpec(*c)
		if err != nil {
			return nil, metaErr("compressor", "%v", err)
		}
		v3.Codecs = append(v3.Codecs, spec)
		if err := v3.Validate(); err != nil {
			return nil, err
		}
		return v3, nil
	}
	v3.Codecs = append(v3.Codecs, bytesSpec)
	typesize := m.DataType.Size()
	for i, f := range filters {
		// Compressors as filters (kerchunk writes every HDF5 filter
		// there) map as they do as the compressor.
		spec, err := v2CodecSpec(f, typesize)
		if err != nil {
			return nil, metaErr(fmt.Sprintf("filters[%d]", i), "%v", err)
		}
		v3.Codecs = append(v3.Codecs, spec)
		var as struct {
			Astype      string `json:"astype"`
			EncodeDType string `json:"encode_dtype"` // numcodecs.astype
		}
		if json.Unmarshal(f.Object, &as) == nil && as.Astype == "" {
			as.Astype = as.EncodeDType
		}
		if as.Astype != "" {
			if d, _, err := dtype.ParseNumpy(as.Astype); err == nil {
				typesize = d.Size()
			}
		}
	}
	if m.Compressor != nil {
		spec, err := v2CodecSpec(*m.Compressor, typesize)
		if err != nil {
			return nil, metaErr("compressor", "%v", err)
		}
		v3.Codecs = append(v3.Codecs, spec)
	}
	if err := v3.Validate(); err != nil {
		return nil, err
	}
	return v3, nil
}

// arrayCompressors are the v2 compressors ToV3 maps to array -> bytes
// codecs "numcodecs.<id>" replacing bytes: those that code the chunk
// array rather than its bytes.
var arrayCompressors = map[string]bool{"pcodec": true, "zfpy": true}

// parseFillV2 is dtype.ParseFillV2 with zarr-python's reading of the fill
// values of NumPy "S" and "V" dtypes (gozarr's raw types): a base64 string
// of at most the item size, zero-padded as NumPy pads short byte strings
// (zarr-python writes "" for an empty |S7 fill); and, for "S" only, an
// integer, read as its decimal digits (zarr-python 2 handed numbers to
// NumPy, which stores 0 as |S1 b"0"). Longer values are refused, where
// NumPy would cut them.
func parseFillV2(d dtype.DataType, descr string, raw json.RawMessage) ([]byte, bool, error) {
	if d.Kind() != dtype.Raw && d.Kind() != dtype.Bytes {
		return dtype.ParseFillV2(d, raw)
	}
	var b []byte
	var s string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &s) == nil:
		var err error
		if b, err = base64.StdEncoding.DecodeString(s); err != nil {
			return nil, false, fmt.Errorf("%w: %s for %s: bad base64: %v", dtype.ErrInvalidFill, clip(s), descr, err)
		}
	case strings.Contains(descr, "S") && json.Unmarshal(raw, &n) == nil && isDecimal(string(n)):
		i, _ := new(big.Int).SetString(string(n), 10)
		b = []byte(i.String())
	default:
		return dtype.ParseFillV2(d, raw)
	}
	if len(b) > d.Size() {
		return nil, false, fmt.Errorf("%w: %s for %s: %d bytes, more than the item size %d", dtype.ErrInvalidFill, clip(string(raw)), descr, len(b), d.Size())
	}
	out := make([]byte, d.Size())
	copy(out, b)
	return out, true, nil
}

// isDecimal reports whether s is a JSON integer (an optional minus sign,
// then digits).
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// v2CodecSpec maps a v2 filter or compressor to a v3 codec: the mapping
// the codec's package registered (codecs.RegisterV2: blosc, zstd, gzip,
// crc32c with the checksum at the end), else numcodecSpec's
// "numcodecs.<id>". typesize is the size of the elements reaching it.
func v2CodecSpec(c Numcodec, typesize int) (codecs.Spec, error) {
	spec, ok, err := codecs.V2Spec(c.ID, c.Object, typesize)
	if ok || err != nil {
		return spec, err
	}
	return numcodecSpec(c)
}

// numcodecSpec maps a numcodecs object to {"name": "numcodecs.<id>",
// "configuration": object minus "id"}.
func numcodecSpec(c Numcodec) (codecs.Spec, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Object, &obj); err != nil {
		return codecs.Spec{}, err
	}
	delete(obj, "id")
	cfg, err := marshalSorted(obj)
	if err != nil {
		return codecs.Spec{}, err
	}
	return codecs.Spec{Name: "numcodecs." + c.ID, Configuration: cfg}, nil
}

func marshalSorted(obj map[string]json.RawMessage) (json.RawMessage, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(bytes.TrimSpace(obj[k]))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ParseGroupMetadataV2 parses a Zarr v2 .zgroup document (zarr_format must
// be 2) and its .zattrs (may be empty) into the v3 group view. Errors wrap
// ErrInvalidMetadata; it never panics.
func ParseGroupMetadataV2(zgroup, zattrs []byte) (*GroupMetadata, error) {
	top, err := decodeTop(zgroup, V2GroupKey)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(top, 2); err != nil {
		return nil, err
	}
	attrs, err := ParseAttributes(zattrs)
	if err != nil {
		return nil, err
	}
	return &GroupMetadata{Attributes: attrs}, nil
}
