package numcodecs

// The numcodecs crc32 and adler32 checksum codecs (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/checksum32.html
// (the checksum of the data as a 4-byte little-endian integer, before the
// data by default or after it with "location": "end")
// JSON names: "numcodecs.crc32", "numcodecs.adler32"
// Configuration examples (Zarr v2: {"id": "crc32"}, {"id": "adler32",
// "location": "end"}):
//
//	{"name": "numcodecs.crc32", "configuration": {}}
//	{"name": "numcodecs.adler32", "configuration": {"location": "end"}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/adler32"
	"hash/crc32"

	"github.com/gozarr/gozarr/codecs"
)

// Checksum32 is the "numcodecs.crc32" or "numcodecs.adler32" codec
// (https://numcodecs.readthedocs.io/en/stable/checksum32.html), configured
// as {"location": "start"}: encoding adds the CRC-32 (IEEE, as zlib.crc32)
// or Adler-32 (as zlib.adler32) of the data as 4 little-endian bytes,
// before the data ("start", the default for both) or after it ("end", since
// numcodecs 0.14); decoding checks and strips it. An absent location is
// written back as absent. A Checksum32 is immutable and safe for concurrent
// use.
type Checksum32 struct {
	id       string // "crc32" or "adler32"
	location string // "" (default, start), "start" or "end"
	sum      func([]byte) uint32
}

// NewCRC32 returns the crc32 codec with the checksum at location "start"
// or "end" ("" for the default, start).
func NewCRC32(location string) (*Checksum32, error) {
	return newChecksum32("crc32", location, crc32.ChecksumIEEE)
}

// NewAdler32 returns the adler32 codec with the checksum at location
// "start" or "end" ("" for the default, start).
func NewAdler32(location string) (*Checksum32, error) {
	return newChecksum32("adler32", location, adler32.Checksum)
}

func newChecksum32(id, location string, sum func([]byte) uint32) (*Checksum32, error) {
	if location != "" && location != "start" && location != "end" {
		return nil, fmt.Errorf("%w: numcodecs.%s: location %q, want \"start\" or \"end\"", codecs.ErrInvalidConfig, id, location)
	}
	return &Checksum32{id: id, location: location, sum: sum}, nil
}

func init() {
	for _, id := range []string{"crc32", "adler32"} {
		codecs.Register(prefix+id, func(configuration json.RawMessage) (codecs.Codec, error) {
			var cfg struct {
				Location string `json:"location"`
			}
			if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
				return nil, err
			}
			if id == "crc32" {
				return NewCRC32(cfg.Location)
			}
			return NewAdler32(cfg.Location)
		})
	}
}

// Name returns "numcodecs.crc32" or "numcodecs.adler32".
func (c *Checksum32) Name() string { return prefix + c.id }

// Configuration returns {"location": ...} when a location was configured,
// else {}.
func (c *Checksum32) Configuration() any {
	if c.location == "" {
		return struct{}{}
	}
	return struct {
		Location string `json:"location"`
	}{c.location}
}

// MaxEncodedSize returns n+4.
func (c *Checksum32) MaxEncodedSize(n int) int { return n + 4 }

func (c *Checksum32) atEnd() bool { return c.location == "end" }

// Encode appends the checksum and src, in the configured order, to dst.
func (c *Checksum32) Encode(dst, src []byte) ([]byte, error) {
	sum := c.sum(src)
	if c.atEnd() {
		dst = append(dst, src...)
		return binary.LittleEndian.AppendUint32(dst, sum), nil
	}
	dst = binary.LittleEndian.AppendUint32(dst, sum)
	return append(dst, src...), nil
}

// Decode checks the checksum of src and appends the data to dst. Input
// shorter than 4 bytes, or data longer than limit, is ErrCorrupt; a
// mismatch is ErrChecksum.
func (c *Checksum32) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("%w: numcodecs.%s: %d bytes, too short for a checksum", codecs.ErrCorrupt, c.id, len(src))
	}
	data, stored := src[4:], src[:4]
	if c.atEnd() {
		data, stored = src[:len(src)-4], src[len(src)-4:]
	}
	if len(data) > limit {
		return dst, fmt.Errorf("%w: numcodecs.%s: %d bytes of data, at most %d expected", codecs.ErrCorrupt, c.id, len(data), max(limit, 0))
	}
	want := binary.LittleEndian.Uint32(stored)
	if got := c.sum(data); got != want {
		return dst, fmt.Errorf("%w: numcodecs.%s: computed %08x, stored %08x", codecs.ErrChecksum, c.id, got, want)
	}
	return append(dst, data...), nil
}
