//go:build cinflate

// Command cinflate compares gozarr's whole-buffer DEFLATE decoder
// (internal/inflate) with C zlib and libdeflate through cgo, and with
// klauspost/compress and the standard library. It is built only with the
// cinflate tag and needs zlib1g-dev and libdeflate-dev (Debian: apt-get
// install zlib1g-dev libdeflate-dev):
//
//	taskset -c 0 go run -tags cinflate ./bench/cinflate
//	taskset -c 0 go run -tags cinflate,purego ./bench/cinflate
//
// The inputs are the benchmark's data (go run ./bench: a 512x512 float32
// inner chunk of its field, gzip level 1 as the gzip codec writes it), the
// same chunk zlib-compressed by C zlib at levels 1 and 6 (as numcodecs and
// zarr-python write v2 zlib arrays), text-like data and random data.
// Every decoder decodes every input once per round, checked against the
// original, rounds interleaved; the figure of each is the median over the
// rounds of bytes per thread-CPU second (the machine is shared: time spent
// waiting for a core does not count). Ratios are against C zlib and
// libdeflate in the same run.
package main

/*
#cgo LDFLAGS: -lz -ldeflate
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <libdeflate.h>

static double thread_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// zlib_inflate decodes a whole stream with windowBits wbits (15 zlib,
// -15 raw, 31 gzip) into out; it returns the bytes written or -1.
static long zlib_inflate(z_stream *z, int wbits, unsigned char *in, size_t inlen, unsigned char *out, size_t outlen) {
	if (z->state == NULL) {
		memset(z, 0, sizeof *z);
		if (inflateInit2(z, wbits) != Z_OK) return -1;
	} else if (inflateReset2(z, wbits) != Z_OK) {
		return -1;
	}
	z->next_in = in; z->avail_in = inlen;
	z->next_out = out; z->avail_out = outlen;
	int r = inflate(z, Z_FINISH);
	long n = (long)(outlen - z->avail_out);
	z->next_in = NULL; z->next_out = NULL;
	return r == Z_STREAM_END ? n : -1;
}

static long zlib_compress(int level, unsigned char *in, size_t inlen, unsigned char *out, size_t outlen) {
	uLongf n = outlen;
	if (compress2(out, &n, in, inlen, level) != Z_OK) return -1;
	return (long)n;
}

// deflate_kind: 0 raw, 1 zlib, 2 gzip.
static long ld_decompress(struct libdeflate_decompressor *d, int kind, unsigned char *in, size_t inlen, unsigned char *out, size_t outlen) {
	size_t n = 0;
	enum libdeflate_result r;
	switch (kind) {
	case 0: r = libdeflate_deflate_decompress(d, in, inlen, out, outlen, &n); break;
	case 1: r = libdeflate_zlib_decompress(d, in, inlen, out, outlen, &n); break;
	default: r = libdeflate_gzip_decompress(d, in, inlen, out, outlen, &n); break;
	}
	return r == LIBDEFLATE_SUCCESS ? (long)n : -1;
}
*/
import "C"

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"
	"unsafe"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/inflate"
	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"
)

// Framings.
const (
	raw = iota
	zlibF
	gzipF
)

// input is one compressed buffer and what it decodes to.
type input struct {
	name string
	kind int
	data []byte
	src  []byte
}

// decoder decodes src into out (len(out) is the decoded size) and
// returns the bytes written.
type decoder struct {
	name string
	dec  func(in input, out []byte) int
}

func main() {
	rounds := flag.Int("rounds", 9, "interleaved rounds (the figure is their median)")
	dur := flag.Duration("d", 300*time.Millisecond, "CPU time per decoder, input and round")
	profile := flag.String("cpuprofile", "", "write a CPU profile of -profile-input decoded by inflate to this file, and exit")
	pin := flag.Int("profile-input", 1, "the input (0-based) -cpuprofile decodes")
	dump := flag.String("dump", "", "write each input's compressed stream to this directory (input0.z ...), and exit")
	flag.Parse()

	field := benchField(512, 4096, 42)
	text, rnd := textLike(1<<20), randomBytes(1<<20)
	g1, err := mustGzip(1).Encode(nil, field)
	must(err)
	inputs := []input{
		{name: "bench gzip-1 inner chunk (float32 512²)", kind: gzipF, data: field, src: g1},
		{name: "float32 512², C zlib level 1", kind: zlibF, data: field, src: czlib(field, 1)},
		{name: "float32 512², C zlib level 6", kind: zlibF, data: field, src: czlib(field, 6)},
		{name: "text 1 MiB, C zlib level 6", kind: zlibF, data: text, src: czlib(text, 6)},
		{name: "random 1 MiB, C zlib level 6", kind: zlibF, data: rnd, src: czlib(rnd, 6)},
	}
	if *dump != "" {
		for i, in := range inputs {
			must(os.WriteFile(filepath.Join(*dump, fmt.Sprintf("input%d.z", i)), in.src, 0o644))
		}
		return
	}
	decs := decoders()
	if *profile != "" {
		f, err := os.Create(*profile)
		must(err)
		must(pprof.StartCPUProfile(f))
		in := inputs[*pin]
		out := make([]byte, len(in.data))
		rate(len(in.data), 10*(*dur), func() { decs[0].dec(in, out) })
		pprof.StopCPUProfile()
		must(f.Close())
		return
	}
	fmt.Printf("inflate (%s) vs C zlib %s and libdeflate; one thread, median of %d interleaved rounds of %v CPU time; GB/s per CPU second\n",
		inflate.Kernel, C.GoString(C.zlibVersion()), *rounds, *dur)
	for _, in := range inputs {
		out := make([]byte, len(in.data))
		rates := make([][]float64, len(decs))
		for _, d := range decs {
			clear(out)
			if n := d.dec(in, out); n != len(in.data) || !bytes.Equal(out, in.data) {
				log.Fatalf("%s: %s decodes wrongly (%d bytes)", in.name, d.name, n)
			}
		}
		for range *rounds {
			for i, d := range decs {
				rates[i] = append(rates[i], rate(len(in.data), *dur, func() { d.dec(in, out) }))
			}
		}
		med := make([]float64, len(decs))
		for i := range decs {
			med[i] = median(rates[i])
		}
		fmt.Printf("\n%s: %d -> %d bytes (%.2fx)\n", in.name, len(in.src), len(in.data), float64(len(in.data))/float64(len(in.src)))
		zl, ld := med[len(decs)-2], med[len(decs)-1]
		for i, d := range decs {
			fmt.Printf("  %-12s %6.3f GB/s  %5.2fx C zlib  %5.2fx libdeflate\n", d.name, med[i]/1e9, med[i]/zl, med[i]/ld)
		}
	}
}

func decoders() []decoder {
	// C memory: the stream keeps pointers into the buffers between calls.
	z := (*C.z_stream)(C.calloc(1, C.size_t(unsafe.Sizeof(C.z_stream{}))))
	ld := C.libdeflate_alloc_decompressor()
	var (
		br  bytes.Reader
		kzr io.ReadCloser
		kgr kgzip.Reader
		szr io.ReadCloser
		sgr gzip.Reader
	)
	readAll := func(r io.Reader, out []byte) int {
		n, err := io.ReadFull(r, out)
		must(err)
		return n
	}
	return []decoder{
		{"inflate", func(in input, out []byte) int {
			var got []byte
			var err error
			if in.kind == gzipF {
				got, err = inflate.Gzip(out[:0], in.src, len(out))
			} else {
				got, err = inflate.Zlib(out[:0], in.src, len(out))
			}
			must(err)
			return len(got)
		}},
		{"klauspost", func(in input, out []byte) int {
			br.Reset(in.src)
			if in.kind == gzipF {
				must(kgr.Reset(&br))
				return readAll(&kgr, out)
			}
			var err error
			if kzr == nil {
				kzr, err = kzlib.NewReader(&br)
			} else {
				err = kzr.(kzlib.Resetter).Reset(&br, nil)
			}
			must(err)
			return readAll(kzr, out)
		}},
		{"stdlib", func(in input, out []byte) int {
			br.Reset(in.src)
			if in.kind == gzipF {
				must(sgr.Reset(&br))
				return readAll(&sgr, out)
			}
			var err error
			if szr == nil {
				szr, err = zlib.NewReader(&br)
			} else {
				err = szr.(zlib.Resetter).Reset(&br, nil)
			}
			must(err)
			return readAll(szr, out)
		}},
		{"C zlib", func(in input, out []byte) int {
			wbits := C.int(15)
			if in.kind == gzipF {
				wbits = 31
			}
			return int(C.zlib_inflate(z, wbits, cbytes(in.src), C.size_t(len(in.src)), cbytes(out), C.size_t(len(out))))
		}},
		{"libdeflate", func(in input, out []byte) int {
			return int(C.ld_decompress(ld, C.int(in.kind), cbytes(in.src), C.size_t(len(in.src)), cbytes(out), C.size_t(len(out))))
		}},
	}
}

func cbytes(b []byte) *C.uchar { return (*C.uchar)(unsafe.Pointer(unsafe.SliceData(b))) }

// czlib compresses data with C zlib's compress2 at a level.
func czlib(data []byte, level int) []byte {
	out := make([]byte, len(data)+len(data)/100+1024)
	n := C.zlib_compress(C.int(level), cbytes(data), C.size_t(len(data)), cbytes(out), C.size_t(len(out)))
	if n < 0 {
		log.Fatal("compress2 failed")
	}
	return out[:n]
}

func mustGzip(level int) *codecs.Gzip {
	g, err := codecs.NewGzip(level)
	must(err)
	return g
}

// benchField is the top-left n×n chunk of the N×N field go run ./bench
// stores (bench/data.go): 100·sin(2π·3i/N)·cos(2π·2j/N) +
// 10·sin(2π·5(i+j)/N) plus uniform noise of amplitude 0.5 from splitmix64,
// rounded to 1/64, as little-endian float32.
func benchField(n, N int, seed uint64) []byte {
	out := make([]byte, 0, 4*n*n)
	for i := range n {
		for j := range n {
			x := seed ^ uint64(i*N+j)
			x += 0x9e3779b97f4a7c15
			x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
			x = (x ^ x>>27) * 0x94d049bb133111eb
			u := float64((x^x>>31)>>11) / (1 << 53)
			a, b := 2*math.Pi*float64(i)/float64(N), 2*math.Pi*float64(j)/float64(N)
			v := 100*math.Sin(3*a)*math.Cos(2*b) + 10*math.Sin(5*(a+b)) + 0.5*(u-0.5)
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(math.Round(v*64)/64)))
		}
	}
	return out
}

// textLike is words of a small vocabulary with spaces and newlines.
func textLike(n int) []byte {
	words := []string{"the", "array", "chunk", "of", "and", "zarr", "codec", "shape", "a", "dimension",
		"compressor", "metadata", "float32", "to", "is", "in", "data", "store", "\n", "group"}
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b[:n]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{9}).Read(b)
	return b
}

// rate runs op for about d of CPU time on one locked OS thread and
// returns bytes per CPU second.
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

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
