package numcodecs_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
)

// b2b builds a registered bytes->bytes codec from its metadata form.
func b2b(t testing.TB, name, cfg string) codecs.BytesToBytes {
	t.Helper()
	s := codecs.Spec{Name: name}
	if cfg != "" {
		s.Configuration = json.RawMessage(cfg)
	}
	c, err := codecs.New(s)
	if err != nil {
		t.Fatalf("%s %s: %v", name, cfg, err)
	}
	b, ok := c.(codecs.BytesToBytes)
	if !ok {
		t.Fatalf("%s is not bytes->bytes", name)
	}
	return b
}

// testInputs returns inputs of 8-byte multiples: empty, small, smooth
// integers (narrow deltas), random bytes and zeros.
func testInputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	smooth := make([]byte, 8*4096)
	v := int64(1000)
	for i := 0; i < len(smooth); i += 8 {
		v += int64(rng.IntN(200)) - 100
		binary.LittleEndian.PutUint64(smooth[i:], uint64(v))
	}
	random := make([]byte, 8*1000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"empty":  {},
		"one":    {1, 2, 3, 4, 5, 6, 7, 8},
		"smooth": smooth,
		"random": random,
		"zeros":  make([]byte, 1<<16),
	}
}

// TestRoundTrip encodes and decodes every input with every codec: the
// decoded bytes equal the input, encoding appends to dst, decoding writes
// into dst's free capacity, a limit one byte short is ErrCorrupt, and the
// configuration survives a trip through metadata.
func TestRoundTrip(t *testing.T) {
	cases := []struct{ name, cfg string }{
		{"numcodecs.zlib", `{"level": 1}`},
		{"numcodecs.zlib", `{"level": -1}`},
		{"numcodecs.zlib", `{"level": 9}`},
		{"numcodecs.zlib", ``},
		{"numcodecs.gzip", `{"level": 5}`},
		{"numcodecs.lz4", `{"acceleration": 1}`},
		{"numcodecs.lz4", `{"acceleration": 100}`},
		{"numcodecs.lz4", `{"acceleration": -1}`},
		{"numcodecs.shuffle", `{"elementsize": 8}`},
		{"numcodecs.shuffle", `{"elementsize": 4}`},
		{"numcodecs.shuffle", `{"elementsize": 0}`},
		{"numcodecs.delta", `{"dtype": "<i8"}`},
		{"numcodecs.delta", `{"dtype": "<i4", "astype": "<i4"}`},
		{"numcodecs.delta", `{"dtype": ">u2", "astype": ">u2"}`},
		{"numcodecs.delta", `{"dtype": "|u1", "astype": "<i8"}`},
		{"numcodecs.crc32", ``},
		{"numcodecs.crc32", `{"location": "end"}`},
		{"numcodecs.adler32", `{"location": "start"}`},
	}
	for _, tc := range cases {
		c := b2b(t, tc.name, tc.cfg)
		for in, src := range testInputs() {
			t.Run(tc.name+tc.cfg+"/"+in, func(t *testing.T) {
				enc, err := c.Encode([]byte("pp"), src)
				if err != nil {
					t.Fatal(err)
				}
				if string(enc[:2]) != "pp" {
					t.Fatalf("encode lost dst's prefix")
				}
				enc = enc[2:]
				if len(enc) > c.MaxEncodedSize(len(src)) {
					t.Fatalf("encoded %d bytes, MaxEncodedSize %d", len(enc), c.MaxEncodedSize(len(src)))
				}
				dec, err := c.Decode([]byte("q"), enc, len(src))
				if err != nil {
					t.Fatal(err)
				}
				if dec[0] != 'q' || !bytes.Equal(dec[1:], src) {
					t.Fatalf("decoded %d bytes differ from the %d input bytes", len(dec)-1, len(src))
				}
				if len(src) > 0 {
					dst := make([]byte, 3, 3+len(src))
					out, err := c.Decode(dst, enc, len(src))
					if err != nil || unsafe.SliceData(out) != unsafe.SliceData(dst) || !bytes.Equal(out[3:], src) {
						t.Fatalf("decode with room: err %v, same memory %v", err, unsafe.SliceData(out) == unsafe.SliceData(dst))
					}
					if _, err := c.Decode(nil, enc, len(src)-1); !errors.Is(err, codecs.ErrCorrupt) {
						t.Fatalf("limit %d for %d bytes: %v, want ErrCorrupt", len(src)-1, len(src), err)
					}
				}
				spec, err := codecs.SpecOf(c)
				if err != nil {
					t.Fatal(err)
				}
				c2, err := codecs.New(spec)
				if err != nil {
					t.Fatal(err)
				}
				spec2, _ := codecs.SpecOf(c2)
				if spec2.Name != tc.name || !bytes.Equal(spec.Configuration, spec2.Configuration) {
					t.Fatalf("spec %s %s became %s %s", spec.Name, spec.Configuration, spec2.Name, spec2.Configuration)
				}
			})
		}
	}
}

func le16(vs ...int16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	return b
}

func le64(vs ...int64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func f32le(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func f64le(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// TestVectors checks hand-made vectors. encodes: Encode(decoded) ==
// encoded; decodes: Decode(encoded) == decoded. Both hold for exact
// round trips; NumPy's wrap-around and rounding make some one-way.
func TestVectors(t *testing.T) {
	const both, encOnly, decOnly = 3, 1, 2
	i2 := func(v int) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(int16(v))) }
	diff := float64(float32(0.1 - 1.5))
	cases := []struct {
		name, codec, cfg string
		decoded, encoded []byte
		dir              int
	}{
		// numcodecs' docstring example: arange(100, 120, 2, dtype='i2') with astype 'i1'.
		{"delta i2->i1", "numcodecs.delta", `{"dtype": "<i2", "astype": "<i1"}`,
			le16(100, 102, 104, 106, 108, 110, 112, 114, 116, 118), []byte{100, 2, 2, 2, 2, 2, 2, 2, 2, 2}, both},
		// Narrowing: 70000-(-5) = 70005 wraps to 4469 in int16, so the
		// last element decodes to -5+4469.
		{"delta i8->i2 encode", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`,
			le64(1000, 1003, 990, -5, 70000), le16(1000, 3, -13, -995, 4469), encOnly},
		{"delta i8->i2 decode", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`,
			le64(1000, 1003, 990, -5, 4464), le16(1000, 3, -13, -995, 4469), both},
		{"delta i8->i2 sign-extends", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`,
			le64(-32768, -1, 32766), append(append(i2(-32768), i2(32767)...), i2(32767)...), both},
		// Big-endian in and out: 2147483647-(-1) wraps to -2^31.
		{"delta >i4", "numcodecs.delta", `{"dtype": ">i4", "astype": ">i4"}`,
			[]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff},
			[]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x80, 0, 0, 0}, both},
		// Mixed order: big-endian input, little-endian output.
		{"delta >i2-><i2", "numcodecs.delta", `{"dtype": ">i2", "astype": "<i2"}`,
			[]byte{0x01, 0x00, 0x01, 0x05}, []byte{0x00, 0x01, 0x05, 0x00}, both},
		// Unsigned to narrower signed: 300 -> 44, -1 -> 0xff; decoding
		// sign-extends 0xff and wraps in uint16.
		{"delta u2->i1 encode", "numcodecs.delta", `{"dtype": "<u2", "astype": "|i1"}`,
			[]byte{44, 1, 43, 1, 54, 1}, []byte{44, 0xff, 11}, encOnly},
		{"delta u2->i1 decode", "numcodecs.delta", `{"dtype": "<u2", "astype": "|i1"}`,
			[]byte{44, 0, 43, 0, 54, 0}, []byte{44, 0xff, 11}, both},
		// The uint8 difference 5-10 wraps to 251 before widening.
		{"delta u1->i2", "numcodecs.delta", `{"dtype": "|u1", "astype": "<i2"}`,
			[]byte{10, 5}, []byte{10, 0, 251, 0}, both},
		{"delta f8->f4 encode", "numcodecs.delta", `{"dtype": "<f8", "astype": "<f4"}`,
			f64le(1, 1.5, 0.1), f32le(1, 0.5, float32(0.1-1.5)), encOnly},
		{"delta f8->f4 decode", "numcodecs.delta", `{"dtype": "<f8", "astype": "<f4"}`,
			f64le(1, 1.5, 1.5+diff), f32le(1, 0.5, float32(0.1-1.5)), decOnly},
		{"delta f4", "numcodecs.delta", `{"dtype": "<f4"}`,
			f32le(0.25, -1, 3), f32le(0.25, -1.25, 4), both},
		{"delta f2", "numcodecs.delta", `{"dtype": "<f2"}`,
			[]byte{0x00, 0x3c, 0x00, 0x40, 0x00, 0x3c}, []byte{0x00, 0x3c, 0x00, 0x3c, 0x00, 0xbc}, both},
		// NumPy's bool diff is "not equal" and bool cumsum is a running
		// OR: numcodecs' bool delta does not round-trip.
		{"delta bool encode", "numcodecs.delta", `{"dtype": "|b1"}`,
			[]byte{1, 1, 0, 0, 1}, []byte{1, 0, 1, 0, 1}, encOnly},
		{"delta bool decode", "numcodecs.delta", `{"dtype": "|b1"}`,
			[]byte{1, 1, 1, 1, 1}, []byte{1, 0, 1, 0, 1}, decOnly},
		{"shuffle 4", "numcodecs.shuffle", `{"elementsize": 4}`,
			[]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 5, 2, 6, 3, 7, 4, 8}, both},
		{"shuffle 2", "numcodecs.shuffle", `{"elementsize": 2}`,
			[]byte("abcdef"), []byte("acebdf"), both},
		{"shuffle 1", "numcodecs.shuffle", `{"elementsize": 1}`,
			[]byte("abcdef"), []byte("abcdef"), both},
		{"shuffle default 4", "numcodecs.shuffle", ``,
			[]byte("abcdefgh"), []byte("aebfcgdh"), both},
		// CRC-32("123456789") = cbf43926; Adler-32("Wikipedia") = 11e60398.
		{"crc32 start", "numcodecs.crc32", ``,
			[]byte("123456789"), append([]byte{0x26, 0x39, 0xf4, 0xcb}, "123456789"...), both},
		{"crc32 end", "numcodecs.crc32", `{"location": "end"}`,
			[]byte("123456789"), append([]byte("123456789"), 0x26, 0x39, 0xf4, 0xcb), both},
		{"adler32", "numcodecs.adler32", ``,
			[]byte("Wikipedia"), append([]byte{0x98, 0x03, 0xe6, 0x11}, "Wikipedia"...), both},
		// numcodecs lz4: le32 size, then a raw block. Short input is one
		// literal run (token 0x50).
		{"lz4 literals", "numcodecs.lz4", ``,
			[]byte("hello"), []byte{5, 0, 0, 0, 0x50, 'h', 'e', 'l', 'l', 'o'}, both},
		// 4 literals, a match of 16 at offset 4, 5 final literals.
		{"lz4 match", "numcodecs.lz4", ``,
			[]byte("abcdabcdabcdabcdabcdxyzzy"),
			[]byte{25, 0, 0, 0, 0x4c, 'a', 'b', 'c', 'd', 4, 0, 0x50, 'x', 'y', 'z', 'z', 'y'}, decOnly},
		{"lz4 empty", "numcodecs.lz4", ``, []byte{}, []byte{0, 0, 0, 0, 0}, both},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := b2b(t, tc.codec, tc.cfg)
			if tc.dir&encOnly != 0 {
				got, err := c.Encode(nil, tc.decoded)
				if err != nil || !bytes.Equal(got, tc.encoded) {
					t.Fatalf("encode: %v\n got % x\nwant % x", err, got, tc.encoded)
				}
			}
			if tc.dir&decOnly != 0 {
				got, err := c.Decode(nil, tc.encoded, len(tc.decoded))
				if err != nil || !bytes.Equal(got, tc.decoded) {
					t.Fatalf("decode: %v\n got % x\nwant % x", err, got, tc.decoded)
				}
			}
		})
	}
}

// TestZlibStdlib checks zlib against Go's compress/zlib both ways.
func TestZlibStdlib(t *testing.T) {
	src := testInputs()["smooth"]
	for _, level := range []int{-1, 0, 1, 6, 9} {
		var buf bytes.Buffer
		w, _ := zlib.NewWriterLevel(&buf, level)
		w.Write(src)
		w.Close()
		c, _ := numcodecs.NewZlib(level)
		got, err := c.Decode(nil, buf.Bytes(), len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: decoding compress/zlib output: %v", level, err)
		}
		enc, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		r, err := zlib.NewReader(bytes.NewReader(enc))
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("level %d: compress/zlib reading our output: %v", level, err)
		}
	}
}

// TestPythonVectors decodes streams written by CPython's zlib and bz2
// modules (C zlib and libbzip2, what numcodecs uses); see
// testdata/python/README.md.
func TestPythonVectors(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/python/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	raw := read("ints.raw")
	zl := b2b(t, "numcodecs.zlib", `{"level": 1}`)
	bz := b2b(t, "numcodecs.bz2", `{"level": 1}`)
	for _, tc := range []struct {
		file string
		c    codecs.BytesToBytes
	}{{"ints.zlib1", zl}, {"ints.zlib9", zl}, {"ints.bz2", bz}, {"ints2.bz2", bz}} {
		enc := read(tc.file)
		got, err := tc.c.Decode(nil, enc, len(raw))
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("%s: %v (equal %v)", tc.file, err, bytes.Equal(got, raw))
		}
		if _, err := tc.c.Decode(nil, enc, len(raw)-1); !errors.Is(err, codecs.ErrCorrupt) {
			t.Fatalf("%s with a short limit: %v", tc.file, err)
		}
		// Python's zlib.decompress ignores bytes after the stream.
		if tc.c == zl {
			got, err := zl.Decode(nil, append(append([]byte(nil), enc...), "trailing"...), len(raw))
			if err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("%s with trailing bytes: %v", tc.file, err)
			}
		}
	}
	if _, err := bz.Encode(nil, raw); !errors.Is(err, numcodecs.ErrUnsupported) {
		t.Fatalf("bz2 encode: %v, want ErrUnsupported", err)
	}
}

// TestBadInput feeds each decoder malformed input.
func TestBadInput(t *testing.T) {
	raw, _ := os.ReadFile("testdata/python/ints.raw")
	zstream, _ := os.ReadFile("testdata/python/ints.zlib1")
	bzstream, _ := os.ReadFile("testdata/python/ints.bz2")
	flip := func(b []byte, i int) []byte {
		c := append([]byte(nil), b...)
		if i < 0 {
			i += len(c)
		}
		c[i] ^= 0x55
		return c
	}
	lz4hdr := func(size uint32, block ...byte) []byte {
		return append(binary.LittleEndian.AppendUint32(nil, size), block...)
	}
	cases := []struct {
		name, codec, cfg string
		src              []byte
		limit            int
		want             error
	}{
		{"zlib empty", "numcodecs.zlib", ``, nil, 100, codecs.ErrCorrupt},
		{"zlib garbage", "numcodecs.zlib", ``, []byte("hello world"), 100, codecs.ErrCorrupt},
		{"zlib truncated", "numcodecs.zlib", ``, zstream[:len(zstream)/2], len(raw), codecs.ErrCorrupt},
		{"zlib no trailer", "numcodecs.zlib", ``, zstream[:len(zstream)-4], len(raw), codecs.ErrCorrupt},
		{"zlib bad adler", "numcodecs.zlib", ``, flip(zstream, -1), len(raw), codecs.ErrChecksum},
		{"zlib over limit", "numcodecs.zlib", ``, zstream, 1000, codecs.ErrCorrupt},
		{"zlib negative limit", "numcodecs.zlib", ``, zstream, -1, codecs.ErrCorrupt},
		{"zlib preset dictionary", "numcodecs.zlib", ``, []byte{0x78, 0xbb, 0, 0, 0, 1, 3, 0}, 100, codecs.ErrCorrupt},
		{"bz2 garbage", "numcodecs.bz2", ``, []byte("BZh9 not really"), 100, codecs.ErrCorrupt},
		{"bz2 truncated", "numcodecs.bz2", ``, bzstream[:len(bzstream)-10], len(raw), codecs.ErrCorrupt},
		{"bz2 over limit", "numcodecs.bz2", ``, bzstream, 100, codecs.ErrCorrupt},
		{"bz2 bad stream crc", "numcodecs.bz2", ``, flip(bzstream, -2), len(raw), codecs.ErrChecksum},
		{"lz4 short", "numcodecs.lz4", ``, []byte{1, 0, 0}, 100, codecs.ErrCorrupt},
		{"lz4 size over limit", "numcodecs.lz4", ``, lz4hdr(101, 0x50, 'h'), 100, codecs.ErrCorrupt},
		{"lz4 size negative as C int", "numcodecs.lz4", ``, lz4hdr(0x80000000, 0), math.MaxInt, codecs.ErrCorrupt},
		{"lz4 size beyond block", "numcodecs.lz4", ``, lz4hdr(1<<30, 0x1f, 'a', 1, 0, 0xff), math.MaxInt, codecs.ErrCorrupt},
		{"lz4 size larger than block", "numcodecs.lz4", ``, lz4hdr(6, 0x50, 'h', 'e', 'l', 'l', 'o'), 100, codecs.ErrCorrupt},
		{"lz4 size smaller than block", "numcodecs.lz4", ``, lz4hdr(4, 0x50, 'h', 'e', 'l', 'l', 'o'), 100, codecs.ErrCorrupt},
		{"lz4 zero offset", "numcodecs.lz4", ``, lz4hdr(25, 0x4c, 'a', 'b', 'c', 'd', 0, 0, 0x50, 'x', 'y', 'z', 'z', 'y'), 100, codecs.ErrCorrupt},
		{"lz4 offset before start", "numcodecs.lz4", ``, lz4hdr(25, 0x4c, 'a', 'b', 'c', 'd', 9, 0, 0x50, 'x', 'y', 'z', 'z', 'y'), 100, codecs.ErrCorrupt},
		{"lz4 truncated block", "numcodecs.lz4", ``, lz4hdr(5, 0x50, 'h', 'e'), 100, codecs.ErrCorrupt},
		{"lz4 size zero, data", "numcodecs.lz4", ``, lz4hdr(0, 0x10, 'a'), 100, codecs.ErrCorrupt},
		{"shuffle ragged", "numcodecs.shuffle", `{"elementsize": 4}`, []byte("abcdef"), 100, codecs.ErrCorrupt},
		{"shuffle over limit", "numcodecs.shuffle", `{"elementsize": 4}`, []byte("abcdefgh"), 4, codecs.ErrCorrupt},
		{"delta ragged", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`, []byte{1, 2, 3}, 100, codecs.ErrCorrupt},
		{"delta over limit", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`, make([]byte, 10), 39, codecs.ErrCorrupt},
		{"delta huge", "numcodecs.delta", `{"dtype": "<i8", "astype": "|i1"}`, make([]byte, 1<<20), 1 << 20, codecs.ErrCorrupt},
		{"crc32 short", "numcodecs.crc32", ``, []byte{1, 2, 3}, 100, codecs.ErrCorrupt},
		{"crc32 mismatch", "numcodecs.crc32", ``, append([]byte{0x26, 0x39, 0xf4, 0xcc}, "123456789"...), 100, codecs.ErrChecksum},
		{"crc32 end mismatch", "numcodecs.crc32", `{"location": "end"}`, append([]byte{0x26, 0x39, 0xf4, 0xcb}, "123456789"...), 100, codecs.ErrChecksum},
		{"crc32 over limit", "numcodecs.crc32", ``, append([]byte{0x26, 0x39, 0xf4, 0xcb}, "123456789"...), 8, codecs.ErrCorrupt},
		{"adler32 mismatch", "numcodecs.adler32", ``, append([]byte{0x98, 0x03, 0xe6, 0x12}, "Wikipedia"...), 100, codecs.ErrChecksum},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := b2b(t, tc.codec, tc.cfg)
			dst := []byte("keep")
			out, err := c.Decode(dst, tc.src, tc.limit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if string(out) != "keep" {
				t.Fatalf("failed decode returned %q, want dst unchanged", out)
			}
		})
	}
}

// TestNoBombAllocation checks that hostile size claims are refused
// before allocating: an lz4 header claiming 1 GiB, and zlib/bz2 streams
// of zeros against a small limit.
func TestNoBombAllocation(t *testing.T) {
	zl := b2b(t, "numcodecs.zlib", `{"level": 9}`)
	bomb, err := zl.Encode(nil, make([]byte, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	lz := b2b(t, "numcodecs.lz4", ``)
	lzBomb := append(binary.LittleEndian.AppendUint32(nil, 1<<30), 0x00)
	for _, tc := range []struct {
		name  string
		c     codecs.BytesToBytes
		src   []byte
		limit int
	}{
		{"zlib 8 MiB of zeros, limit 256 KiB", zl, bomb, 256 << 10},
		{"lz4 claiming 1 GiB, no limit", lz, lzBomb, math.MaxInt},
		{"lz4 claiming 1 GiB, limit 1 GiB", lz, lzBomb, 1 << 30},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := tc.c.Decode(nil, tc.src, tc.limit)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, codecs.ErrCorrupt) {
			t.Fatalf("%s: %v, want ErrCorrupt", tc.name, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
			t.Fatalf("%s: allocated %d bytes", tc.name, got)
		}
	}
}

// TestConfigErrors checks that malformed configurations are refused with
// ErrInvalidConfig.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, cfg string }{
		{"numcodecs.zlib", `{"lvl": 1}`},
		{"numcodecs.lz4", `{"acceleration": "fast"}`},
		{"numcodecs.shuffle", `{"elementsize": 4.5}`},
		{"numcodecs.delta", `{}`},
		{"numcodecs.delta", `{"astype": "<i2"}`},
		{"numcodecs.delta", `{"dtype": "<c8"}`},
		{"numcodecs.delta", `{"dtype": "|O"}`},
		{"numcodecs.delta", `{"dtype": "<M8[ns]"}`},
		{"numcodecs.delta", `{"dtype": "<i4", "astype": "<f4"}`},
		{"numcodecs.delta", `{"dtype": "|b1", "astype": "|u1"}`},
		{"numcodecs.delta", `{"dtype": "<i4", "extra": 1}`},
		{"numcodecs.crc32", `{"location": "middle"}`},
		{"numcodecs.adler32", `{"location": 1}`},
	} {
		_, err := codecs.New(codecs.Spec{Name: tc.name, Configuration: json.RawMessage(tc.cfg)})
		if !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s %s: %v, want ErrInvalidConfig", tc.name, tc.cfg, err)
		}
	}
	if _, err := b2b(t, "numcodecs.shuffle", `{"elementsize": 4}`).Encode(nil, []byte("abc")); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("shuffle of 3 bytes: %v", err)
	}
	if _, err := b2b(t, "numcodecs.delta", `{"dtype": "<i4"}`).Encode(nil, []byte("abc")); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("delta of 3 bytes: %v", err)
	}
}

// TestChain runs the codecs in resolved chains as ToV3 builds them: a
// narrowing delta before zlib (the encoded size shrinks, so zlib's limit
// is a quarter of the chunk), and a big-endian array whose delta reads the
// bytes codec's big-endian output.
func TestChain(t *testing.T) {
	spec := func(name, cfg string) codecs.Spec {
		return codecs.Spec{Name: name, Configuration: json.RawMessage(cfg)}
	}
	shape := []int{64, 50}
	for _, tc := range []struct {
		name  string
		dt    dtype.DataType
		specs []codecs.Spec
	}{
		{"i8 delta->i2 zlib", dtype.TypeInt64, []codecs.Spec{spec("bytes", `{"endian": "little"}`),
			spec("numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`), spec("numcodecs.zlib", `{"level": 1}`)}},
		{">i4 delta shuffle lz4", dtype.TypeInt32, []codecs.Spec{spec("bytes", `{"endian": "big"}`),
			spec("numcodecs.delta", `{"dtype": ">i4"}`), spec("numcodecs.shuffle", `{"elementsize": 4}`),
			spec("numcodecs.lz4", `{"acceleration": 1}`)}},
		{"F order u2 crc32", dtype.TypeUint16, []codecs.Spec{spec("transpose", `{"order": [1, 0]}`),
			spec("bytes", `{"endian": "big"}`), spec("numcodecs.adler32", `{}`), spec("numcodecs.crc32", `{"location": "end"}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repr := codecs.ChunkRepr{Shape: shape, DType: tc.dt, Fill: make([]byte, tc.dt.Size())}
			ch, err := codecs.NewChain(tc.specs, repr)
			if err != nil {
				t.Fatal(err)
			}
			src := make([]byte, repr.NumBytes())
			n := tc.dt.Size()
			for i := 0; i < len(src); i += n {
				v := uint64(i/n*7 - 3000) // small steps, negative start
				for j := 0; j < n; j++ {
					src[i+j] = byte(v >> (8 * j))
				}
			}
			enc, err := ch.Encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > ch.MaxEncodedSize() {
				t.Fatalf("encoded %d bytes, bound %d", len(enc), ch.MaxEncodedSize())
			}
			got := make([]byte, len(src))
			if err := ch.Decode(got, enc); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("decode: %v (equal %v)", err, bytes.Equal(got, src))
			}
		})
	}
}
