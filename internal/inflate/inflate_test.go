package inflate

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
)

// inputs are the data kinds and sizes the round-trip tests compress.
func inputs() map[string][]byte {
	m := map[string][]byte{
		"empty":  nil,
		"one":    {42},
		"zeros":  make([]byte, 100000),
		"text":   textData(300000),
		"random": randomData(70000),
		"float":  floatData(262144),
		"runs":   runData(200000),
		"small":  []byte("hello, hello, hello, world"),
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	levels := []int{flate.HuffmanOnly, 0, 1, 5, 9}
	for name, data := range inputs() {
		for mode := range numModes {
			for _, level := range levels {
				src := compress(t, mode, data, level)
				t.Run(fmt.Sprintf("%s/%s/%d", name, modeNames[mode], level), func(t *testing.T) {
					// No spare capacity, exact capacity, a prefix kept.
					for _, dst := range [][]byte{nil, make([]byte, 0, len(data)), []byte("prefix")} {
						out, n, err := decode(mode, dst, src, len(data))
						if err != nil {
							t.Fatalf("dst cap %d: %v", cap(dst), err)
						}
						if !bytes.Equal(out[:len(dst)], dst) || !bytes.Equal(out[len(dst):], data) {
							t.Fatalf("dst cap %d: wrong output (%d bytes, want %d)", cap(dst), len(out)-len(dst), len(data))
						}
						if mode == modeRaw && n != len(src) {
							t.Fatalf("consumed %d of %d bytes", n, len(src))
						}
					}
					if len(data) > 0 {
						_, _, err := decode(mode, nil, src, len(data)-1)
						if !errors.Is(err, ErrTooLarge) {
							t.Fatalf("limit %d: err %v, want ErrTooLarge", len(data)-1, err)
						}
					}
				})
			}
		}
	}
}

// gzipMember is one gzip member of data with a header of the given flags
// and fields, written by hand.
func gzipMember(data []byte, flags byte, extra, name []byte, hcrc bool) []byte {
	h := []byte{0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 255}
	if flags&gzipExtra != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
		h = append(h, extra...)
	}
	if flags&gzipName != 0 {
		h = append(append(h, name...), 0)
	}
	if flags&gzipComment != 0 {
		h = append(h, "a comment"...)
		h = append(h, 0)
	}
	if hcrc {
		h = binary.LittleEndian.AppendUint16(h, uint16(crc32.ChecksumIEEE(h)))
	}
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, 5)
	w.Write(data)
	w.Close()
	h = append(h, b.Bytes()...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(h, uint32(len(data)))
}

func TestGzipMembers(t *testing.T) {
	a, b := textData(5000), floatData(8000)
	all := gzipMember(a, gzipExtra|gzipName|gzipComment|gzipHCRC, []byte("xx"), []byte("name.txt"), true)
	all = append(all, gzipMember(b, 0, nil, nil, false)...)
	all = append(all, gzipMember(nil, 0, nil, nil, false)...)
	out, err := Gzip(nil, all, len(a)+len(b))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, append(append([]byte{}, a...), b...)) {
		t.Fatal("wrong output")
	}
	if _, err := Gzip(nil, all, len(a)+len(b)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: err %v, want ErrTooLarge", err)
	}
	// A back-reference may not reach into the previous member.
	m2 := gzipMember(bytes.Repeat([]byte("q"), 50), 0, nil, nil, false)
	if out, err := Gzip(nil, append(gzipMember([]byte("q"), 0, nil, nil, false), m2...), 100); err != nil || len(out) != 51 {
		t.Fatalf("two members: %d bytes, %v", len(out), err)
	}
}

func TestErrors(t *testing.T) {
	good := compress(t, modeZlib, textData(10000), 6)
	goodGz := compress(t, modeGzip, textData(10000), 6)
	raw := compress(t, modeRaw, textData(10000), 6)
	flip := func(b []byte, i int, x byte) []byte {
		c := bytes.Clone(b)
		c[i] ^= x
		return c
	}
	longName := gzipMember([]byte("x"), gzipName, nil, bytes.Repeat([]byte("n"), 512), false)
	okName := gzipMember([]byte("x"), gzipName, nil, bytes.Repeat([]byte("n"), 511), false)
	// A fixed block: a literal 'a' and a match of distance 2 (too far).
	var bw bitWriter
	bw.put(1, 1)           // final
	bw.put(1, 2)           // fixed
	bw.putRev(0x30+'a', 8) // literal 'a'
	bw.putRev(1, 7)        // length 3 (symbol 257)
	bw.putRev(1, 5)        // distance 2 (code 1)
	bw.putRev(0, 7)        // end of block
	farFixed := bw.bytes()
	var bw3 bitWriter
	bw3.put(1, 1)
	bw3.put(3, 2) // block type 3
	type3 := bw3.bytes()
	tests := []struct {
		name string
		mode int
		src  []byte
		want error
	}{
		{"zlib empty", modeZlib, nil, ErrCorrupt},
		{"zlib bad method", modeZlib, flip(good, 0, 1), ErrCorrupt},
		{"zlib bad fcheck", modeZlib, flip(good, 1, 1), ErrCorrupt},
		{"zlib dictionary", modeZlib, []byte{0x78, 0xbb, 0, 0, 0, 2, 3, 0}, ErrCorrupt},
		{"zlib adler", modeZlib, flip(good, len(good)-1, 1), ErrChecksum},
		{"zlib truncated adler", modeZlib, good[:len(good)-1], ErrCorrupt},
		{"zlib truncated data", modeZlib, good[:len(good)/2], ErrCorrupt},
		{"gzip empty", modeGzip, nil, ErrCorrupt},
		{"gzip magic", modeGzip, flip(goodGz, 0, 1), ErrCorrupt},
		{"gzip crc", modeGzip, flip(goodGz, len(goodGz)-5, 1), ErrChecksum},
		{"gzip size", modeGzip, flip(goodGz, len(goodGz)-1, 1), ErrChecksum},
		{"gzip trailing byte", modeGzip, append(bytes.Clone(goodGz), 0), ErrCorrupt},
		{"gzip trailing header", modeGzip, append(bytes.Clone(goodGz), goodGz[:9]...), ErrCorrupt},
		{"gzip header crc", modeGzip, flip(gzipMember(nil, gzipHCRC, nil, nil, true), 10, 1), ErrCorrupt},
		{"gzip long name", modeGzip, longName, ErrCorrupt},
		{"raw truncated", modeRaw, raw[:len(raw)-1], ErrCorrupt},
		{"raw empty", modeRaw, nil, ErrCorrupt},
		{"raw type 3", modeRaw, type3, ErrCorrupt},
		{"raw distance too far", modeRaw, farFixed, ErrCorrupt},
		{"raw stored complement", modeRaw, []byte{1, 5, 0, 5, 0, 'a', 'b', 'c', 'd', 'e'}, ErrCorrupt},
		{"raw stored truncated", modeRaw, []byte{1, 5, 0, 0xfa, 0xff, 'a', 'b'}, ErrCorrupt},
		{"raw good name", modeGzip, okName, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, ok := reference(tt.mode, tt.src, 1<<20)
			if ok != (tt.want == nil) {
				t.Fatalf("the standard library's ok is %v", ok)
			}
			dst := []byte("kept")
			out, _, err := decode(tt.mode, dst, tt.src, 1<<20)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if err != nil && string(out) != "kept" {
				t.Fatalf("on error the output is %q, want dst", out)
			}
		})
	}
}

// bitWriter writes a DEFLATE bit stream by hand.
type bitWriter struct {
	b     []byte
	nbits uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := range n {
		if w.nbits%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.nbits % 8)
		w.nbits++
	}
}

// putRev writes a Huffman code, most significant bit first.
func (w *bitWriter) putRev(code uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.put(code>>uint(i)&1, 1)
	}
}

func (w *bitWriter) bytes() []byte { return w.b }
