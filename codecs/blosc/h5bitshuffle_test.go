package blosc_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/blosc"
)

// refBitunshuffleBlock undoes the bit shuffle of one block of n elements
// (n a multiple of 8) of es bytes, bit by bit, as the format describes it.
func refBitunshuffleBlock(src []byte, n, es int) []byte {
	out := make([]byte, n*es)
	for j := range es {
		for b := range 8 {
			row := src[(8*j+b)*(n/8):]
			for i := range n {
				if row[i/8]>>(i%8)&1 != 0 {
					out[i*es+j] |= 1 << b
				}
			}
		}
	}
	return out
}

func h5Inputs() [][]byte {
	r := rand.New(rand.NewPCG(32008, 1))
	var out [][]byte
	for _, n := range []int{0, 1, 7, 8, 63, 64, 1000, 8192, 70001} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i/9) ^ byte(r.IntN(3))
		}
		out = append(out, b)
	}
	return out
}

func TestH5BitshuffleRoundTrip(t *testing.T) {
	for _, cname := range []string{"none", "lz4", "zstd"} {
		for _, es := range []int{1, 2, 4, 8, 3} {
			for _, bs := range []int{0, 8, 128} {
				c, err := blosc.NewH5Bitshuffle(es, bs, cname)
				if err != nil {
					t.Fatal(err)
				}
				for _, in := range h5Inputs() {
					enc, err := c.Encode(nil, in)
					if err != nil {
						t.Fatal(err)
					}
					if len(enc) > c.MaxEncodedSize(len(in)) {
						t.Errorf("%s es %d bs %d n %d: %d bytes encoded, bound %d", cname, es, bs, len(in), len(enc), c.MaxEncodedSize(len(in)))
					}
					if cname != "none" && len(in)%es != 0 {
						continue // the filter's chunks are whole elements
					}
					got, err := c.Decode(nil, enc, len(in))
					if err != nil || !bytes.Equal(got, in) {
						t.Errorf("%s es %d bs %d n %d: round trip %v", cname, es, bs, len(in), err)
					}
				}
			}
		}
	}
}

// TestH5BitshuffleLayout checks the uncompressed form against a bit-by-bit
// reading of the format: blocks of bs elements, the last cut to a multiple
// of 8, the rest stored as it is.
func TestH5BitshuffleLayout(t *testing.T) {
	es, bs := 4, 16
	c, _ := blosc.NewH5Bitshuffle(es, bs, "none")
	in := h5Inputs()[6] // 1000 bytes: 250 elements = 15 blocks of 16, one of 8, 2 left
	enc, _ := c.Encode(nil, in)
	var want []byte
	off := 0
	for e := 0; e+8 <= len(in)/es; {
		k := min(bs, len(in)/es-e)
		k -= k % 8
		want = append(want, refBitunshuffleBlock(enc[off:off+k*es], k, es)...)
		off += k * es
		e += k
	}
	want = append(want, enc[off:]...)
	if !bytes.Equal(want, in) {
		t.Error("the encoding is not the bitshuffle layout")
	}
}

func TestH5BitshuffleHostile(t *testing.T) {
	c, _ := blosc.NewH5Bitshuffle(4, 0, "lz4")
	hdr := func(total uint64, bb uint32, rest ...byte) []byte {
		b := binary.BigEndian.AppendUint64(nil, total)
		b = binary.BigEndian.AppendUint32(b, bb)
		return append(b, rest...)
	}
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"short", []byte{1, 2, 3}},
		{"size 2^62", hdr(1<<62, 32, 0, 0, 0, 1, 0)},
		{"over limit", hdr(4096, 32, 0, 0, 0, 1, 0)},
		{"partial element", hdr(6, 32)},
		{"block not 8 elements", hdr(64, 12)},
		{"block 0", hdr(64, 0)},
		{"block past end", hdr(64, 32, 0, 0, 0, 99, 1)},
		{"bad lz4", hdr(32, 32, 0, 0, 0, 2, 0xff, 0xff)},
		{"too little input", hdr(1024, 32, 0, 0, 0, 1)},
		{"missing leftover", hdr(36, 32)},
	} {
		if _, err := c.Decode(nil, tc.src, 1024); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
	n, _ := blosc.NewH5Bitshuffle(4, 0, "none")
	if _, err := n.Decode(nil, make([]byte, 100), 99); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("none over limit: %v", err)
	}
	for _, bad := range []struct {
		es, bs int
		cname  string
	}{{0, 0, "lz4"}, {4, 12, "lz4"}, {4, -8, "none"}, {4, 0, "snappy"}} {
		if _, err := blosc.NewH5Bitshuffle(bad.es, bad.bs, bad.cname); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func FuzzH5BitshuffleDecode(f *testing.F) {
	for _, cname := range []string{"none", "lz4", "zstd"} {
		c, _ := blosc.NewH5Bitshuffle(4, 16, cname)
		for _, in := range h5Inputs()[:7] {
			if len(in)%4 == 0 {
				enc, _ := c.Encode(nil, in)
				f.Add(enc, uint16(len(in)), cname)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, l uint16, cname string) {
		c, err := blosc.NewH5Bitshuffle(4, 16, cname)
		if err != nil {
			return
		}
		out, err := c.Decode([]byte("xx"), src, int(l))
		if err != nil {
			if !errors.Is(err, codecs.ErrCorrupt) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if string(out[:2]) != "xx" || len(out)-2 > int(l) {
			t.Fatalf("decoded %d bytes with limit %d", len(out)-2, l)
		}
		enc, err := c.Encode(nil, out[2:])
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(nil, enc, len(out)-2)
		if err != nil || !bytes.Equal(back, out[2:]) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}
