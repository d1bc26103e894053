package numcodecs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
)

// hdf5Inputs are round-trip inputs: empty, tiny, runs, text, noise.
func hdf5Inputs() [][]byte {
	r := rand.New(rand.NewPCG(28, 1))
	noise := make([]byte, 5000)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	ramp := make([]byte, 70000)
	for i := range ramp {
		ramp[i] = byte(i / 300)
	}
	return [][]byte{{}, {7}, {1, 2}, bytes.Repeat([]byte{0}, 10000), bytes.Repeat([]byte("abcdefgh"), 2000),
		[]byte("the quick brown fox jumps over the lazy dog, the quick brown fox"), noise, ramp}
}

func TestLZFRoundTrip(t *testing.T) {
	for _, header := range []bool{false, true} {
		c := numcodecs.NewLZF(header)
		for i, in := range hdf5Inputs() {
			enc, err := c.Encode(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > c.MaxEncodedSize(len(in)) {
				t.Errorf("header %v input %d: %d bytes encoded, bound %d", header, i, len(enc), c.MaxEncodedSize(len(in)))
			}
			got, err := c.Decode(nil, enc, len(in))
			if err != nil || !bytes.Equal(got, in) {
				t.Errorf("header %v input %d: round trip %v", header, i, err)
			}
		}
	}
}

func TestLZFHostile(t *testing.T) {
	c := numcodecs.NewLZF(false)
	// A stream of long matches: 3 bytes of input make 264 bytes.
	bomb := []byte{0, 'x'}
	for range 10000 {
		bomb = append(bomb, 7<<5, 255, 0)
	}
	for _, tc := range []struct {
		name  string
		src   []byte
		limit int
	}{
		{"bomb", bomb, 1 << 16},
		{"match before start", []byte{0x20, 0}, 100},
		{"match too far back", []byte{1, 'a', 'b', 0x20, 5}, 100},
		{"truncated literal", []byte{5, 'a'}, 100},
		{"truncated match", []byte{0, 'a', 0xe0}, 100},
		{"truncated offset", []byte{0, 'a', 0x20}, 100},
		{"over the limit", []byte{3, 'a', 'b', 'c', 'd'}, 3},
	} {
		if _, err := c.Decode(nil, tc.src, tc.limit); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
	h := numcodecs.NewLZF(true)
	for _, src := range [][]byte{{1, 2}, {0xff, 0xff, 0xff, 0x7f, 0, 'a'}, {5, 0, 0, 0, 0, 'a'}} {
		if _, err := h.Decode(nil, src, 1<<20); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("header %v: %v, want ErrCorrupt", src, err)
		}
	}
}

func TestLZ4H5RoundTrip(t *testing.T) {
	for _, bs := range []int{0, 1, 64, 1000} {
		c, err := numcodecs.NewLZ4H5(bs)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range hdf5Inputs() {
			enc, err := c.Encode(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > c.MaxEncodedSize(len(in)) {
				t.Errorf("bs %d input %d: %d bytes encoded, bound %d", bs, i, len(enc), c.MaxEncodedSize(len(in)))
			}
			got, err := c.Decode(nil, enc, len(in))
			if err != nil || !bytes.Equal(got, in) {
				t.Errorf("bs %d input %d: round trip %v", bs, i, err)
			}
		}
	}
}

func TestLZ4H5Hostile(t *testing.T) {
	c, _ := numcodecs.NewLZ4H5(0)
	hdr := func(total uint64, bs uint32, rest ...byte) []byte {
		b := binary.BigEndian.AppendUint64(nil, total)
		b = binary.BigEndian.AppendUint32(b, bs)
		return append(b, rest...)
	}
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"short", []byte{0, 0, 0}},
		{"size 2^62", hdr(1<<62, 1<<20, 0, 0, 0, 1, 0)},
		{"size over limit", hdr(2000, 1000, 0, 0, 0, 1, 0)},
		{"block size 0", hdr(10, 0, 0, 0, 0, 1, 0)},
		{"many blocks, little input", hdr(1000, 1, 0, 0, 0, 1, 7)},
		{"block past the end", hdr(10, 10, 0, 0, 0, 200, 1, 2)},
		{"block size 0 stored", hdr(10, 10, 0, 0, 0, 0)},
		{"trailing bytes", hdr(2, 2, 0, 0, 0, 2, 'a', 'b', 'c')},
		{"bad lz4", hdr(100, 100, 0, 0, 0, 3, 0xff, 0xff, 0xff)},
	} {
		if _, err := c.Decode(nil, tc.src, 1000); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
	if _, err := numcodecs.NewLZ4H5(-1); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("blocksize -1: %v", err)
	}
}

// TestFletcher32Detects: a changed byte of an HDF5 fletcher32 chunk is
// ErrChecksum, not wrong data.
func TestFletcher32Detects(t *testing.T) {
	c := numcodecs.NewFletcher32()
	enc, err := c.Encode(nil, []byte("some chunk bytes of an HDF5 dataset"))
	if err != nil {
		t.Fatal(err)
	}
	enc[3] ^= 1
	if _, err := c.Decode(nil, enc, 1<<10); !errors.Is(err, codecs.ErrChecksum) {
		t.Errorf("corrupted chunk: %v, want ErrChecksum", err)
	}
}

func FuzzLZFDecode(f *testing.F) {
	for _, in := range hdf5Inputs()[:6] {
		f.Add(mustEnc(f, numcodecs.NewLZF(false), in), uint16(len(in)), false)
		f.Add(mustEnc(f, numcodecs.NewLZF(true), in), uint16(len(in)), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, l uint16, header bool) {
		c := numcodecs.NewLZF(header)
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		enc, err := c.Encode(nil, out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(nil, enc, len(out))
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}

func FuzzLZ4H5Decode(f *testing.F) {
	for _, bs := range []int{0, 16} {
		c, _ := numcodecs.NewLZ4H5(bs)
		for _, in := range hdf5Inputs()[:6] {
			f.Add(mustEnc(f, c, in), uint16(len(in)))
		}
	}
	c, _ := numcodecs.NewLZ4H5(0)
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		out := checkDecode(t, c, src, fuzzLimit(l))
		if out == nil {
			return
		}
		enc, err := c.Encode(nil, out)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := c.Decode(nil, enc, len(out)); err != nil || !bytes.Equal(back, out) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}

// TestLZFUnconfiguredHeader: {"id": "imagecodecs_lzf"} with no "header"
// (as kerchunk and VirtualiZarr write it) reads both imagecodecs' streams
// with a size header and HDF5's without.
func TestLZFUnconfiguredHeader(t *testing.T) {
	c, err := codecs.New(codecs.Spec{Name: "numcodecs.imagecodecs_lzf"})
	if err != nil {
		t.Fatal(err)
	}
	d := c.(codecs.BytesToBytes)
	for _, in := range hdf5Inputs()[1:] {
		for _, header := range []bool{true, false} {
			enc, _ := numcodecs.NewLZF(header).Encode(nil, in)
			got, err := d.Decode(nil, enc, len(in))
			if err != nil || !bytes.Equal(got, in) {
				t.Errorf("%d bytes, header %v: %v", len(in), header, err)
			}
		}
	}
}
