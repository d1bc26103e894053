package codecs

// The crc32c codec (bytes -> bytes).
//
// Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html
// JSON name: "crc32c"
// Configuration example (it has none):
//
//	{"name": "crc32c"}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the "crc32c" codec
// (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html),
// written {"name": "crc32c"} with no configuration: encoding appends the CRC-32C (Castagnoli)
// of the data as 4 little-endian bytes; decoding checks and strips it.
// A CRC32C is immutable and safe for concurrent use.
type CRC32C struct{}

// NewCRC32C returns the crc32c codec.
func NewCRC32C() *CRC32C { return &CRC32C{} }

func init() {
	// numcodecs' CRC32C with the checksum at the end (its default) is the
	// core crc32c, byte for byte: the CRC-32C of the data as 4
	// little-endian bytes after it. "location": "start" is not.
	RegisterV2("crc32c", func(object json.RawMessage, _ int) (Spec, bool, error) {
		var c struct {
			ID       string  `json:"id"`
			Location *string `json:"location"`
		}
		if DecodeConfig(object, &c) != nil || (c.Location != nil && *c.Location != "end") {
			return Spec{}, false, nil
		}
		return Spec{Name: "crc32c"}, true, nil
	})
	Register("crc32c", func(configuration json.RawMessage) (Codec, error) {
		var cfg struct{}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return NewCRC32C(), nil
	})
}

// Name returns "crc32c".
func (*CRC32C) Name() string { return "crc32c" }

// Configuration returns nil: the codec has no configuration.
func (*CRC32C) Configuration() any { return nil }

// MaxEncodedSize returns n+4.
func (*CRC32C) MaxEncodedSize(n int) int { return n + 4 }

// Encode appends src and its checksum to dst.
func (*CRC32C) Encode(dst, src []byte) ([]byte, error) {
	dst = append(dst, src...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(src, castagnoli)), nil
}

// Decode checks the trailing checksum of src and appends the data before it
// to dst. Input shorter than 4 bytes, or data longer than limit, is
// ErrCorrupt; a checksum mismatch is ErrChecksum.
func (*CRC32C) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("%w: crc32c: %d bytes, too short for a checksum", ErrCorrupt, len(src))
	}
	data := src[:len(src)-4]
	if len(data) > limit {
		return dst, fmt.Errorf("%w: crc32c: %d bytes of data, at most %d expected", ErrCorrupt, len(data), limit)
	}
	want := binary.LittleEndian.Uint32(src[len(data):])
	if got := crc32.Checksum(data, castagnoli); got != want {
		return dst, fmt.Errorf("%w: crc32c: computed %08x, stored %08x", ErrChecksum, got, want)
	}
	return append(dst, data...), nil
}
