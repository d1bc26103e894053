package dtype

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The kinds of the variable-length types. Their elements have no fixed
// size: in a chunk as the engine places it each element is an 8-byte
// handle into a per-read arena (package codecs' VLenArena), which the
// string API (zarr.ReadStrings, zarr.ReadByteStrings) resolves at the end.
const (
	// VarString is zarr-python's "string" (v2 "|O" with the vlen-utf8
	// filter): UTF-8 text of any length, stored with the vlen-utf8 codec.
	VarString Kind = BFloat + 1 + iota
	// VarBytes is zarr-python's "variable_length_bytes" (v2 "|O" with the
	// vlen-bytes filter): byte strings of any length (codec vlen-bytes).
	VarBytes
)

// HandleSize is the in-memory size of a variable-length element: the
// 8-byte handle the engine places.
const HandleSize = 8

// The kinds of Zarr v2's other object arrays (NumPy "|O" with an object
// codec other than vlen-utf8 and vlen-bytes). They exist in Zarr v2 only
// (no v3 data type names them), and read and write through zarr's object
// API (zarr.ReadObjects, zarr.ReadRagged). Their elements are handles too.
const (
	// VarObject is an object array of JSON-like values: numcodecs' json2
	// and msgpack2 object codecs.
	VarObject Kind = NarrowUint + 1 + iota
	// VarArray is a ragged array: each element a 1-D array of one numeric
	// type (numcodecs' vlen-array object codec, whose configuration names
	// the element type).
	VarArray
)

// The variable-length data types.
var (
	TypeVarString = DataType{kind: VarString, size: HandleSize}
	TypeVarBytes  = DataType{kind: VarBytes, size: HandleSize}
	TypeVarObject = DataType{kind: VarObject, size: HandleSize}
	TypeVarArray  = DataType{kind: VarArray, size: HandleSize}
)

// VarLen reports whether d is a variable-length type (VarString,
// VarBytes, VarObject or VarArray), whose fill value is its content (any
// length) rather than one element of Size bytes, and whose elements are
// handles in memory.
func (d DataType) VarLen() bool {
	switch d.kind {
	case VarString, VarBytes, VarObject, VarArray:
		return true
	}
	return false
}

// varName returns the v3 name of a variable-length type, "" for others.
func (d DataType) varName() string {
	switch d.kind {
	case VarString:
		return "string"
	case VarBytes:
		return "variable_length_bytes"
	case VarObject:
		return "object" // Zarr v2 only: no v3 type has this name
	case VarArray:
		return "ragged"
	}
	return ""
}

// parseVarName returns the variable-length type of a v3 data_type name:
// zarr-python 3.4's "string" and "variable_length_bytes" (and the
// zarr-extensions spelling "bytes").
func parseVarName(name string) (DataType, bool) {
	switch name {
	case "string":
		return TypeVarString, true
	case "variable_length_bytes", "bytes":
		return TypeVarBytes, true
	}
	return DataType{}, false
}

// VarCodec returns the array->bytes codec name of a variable-length type:
// "vlen-utf8" or "vlen-bytes" (the numcodecs filter id in Zarr v2); ""
// for any other type.
func (d DataType) VarCodec() string {
	switch d.kind {
	case VarString:
		return "vlen-utf8"
	case VarBytes:
		return "vlen-bytes"
	}
	return ""
}

// VarLenOf returns the variable-length type a vlen codec (or numcodecs
// object codec id) stores: vlen-utf8 → VarString, vlen-bytes → VarBytes,
// json2 and msgpack2 → VarObject, vlen-array → VarArray. (categorize over
// object arrays also stores strings; its configuration tells, so it is
// not named here.)
func VarLenOf(codec string) (DataType, bool) {
	switch codec {
	case "vlen-utf8":
		return TypeVarString, true
	case "vlen-bytes":
		return TypeVarBytes, true
	case "json2", "msgpack2":
		return TypeVarObject, true
	case "vlen-array":
		return TypeVarArray, true
	}
	return DataType{}, false
}

// parseVarFill decodes the fill value of a variable-length type as
// zarr-python 3.4 writes it, in v2 and v3 alike: a JSON string for
// "string" (v2 also an integer or float, read as its digits as
// zarr-python does), base64 for "variable_length_bytes". The result is the
// content, of any length; ok is false for a v2 null (no fill value).
func parseVarFill(d DataType, raw json.RawMessage, v2 bool) (content []byte, ok bool, err error) {
	v, err := decodeFillJSON(d, raw)
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		if v2 {
			return nil, false, nil
		}
		return nil, false, fillErr(d, raw, "null is not a fill value in Zarr v3")
	}
	if d.kind == VarObject || d.kind == VarArray {
		return nil, false, fillErr(d, raw, "object arrays take a null fill value (None) here")
	}
	switch x := v.(type) {
	case string:
		if d.kind == VarString {
			if !utf8.ValidString(x) {
				return nil, false, fillErr(d, raw, "not valid UTF-8")
			}
			return []byte(x), true, nil
		}
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, false, fillErr(d, raw, "bad base64: "+err.Error())
		}
		return b, true, nil
	case json.Number:
		if d.kind == VarString && v2 {
			return []byte(x.String()), true, nil
		}
	}
	if d.kind == VarString {
		return nil, false, fillErr(d, raw, "want a string")
	}
	return nil, false, fillErr(d, raw, "want a base64 string")
}

// formatVarFill returns the JSON fill_value of a variable-length type's
// fill content, as zarr-python writes it: the string, or base64 of the
// bytes.
func formatVarFill(d DataType, content []byte) (json.RawMessage, error) {
	if d.kind == VarObject || d.kind == VarArray {
		return json.RawMessage("null"), nil
	}
	s := string(content)
	if d.kind == VarBytes {
		s = base64.StdEncoding.EncodeToString(content)
	} else if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: string fill value is not valid UTF-8", ErrInvalidFill)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, errors.Join(ErrInvalidFill, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
