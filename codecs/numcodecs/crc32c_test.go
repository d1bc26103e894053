package numcodecs

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/codecs"
)

// TestCRC32C checks numcodecs' crc32c layout (the CRC-32C of "123456789"
// is e3069283, stored little-endian) at both locations, the default (end),
// and that a corrupt checksum is ErrChecksum.
func TestCRC32C(t *testing.T) {
	data := []byte("123456789")
	cases := []struct {
		cfg, want string // configuration JSON, encoded hex
	}{
		{`{}`, "313233343536373839" + "839206e3"},
		{`{"location":"end"}`, "313233343536373839" + "839206e3"},
		{`{"location":"start"}`, "839206e3" + "313233343536373839"},
	}
	for _, c := range cases {
		codec, err := codecs.New(codecs.Spec{Name: "numcodecs.crc32c", Configuration: []byte(c.cfg)})
		if err != nil {
			t.Fatalf("%s: %v", c.cfg, err)
		}
		bb := codec.(codecs.BytesToBytes)
		enc, err := bb.Encode(nil, data)
		if err != nil || hex.EncodeToString(enc) != c.want {
			t.Errorf("%s: encode %x, %v; want %s", c.cfg, enc, err, c.want)
		}
		dec, err := bb.Decode(nil, enc, len(data))
		if err != nil || string(dec) != string(data) {
			t.Errorf("%s: decode %q, %v", c.cfg, dec, err)
		}
		enc[len(enc)/2] ^= 1
		if _, err := bb.Decode(nil, enc, len(data)); !errors.Is(err, codecs.ErrChecksum) {
			t.Errorf("%s: corrupt decode: %v, want ErrChecksum", c.cfg, err)
		}
	}
	if _, err := NewCRC32C("middle"); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("bad location: %v", err)
	}
}
