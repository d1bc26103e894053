// Command vlenbench measures reading a variable-length string array
// (v3 "string", vlen-utf8 then zstd level 1) through zarr.ReadStrings
// against the memory bound of issue 14: peak RSS within the output (the
// []string and its text) plus the in-flight cap plus 64 MiB.
//
//	go run ./bench/vlenbench                 # 16 Mi strings, 1 GiB of text
//	go run ./bench/vlenbench -n 1048576      # 64 MiB smoke run
//
// It writes the array once under -dir (strings of 0..127 bytes, mean 64,
// cut from a random text; 64 Ki strings per chunk), then reads it whole
// in a child process (a fresh address space: its VmHWM is its own peak
// RSS, which Go's rusage would mix with the parent's) -reps times, and
// reports the median wall time against the codec-only time of the same
// chunks (zstd decode and vlen-utf8 validation on GOMAXPROCS goroutines,
// every chunk read from disk first, not timed) and the child's peak RSS
// against the bound.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

const chunk = 64 << 10 // strings per chunk

func main() {
	n := flag.Int("n", 16<<20, "number of strings (mean 64 bytes each)")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "gozarr-vlenbench"), "where the array is written (kept between runs of the same -n)")
	reps := flag.Int("reps", 3, "timed reads (median)")
	child := flag.Bool("child", false, "internal: read the array once and report")
	prof := flag.String("cpuprofile", "", "with -child: write a CPU profile of the read here")
	every := flag.Int("every", 1, "with -child: read every N-th string")
	flag.Parse()
	ctx := context.Background()
	path := filepath.Join(*dir, "n"+strconv.Itoa(*n))
	if *child {
		if *prof != "" {
			f, err := os.Create(*prof)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		if err := readOnce(ctx, path, *every); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, path, *n, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "vlenbench:", err)
		os.Exit(1)
	}
}

// text is the random text strings are cut from.
func text() string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<20)
	const letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ"
	for i := range b {
		b[i] = letters[r.IntN(len(letters))] // ASCII: any cut is UTF-8
	}
	return string(b)
}

// values returns strings [lo, hi): lengths 0..127, cut from t.
func values(t string, lo, hi int) []string {
	out := make([]string, hi-lo)
	for i := range out {
		k := uint64(lo + i)
		h := k*0x9E3779B97F4A7C15 ^ k>>7
		l := int(h>>57) & 127
		off := int(h>>20) % (len(t) - 128)
		out[i] = t[off : off+l]
	}
	return out
}

func write(ctx context.Context, path string, n int) (textBytes int64, err error) {
	t := text()
	for lo := 0; lo < n; lo += chunk {
		for _, v := range values(t, lo, min(n, lo+chunk)) {
			textBytes += int64(len(v))
		}
	}
	if _, err := os.Stat(filepath.Join(path, "done")); err == nil {
		return textBytes, nil
	}
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return 0, err
	}
	st, err := fs.New(path)
	if err != nil {
		return 0, err
	}
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		return 0, err
	}
	m, err := zarr.NewArrayMetadata([]int{n}, dtype.TypeVarString, []int{chunk}, zarr.Compress(zs))
	if err != nil {
		return 0, err
	}
	a, err := zarr.CreateArray(ctx, st, "", m)
	if err != nil {
		return 0, err
	}
	const block = 16 * chunk
	for lo := 0; lo < n; lo += block {
		hi := min(n, lo+block)
		if err := zarr.WriteStrings(ctx, a, values(t, lo, hi), nd.Range(lo, hi)); err != nil {
			return 0, err
		}
	}
	return textBytes, os.WriteFile(filepath.Join(path, "done"), nil, 0o644)
}

// readOnce is the child: read the whole array, check a few values, and
// print the wall time and VmHWM.
func readOnce(ctx context.Context, path string, every int) error {
	st, err := fs.New(path, fs.ReadOnly())
	if err != nil {
		return err
	}
	a, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		return err
	}
	start := time.Now()
	got, _, err := zarr.ReadStrings(ctx, a, nd.Every(every))
	if err != nil {
		return err
	}
	el := time.Since(start)
	t := text()
	for _, i := range []int{0, len(got) / 3, len(got) - 1} {
		if want := values(t, i*every, i*every+1)[0]; got[i] != want {
			return fmt.Errorf("element %d: %q, want %q", i, got[i], want)
		}
	}
	hwm, err := vmHWM()
	if err != nil {
		return err
	}
	runtime.KeepAlive(got)
	fmt.Printf("%d %d\n", el.Nanoseconds(), hwm)
	return nil
}

// vmHWM returns this process's peak RSS from /proc/self/status.
func vmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// codecOnly decodes every chunk (zstd, then vlen-utf8 validation) on
// GOMAXPROCS goroutines, the chunks read into memory first.
func codecOnly(path string, n int) (time.Duration, error) {
	var chunks [][]byte
	for c := 0; c*chunk < n; c++ {
		b, err := os.ReadFile(filepath.Join(path, "c", strconv.Itoa(c)))
		if err != nil {
			return 0, err
		}
		chunks = append(chunks, b)
	}
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, runtime.GOMAXPROCS(0))
	for w := range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var buf []byte
			for c := w; c < len(chunks); c += runtime.GOMAXPROCS(0) {
				var err error
				if buf, err = zs.Decode(buf[:0], chunks[c], math.MaxInt32); err == nil {
					err = codecs.ValidateVLen(dtype.TypeVarString, buf, min(chunk, n-c*chunk))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return time.Since(start), <-errs
}

func run(ctx context.Context, path string, n, reps int) error {
	t0 := time.Now()
	textBytes, err := write(ctx, path, n)
	if err != nil {
		return err
	}
	fmt.Printf("array: %d strings, %.1f MiB of text, %d chunks of %d (written or reused in %.1fs) at %s\n",
		n, float64(textBytes)/(1<<20), (n+chunk-1)/chunk, chunk, time.Since(t0).Seconds(), path)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var times []time.Duration
	var peak int64
	for range reps + 1 { // the first is a warm-up
		out, err := exec.Command(exe, "-child", "-n", strconv.Itoa(n), "-dir", filepath.Dir(path)).Output()
		if err != nil {
			return fmt.Errorf("child: %v", err)
		}
		var ns, hwm int64
		if _, err := fmt.Sscan(string(out), &ns, &hwm); err != nil {
			return fmt.Errorf("child said %q", out)
		}
		times = append(times, time.Duration(ns))
		peak = max(peak, hwm)
	}
	times = times[1:]
	slices.Sort(times)
	med := times[len(times)/2]
	co, err := codecOnly(path, n)
	if err != nil {
		return err
	}
	output := 16*int64(n) + textBytes
	bound := output + pipeline.DefaultMaxBytesInFlight + 64<<20
	fmt.Printf("read: median %.2fs of %d (codec-only %.2fs: %.2f × codec-only)\n", med.Seconds(), reps, co.Seconds(), med.Seconds()/co.Seconds())
	fmt.Printf("peak RSS %.0f MiB; bound = output %.0f MiB ([]string %d MiB + text) + in-flight cap %d MiB + 64 MiB = %.0f MiB: %.2f of the bound\n",
		float64(peak)/(1<<20), float64(output)/(1<<20), 16*n>>20, pipeline.DefaultMaxBytesInFlight>>20, float64(bound)/(1<<20), float64(peak)/float64(bound))
	if peak > bound {
		return fmt.Errorf("peak RSS %d bytes over the bound %d", peak, bound)
	}
	// A sparse read: every 16th string, a sixteenth of the output, from
	// every chunk (read in batches, each chunk's few values copied out).
	const every = 16
	out, err := exec.Command(exe, "-child", "-n", strconv.Itoa(n), "-dir", filepath.Dir(path), "-every", strconv.Itoa(every)).Output()
	if err != nil {
		return fmt.Errorf("child: %v", err)
	}
	var ns, hwm int64
	if _, err := fmt.Sscan(string(out), &ns, &hwm); err != nil {
		return fmt.Errorf("child said %q", out)
	}
	t := text()
	var sparseText int64
	for i := 0; i < n; i += every {
		sparseText += int64(len(values(t, i, i+1)[0]))
	}
	sOut := 16*int64((n+every-1)/every) + sparseText
	sBound := sOut + pipeline.DefaultMaxBytesInFlight + 64<<20
	fmt.Printf("sparse read (every %dth): %.2fs, peak RSS %.0f MiB; bound = output %.0f MiB + %d MiB + 64 MiB = %.0f MiB: %.2f of the bound\n",
		every, time.Duration(ns).Seconds(), float64(hwm)/(1<<20), float64(sOut)/(1<<20), pipeline.DefaultMaxBytesInFlight>>20, float64(sBound)/(1<<20), float64(hwm)/float64(sBound))
	if hwm > sBound {
		return fmt.Errorf("sparse read: peak RSS %d bytes over the bound %d", hwm, sBound)
	}
	return nil
}
