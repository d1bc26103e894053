package numcodecs

// The numcodecs gzip codec (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/compression/gzip.html
// (a gzip stream, RFC 1952: https://www.rfc-editor.org/rfc/rfc1952)
// JSON name: "numcodecs.gzip"
// Configuration example (Zarr v2: {"id": "gzip", "level": 1}):
//
//	{"name": "numcodecs.gzip", "configuration": {"level": 1}}
//
// zarr.ArrayMetadataV2.ToV3 maps a v2 gzip compressor to the v3 "gzip"
// codec; it names "numcodecs.gzip" only when the object has fields gozarr
// does not know. The stream format is the same either way.

import (
	"encoding/json"

	"github.com/gozarr/gozarr/codecs"
)

// DefaultGzipLevel is numcodecs' default gzip level.
const DefaultGzipLevel = 1

// Gzip is the "numcodecs.gzip" codec
// (https://numcodecs.readthedocs.io/en/stable/compression/gzip.html),
// configured as {"level": 1}: the same gzip streams as the v3 "gzip" codec
// (codecs.Gzip, which does the work), under numcodecs' name and default
// level. A Gzip is immutable and safe for concurrent use.
type Gzip struct {
	*codecs.Gzip
}

// NewGzip returns the numcodecs gzip codec at a level: any level decodes,
// encoding needs 0 to 9 (see codecs.NewGzip).
func NewGzip(level int) (*Gzip, error) {
	g, err := codecs.NewGzip(level)
	if err != nil {
		return nil, err
	}
	return &Gzip{g}, nil
}

func init() {
	codecs.Register(prefix+"gzip", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Level *int `json:"level"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		level := DefaultGzipLevel
		if cfg.Level != nil {
			level = *cfg.Level
		}
		return NewGzip(level)
	})
}

// Name returns "numcodecs.gzip".
func (g *Gzip) Name() string { return prefix + "gzip" }
