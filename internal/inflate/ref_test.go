package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// The framings the tests and fuzz targets cover.
const (
	modeRaw = iota
	modeZlib
	modeGzip
	numModes
)

var modeNames = [numModes]string{"raw", "zlib", "gzip"}

// decode runs this package's decoder of a framing.
func decode(mode int, dst, src []byte, limit int) ([]byte, int, error) {
	switch mode {
	case modeRaw:
		return Raw(dst, src, limit)
	case modeZlib:
		out, err := Zlib(dst, src, limit)
		return out, -1, err
	default:
		out, err := Gzip(dst, src, limit)
		return out, -1, err
	}
}

// reference decodes src with the standard library at most limit bytes,
// returning ok false on any error or on output beyond limit, and for raw
// streams the bytes consumed.
func reference(mode int, src []byte, limit int) (out []byte, n int, ok bool) {
	br := bytes.NewReader(src)
	var r io.Reader
	switch mode {
	case modeRaw:
		r = flate.NewReader(br)
	case modeZlib:
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, 0, false
		}
		r = zr
	default:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, false
		}
		r = zr
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil || len(out) > limit {
		return nil, 0, false
	}
	if mode == modeGzip || mode == modeZlib {
		// The stream reader reports its last error only once it is read
		// past its end.
		if _, err := r.Read(make([]byte, 1)); err != io.EOF {
			return nil, 0, false
		}
	}
	return out, len(src) - br.Len(), true
}

// writer is a standard library compressor that can be reused.
type writer interface {
	io.WriteCloser
	Reset(io.Writer)
}

// writers caches a writer per framing and level (-2 to 9): a new one
// costs more than compressing a fuzz input.
var (
	writersMu sync.Mutex
	writers   [numModes][12]writer
)

// compress frames data at a level with the standard library.
func compress(tb testing.TB, mode int, data []byte, level int) []byte {
	writersMu.Lock()
	defer writersMu.Unlock()
	var b bytes.Buffer
	w := writers[mode][level+2]
	if w != nil {
		w.Reset(&b)
	} else {
		var err error
		switch mode {
		case modeRaw:
			w, err = flate.NewWriter(&b, level)
		case modeZlib:
			w, err = zlib.NewWriterLevel(&b, level)
		default:
			w, err = gzip.NewWriterLevel(&b, level)
		}
		if err != nil {
			tb.Fatal(err)
		}
		writers[mode][level+2] = w
	}
	if _, err := w.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// Test data of several kinds.
func textData(n int) []byte {
	words := []string{"zarr", "chunk", "array", "the", "of", "shard", "codec", "gzip",
		"deflate", "and", "metadata", "dimension", "float32", "{", "}", "\n", ": ", ", "}
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b[:n]
}

func randomData(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{3}).Read(b)
	return b
}

// floatData is a smooth field with quantised noise, as float32 (like the
// benchmark's data).
func floatData(n int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 0, n+4)
	for i := 0; len(b) < n; i++ {
		v := 100*math.Sin(float64(i)/500) + 0.5*(r.Float64()-0.5)
		b = appendFloat32(b, float32(math.Round(v*64)/64))
	}
	return b[:n]
}

func appendFloat32(b []byte, f float32) []byte {
	u := math.Float32bits(f)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
}

// runData is short runs at distances 1 to 9 (every copyMatch case).
func runData(n int) []byte {
	r := rand.New(rand.NewPCG(7, 8))
	b := make([]byte, 0, n+300)
	for len(b) < n {
		d := 1 + r.IntN(9)
		for range d {
			b = append(b, byte(r.IntN(256)))
		}
		for range 3 + r.IntN(300) {
			b = append(b, b[len(b)-d])
		}
	}
	return b[:n]
}
