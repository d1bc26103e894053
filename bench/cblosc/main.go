//go:build cblosc

// Command cblosc compares gozarr's pure-Go Blosc (codecs/blosc) with
// c-blosc 1.21 through cgo. It is built only with the cblosc tag and needs
// libblosc-dev (Debian: apt-get install libblosc-dev):
//
//	go run -tags cblosc ./bench/cblosc -fixtures codecs/blosc/testdata/cblosc
//	go run -tags cblosc ./bench/cblosc -check
//	go run -tags cblosc ./bench/cblosc -bench
//	go run -tags cblosc,czstd ./bench/cblosc -zstd
//	go run -tags cblosc ./bench/cblosc -place
//
// -fixtures writes c-blosc frames across cname x shuffle x typesize x
// clevel x size, with a manifest from which the inputs are regenerated
// (codecs/blosc/blosctest), for codecs/blosc's TestCBloscFixtures.
// -check compresses the same matrix with gozarr and decodes every frame
// with c-blosc. -bench times single-threaded decode and encode of both on
// the same buffers, and decode on two goroutines, and prints ratios
// (gozarr throughput / c-blosc throughput). -zstd (with the czstd tag and
// libzstd-dev) times the zstd frames inside a c-blosc zstd frame decoded
// alone by libzstd and by klauspost/compress/zstd. -place times decode plus
// placement of a chunked 2-D float32 array into its output on two cores
// (see place.go).
package main

/*
#cgo LDFLAGS: -lblosc
#include <stdlib.h>
#include <blosc.h>
#include <time.h>
static double thread_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
	"unsafe"

	"github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
)

// Fixture is one manifest entry; it must match the reader in
// codecs/blosc/cblosc_test.go.
type Fixture struct {
	Cname     string `json:"cname"`
	Clevel    int    `json:"clevel"`
	Shuffle   int    `json:"shuffle"`
	Typesize  int    `json:"typesize"`
	Blocksize int    `json:"blocksize"`
	Kind      int    `json:"kind"`
	N         int    `json:"n"`
	Seed      uint64 `json:"seed"`
	Offset    int    `json:"offset"` // of the frame in frames.bin
	Length    int    `json:"length"`
}

func (f Fixture) data() []byte {
	return blosctest.Data(blosctest.Kind(f.Kind), f.N, f.Typesize, f.Seed)
}

var cnames = []string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}

// matrix lists the fixture cases.
func matrix() []Fixture {
	var fs []Fixture
	add := func(f Fixture) {
		f.Seed = uint64(len(fs) + 1)
		fs = append(fs, f)
	}
	for _, cn := range cnames {
		for sh := 0; sh <= 2; sh++ {
			for _, ts := range []int{1, 2, 3, 4, 8, 16} {
				for _, cl := range []int{0, 1, 5, 9} {
					for _, n := range []int{0, 1, 1001} {
						add(Fixture{Cname: cn, Clevel: cl, Shuffle: sh, Typesize: ts, N: n})
					}
				}
			}
			// Below and above one block (clevel 1 has the smallest blocks).
			add(Fixture{Cname: cn, Clevel: 1, Shuffle: sh, Typesize: 4, N: 70001, Kind: int(blosctest.Ramp)})
			if sh == 1 {
				add(Fixture{Cname: cn, Clevel: 1, Shuffle: sh, Typesize: 3, N: 70001, Kind: int(blosctest.Ramp)})
			}
			add(Fixture{Cname: cn, Clevel: 1, Shuffle: sh, Typesize: 8, N: 40000, Kind: int(blosctest.Walk)})
			// A forced block size with a short last block.
			add(Fixture{Cname: cn, Clevel: 3, Shuffle: sh, Typesize: 4, N: 20003, Blocksize: 2048, Kind: int(blosctest.Ramp)})
		}
	}
	// Several MiB, for a few combinations.
	add(Fixture{Cname: "lz4", Clevel: 5, Shuffle: 1, Typesize: 4, N: 3<<20 + 12, Kind: int(blosctest.Ramp)})
	add(Fixture{Cname: "zstd", Clevel: 5, Shuffle: 2, Typesize: 8, N: 3<<20 + 8, Kind: int(blosctest.Ramp)})
	add(Fixture{Cname: "blosclz", Clevel: 9, Shuffle: 1, Typesize: 2, N: 5<<20 + 1, Kind: int(blosctest.Ramp)})
	return fs
}

func ccompress(src []byte, cname string, clevel, shuffle, ts, blocksize int) []byte {
	dst := make([]byte, len(src)+C.BLOSC_MAX_OVERHEAD)
	in := src
	if len(in) == 0 {
		in = []byte{0}
	}
	cs := C.CString(cname)
	defer C.free(unsafe.Pointer(cs))
	n := C.blosc_compress_ctx(C.int(clevel), C.int(shuffle), C.size_t(ts), C.size_t(len(src)),
		unsafe.Pointer(&in[0]), unsafe.Pointer(&dst[0]), C.size_t(len(dst)), cs, C.size_t(blocksize), 1)
	if n <= 0 {
		log.Fatalf("blosc_compress_ctx(%s, %d, %d, %d, n=%d) = %d", cname, clevel, shuffle, ts, len(src), n)
	}
	return dst[:n]
}

func cdecompress(dst, frame []byte, nthreads int) int {
	if len(dst) == 0 {
		dst = []byte{0}[:0:1]
	}
	var nb C.size_t
	if C.blosc_cbuffer_validate(unsafe.Pointer(&frame[0]), C.size_t(len(frame)), &nb) != 0 {
		return -100
	}
	return int(C.blosc_decompress_ctx(unsafe.Pointer(&frame[0]), unsafe.Pointer(&dst[:1][0]), C.size_t(cap(dst)), C.int(nthreads)))
}

func writeFixtures(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var all bytes.Buffer
	fs := matrix()
	for i := range fs {
		f := &fs[i]
		frame := ccompress(f.data(), f.Cname, f.Clevel, f.Shuffle, f.Typesize, f.Blocksize)
		f.Offset, f.Length = all.Len(), len(frame)
		all.Write(frame)
	}
	// One frame per line keeps the manifest small and diffable.
	var man bytes.Buffer
	fmt.Fprintf(&man, "{\"generator\": %q,\n\"frames\": [\n", "c-blosc "+C.GoString(C.blosc_get_version_string())+" via bench/cblosc")
	for i, f := range fs {
		b, _ := json.Marshal(f)
		man.Write(b)
		if i < len(fs)-1 {
			man.WriteString(",")
		}
		man.WriteString("\n")
	}
	man.WriteString("]}\n")
	must(os.WriteFile(filepath.Join(dir, "frames.bin"), all.Bytes(), 0o644))
	must(os.WriteFile(filepath.Join(dir, "manifest.json"), man.Bytes(), 0o644))
	fmt.Printf("wrote %d frames, %d bytes of frames, to %s\n", len(fs), all.Len(), dir)
}

// check compresses the fixture matrix with gozarr and decodes each frame
// with c-blosc, and compares the total sizes of both.
func check() {
	fail := 0
	var gsize, csize int
	for _, f := range matrix() {
		src := f.data()
		g, err := blosc.Compress(nil, src, blosc.Options{Cname: f.Cname, Clevel: f.Clevel, Shuffle: blosc.Shuffle(f.Shuffle), Typesize: f.Typesize, Blocksize: f.Blocksize})
		must(err)
		c := ccompress(src, f.Cname, f.Clevel, f.Shuffle, f.Typesize, f.Blocksize)
		gsize += len(g)
		csize += len(c)
		out := make([]byte, len(src))
		n := cdecompress(out, g, 1)
		if n != len(src) || !bytes.Equal(out[:max(n, 0)], src) {
			fail++
			fmt.Printf("FAIL %+v: c-blosc decoded %d bytes of %d\n", f, n, len(src))
		}
	}
	fmt.Printf("gozarr frames decoded by c-blosc %s: %d of %d failed; total size gozarr %d bytes, c-blosc %d bytes (%.3fx)\n",
		C.GoString(C.blosc_get_version_string()), fail, len(matrix()), gsize, csize, float64(gsize)/float64(csize))
	if fail > 0 {
		os.Exit(1)
	}
}

// rate runs op repeatedly for about d of CPU time on one locked OS thread
// and returns bytes per CPU second. Thread CPU time, not wall time, is
// measured because the machine is shared: time spent waiting for a core
// does not count, so results do not depend on the other load (much).
func rate(nbytes int, d time.Duration, op func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	op()
	iters := 0
	start := float64(C.thread_cpu())
	var el float64
	for el < d.Seconds() {
		op()
		iters++
		el = float64(C.thread_cpu()) - start
	}
	return float64(nbytes) * float64(iters) / el
}

// best alternates the two measurements rounds times and keeps the best of
// each (the machine is shared, so the best run is the least disturbed).
func best(rounds int, a, b func() float64) (float64, float64) {
	var ba, bb float64
	for range rounds {
		ba = max(ba, a())
		bb = max(bb, b())
	}
	return ba, bb
}

func bench(size int, rounds int, d time.Duration, only *regexp.Regexp) {
	fmt.Printf("c-blosc %s vs gozarr, %d-byte buffers, best of %d rounds of %v CPU time each (GB/s per core; 2core = sum over two goroutines on their own threads; ratio = gozarr/c-blosc)\n",
		C.GoString(C.blosc_get_version_string()), size, rounds, d)
	type bc struct {
		name         string
		cname        string
		clevel, shuf int
		ts           int
		kind         blosctest.Kind
	}
	cases := []bc{
		{"lz4 shuffle float32", "lz4", 5, 1, 4, blosctest.Float32},
		{"zstd shuffle float32", "zstd", 5, 1, 4, blosctest.Float32},
		{"lz4 bitshuffle float32", "lz4", 5, 2, 4, blosctest.Float32},
		{"blosclz shuffle float32", "blosclz", 5, 1, 4, blosctest.Float32},
		{"zlib shuffle float32", "zlib", 5, 1, 4, blosctest.Float32},
		{"lz4 shuffle int64 walk", "lz4", 5, 1, 8, blosctest.Walk},
		{"lz4 noshuffle float32", "lz4", 5, 0, 4, blosctest.Float32},
	}
	fmt.Printf("%-26s %7s %7s | %8s %8s %6s | %8s %8s %6s | %8s %8s %6s\n", "case", "c ratio", "g ratio",
		"dec C", "dec Go", "ratio", "2core C", "2core Go", "ratio", "enc C", "enc Go", "ratio")
	for _, c := range cases {
		if only != nil && !only.MatchString(c.name) {
			continue
		}
		src := blosctest.Data(c.kind, size, c.ts, 42)
		frame := ccompress(src, c.cname, c.clevel, c.shuf, c.ts, 0)
		opts := blosc.Options{Cname: c.cname, Clevel: c.clevel, Shuffle: blosc.Shuffle(c.shuf), Typesize: c.ts}
		gframe, err := blosc.Compress(nil, src, opts)
		must(err)
		out := make([]byte, len(src))
		if n := cdecompress(out, frame, 1); n != len(src) {
			log.Fatalf("%s: c-blosc decode %d", c.name, n)
		}
		got, err := blosc.Decompress(out[:0], frame, len(src))
		must(err)
		if !bytes.Equal(got, src) {
			log.Fatalf("%s: gozarr decode differs", c.name)
		}
		decC, decG := best(rounds,
			func() float64 { return rate(len(src), d, func() { cdecompress(out, frame, 1) }) },
			func() float64 { return rate(len(src), d, func() { blosc.Decompress(out[:0], frame, len(src)) }) })
		// Two goroutines, each decoding its own buffer (one per core).
		two := func(dec func(out []byte)) float64 {
			outs := [2][]byte{make([]byte, len(src)), make([]byte, len(src))}
			var wg sync.WaitGroup
			var rates [2]float64
			for k := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rates[k] = rate(len(src), d, func() { dec(outs[k]) })
				}()
			}
			wg.Wait()
			return rates[0] + rates[1]
		}
		par2C, par2G := best(rounds,
			func() float64 { return two(func(o []byte) { cdecompress(o, frame, 1) }) },
			func() float64 { return two(func(o []byte) { blosc.Decompress(o[:0], frame, len(src)) }) })
		encBuf := make([]byte, 0, len(src)+blosc.HeaderSize)
		encC, encG := best(rounds,
			func() float64 {
				return rate(len(src), d, func() { ccompress(src, c.cname, c.clevel, c.shuf, c.ts, 0) })
			},
			func() float64 { return rate(len(src), d, func() { blosc.Compress(encBuf[:0], src, opts) }) })
		gb := func(x float64) float64 { return x / 1e9 }
		fmt.Printf("%-26s %7.2f %7.2f | %8.2f %8.2f %6.2f | %8.2f %8.2f %6.2f | %8.3f %8.3f %6.2f\n", c.name,
			float64(len(src))/float64(len(frame)), float64(len(src))/float64(len(gframe)),
			gb(decC), gb(decG), decG/decC, gb(par2C), gb(par2G), par2G/par2C, gb(encC), gb(encG), encG/encC)
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func main() {
	fixtures := flag.String("fixtures", "", "write c-blosc fixtures into this directory")
	doCheck := flag.Bool("check", false, "check that c-blosc decodes gozarr's frames")
	doBench := flag.Bool("bench", false, "benchmark gozarr against c-blosc")
	size := flag.Int("size", 4<<20, "benchmark buffer size")
	rounds := flag.Int("rounds", 5, "benchmark rounds (best kept)")
	dur := flag.Duration("d", 300*time.Millisecond, "duration of one benchmark measurement")
	casesRE := flag.String("cases", "", "benchmark only the cases whose name matches this regexp")
	doZstd := flag.Bool("zstd", false, "time the zstd frames inside a c-blosc zstd frame with libzstd and klauspost/compress (needs -tags cblosc,czstd and libzstd-dev)")
	doPlace := flag.Bool("place", false, "time decode plus placement of a chunked 2-D float32 array on two cores, gozarr vs c-blosc")
	side := flag.Int("side", 4096, "-place: side of the square float32 array")
	chunkSide := flag.Int("chunk", 512, "-place: side of the square chunks")
	placeRounds := flag.Int("place-rounds", 30, "-place: timed passes over the array per implementation (best kept)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	var only *regexp.Regexp
	if *casesRE != "" {
		only = regexp.MustCompile(*casesRE)
	}
	C.blosc_init()
	defer C.blosc_destroy()
	if *fixtures != "" {
		writeFixtures(*fixtures)
	}
	if *doCheck {
		check()
	}
	if *doBench {
		bench(*size, *rounds, *dur, only)
	}
	if *doZstd {
		zstdCompare(*size, *rounds, *dur)
	}
	if *doPlace {
		place(*side, *chunkSide, *placeRounds)
	}
	if *fixtures == "" && !*doCheck && !*doBench && !*doZstd && !*doPlace {
		flag.Usage()
	}
}
