package numcodecs_test

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
)

// fuzzLimit maps a fuzzed uint16 to a decode limit.
func fuzzLimit(l uint16) int { return int(l) }

// checkSentinel fails unless err wraps one of the codec sentinels.
func checkSentinel(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, codecs.ErrCorrupt) && !errors.Is(err, codecs.ErrChecksum) {
		t.Fatalf("error wraps no sentinel: %v", err)
	}
}

// checkDecode runs a decoder on fuzzed input: errors wrap a sentinel and
// leave dst as it was; output respects the limit, keeps dst's prefix, and
// is the same when decoded into a buffer with room (which it must use).
func checkDecode(t *testing.T, c codecs.BytesToBytes, src []byte, limit int) []byte {
	t.Helper()
	out, err := c.Decode([]byte("xx"), src, limit)
	if err != nil {
		checkSentinel(t, err)
		if string(out) != "xx" {
			t.Fatalf("failed decode changed dst to %q", out)
		}
		return nil
	}
	if string(out[:2]) != "xx" || len(out)-2 > limit {
		t.Fatalf("decoded %d bytes with limit %d, prefix %q", len(out)-2, limit, out[:2])
	}
	dst := make([]byte, 0, limit)
	out2, err := c.Decode(dst, src, limit)
	if err != nil || !bytes.Equal(out2, out[2:]) {
		t.Fatalf("second decode: %v", err)
	}
	if len(out2) > 0 && &out2[0] != &dst[:1][0] {
		t.Fatal("decode with room did not use dst's memory")
	}
	return out[2:]
}

// checkReference fails unless the reference reader r (opened with err)
// reads exactly out, what our decoder made of the same stream.
func checkReference(t *testing.T, name string, out []byte, r io.Reader, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s refuses a stream we decoded: %v", name, err)
	}
	ref, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(ref, out) {
		t.Fatalf("%s: %v, equal %v", name, err, bytes.Equal(ref, out))
	}
}

func mustEnc(f *testing.F, c codecs.BytesToBytes, src []byte) []byte {
	b, err := c.Encode(nil, src)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func pyVector(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/python/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func FuzzZlibDecode(f *testing.F) {
	c, _ := numcodecs.NewZlib(1)
	f.Add(mustEnc(f, c, []byte("hello hello hello hello")), uint16(100))
	f.Add(mustEnc(f, c, make([]byte, 5000)), uint16(100))
	f.Add(pyVector(f, "ints.zlib1")[:300], uint16(8000))
	f.Add([]byte{0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 1}, uint16(10))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out := checkDecode(t, c, src, limit)
		if out == nil {
			return
		}
		// Differential: Go's compress/zlib agrees on what the stream holds.
		r, err := zlib.NewReader(bytes.NewReader(src))
		checkReference(t, "compress/zlib", out, r, err)
	})
}

// FuzzGzipDecode decodes arbitrary bytes with numcodecs.gzip: errors wrap
// a sentinel, output stays within the limit (bounded allocation, see
// checkDecode), and what decodes is what Go's compress/gzip reads from the
// same members.
func FuzzGzipDecode(f *testing.F) {
	c := b2b(f, "numcodecs.gzip", `{"level": 1}`)
	g9 := b2b(f, "numcodecs.gzip", `{"level": 9}`)
	f.Add(mustEnc(f, c, []byte("hello hello hello hello")), uint16(100))
	f.Add(mustEnc(f, g9, make([]byte, 5000)), uint16(100))
	f.Add(append(mustEnc(f, c, []byte("two ")), mustEnc(f, c, []byte("members"))...), uint16(11))
	f.Add(mustEnc(f, c, pyVector(f, "ints.raw")[:2000]), uint16(1999))
	f.Add([]byte{0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0xff, 'n', 'a', 'm', 'e', 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint16(10))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		r, err := gzip.NewReader(bytes.NewReader(src))
		checkReference(t, "compress/gzip", out, r, err)
	})
}

func FuzzBZ2Decode(f *testing.F) {
	c, _ := numcodecs.NewBZ2(1)
	f.Add(pyVector(f, "ints.bz2"), uint16(8000))
	f.Add(pyVector(f, "ints2.bz2")[:1500], uint16(8000))
	f.Add([]byte("BZh91AY&SY"), uint16(100))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out := checkDecode(t, c, src, limit)
		if out == nil || len(src) == 0 {
			return
		}
		ref, err := io.ReadAll(io.LimitReader(bzip2.NewReader(bytes.NewReader(src)), int64(limit)+1))
		if err != nil || !bytes.Equal(ref, out) {
			t.Fatalf("compress/bzip2: %v, equal %v", err, bytes.Equal(ref, out))
		}
	})
}

func FuzzLZ4Decode(f *testing.F) {
	c := numcodecs.NewLZ4(1)
	f.Add(mustEnc(f, c, []byte("hello hello hello hello hello hello")), uint16(100))
	f.Add(mustEnc(f, c, make([]byte, 5000)), uint16(6000))
	f.Add([]byte{25, 0, 0, 0, 0x4c, 'a', 'b', 'c', 'd', 4, 0, 0x50, 'x', 'y', 'z', 'z', 'y'}, uint16(25))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0x1f, 'a', 1, 0, 0xff}, uint16(65535))
	f.Add([]byte{0, 0, 0, 0, 0}, uint16(0))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out := checkDecode(t, c, src, limit)
		if out == nil {
			return
		}
		if len(src) < 4 || binary.LittleEndian.Uint32(src) != uint32(len(out)) {
			t.Fatalf("decoded %d bytes, header says otherwise", len(out))
		}
		// What decodes re-encodes to something that decodes the same.
		back := checkDecode(t, c, mustEncT(t, c, out), len(out))
		if !bytes.Equal(back, out) {
			t.Fatal("re-encoded block decodes differently")
		}
	})
}

func mustEncT(t *testing.T, c codecs.BytesToBytes, src []byte) []byte {
	b, err := c.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzDeltaConfigs are the delta configurations FuzzDeltaDecode picks from.
var fuzzDeltaConfigs = [][2]string{
	{"<i8", "<i2"}, {">i4", ">i4"}, {"<u2", "|i1"}, {"|u1", "<i8"},
	{"<f8", "<f4"}, {"<f2", ">f8"}, {">f4", ">f4"}, {"|b1", "|b1"},
	{"<i4", "<i4"}, {"<u8", "<i8"}, {"<i4", "<u4"},
}

func FuzzDeltaDecode(f *testing.F) {
	f.Add(uint8(0), []byte{0xe8, 0x03, 3, 0, 0xf3, 0xff}, uint16(100))
	f.Add(uint8(1), []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x80, 0, 0, 0}, uint16(12))
	f.Add(uint8(4), []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x3f}, uint16(16))
	f.Add(uint8(5), []byte{0, 0x3c, 0xff, 0xff}, uint16(4))
	f.Add(uint8(7), []byte{1, 0, 1, 0, 1}, uint16(5))
	f.Fuzz(func(t *testing.T, which uint8, src []byte, l uint16) {
		cfg := fuzzDeltaConfigs[int(which)%len(fuzzDeltaConfigs)]
		c, err := numcodecs.NewDelta(cfg[0], cfg[1])
		if err != nil {
			t.Fatal(err)
		}
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		if want := c.MaxEncodedSize(len(out)); want != len(src) {
			t.Fatalf("%d encoded bytes decode to %d, MaxEncodedSize gives %d", len(src), len(out), want)
		}
		// Differential: the little-endian fast path agrees with the
		// general path on byte-swapped big-endian data.
		if cfg[0][0] == '<' && cfg[1][0] == '<' && cfg[0][2:] == cfg[1][2:] && cfg[0][1] != 'f' {
			big, err := numcodecs.NewDelta(">"+cfg[0][1:], ">"+cfg[1][1:])
			if err != nil {
				t.Fatal(err)
			}
			w := len(cfg[0]) - 1 // "<i4" -> width digit at index 2
			w = int(cfg[0][w] - '0')
			got, err := big.Decode(nil, swapEach(src, w), len(out))
			if err != nil || !bytes.Equal(swapEach(got, w), out) {
				t.Fatalf("big-endian path: %v", err)
			}
		}
		// For integers of one width, encoding inverts decoding.
		if cfg[0][1] != 'f' && cfg[0][1] != 'b' && cfg[0][0] == cfg[1][0] && cfg[0][2:] == cfg[1][2:] {
			if enc := mustEncT(t, c, out); !bytes.Equal(enc, src) {
				t.Fatal("re-encoding differs")
			}
		}
	})
}

func FuzzShuffleDecode(f *testing.F) {
	f.Add(uint8(4), []byte{1, 5, 2, 6, 3, 7, 4, 8}, uint16(8))
	f.Add(uint8(3), []byte("abcdefghi"), uint16(100))
	f.Add(uint8(0), []byte("abc"), uint16(2))
	f.Fuzz(func(t *testing.T, es uint8, src []byte, l uint16) {
		c := numcodecs.NewShuffle(int(es))
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		if enc := mustEncT(t, c, out); !bytes.Equal(enc, src) {
			t.Fatal("re-shuffling differs")
		}
	})
}

func FuzzChecksumDecode(f *testing.F) {
	f.Add(false, true, append([]byte{0x26, 0x39, 0xf4, 0xcb}, "123456789"...), uint16(9))
	f.Add(true, true, append([]byte("123456789"), 0x26, 0x39, 0xf4, 0xcb), uint16(9))
	f.Add(false, false, append([]byte{0x98, 0x03, 0xe6, 0x11}, "Wikipedia"...), uint16(9))
	f.Add(false, false, []byte{1, 0, 0, 0}, uint16(0))
	f.Fuzz(func(t *testing.T, end, crc bool, src []byte, l uint16) {
		loc := "start"
		if end {
			loc = "end"
		}
		var c *numcodecs.Checksum32
		if crc {
			c, _ = numcodecs.NewCRC32(loc)
		} else {
			c, _ = numcodecs.NewAdler32(loc)
		}
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		if enc := mustEncT(t, c, out); !bytes.Equal(enc, src) {
			t.Fatal("re-encoding differs")
		}
	})
}

// swapEach reverses the bytes of every w-byte element of b (a copy).
func swapEach(b []byte, w int) []byte {
	out := append([]byte(nil), b...)
	for i := 0; i+w <= len(out); i += w {
		slices.Reverse(out[i : i+w])
	}
	return out
}
