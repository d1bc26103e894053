package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// peakHeap runs f and returns the largest heap in use seen while it ran
// (sampled every millisecond through runtime.ReadMemStats) above the heap
// in use before.
func peakHeap(f func()) (peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// writePointsArray writes a 1000 x 1000 int16 array (no chunk stored)
// and a text file of n random points of it into dir.
func writePointsArray(tb testing.TB, dir string, n int) (array, points string) {
	tb.Helper()
	st, err := fsstore.New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := zarr.NewArrayMetadata([]int{1000, 1000}, dtype.TypeInt16, []int{100, 100})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := zarr.CreateArray(context.Background(), st, "a", m); err != nil {
		tb.Fatal(err)
	}
	pts := filepath.Join(dir, "points.txt")
	f, err := os.Create(pts)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		fmt.Fprintf(w, "%d %d\n", r.IntN(1000), r.IntN(1000))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, "a"), pts
}

// TestPointsFileMemory (issue 27): get --points of a text file holds far
// less than 16 bytes a point (it held 41, then 74): the file is checked,
// then read batch by batch as the values are, within --budget.
func TestPointsFileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 10^6 points")
	}
	n := 1_000_000 // enough that the batches' fixed share is a few bytes a point
	a, pts := writePointsArray(t, t.TempDir(), n)
	peak := peakHeap(func() {
		if err := run(context.Background(), []string{"get", "-q", "--budget", "8MiB", "--format", "raw", "-o", os.DevNull, "--points", pts, a}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	per := float64(peak) / float64(n)
	t.Logf("%d points: peak heap %d bytes above the start, %.2f a point", n, peak, per)
	if per > 16 {
		t.Errorf("get --points of %d points: peak heap %d bytes above the start, %.1f a point; want at most 16", n, peak, per)
	}
}

// BenchmarkPointsFileMemory measures the memory zarrcat get --points holds
// per point of a text file (issue 27: at most 16 bytes a point for a 2-D
// array, beyond the output), for GOZARR_POINTS points (default 10^6) of a
// 1000 x 1000 int16 array, the values written raw to /dev/null. It reports
// peak-heap-B/point: the largest heap in use above the start, per point.
func BenchmarkPointsFileMemory(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("GOZARR_POINTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	a, pts := writePointsArray(b, b.TempDir(), n)
	b.SetBytes(int64(n) * 2)
	b.ReportAllocs()
	var worst uint64
	for b.Loop() {
		worst = max(worst, peakHeap(func() {
			if err := run(context.Background(), []string{"get", "-q", "--format", "raw", "-o", os.DevNull, "--points", pts, a}, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(worst)/float64(n), "peak-heap-B/point")
}
