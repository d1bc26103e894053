package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/pyjson"
)

// Limits on array metadata, so that hostile documents cannot make later
// arithmetic overflow or allocations explode.
const (
	// MaxRank is the largest number of dimensions accepted.
	MaxRank = 32
	// MaxChunkBytes is the largest decoded size of one chunk (of the chunk
	// grid: for a sharded array, one shard) accepted, 1 TiB.
	MaxChunkBytes = 1 << 40
)

// NodeType is the kind of a node in a hierarchy: NodeArray or NodeGroup.
type NodeType string

// The node types of Zarr v3 ("node_type").
const (
	NodeArray NodeType = "array"
	NodeGroup NodeType = "group"
)

// ConsolidatedMetadataKey is the top-level field zarr-python writes into
// group documents holding consolidated metadata. gozarr does not use it,
// accepts it whatever its value (it is a cache, safe to ignore) and keeps it
// in Extensions so it survives a rewrite.
const ConsolidatedMetadataKey = "consolidated_metadata"

// ArrayMetadata is the content of a Zarr v3 array's zarr.json. Parse it
// with ParseArrayMetadata and write it with Marshal. A value is not safe for
// concurrent mutation; treat a parsed value as read-only when sharing it.
//
// Extension rules (Zarr v3 core, "Extensions"): an unknown top-level field
// is refused (ErrUnsupported, naming it) unless its value is an object with
// "must_understand": false, in which case it is kept in Extensions and
// written back by Marshal. Objects for data_type, chunk_grid and
// chunk_key_encoding may carry a "must_understand" member, but since the
// spec does not allow must_understand=false for these extension points, an
// unknown data type, chunk grid or chunk key encoding is ErrUnsupported
// whatever it says. Unknown codecs are left to the codec chain, which
// refuses them (codecs.ErrUnknownCodec).
type ArrayMetadata struct {
	// Shape is the length of each dimension (>= 0); empty for a 0-d array.
	Shape []int
	// DataType is the element type. data_type may be written as a name
	// ("float32", "r16"), an object {"name": ...}, or zarr-python's
	// {"name": "raw_bytes", "configuration": {"length_bytes": n}} (read as
	// r<8n>); Marshal always writes the name.
	DataType dtype.DataType
	// ChunkShape is the shape of the regular chunk grid's chunks (>= 1 each,
	// same length as Shape). For a sharded array this is the shard shape.
	// For a rectilinear grid it is the largest edge of each dimension
	// (Rectilinear.MaxChunkShape): a bound on every chunk's shape.
	ChunkShape []int
	// Rectilinear is the chunk grid when it is "rectilinear" (chunks of
	// varying edge lengths per dimension); nil for a regular grid.
	Rectilinear *RectilinearGrid
	// ChunkKeyEncoding maps chunk coordinates to store keys.
	ChunkKeyEncoding ChunkKeyEncoding
	// FillValue is one element of the fill value in memory representation
	// (little-endian, DataType.Size() bytes); for the variable-length
	// types, its content (UTF-8 text or bytes, any length).
	FillValue []byte
	// FillValueJSON is fill_value as it was written in the parsed document,
	// for information. Marshal ignores it and writes
	// dtype.FormatFill(DataType, FillValue).
	FillValueJSON json.RawMessage
	// Codecs is the codec list as written; resolve it with the codecs
	// package. Never empty in valid metadata.
	Codecs []codecs.Spec
	// Attributes holds the user attributes. Numbers are json.Number, so
	// integers beyond 2^53 survive a round trip; objects are
	// map[string]any, arrays []any. Never nil after parsing.
	Attributes map[string]any
	// DimensionNames is nil when absent, else one entry per dimension, nil
	// for an unnamed dimension.
	DimensionNames []*string
	// Extensions holds unknown top-level fields that were accepted
	// because their value is an object with "must_understand": false (and
	// ConsolidatedMetadataKey), as raw JSON by field name.
	Extensions map[string]json.RawMessage
}

// GroupMetadata is the content of a Zarr v3 group's zarr.json (or the v3
// view of a v2 group). It is not safe for concurrent mutation.
type GroupMetadata struct {
	// Attributes holds the user attributes (numbers as json.Number).
	// Never nil after parsing.
	Attributes map[string]any
	// Extensions holds accepted unknown fields, as for ArrayMetadata.
	Extensions map[string]json.RawMessage
}

func metaErr(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidMetadata, field, fmt.Sprintf(format, args...))
}

// decodeTop decodes a metadata document (name: zarr.json, .zarray,
// .zgroup) into its top-level fields. Python's bare NaN, Infinity and
// -Infinity (json.dumps writes a float fill value so) are read as the
// strings Zarr spells them with when they are a "fill_value", as
// zarr-python reads them; elsewhere the error names the token.
func decodeTop(doc []byte, name string) (map[string]json.RawMessage, error) {
	if !json.Valid(doc) {
		bare := pyjson.BareTokens(doc)
		fills := len(bare) > 0
		for _, b := range bare {
			fills = fills && b.Key == "fill_value"
		}
		q := pyjson.QuoteBare(doc, bare)
		if !fills || !json.Valid(q) {
			return nil, malformed(name, doc, bare)
		}
		doc = q
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%w: the document is not a JSON object", ErrInvalidMetadata)
	}
	return top, nil
}

// malformed is the error of a metadata document that is not JSON: Python's
// bare tokens (bare, from pyjson.BareTokens) named with their place, or
// the JSON decoder's complaint.
func malformed(name string, doc []byte, bare []pyjson.Bare) error {
	for _, b := range bare {
		if b.Key == "fill_value" {
			continue
		}
		where := "in an array"
		if b.Key != "" {
			where = fmt.Sprintf("as the value of %q", b.Key)
		}
		return fmt.Errorf("%w: %s: malformed JSON: Python's bare %s at line %d (byte %d), %s: JSON has no such token, and Zarr metadata writes a non-finite float (as the string %q) only as a fill value",
			ErrInvalidMetadata, name, b.Token, b.Line, b.Offset, where, b.Token)
	}
	var v any
	err := json.Unmarshal(doc, &v)
	return fmt.Errorf("%w: %s: malformed JSON: %v", ErrInvalidMetadata, name, err)
}

// checkFormat checks zarr_format == want.
func checkFormat(top map[string]json.RawMessage, want int) error {
	raw, ok := top["zarr_format"]
	if !ok {
		return metaErr("zarr_format", "missing")
	}
	n, err := parseInt(raw)
	if err != nil {
		return metaErr("zarr_format", "%v", err)
	}
	if n != int64(want) {
		return metaErr("zarr_format", "%d, want %d", n, want)
	}
	return nil
}

func parseNodeType(top map[string]json.RawMessage) (NodeType, error) {
	raw, ok := top["node_type"]
	if !ok {
		return "", metaErr("node_type", "missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", metaErr("node_type", "not a string")
	}
	switch NodeType(s) {
	case NodeArray, NodeGroup:
		return NodeType(s), nil
	}
	return "", metaErr("node_type", "%q, want \"array\" or \"group\"", s)
}

// ParseNodeType reads the zarr_format and node_type of a Zarr v3 zarr.json
// document without parsing the rest, so a caller can choose between
// ParseArrayMetadata and ParseGroupMetadata. Errors wrap ErrInvalidMetadata.
func ParseNodeType(doc []byte) (NodeType, error) {
	top, err := decodeTop(doc, MetadataKey)
	if err != nil {
		return "", err
	}
	if err := checkFormat(top, 3); err != nil {
		return "", err
	}
	return parseNodeType(top)
}

// compact returns a compact copy of valid JSON (so parsed values compare
// equal whatever the document's layout).
func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

// parseInt parses a JSON integer (no fraction or exponent) exactly.
func parseInt(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, fmt.Errorf("%s is not an integer", clip(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer in range", clip(s))
	}
	return n, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// parseIntList parses a JSON array of integers into []int.
func parseIntList(field string, raw json.RawMessage) ([]int, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, metaErr(field, "not an array of integers")
	}
	if len(items) > MaxRank {
		return nil, metaErr(field, "%d dimensions, more than %d", len(items), MaxRank)
	}
	out := make([]int, len(items))
	for i, it := range items {
		n, err := parseInt(it)
		if err != nil {
			return nil, metaErr(field, "element %d: %v", i, err)
		}
		if n > math.MaxInt || n < math.MinInt {
			return nil, metaErr(field, "element %d: %d out of range", i, n)
		}
		out[i] = int(n)
	}
	return out, nil
}

// extObject is an extension object: {"name", "configuration",
// "must_understand"}.
type extObject struct {
	Name           *string         `json:"name"`
	Configuration  json.RawMessage `json:"configuration"`
	MustUnderstand *bool           `json:"must_understand"`
}

func parseExtObject(field string, raw json.RawMessage) (string, json.RawMessage, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return name, nil, nil
	}
	var obj extObject
	if err := strictUnmarshal(raw, &obj); err != nil {
		return "", nil, metaErr(field, "want a name or {\"name\", \"configuration\"}: %v", err)
	}
	if obj.Name == nil {
		return "", nil, metaErr(field, "object without a name")
	}
	cfg := obj.Configuration
	if string(bytes.TrimSpace(cfg)) == "null" {
		cfg = nil
	}
	if cfg != nil && bytes.TrimSpace(cfg)[0] != '{' {
		return "", nil, metaErr(field, "configuration is not an object")
	}
	return *obj.Name, cfg, nil
}

func parseDataType(raw json.RawMessage) (dtype.DataType, error) {
	name, cfg, err := parseExtObject("data_type", raw)
	if err != nil {
		return dtype.DataType{}, err
	}
	if name == "raw_bytes" {
		var c struct {
			LengthBytes *int64 `json:"length_bytes"`
		}
		if cfg == nil {
			return dtype.DataType{}, metaErr("data_type", "raw_bytes without configuration.length_bytes")
		}
		if err := strictUnmarshal(cfg, &c); err != nil || c.LengthBytes == nil {
			return dtype.DataType{}, metaErr("data_type", "raw_bytes configuration: want {\"length_bytes\": n}")
		}
		if *c.LengthBytes <= 0 || *c.LengthBytes > 1<<17 {
			return dtype.DataType{}, metaErr("data_type", "raw_bytes length_bytes %d out of range", *c.LengthBytes)
		}
		return dtype.RawBits(int(*c.LengthBytes) * 8)
	}
	if d, ok, err := dtype.ParseExtension(name, cfg); ok {
		if err != nil {
			return dtype.DataType{}, metaErr("data_type", "%v", err)
		}
		return d, nil
	}
	d, err := dtype.Parse(name)
	if err != nil {
		return dtype.DataType{}, fmt.Errorf("%w: data_type: %w", ErrUnsupported, err)
	}
	if cfg != nil && string(bytes.Join(bytes.Fields(cfg), nil)) != "{}" {
		return dtype.DataType{}, metaErr("data_type", "%s takes no configuration", name)
	}
	return d, nil
}

// parseChunkGrid parses chunk_grid: a regular grid's chunk shape, or a
// rectilinear grid and its largest edges.
func parseChunkGrid(raw json.RawMessage) ([]int, *RectilinearGrid, error) {
	name, cfg, err := parseExtObject("chunk_grid", raw)
	if err != nil {
		return nil, nil, err
	}
	if name == "rectilinear" {
		g, err := parseRectilinear(cfg)
		if err != nil {
			return nil, nil, err
		}
		return g.MaxChunkShape(), g, nil
	}
	if name != "regular" {
		return nil, nil, fmt.Errorf("%w: chunk_grid %q (only \"regular\" and \"rectilinear\" are supported)", ErrUnsupported, clip(name))
	}
	if cfg == nil {
		return nil, nil, metaErr("chunk_grid", "regular grid without configuration.chunk_shape")
	}
	var c struct {
		ChunkShape json.RawMessage `json:"chunk_shape"`
	}
	if err := strictUnmarshal(cfg, &c); err != nil {
		return nil, nil, metaErr("chunk_grid.configuration", "%v", err)
	}
	if c.ChunkShape == nil {
		return nil, nil, metaErr("chunk_grid.configuration", "chunk_shape missing")
	}
	cs, err := parseIntList("chunk_grid.configuration.chunk_shape", c.ChunkShape)
	return cs, nil, err
}

func parseAttributes(field string, raw json.RawMessage) (map[string]any, error) {
	if raw == nil || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, metaErr(field, "not a JSON object")
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// ParseAttributes parses a JSON object of user attributes (a v2 .zattrs
// document, or the "attributes" value of a v3 document). Empty input and
// null give an empty map. Numbers are json.Number. Errors wrap
// ErrInvalidMetadata.
func ParseAttributes(doc []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return map[string]any{}, nil
	}
	if !json.Valid(doc) {
		return nil, malformed("attributes", doc, pyjson.BareTokens(doc))
	}
	return parseAttributes("attributes", doc)
}

// checkExtension decides the fate of an unknown top-level field.
func checkExtension(key string, raw json.RawMessage) error {
	if key == ConsolidatedMetadataKey {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err == nil && obj != nil {
		if mu, ok := obj["must_understand"]; ok && string(bytes.TrimSpace(mu)) == "false" {
			return nil
		}
	}
	return fmt.Errorf("%w: unknown metadata field %q (not marked \"must_understand\": false)", ErrUnsupported, key)
}

var arrayFields = map[string]bool{
	"zarr_format": true, "node_type": true, "shape": true, "data_type": true,
	"chunk_grid": true, "chunk_key_encoding": true, "fill_value": true, "codecs": true,
	"attributes": true, "storage_transformers": true, "dimension_names": true,
}

// ParseArrayMetadata parses a Zarr v3 array zarr.json document and
// validates it. Errors wrap ErrInvalidMetadata (malformed or against the
// spec) or ErrUnsupported (valid but beyond gozarr), and name the field;
// fill value errors also wrap dtype.ErrInvalidFill and codec list errors
// codecs.ErrInvalidConfig. It never panics, whatever the input.
func ParseArrayMetadata(doc []byte) (*ArrayMetadata, error) {
	top, ext, err := decodeNode(doc, NodeArray, arrayFields)
	if err != nil {
		return nil, err
	}
	m := &ArrayMetadata{Extensions: ext}
	for _, f := range []string{"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"} {
		if _, ok := top[f]; !ok {
			return nil, metaErr(f, "missing")
		}
	}
	if m.Shape, err = parseIntList("shape", top["shape"]); err != nil {
		return nil, err
	}
	if m.DataType, err = parseDataType(top["data_type"]); err != nil {
		return nil, err
	}
	if m.ChunkShape, m.Rectilinear, err = parseChunkGrid(top["chunk_grid"]); err != nil {
		return nil, err
	}
	if err := m.ChunkKeyEncoding.UnmarshalJSON(top["chunk_key_encoding"]); err != nil {
		return nil, err
	}
	m.FillValueJSON = append(json.RawMessage(nil), bytes.TrimSpace(top["fill_value"])...)
	if m.FillValue, err = dtype.ParseFill(m.DataType, m.FillValueJSON); err != nil {
		return nil, fmt.Errorf("%w: fill_value: %w", ErrInvalidMetadata, err)
	}
	if m.Codecs, err = parseCodecList(top["codecs"]); err != nil {
		return nil, err
	}
	if m.Attributes, err = parseAttributes("attributes", top["attributes"]); err != nil {
		return nil, err
	}
	if raw, ok := top["storage_transformers"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var st []json.RawMessage
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, metaErr("storage_transformers", "not an array")
		}
		if len(st) > 0 {
			name, _, err := parseExtObject("storage_transformers[0]", st[0])
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: storage transformer %q (storage transformers are not supported)", ErrUnsupported, name)
		}
	}
	if raw, ok := top["dimension_names"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var names []*string
		if err := json.Unmarshal(raw, &names); err != nil || names == nil {
			return nil, metaErr("dimension_names", "want an array of strings or nulls")
		}
		m.DimensionNames = names
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func parseCodecList(raw json.RawMessage) ([]codecs.Spec, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, metaErr("codecs", "not an array")
	}
	if len(items) == 0 {
		return nil, metaErr("codecs", "empty (an array -> bytes codec is required)")
	}
	out := make([]codecs.Spec, len(items))
	for i, it := range items {
		if err := out[i].UnmarshalJSON(it); err != nil {
			return nil, fmt.Errorf("%w: codecs[%d]: %w", ErrInvalidMetadata, i, err)
		}
		if out[i].Name == "" {
			return nil, metaErr("codecs", "codec %d has an empty name", i)
		}
		if c := out[i].Configuration; c != nil {
			if t := bytes.TrimSpace(c); string(t) == "null" {
				out[i].Configuration = nil
			} else if t[0] != '{' {
				return nil, metaErr("codecs", "codec %d (%s): configuration is not an object", i, out[i].Name)
			} else {
				out[i].Configuration = compact(t)
			}
		}
	}
	return out, nil
}

// Validate checks the metadata against the spec and gozarr's limits: rank
// at most MaxRank; shape >= 0 and chunk shape >= 1 of equal length; total
// elements and bytes fit in int64, and the chunk grid's extent (chunks
// times chunk shape) in an int; one chunk at most MaxChunkBytes; fill value of the
// data type's size; a valid chunk key encoding; a non-empty codec list;
// dimension names, when present, one per dimension; extensions marked
// must_understand false. Errors wrap ErrInvalidMetadata or ErrUnsupported.
func (m *ArrayMetadata) Validate() error {
	if m == nil {
		return metaErr("array", "nil metadata")
	}
	if !m.DataType.Valid() {
		return metaErr("data_type", "missing")
	}
	if len(m.Shape) > MaxRank {
		return metaErr("shape", "%d dimensions, more than %d", len(m.Shape), MaxRank)
	}
	if len(m.ChunkShape) != len(m.Shape) {
		return metaErr("chunk_grid", "chunk_shape has %d dimensions, shape has %d", len(m.ChunkShape), len(m.Shape))
	}
	var total uint64 = 1
	chunkBytes := uint64(m.DataType.Size())
	for i, s := range m.Shape {
		if s < 0 {
			return metaErr("shape", "dimension %d is negative (%d)", i, s)
		}
		c := m.ChunkShape[i]
		if c < 1 {
			return metaErr("chunk_grid", "chunk_shape[%d] is %d, must be >= 1", i, c)
		}
		hi, lo := bits.Mul64(total, uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return metaErr("shape", "%v has more than 2^63 elements", m.Shape)
		}
		total = lo
		// The grid covers ceil(s/c) chunks: their extent must be an int
		// too, so chunk coordinates times the chunk shape never overflow.
		if g := uint64(s/c + min(s%c, 1)); g > uint64(math.MaxInt)/uint64(c) {
			return metaErr("chunk_grid", "dimension %d: %d chunks of %d elements overflow an int", i, g, c)
		}
		hi, lo = bits.Mul64(chunkBytes, uint64(c))
		if hi != 0 || lo > MaxChunkBytes {
			return metaErr("chunk_grid", "chunk_shape %v of %s is larger than %d bytes", m.ChunkShape, m.DataType, int64(MaxChunkBytes))
		}
		chunkBytes = lo
	}
	if chunkBytes > math.MaxInt {
		return metaErr("chunk_grid", "chunk too large for this platform")
	}
	if m.Rectilinear != nil {
		if err := m.validateRectilinear(); err != nil {
			return err
		}
	}
	if hi, lo := bits.Mul64(total, uint64(m.DataType.Size())); hi != 0 || lo > math.MaxInt64 {
		return metaErr("shape", "%v of %s is more than 2^63 bytes", m.Shape, m.DataType)
	}
	if len(m.FillValue) != m.DataType.Size() && !m.DataType.VarLen() {
		return metaErr("fill_value", "%d bytes, want %d for %s", len(m.FillValue), m.DataType.Size(), m.DataType)
	}
	if err := m.ChunkKeyEncoding.Validate(); err != nil {
		return err
	}
	if len(m.Codecs) == 0 {
		return metaErr("codecs", "empty (an array -> bytes codec is required)")
	}
	for i, c := range m.Codecs {
		if c.Name == "" {
			return metaErr("codecs", "codec %d has an empty name", i)
		}
	}
	if m.DimensionNames != nil && len(m.DimensionNames) != len(m.Shape) {
		return metaErr("dimension_names", "%d names for %d dimensions", len(m.DimensionNames), len(m.Shape))
	}
	return checkExtensions(m.Extensions, arrayFields)
}

func checkExtensions(ext map[string]json.RawMessage, known map[string]bool) error {
	for k, v := range ext {
		if known[k] {
			return metaErr(k, "standard field listed in Extensions")
		}
		if err := checkExtension(k, v); err != nil {
			return err
		}
	}
	return nil
}

// NDim returns the number of dimensions.
func (m *ArrayMetadata) NDim() int { return len(m.Shape) }

// GridShape returns the number of chunks along each dimension
// (ceil(shape/chunk_shape); 0 along an empty dimension; for a rectilinear
// grid, the chunks that start inside the dimension).
func (m *ArrayMetadata) GridShape() []int {
	g := make([]int, len(m.Shape))
	if m.Rectilinear != nil {
		if edges, err := m.Rectilinear.Edges(m.Shape); err == nil {
			for i, e := range edges {
				g[i] = e.NumChunks()
			}
			return g
		}
	}
	for i, s := range m.Shape {
		c := m.ChunkShape[i]
		g[i] = s / c
		if s%c != 0 {
			g[i]++
		}
	}
	return g
}

// ChunkRepr returns the decoded representation of one chunk of the chunk
// grid: chunk shape, data type and fill value, for resolving the codec chain.
func (m *ArrayMetadata) ChunkRepr() codecs.ChunkRepr {
	if m.DataType.VarLen() { // the fill value's handle
		return codecs.ChunkRepr{Shape: append([]int(nil), m.ChunkShape...), DType: m.DataType, Fill: make([]byte, dtype.HandleSize)}
	}
	return codecs.ChunkRepr{Shape: append([]int(nil), m.ChunkShape...), DType: m.DataType,
		Fill: append([]byte(nil), m.FillValue...)}
}

// orEmpty returns s, or an empty slice for nil, so that a 0-d array's
// shapes are written [] and not null.
func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// field is one top-level member of a document being written.
type field struct {
	key string
	val any
}

// writeDoc writes the fields in order, then the extensions sorted by name,
// as a JSON object indented by two spaces (zarr-python's layout).
func writeDoc(fields []field, ext map[string]json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	keys := make([]string, 0, len(ext))
	for k := range ext {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fields = append(fields, field{k, ext[k]})
	}
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(f.key); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := enc.Encode(f.val); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, f.key, err)
		}
	}
	buf.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
	}
	return out.Bytes(), nil
}

func attrsOrEmpty(a map[string]any) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// Marshal validates m and returns its zarr.json document, laid out as
// zarr-python writes it (same field order, two-space indent): shape,
// data_type, chunk_grid, chunk_key_encoding, fill_value, codecs, attributes,
// dimension_names (when set), zarr_format, node_type, storage_transformers
// ([]), then any Extensions sorted by name.
func (m *ArrayMetadata) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	fill, err := dtype.FormatFill(m.DataType, m.FillValue)
	if err != nil {
		return nil, fmt.Errorf("%w: fill_value: %w", ErrInvalidMetadata, err)
	}
	type grid struct {
		Name          string `json:"name"`
		Configuration struct {
			ChunkShape []int `json:"chunk_shape"`
		} `json:"configuration"`
	}
	var g any = m.Rectilinear
	if m.Rectilinear == nil {
		rg := grid{Name: "regular"}
		rg.Configuration.ChunkShape = orEmpty(m.ChunkShape)
		g = rg
	}
	for i, c := range m.Codecs {
		if c.Configuration != nil && !json.Valid(c.Configuration) {
			return nil, metaErr("codecs", "codec %d (%s): configuration is not valid JSON", i, c.Name)
		}
	}
	fields := []field{
		{"shape", orEmpty(m.Shape)},
		{"data_type", dataTypeJSON(m.DataType)},
		{"chunk_grid", g},
		{"chunk_key_encoding", m.ChunkKeyEncoding},
		{"fill_value", fill},
		{"codecs", m.Codecs},
		{"attributes", attrsOrEmpty(m.Attributes)},
	}
	if m.DimensionNames != nil {
		fields = append(fields, field{"dimension_names", m.DimensionNames})
	}
	fields = append(fields,
		field{"zarr_format", 3},
		field{"node_type", NodeArray},
		field{"storage_transformers", []any{}})
	return writeDoc(fields, m.Extensions)
}

// dataTypeJSON is the data_type value of d: its name, or {"name",
// "configuration"} for the types that have a configuration.
func dataTypeJSON(d dtype.DataType) any {
	cfg := d.Configuration()
	if cfg == nil {
		return d.Name()
	}
	return struct {
		Name          string          `json:"name"`
		Configuration json.RawMessage `json:"configuration"`
	}{d.Name(), cfg}
}

// decodeNode decodes the top level of a v3 zarr.json, checks zarr_format
// and that node_type is want, and applies the extension rule to every field
// not in known: accepted ones are returned as extensions (nil when none),
// in sorted order of checking so the error names the first offender.
func decodeNode(doc []byte, want NodeType, known map[string]bool) (top, ext map[string]json.RawMessage, err error) {
	top, err = decodeTop(doc, MetadataKey)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFormat(top, 3); err != nil {
		return nil, nil, err
	}
	nt, err := parseNodeType(top)
	if err != nil {
		return nil, nil, err
	}
	if nt != want {
		return nil, nil, metaErr("node_type", "%q, want %q", nt, want)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if known[k] {
			continue
		}
		if err := checkExtension(k, top[k]); err != nil {
			return nil, nil, err
		}
		if ext == nil {
			ext = map[string]json.RawMessage{}
		}
		ext[k] = compact(top[k])
	}
	return top, ext, nil
}

var groupFields = map[string]bool{"zarr_format": true, "node_type": true, "attributes": true}

// ParseGroupMetadata parses a Zarr v3 group zarr.json document. Unknown
// fields follow the same extension rule as ParseArrayMetadata. Errors wrap
// ErrInvalidMetadata or ErrUnsupported; it never panics.
func ParseGroupMetadata(doc []byte) (*GroupMetadata, error) {
	top, ext, err := decodeNode(doc, NodeGroup, groupFields)
	if err != nil {
		return nil, err
	}
	g := &GroupMetadata{Extensions: ext}
	if g.Attributes, err = parseAttributes("attributes", top["attributes"]); err != nil {
		return nil, err
	}
	return g, nil
}

// Marshal returns the group's zarr.json document: attributes, zarr_format,
// node_type, then any Extensions sorted by name, indented by two spaces.
func (g *GroupMetadata) Marshal() ([]byte, error) {
	if g == nil {
		return nil, metaErr("group", "nil metadata")
	}
	if err := checkExtensions(g.Extensions, groupFields); err != nil {
		return nil, err
	}
	return writeDoc([]field{
		{"attributes", attrsOrEmpty(g.Attributes)},
		{"zarr_format", 3},
		{"node_type", NodeGroup},
	}, g.Extensions)
}
