package codecs

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// benchChunk returns a 1 MiB float32 chunk (512×512) of a smooth field with
// a little noise, rounded to 1/100 as measured data often is.
func benchChunk() []byte {
	r := rand.New(rand.NewPCG(21, 22))
	b := make([]byte, 0, 1<<20)
	for i := range 512 {
		for j := range 512 {
			v := 20*math.Sin(float64(i)/40)*math.Cos(float64(j)/25) + r.NormFloat64()*0.3
			v = math.Round(v*100) / 100
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
	}
	return b
}

// BenchmarkMemcpy is the baseline: copying the 1 MiB chunk.
func BenchmarkMemcpy(b *testing.B) {
	src := benchChunk()
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkDecode decodes the 1 MiB float32 chunk with each codec alone,
// into a destination with room (bytes->bytes codecs append into its
// capacity, as the chain has them do).
func BenchmarkDecode(b *testing.B) {
	src := benchChunk()
	repr2 := reprOf(dtype.TypeFloat32, 512, 512)
	repr3 := reprOf(dtype.TypeFloat32, 64, 64, 64)
	a2b := []struct {
		name  string
		codec ArrayToBytes
	}{
		{"bytes-little", must(NewBytes(LittleEndian))},
		{"bytes-big", must(NewBytes(BigEndian))},
	}
	for _, tc := range a2b {
		enc := must(tc.codec.Encode(nil, src, repr2))
		dst := make([]byte, len(src))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.codec.Decode(dst, enc, repr2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("bytes-big-inplace", func(b *testing.B) {
		c := must(NewBytes(BigEndian))
		buf := append([]byte(nil), src...)
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			if err := c.DecodeInPlace(buf, repr2); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name  string
		order []int
		repr  ChunkRepr
	}{
		{"transpose-2d", []int{1, 0}, repr2},
		{"transpose-3d-201", []int{2, 0, 1}, repr3},
		{"transpose-3d-102", []int{1, 0, 2}, repr3},
	} {
		tr := must(NewTranspose(tc.order))
		enc := make([]byte, len(src))
		if err := tr.Encode(enc, src, tc.repr); err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, len(src))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tr.Decode(dst, enc, tc.repr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, tc := range []struct {
		name  string
		codec BytesToBytes
	}{
		{"gzip-1", must(NewGzip(1))},
		{"gzip-6", must(NewGzip(6))},
		{"zstd-1", must(NewZstd(1, false))},
		{"zstd-3-checksum", must(NewZstd(3, true))},
		{"zstd-19", must(NewZstd(19, false))},
		{"crc32c", NewCRC32C()},
	} {
		enc := must(tc.codec.Encode(nil, src))
		dst := make([]byte, 0, len(src))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.codec.Decode(dst[:0], enc, len(src)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
		})
	}
}

// BenchmarkEncode encodes the 1 MiB float32 chunk with each codec alone.
func BenchmarkEncode(b *testing.B) {
	src := benchChunk()
	repr2 := reprOf(dtype.TypeFloat32, 512, 512)
	b.Run("bytes-big", func(b *testing.B) {
		c := must(NewBytes(BigEndian))
		dst := make([]byte, 0, len(src))
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			dst, _ = c.Encode(dst[:0], src, repr2)
		}
	})
	b.Run("transpose-2d", func(b *testing.B) {
		tr := must(NewTranspose([]int{1, 0}))
		dst := make([]byte, len(src))
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			if err := tr.Encode(dst, src, repr2); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name  string
		codec BytesToBytes
	}{
		{"gzip-1", must(NewGzip(1))},
		{"gzip-6", must(NewGzip(6))},
		{"zstd-1", must(NewZstd(1, false))},
		{"zstd-3-checksum", must(NewZstd(3, true))},
		{"crc32c", NewCRC32C()},
	} {
		dst := make([]byte, 0, 2<<20)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = tc.codec.Encode(dst[:0], src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChainDecode decodes the 1 MiB chunk through whole chains, the
// first of which takes the zero-copy path (zstd writes into the output).
func BenchmarkChainDecode(b *testing.B) {
	src := benchChunk()
	repr := reprOf(dtype.TypeFloat32, 512, 512)
	for _, tc := range []struct{ name, js string }{
		{"bytes-zstd", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3,"checksum":false}}]`},
		{"bytes-big-gzip-crc32c", `[{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}},{"name":"crc32c"}]`},
		{"transpose-bytes-zstd", `[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3,"checksum":false}}]`},
	} {
		c := must(NewChain(specs(b, tc.js), repr))
		enc := must(c.Encode(nil, src))
		dst := make([]byte, len(src))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Decode(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
