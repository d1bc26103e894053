package pcodec

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/klauspost/compress/zstd"
)

// f64Columns are float64 columns of the kinds pcodec is meant for: a
// smooth walk (sensor readings), standard normal noise, and prices in
// cents (decimals).
func f64Columns(n int) map[string][]byte {
	rng := rand.New(rand.NewPCG(11, 12))
	walk := make([]byte, 8*n)
	normal := make([]byte, 8*n)
	cents := make([]byte, 8*n)
	x := 100.0
	for i := range n {
		x += rng.NormFloat64() * 0.01
		putF64(walk[8*i:], x)
		putF64(normal[8*i:], rng.NormFloat64())
		putF64(cents[8*i:], float64(rng.IntN(100000))*0.01)
	}
	return map[string][]byte{"walk": walk, "normal": normal, "cents": cents}
}

func putF64(b []byte, f float64) {
	u := math.Float64bits(f)
	for i := range 8 {
		b[i] = byte(u >> (8 * i))
	}
}

const benchN = 1 << 18

// BenchmarkDecodeF64 decodes 2^18 float64 (one numcodecs page, 2 MiB)
// with pcodec and, on the same data in the same loop, zstd (level 3, the
// Zarr default), timing each by this thread's CPU time, so that a shared
// machine's load does not count: cpuMB/s is output per second of one
// core; x-zstd is pcodec's decode speed over zstd's; ratio and zstd-ratio
// are the compression ratios (raw / encoded).
func BenchmarkDecodeF64(b *testing.B) {
	zenc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	zdec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer zdec.Close()
	for _, name := range []string{"walk", "normal", "cents"} {
		raw := f64Columns(benchN)[name]
		enc, err := Compress(nil, raw, F64, DefaultEncodeOptions())
		if err != nil {
			b.Fatal(err)
		}
		zc := zenc.EncodeAll(raw, nil)
		dst := make([]byte, len(raw))
		zdst := make([]byte, 0, len(raw))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var tp, tz time.Duration
			for b.Loop() {
				t0 := cputime.Thread()
				if err := Decompress(dst, enc, F64); err != nil {
					b.Fatal(err)
				}
				t1 := cputime.Thread()
				if _, err := zdec.DecodeAll(zc, zdst[:0]); err != nil {
					b.Fatal(err)
				}
				tz += cputime.Thread() - t1
				tp += t1 - t0
			}
			if tp > 0 && tz > 0 {
				b.ReportMetric(float64(len(raw))*float64(b.N)/tp.Seconds()/1e6, "cpuMB/s")
				b.ReportMetric(float64(len(raw))*float64(b.N)/tz.Seconds()/1e6, "zstd-cpuMB/s")
				b.ReportMetric(tz.Seconds()/tp.Seconds(), "x-zstd")
			}
			b.ReportMetric(float64(len(raw))/float64(len(enc)), "ratio")
			b.ReportMetric(float64(len(raw))/float64(len(zc)), "zstd-ratio")
		})
	}
	zenc.Close()
}

// BenchmarkEncodeF64 encodes the same columns (cpuMB/s of input per
// second of one core).
func BenchmarkEncodeF64(b *testing.B) {
	for _, name := range []string{"walk", "normal", "cents"} {
		raw := f64Columns(benchN)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var out []byte
			t0 := cputime.Thread()
			for b.Loop() {
				out, _ = Compress(out[:0], raw, F64, DefaultEncodeOptions())
			}
			if el := cputime.Thread() - t0; el > 0 {
				b.ReportMetric(float64(len(raw))*float64(b.N)/el.Seconds()/1e6, "cpuMB/s")
			}
		})
	}
}
