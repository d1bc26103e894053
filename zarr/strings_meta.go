package zarr

// Metadata of the variable-length data types ("string",
// "variable_length_bytes"; v2 "|O" with an object codec): the hooks
// metadata.go, metadata_v2.go and v2write.go call.

import (
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// isObjectDType reports whether a v2 dtype is NumPy's object dtype.
func isObjectDType(descr string) bool {
	return descr == "|O" || descr == "O" || descr == "<O" || descr == ">O"
}

// objectTypeV2 returns the variable-length type of a v2 object ("|O")
// array from its filters as written: the first filter is its object codec,
// vlen-utf8 or vlen-bytes (strings, bytes), json2 or msgpack2 (objects,
// zarr.ReadObjects), vlen-array (ragged arrays, zarr.ReadRagged) or
// categorize with dtype "|O" (strings). Others (pickle among them) are
// ErrUnsupported, as is an object array without one.
func objectTypeV2(raw json.RawMessage) (dtype.DataType, error) {
	var items []struct {
		ID    string `json:"id"`
		DType string `json:"dtype"`
	}
	if isNull(raw) || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return dtype.DataType{}, fmt.Errorf("%w: dtype \"|O\" (object elements) without an object codec (vlen-utf8, vlen-bytes, json2, msgpack2, vlen-array, categorize) as first filter", ErrUnsupported)
	}
	if items[0].ID == "categorize" && (items[0].DType == "|O" || items[0].DType == "O") {
		return dtype.TypeVarString, nil
	}
	if items[0].ID == "pickle" {
		return dtype.DataType{}, fmt.Errorf("%w: dtype \"|O\" with object codec pickle: unpickling runs code named by the data, so gozarr never reads it (re-encode the array with json2, msgpack2 or vlen-utf8 in Python)", ErrUnsupported)
	}
	d, ok := dtype.VarLenOf(items[0].ID)
	if !ok {
		return dtype.DataType{}, fmt.Errorf("%w: dtype \"|O\" with object codec %q (gozarr reads vlen-utf8, vlen-bytes, json2, msgpack2, vlen-array and categorize)", ErrUnsupported, items[0].ID)
	}
	return d, nil
}

// varFillV3 returns the fill content ToV3 gives a v2 variable-length array:
// its fill value, or empty when null (zarr-python reads those as "").
func varFillV3(fill []byte) []byte {
	if fill == nil {
		return []byte{}
	}
	return fill
}

// v2VarCodecs is ToV3's array->bytes codec of a variable-length array in
// place of "bytes", and the v2 filters left after its object codec.
func v2VarCodecs(m *ArrayMetadataV2) (codecs.Spec, []Numcodec, error) {
	if name := m.DataType.VarCodec(); name != "" && len(m.Filters) > 0 && m.Filters[0].ID == name {
		return codecs.Spec{Name: name}, m.Filters[1:], nil
	}
	// json2, msgpack2, vlen-array, categorize: the codec with its
	// configuration.
	spec, err := numcodecSpec(m.Filters[0])
	return spec, m.Filters[1:], err
}

// prepareVarV2 completes v2 metadata of a variable-length type for
// writing: the object codec as first filter when it is not there yet.
func prepareVarV2(m *ArrayMetadataV2) error {
	if !m.DataType.VarLen() {
		return nil
	}
	if len(m.Filters) > 0 {
		if d, err := objectTypeV2(mustFilters(m.Filters[:1])); err == nil && d == m.DataType && m.Filters[0].ID != m.DataType.VarCodec() {
			return nil // its object codec, as the caller gave it
		}
	}
	id := m.DataType.VarCodec()
	if id == "" {
		return metaErr("filters", "%s arrays need their object codec (json2, msgpack2 or vlen-array) as first filter", m.DataType)
	}
	if len(m.Filters) > 0 && m.Filters[0].ID == id {
		return nil
	}
	for _, f := range m.Filters {
		if _, ok := dtype.VarLenOf(f.ID); ok {
			return metaErr("filters", "object codec %s not first", f.ID)
		}
	}
	c, err := NewNumcodec(id, nil)
	if err != nil {
		return err
	}
	m.Filters = append([]Numcodec{c}, m.Filters...)
	if m.FillValue == nil {
		m.FillValue = []byte{}
	}
	return nil
}

// arrayToBytes is NewArrayMetadata's array->bytes codec: the vlen codec
// of a variable-length type, else bytes with endian e.
func arrayToBytes(d dtype.DataType, e codecs.Endian) (codecs.Codec, error) {
	if d.VarLen() {
		return codecs.NewVLen(d)
	}
	return codecs.NewBytes(e)
}

// varHint is what a type mismatch on a variable-length array adds: the
// calls that read it.
func varHint(d dtype.DataType) string {
	switch d {
	case dtype.TypeVarString:
		return " (read it with zarr.ReadStrings)"
	case dtype.TypeVarBytes:
		return " (read it with zarr.ReadByteStrings)"
	}
	return ""
}

// mustFilters is filters as the JSON list objectTypeV2 reads.
func mustFilters(fs []Numcodec) json.RawMessage {
	b := []byte{'['}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f.Object...)
	}
	return append(b, ']')
}
