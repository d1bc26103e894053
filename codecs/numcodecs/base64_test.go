package numcodecs_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
)

func TestBase64(t *testing.T) {
	var c numcodecs.Base64
	enc, _ := c.Encode(nil, []byte("gozarr\x00\xff"))
	if string(enc) != "Z296YXJyAP8=" { // Python: base64.standard_b64encode(b"gozarr\x00\xff")
		t.Fatalf("encode: %s", enc)
	}
	// Python's standard_b64decode discards bytes outside the alphabet.
	for _, src := range []string{"Z296YXJyAP8=", "Z296\nYXJy AP8=", "Z2*96YXJyAP8="} {
		out, err := c.Decode(nil, []byte(src), 100)
		if err != nil || string(out) != "gozarr\x00\xff" {
			t.Errorf("decode %q: %q, %v", src, out, err)
		}
	}
	for _, src := range []string{"Z296YXJyAP8", "Z296YXJyAP8=Z", "===="} {
		if _, err := c.Decode(nil, []byte(src), 100); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("decode %q: %v, want ErrCorrupt", src, err)
		}
	}
	big := bytes.Repeat([]byte("AAAA"), 1000)
	if _, err := c.Decode(nil, big, 100); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("3000 bytes with limit 100: %v", err)
	}
}

func FuzzBase64(f *testing.F) {
	f.Add([]byte("Z296YXJyAP8="), uint16(8))
	f.Add([]byte("Z2 96\n"), uint16(3))
	f.Add([]byte("===="), uint16(9))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		var c numcodecs.Base64
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		enc, _ := c.Encode(nil, out)
		back, err := c.Decode(nil, enc, len(out))
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("round trip of %x: %x, %v", out, back, err)
		}
	})
}
