package numcodecs

// The numcodecs crc32c checksum codec (bytes -> bytes).
//
// Format: numcodecs.checksum32.CRC32C
// (https://numcodecs.readthedocs.io/en/stable/checksum32.html): the
// CRC-32C (Castagnoli) of the data as a 4-byte little-endian integer, after
// the data by default ("location": "end") or before it ("start").
// JSON name: "numcodecs.crc32c"
// Configuration examples (Zarr v2: {"id": "crc32c", "location": "start"}):
//
//	{"name": "numcodecs.crc32c", "configuration": {"location": "start"}}
//
// With the checksum at the end the layout is the core "crc32c" codec's, and
// zarr.ArrayMetadataV2.ToV3 maps such v2 codecs to that one; this codec
// serves "start", and v3 documents that name numcodecs.crc32c.

import (
	"encoding/json"
	"hash/crc32"

	"github.com/gozarr/gozarr/codecs"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewCRC32C returns the numcodecs crc32c codec with the checksum at
// location "start" or "end" ("" for the default, which for crc32c, unlike
// crc32 and adler32, is end; it is written back as "end").
func NewCRC32C(location string) (*Checksum32, error) {
	if location == "" {
		location = "end"
	}
	return newChecksum32("crc32c", location, func(b []byte) uint32 { return crc32.Checksum(b, castagnoli) })
}

func init() {
	codecs.Register(prefix+"crc32c", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Location string `json:"location"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return NewCRC32C(cfg.Location)
	})
}
