package codecs

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestCRC32C(t *testing.T) {
	c := NewCRC32C()
	// The CRC-32C check value of "123456789" is 0xE3069283 (RFC 3720 B.4).
	enc := must(c.Encode([]byte("p"), []byte("123456789")))
	if want := []byte("p123456789\x83\x92\x06\xe3"); !bytes.Equal(enc, want) {
		t.Fatalf("Encode = %q, want %q", enc, want)
	}
	got, err := c.Decode([]byte("q"), enc[1:], 9)
	if err != nil || string(got) != "q123456789" {
		t.Fatalf("Decode = %q, %v", got, err)
	}
	// The checksum of nothing is 0.
	if e := must(c.Encode(nil, nil)); !bytes.Equal(e, []byte{0, 0, 0, 0}) {
		t.Errorf("Encode(empty) = % x", e)
	}
	if _, err := c.Decode(nil, enc[1:], 8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("over limit: %v", err)
	}
	if _, err := c.Decode(nil, enc[1:4], 8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("3 bytes: %v", err)
	}
	bad := append([]byte(nil), enc[1:]...)
	bad[len(bad)-1] ^= 1
	if _, err := c.Decode(nil, bad, 9); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped checksum: %v", err)
	}
	if got := c.MaxEncodedSize(10); got != 14 {
		t.Errorf("MaxEncodedSize(10) = %d", got)
	}
	s, err := SpecOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(s); string(js) != `{"name":"crc32c"}` {
		t.Errorf("spec %s", js)
	}
}
