package pcodec

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// stream builds a standalone stream by hand: header (n_hint as given),
// then body writes the chunks (type byte included) and the termination.
func stream(nHint uint64, body func(w *bitWriter)) []byte {
	w := &bitWriter{}
	w.bytes([]byte(magic))
	w.write(3, 8)
	w.write(0, 8) // no uniform type
	power := uint(1)
	for power < 64 && nHint>>power != 0 {
		power++
	}
	w.write(uint64(power-1), bitsVarintPower)
	w.write64(nHint, power)
	w.align()
	w.write(4, 8)
	w.write(1, 8)
	body(w)
	w.flush()
	return w.buf
}

// classicChunk writes a u64 chunk of n numbers, classic mode, no delta,
// one bin of the given offset bits, and a page whose offsets are zeros.
func classicChunk(w *bitWriter, n int, off uint, ansLog uint, nBins int) {
	w.write(uint64(U64), 8)
	w.write(uint64(n-1), bitsChunkN)
	w.write(modeClassic, 4)
	w.write(deltaNone, 4)
	w.write(uint64(ansLog), 4)
	w.write(uint64(nBins), bitsNBins)
	for range nBins {
		w.write(0, ansLog)
		w.write64(7, 64)
		w.write(uint64(off), 7)
	}
	w.align()
	for range 4 {
		w.write(0, ansLog)
	}
	w.align()
	for range n {
		w.write64(0, min(off, 64))
	}
	w.align()
}

func wantCorrupt(t *testing.T, name string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: decoded without error", name)
	} else if !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("%s: %v does not wrap ErrCorrupt", name, err)
	}
}

func TestHostileStreams(t *testing.T) {
	ok := stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 0, 1); w.write(0, 8) })
	dst := make([]byte, 80)
	if err := Decompress(dst, ok, U64); err != nil {
		t.Fatalf("hand-built stream: %v", err)
	}
	for i := 0; i < 10; i++ {
		if dst[8*i] != 7 {
			t.Fatalf("hand-built stream decodes %v", dst)
		}
	}
	cases := map[string][]byte{
		"bit width 65":                       stream(10, func(w *bitWriter) { classicChunk(w, 10, 65, 0, 1); w.write(0, 8) }),
		"bit width 127":                      stream(10, func(w *bitWriter) { classicChunk(w, 10, 127, 0, 1); w.write(0, 8) }),
		"ans size log 15":                    stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 15, 1); w.write(0, 8) }),
		"one bin, ans log 2":                 stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 2, 1); w.write(0, 8) }),
		"weights do not sum":                 stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 2, 3); w.write(0, 8) }),
		"more bins than states":              stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 1, 3); w.write(0, 8) }),
		"no bins":                            stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 0, 0); w.write(0, 8) }),
		"chunk of 2^24 numbers, 2^40 hinted": stream(1<<40, func(w *bitWriter) { classicChunk(w, 1<<24, 0, 0, 1); w.write(0, 8) }),
		"two chunks, too many numbers":       stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 0, 1); classicChunk(w, 1, 3, 0, 1); w.write(0, 8) }),
		"too few numbers":                    stream(9, func(w *bitWriter) { classicChunk(w, 9, 3, 0, 1); w.write(0, 8) }),
		"no termination byte":                stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 0, 1) }),
		"other number type":                  stream(10, func(w *bitWriter) { classicChunk(w, 10, 3, 0, 1); w.buf[10] = byte(I64); w.write(0, 8) }),
		"unknown mode":                       stream(10, func(w *bitWriter) { w.write(uint64(U64), 8); w.write(9, 24); w.write(5, 4); w.write(0, 60) }),
		"unknown delta": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(0, 4)
			w.write(4, 4)
			w.write(0, 60)
		}),
		"consecutive order 0": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(0, 4)
			w.write(1, 4)
			w.write(0, 60)
		}),
		"int mult base 0": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(1, 4)
			w.write64(0, 64)
			w.write(0, 60)
		}),
		"float quant on ints": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(3, 4)
			w.write(4, 8)
			w.write(0, 60)
		}),
		"dict of 2^25-1 values": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(4, 4)
			w.write(1<<25-1, 25)
			w.write(0, 60)
		}),
		"lookback window 2^32": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(0, 4)
			w.write(2, 4)
			w.write(31, 5)
			w.write(0, 60)
		}),
		"conv1 on u64": stream(10, func(w *bitWriter) {
			w.write(uint64(U64), 8)
			w.write(9, 24)
			w.write(0, 4)
			w.write(3, 4)
			w.write(0, 5)
			w.write64(1<<63, 64)
			w.write(0, 5)
			w.write(1<<31, 32)
			w.write(0, 4)
			w.write(1, 15)
			w.write64(0, 64)
			w.write(0, 7)
			w.write(0, 40)
		}),
		"not pcodec": []byte("pco?\x03\x00\x00\x04\x01\x00"),
		"empty":      nil,
		"version 9":  []byte("pco!\x09\x00\x00\x04\x01\x00"),
		"format 5":   []byte("pco!\x03\x00\x00\x05\x01\x00"),
	}
	for name, src := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := Decompress(dst, src, U64)
		runtime.ReadMemStats(&after)
		wantCorrupt(t, name, err)
		t.Logf("%s: %v", name, err)
		if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
			t.Errorf("%s: allocated %d bytes", name, a)
		}
	}
}

// TestTruncated: every prefix of real streams is refused with ErrCorrupt.
func TestTruncated(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pco", "*.pco"))
	files = append(files, filepath.Join("testdata", "numcodecs", "codec.05", "encoded.06.dat"))
	cases := compatCases()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		nt, n := F64, 1000
		if c, ok := cases[filepath.Base(f)]; ok {
			nt, n = c.t, len(c.want)/int(c.t.Bits()/8)
		}
		dst := make([]byte, n*int(nt.Bits()/8))
		step := 1
		if testing.Short() || raceEnabled {
			step = 7 + len(src)/300
		}
		for k := 0; k < len(src); k += step {
			wantCorrupt(t, filepath.Base(f)+" truncated", Decompress(dst, src[:k], nt))
		}
	}
}

// TestCodecRefusesOversized: the codec refuses input larger than any
// encoding of the chunk can be, before decoding.
func TestCodecRefusesOversized(t *testing.T) {
	c, err := NewCodec(nil)
	if err != nil {
		t.Fatal(err)
	}
	repr := codecs.ChunkRepr{Shape: []int{4}, DType: mustType(t, "float64"), Fill: make([]byte, 8)}
	big := make([]byte, c.MaxEncodedSize(repr)+1)
	copy(big, "pco!")
	wantCorrupt(t, "oversized", c.Decode(make([]byte, 32), big, repr))
}

func mustType(t *testing.T, name string) dtypeT {
	t.Helper()
	d, err := dtypeParse(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type dtypeT = dtype.DataType

var dtypeParse = dtype.Parse
