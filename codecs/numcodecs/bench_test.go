package numcodecs_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// benchChunk is a 1 MiB chunk of smooth float32 data (a sine with noise),
// like the codecs package's benchmarks.
func benchChunk() []byte {
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 4 {
		v := float32(math.Sin(float64(i)/4000)*100) + float32(i%7)/8
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
	}
	return b
}

// benchIntChunk is a 1 MiB chunk of slowly varying int64s.
func benchIntChunk() []byte {
	b := make([]byte, 1<<20)
	v := int64(1 << 40)
	for i := 0; i < len(b); i += 8 {
		v += int64(i%13) - 6
		binary.LittleEndian.PutUint64(b[i:], uint64(v))
	}
	return b
}

var benchCodecs = []struct {
	name, codec, cfg string
	ints             bool
}{
	{"zlib1", "numcodecs.zlib", `{"level": 1}`, true},
	{"zlib5", "numcodecs.zlib", `{"level": 5}`, true},
	{"lz4", "numcodecs.lz4", `{"acceleration": 1}`, true},
	{"shuffle4", "numcodecs.shuffle", `{"elementsize": 4}`, false},
	{"delta_i8", "numcodecs.delta", `{"dtype": "<i8"}`, true},
	{"delta_i8_i2", "numcodecs.delta", `{"dtype": "<i8", "astype": "<i2"}`, true},
	{"delta_f4", "numcodecs.delta", `{"dtype": "<f4"}`, false},
	{"crc32", "numcodecs.crc32", ``, false},
}

// BenchmarkDecode decodes a 1 MiB chunk into a reused buffer; it reports
// the encoded/decoded size ratio.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range benchCodecs {
		b.Run(bc.name, func(b *testing.B) {
			c := b2b(b, bc.codec, bc.cfg)
			src := benchChunk()
			if bc.ints {
				src = benchIntChunk()
			}
			enc, err := c.Encode(nil, src)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, 0, len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Decode(dst, enc, len(src)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(enc))/float64(len(src)), "ratio")
		})
	}
}

// BenchmarkEncode encodes a 1 MiB chunk into a reused buffer.
func BenchmarkEncode(b *testing.B) {
	for _, bc := range benchCodecs {
		b.Run(bc.name, func(b *testing.B) {
			c := b2b(b, bc.codec, bc.cfg)
			src := benchChunk()
			if bc.ints {
				src = benchIntChunk()
			}
			dst := make([]byte, 0, c.MaxEncodedSize(len(src)))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Encode(dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChain decodes a whole v2-style chunk (bytes, delta <i8 -> <i2,
// zlib) through a resolved chain.
func BenchmarkChain(b *testing.B) {
	src := benchIntChunk()
	ch, err := codecs.NewChain([]codecs.Spec{{Name: "bytes", Configuration: []byte(`{"endian": "little"}`)},
		{Name: "numcodecs.delta", Configuration: []byte(`{"dtype": "<i8", "astype": "<i2"}`)},
		{Name: "numcodecs.zlib", Configuration: []byte(`{"level": 1}`)}},
		codecs.ChunkRepr{Shape: []int{len(src) / 8}, DType: dtype.TypeInt64, Fill: make([]byte, 8)})
	if err != nil {
		b.Fatal(err)
	}
	enc, err := ch.Encode(nil, src)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ch.Decode(out, enc); err != nil {
			b.Fatal(err)
		}
	}
}
