package numcodecs

// The numcodecs base64 codec (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/other/base64.html
// (standard base64 with padding, RFC 4648 section 4, as Python's
// base64.standard_b64encode writes it)
// JSON name: "numcodecs.base64"
// Configuration example (Zarr v2: {"id": "base64"}):
//
//	{"name": "numcodecs.base64"}

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
)

// Base64 is the "numcodecs.base64" codec. It is immutable and safe for
// concurrent use.
type Base64 struct{}

func init() {
	codecs.Register(prefix+"base64", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return Base64{}, nil
	})
}

// Name returns "numcodecs.base64".
func (Base64) Name() string { return prefix + "base64" }

// Configuration returns nil: the codec has none.
func (Base64) Configuration() any { return nil }

// MaxEncodedSize returns the encoded size of n bytes.
func (Base64) MaxEncodedSize(n int) int { return base64.StdEncoding.EncodedLen(n) }

// Encode appends the base64 text of src to dst.
func (Base64) Encode(dst, src []byte) ([]byte, error) {
	return base64.StdEncoding.AppendEncode(dst, src), nil
}

// Decode appends the bytes src encodes to dst. Like numcodecs (Python's
// base64.standard_b64decode), it discards bytes outside the base64
// alphabet before decoding. Text that is still not padded base64, or
// that decodes to more than limit bytes (checked before allocating), is
// ErrCorrupt.
func (Base64) Decode(dst, src []byte, limit int) ([]byte, error) {
	if n := base64.StdEncoding.DecodedLen(len(src)); n > limit+2 {
		return dst, fmt.Errorf("%w: numcodecs.base64: %d bytes of text decode to about %d, at most %d expected", codecs.ErrCorrupt, len(src), n, max(limit, 0))
	}
	out, err := appendBase64(dst, src)
	if err != nil {
		out, err = appendBase64(dst, alphabetOnly(src))
	}
	if err != nil {
		return dst, fmt.Errorf("%w: numcodecs.base64: %v", codecs.ErrCorrupt, err)
	}
	if len(out)-len(dst) > limit {
		return dst, fmt.Errorf("%w: numcodecs.base64: %d bytes, at most %d expected", codecs.ErrCorrupt, len(out)-len(dst), max(limit, 0))
	}
	return out, nil
}

// alphabetOnly returns the bytes of src in the base64 alphabet (padding
// included), as Python's b64decode keeps them when not validating.
func alphabetOnly(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for _, c := range src {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
			out = append(out, c)
		}
	}
	return out
}

// appendBase64 appends the decoding of src to dst, in dst's spare capacity
// when the decoded bytes fit there.
func appendBase64(dst, src []byte) ([]byte, error) {
	n := base64.StdEncoding.DecodedLen(len(src))
	if cap(dst)-len(dst) >= n {
		m, err := base64.StdEncoding.Decode(dst[len(dst):len(dst)+n], src)
		return dst[:len(dst)+m], err
	}
	tmp := make([]byte, n)
	m, err := base64.StdEncoding.Decode(tmp, src)
	return append(dst, tmp[:m]...), err
}
