//go:build cblosc

package main

/*
#include <string.h>
#include <blosc.h>

// place_chunk decodes one Blosc frame into scratch with a single-threaded
// context, then copies its rows (rowbytes each) into out, one memcpy per
// row, stepping outstride bytes between rows. It returns what
// blosc_decompress_ctx returned.
static int place_chunk(const void *frame, void *scratch, size_t scap,
                       char *out, size_t outstride, int rows, size_t rowbytes) {
	int n = blosc_decompress_ctx(frame, scratch, scap, 1);
	if (n < 0) return n;
	const char *s = (const char *)scratch;
	for (int r = 0; r < rows; r++) {
		memcpy(out + (size_t)r * outstride, s + (size_t)r * rowbytes, rowbytes);
	}
	return n;
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"log"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
	"github.com/gozarr/gozarr/nd"
)

// place times decode plus placement of a whole 2-D float32 array (side x
// side) stored as chunk x chunk Blosc frames (c-blosc lz4 + shuffle,
// clevel 5, typesize 4), on two goroutines each handling half the chunks:
// gozarr decodes with blosc.Decompress into a per-worker scratch and places
// the rows with nd.Copy; c-blosc decodes with blosc_decompress_ctx (one
// internal thread) into a per-thread scratch and places the rows with one
// memcpy per row in C (a single cgo call per chunk). Wall time of the whole
// array is measured, best of rounds (the two alternate).
func place(side, chunk, rounds int) {
	const ts = 4
	if side%chunk != 0 {
		log.Fatalf("-side %d is not a multiple of -chunk %d", side, chunk)
	}
	per := side / chunk
	nchunks := per * per
	cbytes := chunk * chunk * ts
	rowBytes := chunk * ts
	stride := side * ts

	// Chunk contents, the expected array, and the c-blosc frames.
	want := make([]byte, side*side*ts)
	wantView := nd.Contiguous(want, []int{side, side}, ts)
	frames := make([][]byte, nchunks)
	var fbytes int
	for ci := range nchunks {
		src := blosctest.Data(blosctest.Float32, cbytes, ts, uint64(ci+1))
		frames[ci] = ccompress(src, "lz4", 5, 1, ts, 0)
		fbytes += len(frames[ci])
		r, c := ci/per, ci%per
		nd.Copy(wantView.Slice([]int{r * chunk, c * chunk}, []int{chunk, chunk}, []int{1, 1}),
			nd.Contiguous(src, []int{chunk, chunk}, ts))
	}

	outG := make([]byte, len(want))
	outC := make([]byte, len(want))
	gView := nd.Contiguous(outG, []int{side, side}, ts)
	dstG := make([]nd.View, nchunks)
	offs := make([]int, nchunks)
	for ci := range nchunks {
		r, c := ci/per, ci%per
		dstG[ci] = gView.Slice([]int{r * chunk, c * chunk}, []int{chunk, chunk}, []int{1, 1})
		offs[ci] = r*chunk*stride + c*chunk*ts
	}

	// run calls work(worker, chunk) for the chunks of each half on two
	// goroutines locked to their own threads, and returns the wall time.
	run := func(work func(w, ci int)) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				lo, hi := w*nchunks/2, (w+1)*nchunks/2
				for ci := lo; ci < hi; ci++ {
					work(w, ci)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}

	var scratchG, scratchC [2][]byte
	for w := range 2 {
		scratchG[w] = make([]byte, cbytes)
		scratchC[w] = make([]byte, cbytes)
	}
	goWork := func(w, ci int) {
		got, err := blosc.Decompress(scratchG[w][:0], frames[ci], cbytes)
		if err != nil || len(got) != cbytes {
			log.Fatalf("gozarr chunk %d: %d bytes, %v", ci, len(got), err)
		}
		nd.Copy(dstG[ci], nd.Contiguous(got, []int{chunk, chunk}, ts))
	}
	cWork := func(w, ci int) {
		f := frames[ci]
		n := C.place_chunk(unsafe.Pointer(&f[0]), unsafe.Pointer(&scratchC[w][0]), C.size_t(cbytes),
			(*C.char)(unsafe.Pointer(&outC[offs[ci]])), C.size_t(stride), C.int(chunk), C.size_t(rowBytes))
		if int(n) != cbytes {
			log.Fatalf("c-blosc chunk %d: %d", ci, n)
		}
	}

	// One untimed pass each (faults the output pages in), then verify.
	run(goWork)
	run(cWork)
	if !bytes.Equal(outG, want) {
		log.Fatal("gozarr output differs from the expected array")
	}
	if !bytes.Equal(outC, want) {
		log.Fatal("c-blosc output differs from the expected array")
	}

	bestG, bestC := time.Duration(1<<62), time.Duration(1<<62)
	for range rounds {
		bestG = min(bestG, run(goWork))
		bestC = min(bestC, run(cWork))
	}
	clear(outG)
	clear(outC)
	run(goWork)
	run(cWork)
	identical := bytes.Equal(outG, want) && bytes.Equal(outC, want)

	gbs := func(d time.Duration) float64 { return float64(len(want)) / d.Seconds() / 1e9 }
	fmt.Printf("c-blosc %s vs gozarr: decode + placement of a %dx%d float32 array (%d MiB) from %d %dx%d chunks (lz4 shuffle clevel 5, c-blosc frames, ratio %.2f), 2 goroutines/threads with half the chunks each, wall time best of %d\n",
		C.GoString(C.blosc_get_version_string()), side, side, len(want)>>20, nchunks, chunk, chunk,
		float64(len(want))/float64(fbytes), rounds)
	fmt.Printf("  gozarr  (blosc.Decompress + nd.Copy):              %8.2f ms  %6.2f GB/s\n", bestG.Seconds()*1e3, gbs(bestG))
	fmt.Printf("  c-blosc (blosc_decompress_ctx + memcpy rows in C): %8.2f ms  %6.2f GB/s\n", bestC.Seconds()*1e3, gbs(bestC))
	fmt.Printf("  ratio gozarr/c-blosc (throughput): %.2fx; outputs identical to the expected array: %v\n",
		bestC.Seconds()/bestG.Seconds(), identical)
	if !identical {
		log.Fatal("outputs differ")
	}
}
