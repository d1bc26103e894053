package pipeline_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"

	_ "github.com/gozarr/gozarr/codecs/blosc"
)

// Benchmarks of whole-array reads and writes through the pipeline, on a
// 2048×2048 float32 array (16 MiB; a smooth field plus noise quantised to
// 1/64, which zstd level 1 compresses about 2×) stored in a temporary
// directory (page cache warm). The full suite with baselines and peers is
// `go run ./bench`; these are for profiling:
//
//	go test ./pipeline -run '^$' -bench 'ReadAll/zstd-sharded' -cpuprofile cpu.out -memprofile mem.out

const benchN = 2048

// benchLayouts are the stored layouts: name → codecs JSON.
var benchLayouts = []struct{ name, chunk, codecs string }{
	{"none", "256", `[{"name": "bytes", "configuration": {"endian": "little"}}]`},
	{"none-sharded", "1024", sharded(`{"name": "bytes", "configuration": {"endian": "little"}}`)},
	{"zstd", "256", `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]`},
	{"zstd-sharded", "1024", sharded(`{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}`)},
	{"blosc-sharded", "1024", sharded(`{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}`)},
}

func sharded(inner string) string {
	return `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [256, 256], "codecs": [` + inner +
		`], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]`
}

func benchMeta(tb testing.TB, chunk, codecs string) *zarr.ArrayMetadata {
	doc := fmt.Sprintf(`{"zarr_format": 3, "node_type": "array", "shape": [%d, %d], "data_type": "float32",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [%s, %s]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0.0, "codecs": %s}`, benchN, benchN, chunk, chunk, codecs)
	m, err := zarr.ParseArrayMetadata([]byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// benchData returns the field, little-endian float32.
var benchData = sync.OnceValue(func() []byte {
	out := make([]byte, benchN*benchN*4)
	x := uint64(1)
	for i := range benchN {
		for j := range benchN {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v := 100*math.Sin(6*math.Pi*float64(i)/benchN)*math.Cos(4*math.Pi*float64(j)/benchN) + 0.5*(float64(x>>11)/(1<<53)-0.5)
			binary.LittleEndian.PutUint32(out[4*(i*benchN+j):], math.Float32bits(float32(math.Round(v*64)/64)))
		}
	}
	return out
})

var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchArray returns the stored array of a layout, writing it on first use.
func benchArray(b *testing.B, i int) *zarr.Array {
	ctx := context.Background()
	if benchDir == "" {
		d, err := os.MkdirTemp("", "gozarr-pipeline-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	l := benchLayouts[i]
	dir := filepath.Join(benchDir, l.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	st, err := fs.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	if a, err := zarr.OpenArray(ctx, st, ""); err == nil {
		return a
	}
	a, err := zarr.CreateArray(ctx, st, "", benchMeta(b, l.chunk, l.codecs))
	if err != nil {
		b.Fatal(err)
	}
	if err := a.WriteBytes(ctx, benchData()); err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkReadAll reads the whole array into one caller's buffer.
func BenchmarkReadAll(b *testing.B) {
	ctx := context.Background()
	for i, l := range benchLayouts {
		b.Run(l.name, func(b *testing.B) {
			a := benchArray(b, i)
			out := make([]byte, benchN*benchN*4)
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := a.ReadBytesInto(ctx, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadChunk reads one inner-chunk-sized region per op.
func BenchmarkReadChunk(b *testing.B) {
	ctx := context.Background()
	for i, l := range benchLayouts {
		b.Run(l.name, func(b *testing.B) {
			a := benchArray(b, i)
			out := make([]byte, 256*256*4)
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				r, c := (k/8%8)*256, (k%8)*256
				k++
				if err := a.ReadBytesInto(ctx, out, nd.Range(r, r+256), nd.Range(c, c+256)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteAll writes the whole array.
func BenchmarkWriteAll(b *testing.B) {
	ctx := context.Background()
	for i, l := range benchLayouts {
		b.Run(l.name, func(b *testing.B) {
			a := benchArray(b, i)
			data := benchData()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := a.WriteBytes(ctx, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkZstdDecodeOnly is the codec-only baseline of ReadAll/zstd: the
// same chunk files decoded with klauspost/compress on GOMAXPROCS
// goroutines, each with its own decoder and scratch buffer. "exact" decodes
// into a buffer of exactly the chunk's size (as decoding straight into an
// output does), "slack" into one with 128 KiB + 64 bytes to spare, which
// lets the decoder use its fast copies for the last block too.
func BenchmarkZstdDecodeOnly(b *testing.B) {
	for _, c := range []struct {
		name  string
		slack int
	}{{"exact", 0}, {"slack", 128<<10 + 64}} {
		b.Run(c.name, func(b *testing.B) { benchZstdDecodeOnly(b, c.slack) })
	}
}

func benchZstdDecodeOnly(b *testing.B, slack int) {
	benchArray(b, 2)
	var chunks [][]byte
	err := filepath.WalkDir(filepath.Join(benchDir, "zstd", "c"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			c, err := os.ReadFile(p)
			chunks = append(chunks, c)
			return err
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	threads := runtime.GOMAXPROCS(0)
	decs := make([]*zstd.Decoder, threads)
	for t := range decs {
		if decs[t], err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(benchN * benchN * 4)
	b.ReportAllocs()
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for t := range threads {
			wg.Go(func() {
				buf := make([]byte, 0, 256*256*4+slack)
				for {
					i := next.Add(1) - 1
					if i >= int64(len(chunks)) {
						return
					}
					if _, err := decs[t].DecodeAll(chunks[i], buf[:0]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}
