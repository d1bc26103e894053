package numcodecs_test

import (
	"bytes"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
)

// filterConfigs are the configurations the filter fuzz targets pick from
// (by a fuzzed index).
var filterConfigs = []struct{ name, cfg string }{
	{"numcodecs.fixedscaleoffset", `{"offset": 0, "scale": 10, "dtype": "<f8", "astype": "|u1"}`},
	{"numcodecs.fixedscaleoffset", `{"offset": 1.5, "scale": 100.0, "dtype": "<f4", "astype": "<i2"}`},
	{"numcodecs.fixedscaleoffset", `{"offset": 10, "scale": 2, "dtype": ">i8", "astype": "|i1"}`},
	{"numcodecs.quantize", `{"digits": 2, "dtype": "<f8", "astype": "<f4"}`},
	{"numcodecs.astype", `{"encode_dtype": "<i2", "decode_dtype": "<i8"}`},
	{"numcodecs.astype", `{"encode_dtype": "<f2", "decode_dtype": "<f4"}`},
	{"numcodecs.bitround", `{"keepbits": 5}`},
	{"numcodecs.packbits", `{}`},
	{"numcodecs.categorize", `{"labels": ["a", "bb", "é€"], "dtype": "<U2", "astype": "<u2"}`},
	{"numcodecs.categorize", `{"labels": ["x", "yz"], "dtype": "|S2", "astype": "|i1"}`},
}

// reencodes reports whether encoding what the filter decodes always gives
// back the input: the widening cast (astype i2 -> i8) does.
func reencodes(i int) bool { return i == 4 }

// FuzzFilterDecode decodes arbitrary bytes with each new numcodecs filter
// (fixedscaleoffset, quantize, astype, bitround, packbits, categorize):
// errors wrap a sentinel and leave dst alone, output stays within the
// limit with no larger allocation (checkDecode), decoding again what
// encoding the output gives is stable, and the lossless ones re-encode to
// their input.
func FuzzFilterDecode(f *testing.F) {
	for i := range filterConfigs {
		f.Add(uint8(i), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, uint16(64))
	}
	f.Add(uint8(7), []byte{3, 0xa5}, uint16(5))
	f.Add(uint8(8), []byte{1, 0, 2, 0, 3, 0, 9, 0}, uint16(64))
	f.Fuzz(func(t *testing.T, k uint8, src []byte, l uint16) {
		fc := filterConfigs[int(k)%len(filterConfigs)]
		c := b2b(t, fc.name, fc.cfg)
		if ts, ok := c.(codecs.TypeSizer); ok {
			c = ts.WithTypeSize(4)
		}
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		enc, err := c.Encode(nil, out)
		if err != nil {
			t.Fatalf("encode of decoded output: %v", err)
		}
		if reencodes(int(k)%len(filterConfigs)) && !bytes.Equal(enc, src) {
			t.Fatalf("re-encoding %x gives %x", src, enc)
		}
		again, err := c.Decode(nil, enc, len(out))
		if err != nil {
			t.Fatalf("decode of re-encoded: %v", err)
		}
		if fc.name != "numcodecs.fixedscaleoffset" && fc.name != "numcodecs.quantize" && fc.name != "numcodecs.bitround" && !bytes.Equal(again, out) {
			t.Fatalf("decode(encode(decode(x))) = %x, decode(x) = %x", again, out)
		}
	})
}

// FuzzHDF5ChecksumDecode decodes arbitrary bytes with fletcher32 and
// jenkins_lookup3: errors wrap a sentinel, output is bounded, and what
// decodes re-encodes to the input.
func FuzzHDF5ChecksumDecode(f *testing.F) {
	for _, jenkins := range []bool{false, true} {
		c := hdf5Codec(jenkins)
		f.Add(jenkins, mustEnc(f, c, []byte("gozarr numcodecs checksum")), uint16(100))
		f.Add(jenkins, mustEnc(f, c, []byte("odd")), uint16(3))
	}
	f.Add(false, []byte{1, 2, 3}, uint16(10))
	f.Fuzz(func(t *testing.T, jenkins bool, src []byte, l uint16) {
		c := hdf5Codec(jenkins)
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		if enc := mustEncT(t, c, out); !bytes.Equal(enc, src) {
			t.Fatal("re-encoding differs")
		}
	})
}

func hdf5Codec(jenkins bool) codecs.BytesToBytes {
	if jenkins {
		return numcodecs.NewJenkinsLookup3(0, nil)
	}
	return numcodecs.NewFletcher32()
}

// FuzzLZMADecode decodes arbitrary bytes as each lzma format: errors wrap
// a sentinel, output stays within the limit (the dictionary is cut to it:
// no header can make the decoder allocate more), and encoding then
// decoding any input gives it back.
func FuzzLZMADecode(f *testing.F) {
	cfgs := []string{`{"format": 1, "check": -1}`, `{"format": 2}`, `{"format": 3, "filters": [{"id": 33, "preset": 1}]}`, `{"format": 1, "check": 1, "preset": 9}`}
	for i, cfg := range cfgs {
		c := b2b(f, "numcodecs.lzma", cfg)
		f.Add(uint8(i), mustEnc(f, c, []byte("hello hello hello hello lzma")), uint16(100))
		f.Add(uint8(i), mustEnc(f, c, make([]byte, 3000)), uint16(2000))
	}
	f.Fuzz(func(t *testing.T, k uint8, src []byte, l uint16) {
		c := b2b(t, "numcodecs.lzma", cfgs[int(k)%len(cfgs)])
		checkDecode(t, c, src, fuzzLimit(l))
		enc := mustEncT(t, c, src)
		back, err := c.Decode(nil, enc, len(src))
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("round trip of %d bytes: %v", len(src), err)
		}
	})
}
