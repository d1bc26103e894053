//go:build cblosc && czstd

package main

/*
#cgo LDFLAGS: -lzstd
#include <zstd.h>
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"log"
	"time"
	"unsafe"

	"github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
	"github.com/klauspost/compress/zstd"
)

// zstdStream is one zstd frame of a Blosc frame and its decoded size.
type zstdStream struct {
	src   []byte
	dsize int
}

// zstdStreams lists the zstd frames of the Blosc frame f, in order.
func zstdStreams(f []byte) []zstdStream {
	h, err := blosc.ReadInfo(f)
	must(err)
	nblocks := (h.NBytes + h.BlockSize - 1) / h.BlockSize
	var ss []zstdStream
	for j := range nblocks {
		bsize := min(h.BlockSize, h.NBytes-j*h.BlockSize)
		off := int(binary.LittleEndian.Uint32(f[blosc.HeaderSize+4*j:]))
		for done := 0; done < bsize; {
			csize := int(binary.LittleEndian.Uint32(f[off:]))
			src := f[off+4 : off+4+csize]
			n := C.ZSTD_getFrameContentSize(unsafe.Pointer(&src[0]), C.size_t(len(src)))
			if n >= C.ZSTD_CONTENTSIZE_ERROR {
				log.Fatalf("stream at %d: no content size", off)
			}
			ss = append(ss, zstdStream{src, int(n)})
			done += int(n)
			off += 4 + csize
		}
	}
	return ss
}

// zstdCompare times the zstd frames inside c-blosc's zstd+shuffle frame
// of the float32 benchmark data, decoded alone: by libzstd (one reused
// DCtx) and by klauspost/compress/zstd with several decoder options.
func zstdCompare(size, rounds int, d time.Duration) {
	src := blosctest.Data(blosctest.Float32, size, 4, 42)
	frame := ccompress(src, "zstd", 5, 1, 4, 0)
	ss := zstdStreams(frame)
	total := 0
	for _, s := range ss {
		total += s.dsize
	}
	fmt.Printf("libzstd %s vs klauspost/compress/zstd on the %d zstd frames (%d bytes decoded) of c-blosc's zstd clevel 5 shuffle float32 frame; best of %d rounds of %v CPU time (GB/s of decoded bytes per core)\n",
		C.GoString(C.ZSTD_versionString()), len(ss), total, rounds, d)
	buf := make([]byte, h0(ss)+64)
	dctx := C.ZSTD_createDCtx()
	defer C.ZSTD_freeDCtx(dctx)
	libzstd := func() {
		for _, s := range ss {
			n := C.ZSTD_decompressDCtx(dctx, unsafe.Pointer(&buf[0]), C.size_t(s.dsize), unsafe.Pointer(&s.src[0]), C.size_t(len(s.src)))
			if int(n) != s.dsize {
				log.Fatalf("libzstd: %d bytes, want %d", n, s.dsize)
			}
		}
	}
	goDec := func(slack int, opts ...zstd.DOption) func() {
		dec, err := zstd.NewReader(nil, opts...)
		must(err)
		return func() {
			for _, s := range ss {
				out, err := dec.DecodeAll(s.src, buf[:0:s.dsize+slack])
				if err != nil || len(out) != s.dsize {
					log.Fatalf("klauspost: %d bytes, want %d: %v", len(out), s.dsize, err)
				}
			}
		}
	}
	cases := []struct {
		name string
		op   func()
	}{
		{"libzstd ZSTD_decompressDCtx", libzstd},
		{"klauspost, gozarr's options", goDec(0, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(blosc.MaxBufferSize))},
		{"klauspost, concurrency 1", goDec(0, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))},
		{"klauspost, lowmem false", goDec(0, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false), zstd.WithDecodeAllCapLimit(true))},
		{"klauspost, ignore checksum", goDec(0, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false), zstd.WithDecodeAllCapLimit(true), zstd.IgnoreChecksum(true))},
		{"klauspost, 64 B slack in dst", goDec(64, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(blosc.MaxBufferSize))},
	}
	var rates = make([]float64, len(cases))
	for range rounds {
		for i, c := range cases {
			rates[i] = max(rates[i], rate(total, d, c.op))
		}
	}
	for i, c := range cases {
		fmt.Printf("%-30s %6.3f GB/s  %5.2fx libzstd\n", c.name, rates[i]/1e9, rates[i]/rates[0])
	}
}

// h0 returns the largest decoded stream size.
func h0(ss []zstdStream) int {
	m := 1
	for _, s := range ss {
		m = max(m, s.dsize)
	}
	return m
}
