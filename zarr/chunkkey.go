package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Chunk key encoding names.
const (
	// KeyEncodingDefault is the v3 "default" encoding: "c" followed by the
	// chunk coordinates, each preceded by the separator ("c/1/0").
	KeyEncodingDefault = "default"
	// KeyEncodingV2 is the "v2" encoding: coordinates joined by the
	// separator ("1.0"), "0" for a 0-d array.
	KeyEncodingV2 = "v2"
)

// ChunkKeyEncoding maps chunk grid coordinates to store keys (relative to
// the array's prefix). The zero value is not valid; use DefaultKeyEncoding
// or V2KeyEncoding, or unmarshal one. It is a small value type, safe for
// concurrent use.
type ChunkKeyEncoding struct {
	// Name is KeyEncodingDefault or KeyEncodingV2.
	Name string
	// Separator is "/" or "."; the default is "/" for "default" and "."
	// for "v2".
	Separator string
}

// DefaultKeyEncoding returns the "default" encoding with separator "/",
// what zarr-python writes for new v3 arrays.
func DefaultKeyEncoding() ChunkKeyEncoding {
	return ChunkKeyEncoding{Name: KeyEncodingDefault, Separator: "/"}
}

// V2KeyEncoding returns the "v2" encoding with the given separator ("." or
// "/"); an empty separator means ".".
func V2KeyEncoding(sep string) ChunkKeyEncoding {
	if sep == "" {
		sep = "."
	}
	return ChunkKeyEncoding{Name: KeyEncodingV2, Separator: sep}
}

// Validate reports whether e is a known encoding with a valid separator.
// Errors wrap ErrUnsupported (unknown name) or ErrInvalidMetadata.
func (e ChunkKeyEncoding) Validate() error {
	if e.Name != KeyEncodingDefault && e.Name != KeyEncodingV2 {
		return fmt.Errorf("%w: chunk_key_encoding %q", ErrUnsupported, e.Name)
	}
	if e.Separator != "/" && e.Separator != "." {
		return fmt.Errorf("%w: chunk_key_encoding %s: separator %q (want \"/\" or \".\")",
			ErrInvalidMetadata, e.Name, e.Separator)
	}
	return nil
}

// Key returns the store key of the chunk at the given grid coordinates.
func (e ChunkKeyEncoding) Key(coords []int) string {
	return string(e.AppendKey(make([]byte, 0, 2+len(coords)*4), coords))
}

// AppendKey appends the key of the chunk at coords to dst and returns the
// extended slice; it does not allocate when dst has room.
func (e ChunkKeyEncoding) AppendKey(dst []byte, coords []int) []byte {
	sep := byte('/')
	if e.Separator == "." {
		sep = '.'
	}
	if e.Name == KeyEncodingV2 {
		if len(coords) == 0 {
			return append(dst, '0')
		}
		for i, c := range coords {
			if i > 0 {
				dst = append(dst, sep)
			}
			dst = strconv.AppendInt(dst, int64(c), 10)
		}
		return dst
	}
	dst = append(dst, 'c')
	for _, c := range coords {
		dst = append(dst, sep)
		dst = strconv.AppendInt(dst, int64(c), 10)
	}
	return dst
}

// ParseKey is the inverse of Key for an array of ndim dimensions: it
// returns the chunk coordinates a key names, or ok=false when the key is not
// one this encoding produces (including non-canonical numbers like "01").
func (e ChunkKeyEncoding) ParseKey(key string, ndim int) (coords []int, ok bool) {
	if ndim < 0 {
		return nil, false
	}
	if e.Name == KeyEncodingV2 {
		if ndim == 0 {
			return []int{}, key == "0"
		}
	} else {
		rest, found := strings.CutPrefix(key, "c")
		if !found {
			return nil, false
		}
		if ndim == 0 {
			return []int{}, rest == ""
		}
		if !strings.HasPrefix(rest, e.Separator) {
			return nil, false
		}
		key = rest[len(e.Separator):]
	}
	parts := strings.Split(key, e.Separator)
	if len(parts) != ndim {
		return nil, false
	}
	coords = make([]int, ndim)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return nil, false
		}
		coords[i] = n
	}
	return coords, true
}

// MarshalJSON writes the encoding as zarr-python does:
// {"name": ..., "configuration": {"separator": ...}}.
func (e ChunkKeyEncoding) MarshalJSON() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return []byte(`{"name":` + strconv.Quote(e.Name) + `,"configuration":{"separator":` +
		strconv.Quote(e.Separator) + `}}`), nil
}

// UnmarshalJSON reads an encoding given as an object {"name", optional
// "configuration": {"separator"}, optional "must_understand"} or as a bare
// name. A missing separator takes the encoding's default. Unknown names are
// ErrUnsupported even with "must_understand": false, which the spec does
// not allow for this extension point; other problems are ErrInvalidMetadata.
func (e *ChunkKeyEncoding) UnmarshalJSON(b []byte) error {
	var name, sep string
	var nameOnly string
	if err := json.Unmarshal(b, &nameOnly); err == nil {
		name = nameOnly
	} else {
		var obj struct {
			Name           *string         `json:"name"`
			Configuration  json.RawMessage `json:"configuration"`
			MustUnderstand *bool           `json:"must_understand"`
		}
		if err := strictUnmarshal(b, &obj); err != nil {
			return fmt.Errorf("%w: chunk_key_encoding: %v", ErrInvalidMetadata, err)
		}
		if obj.Name == nil {
			return fmt.Errorf("%w: chunk_key_encoding without a name", ErrInvalidMetadata)
		}
		name = *obj.Name
		if len(obj.Configuration) > 0 && string(obj.Configuration) != "null" {
			var cfg struct {
				Separator *string `json:"separator"`
			}
			if err := strictUnmarshal(obj.Configuration, &cfg); err != nil {
				return fmt.Errorf("%w: chunk_key_encoding configuration: %v", ErrInvalidMetadata, err)
			}
			if cfg.Separator != nil {
				sep = *cfg.Separator
				if sep == "" {
					return fmt.Errorf("%w: chunk_key_encoding: empty separator", ErrInvalidMetadata)
				}
			}
		}
	}
	out := ChunkKeyEncoding{Name: name, Separator: sep}
	if out.Separator == "" {
		switch name {
		case KeyEncodingDefault:
			out.Separator = "/"
		case KeyEncodingV2:
			out.Separator = "."
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*e = out
	return nil
}

// strictUnmarshal decodes one JSON value into v, refusing unknown fields
// and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
