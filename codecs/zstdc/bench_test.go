package zstdc_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/zstdc"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// Per-core decode and encode of zstd frames of the benchmark suite's data
// (a smooth float32 field plus quantised noise, as bench/ and the pipeline
// benchmarks make it), libzstd against klauspost/compress in the same run,
// and a whole-array read with either:
//
//	go test ./... -run '^$' -bench . -cpu 1

// field returns n bytes of the benchmark field.
func field(n int) []byte {
	out := make([]byte, n)
	side := int(math.Sqrt(float64(n / 4)))
	x := uint64(1)
	for k := 0; k+4 <= n; k += 4 {
		i, j := (k/4)/side, (k/4)%side
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := 100*math.Sin(6*math.Pi*float64(i)/2048)*math.Cos(4*math.Pi*float64(j)/2048) + 0.5*(float64(x>>11)/(1<<53)-0.5)
		binary.LittleEndian.PutUint32(out[k:], math.Float32bits(float32(math.Round(v*64)/64)))
	}
	return out
}

var sizes = []int{64 << 10, 256 << 10, 1 << 20, 4 << 20}

// pair times op with the pure-Go codec and with libzstd alternately in one
// loop (on a shared machine the speed drifts; a ratio of neighbours does
// not), on a locked thread by that thread's CPU time (on a loaded machine
// wall time counts the other processes' turns), and reports each one's
// MB/s and x-libzstd, the pure-Go time over the libzstd time; wall-x is
// the same ratio in wall time.
func pair(b *testing.B, n int, op func(c codecs.BytesToBytes) error, pure, lib codecs.BytesToBytes) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var tPure, tLib, wPure, wLib time.Duration
	b.SetBytes(int64(2 * n))
	b.ReportAllocs()
	ops := 0
	for b.Loop() {
		t0, c0 := time.Now(), cputime.Thread()
		if err := op(pure); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cputime.Thread()
		if err := op(lib); err != nil {
			b.Fatal(err)
		}
		wPure += t1.Sub(t0)
		wLib += time.Since(t1)
		tPure += c1 - c0
		tLib += cputime.Thread() - c1
		ops++
	}
	if tPure == 0 || tLib == 0 { // no thread CPU time on this platform
		tPure, tLib = wPure, wLib
	}
	b.ReportMetric(float64(n)*float64(ops)/tPure.Seconds()/1e6, "MB/s-klauspost")
	b.ReportMetric(float64(n)*float64(ops)/tLib.Seconds()/1e6, "MB/s-libzstd")
	b.ReportMetric(float64(tPure)/float64(tLib), "x-libzstd")
	b.ReportMetric(float64(wPure)/float64(wLib), "wall-x")
}

// BenchmarkDecode decodes frames of our chunks into a buffer with room,
// on one goroutine: frames written by gozarr's pure-Go encoder at level 1
// (as bench/'s arrays are) and by libzstd at level 1 (as zarr-python's and
// this module's are): the decoder's speed depends on how the frame was
// made (block sizes, literal and sequence encodings).
func BenchmarkDecode(b *testing.B) {
	pure, _ := codecs.NewZstd(1, false)
	lib, _ := zstdc.New(1, false)
	for _, writer := range []struct {
		name string
		enc  codecs.BytesToBytes
	}{{"klauspost-frames", pure}, {"libzstd-frames", lib}} {
		for _, n := range sizes {
			src := field(n)
			frame, err := writer.enc.Encode(nil, src)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dKiB", writer.name, n>>10), func(b *testing.B) {
				dst := make([]byte, 0, n+codecs.DecodeSlack)
				pair(b, n, func(c codecs.BytesToBytes) error {
					_, err := c.Decode(dst, frame, n)
					return err
				}, pure, lib)
			})
		}
	}
}

// BenchmarkEncode encodes the field at libzstd levels 1 and 3 (each
// codec's own reading of the level), on one goroutine.
func BenchmarkEncode(b *testing.B) {
	for _, level := range []int{1, 3} {
		pure, _ := codecs.NewZstd(level, false)
		lib, _ := zstdc.New(level, false)
		for _, n := range sizes {
			src := field(n)
			b.Run(fmt.Sprintf("level%d/%dKiB", level, n>>10), func(b *testing.B) {
				dst := make([]byte, 0, n+n/8+1024)
				pair(b, n, func(c codecs.BytesToBytes) error {
					_, err := c.Encode(dst, src)
					return err
				}, pure, lib)
			})
		}
	}
}

// BenchmarkReadAll reads a 2048² float32 array (16 MiB) in shards of
// 1024² of 256² zstd level-1 inner chunks, held in memory, with the
// pure-Go codec and with libzstd, alternately in one loop: x-libzstd is
// the pure-Go time over the libzstd time (cpu-x-libzstd: in CPU time of
// the process). In the same loop each codec alone decodes the array's 64
// inner-chunk frames (the same bytes: libzstd's level-1 frames of the
// same tiles) on one goroutine: codec-x-libzstd is that ratio in CPU
// time, and of-codec the read's ratio over the codec's — the share of
// libzstd's speed the read keeps (1: all of it).
func BenchmarkReadAll(b *testing.B) {
	ctx := context.Background()
	const n = 2048
	st := mem.New()
	doc := fmt.Sprintf(`{"zarr_format": 3, "node_type": "array", "shape": [%d, %d], "data_type": "float32",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024, 1024]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,
		"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [256, 256],
			"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]}`, n, n)
	m, err := zarr.ParseArrayMetadata([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	lib, err := zarr.CreateArray(ctx, st, "a", m)
	if err != nil {
		b.Fatal(err)
	}
	data := field(n * n * 4)
	if err := lib.WriteBytes(ctx, data); err != nil {
		b.Fatal(err)
	}
	// The same array with the pure-Go codec: registered for the open only.
	libFactory, _ := codecs.Lookup("zstd")
	codecs.Replace("zstd", func(cfg json.RawMessage) (codecs.Codec, error) {
		c, err := libFactory(cfg)
		if err != nil {
			return nil, err
		}
		return c.(*zstdc.Zstd).Zstd, nil
	})
	pure, err := zarr.OpenArray(ctx, st, "a")
	codecs.Replace("zstd", libFactory)
	if err != nil {
		b.Fatal(err)
	}
	// The inner chunks' frames, encoded as the write encoded them.
	const inner = 256
	var frames [][]byte
	tile := make([]byte, inner*inner*4)
	libCodec, _ := zstdc.New(1, false)
	for i0 := 0; i0 < n; i0 += inner {
		for j0 := 0; j0 < n; j0 += inner {
			for i := range inner {
				copy(tile[i*inner*4:(i+1)*inner*4], data[((i0+i)*n+j0)*4:])
			}
			f, err := libCodec.Encode(nil, tile)
			if err != nil {
				b.Fatal(err)
			}
			frames = append(frames, f)
		}
	}
	scratch := make([]byte, len(tile)+codecs.DecodeSlack)
	decodeAll := func(c *codecs.Chain) {
		for _, f := range frames {
			if err := c.Decode(scratch[:len(tile)], f); err != nil {
				b.Fatal(err)
			}
		}
	}
	out := make([]byte, len(data))
	var tPure, tLib, cPure, cLib, dPure, dLib time.Duration
	b.SetBytes(int64(2 * len(data)))
	b.ReportAllocs()
	for b.Loop() {
		t0, c0 := time.Now(), cputime.Process()
		if err := pure.ReadBytesInto(ctx, out); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cputime.Process()
		if err := lib.ReadBytesInto(ctx, out); err != nil {
			b.Fatal(err)
		}
		tPure += t1.Sub(t0)
		tLib += time.Since(t1)
		cPure += c1 - c0
		c2 := cputime.Process()
		cLib += c2 - c1
		decodeAll(pure.Sharding().Inner())
		c3 := cputime.Process()
		decodeAll(lib.Sharding().Inner())
		dPure += c3 - c2
		dLib += cputime.Process() - c3
	}
	b.ReportMetric(float64(tPure)/float64(tLib), "x-libzstd")
	if cLib > 0 && dLib > 0 {
		b.ReportMetric(float64(cPure)/float64(cLib), "cpu-x-libzstd")
		b.ReportMetric(float64(dPure)/float64(dLib), "codec-x-libzstd")
		b.ReportMetric(float64(cPure)/float64(cLib)/(float64(dPure)/float64(dLib)), "of-codec")
	}
}
