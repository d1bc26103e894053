package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"

	_ "github.com/gozarr/gozarr/codecs/blosc" // registers "blosc"
)

// job is what the parent asks one child process to measure. Each
// layout×workload runs in its own process so that its peak RSS is its own.
type job struct {
	Mode     string // "read", "write", "memcpy" or "codec"
	Layout   layout
	Workload string // read workloads: "read-all", "chunks", "random", "strided"
	Geo      geometry
	Dir      string // the array's directory
	Reps     int
	Random   int    // number of random inner-chunk reads
	Stride   [2]int // strided workload steps
	Bytes    int64  // memcpy size
	Pipe     pipeline.Options
	Threads  int // codec mode: decode goroutines
}

// result is one child's measurement.
type result struct {
	Seconds      float64   `json:"seconds"` // best (least) of the timed repetitions
	All          []float64 `json:"all_seconds"`
	Median       float64   `json:"median_seconds"`
	CPUSeconds   float64   `json:"cpu_seconds"`   // user+system CPU time per repetition
	OutBytes     int64     `json:"out_bytes"`     // bytes the operation produces (or writes)
	DecodedBytes int64     `json:"decoded_bytes"` // bytes of chunks it must decode
	StoredBytes  int64     `json:"stored_bytes,omitempty"`
	Calls        int       `json:"calls"`       // ReadBytes/WriteBytes calls per repetition
	Mallocs      float64   `json:"mallocs"`     // heap allocations per repetition
	AllocBytes   float64   `json:"alloc_bytes"` // bytes allocated per repetition
	PeakRSS      int64     `json:"peak_rss"`    // VmHWM of the process, bytes
	Checked      int       `json:"checked"`     // elements verified against the generator
}

// runChild runs one job and prints its result as JSON on stdout.
func runChild(spec string) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return fmt.Errorf("child spec: %w", err)
	}
	j.Reps = max(j.Reps, 1)
	var (
		r   result
		err error
	)
	switch j.Mode {
	case "read":
		r, err = childRead(j)
	case "write":
		r, err = childWrite(j)
	case "memcpy":
		r, err = childMemcpy(j)
	case "codec":
		r, err = childCodec(j)
	default:
		err = fmt.Errorf("unknown child mode %q", j.Mode)
	}
	if err != nil {
		return err
	}
	r.PeakRSS = peakRSS()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// measure runs op once untimed (warming caches and faulting in the output
// pages), then reps times, timing each and counting heap allocations and
// the process's CPU time. The best time is reported: on a machine shared
// with other work it is the least disturbed one; the CPU time per
// repetition is not inflated by other processes at all.
func measure(reps int, op func() error) (result, error) {
	var r result
	if err := op(); err != nil {
		return r, err
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuSeconds()
	for range reps {
		t0 := time.Now()
		if err := op(); err != nil {
			return r, err
		}
		r.All = append(r.All, time.Since(t0).Seconds())
	}
	r.CPUSeconds = (cpuSeconds() - cpu0) / float64(reps)
	runtime.ReadMemStats(&m1)
	r.Seconds, r.Median = slices.Min(r.All), median(r.All)
	r.Mallocs = float64(m1.Mallocs-m0.Mallocs) / float64(reps)
	r.AllocBytes = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(reps)
	return r, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuSeconds returns the user plus system CPU time of the process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// peakRSS returns VmHWM from /proc/self/status, or the rusage maximum.
func peakRSS() int64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		return ru.Maxrss << 10
	}
	return 0
}

// region is a box [R0, R0+H) × [C0, C0+W) of the array.
type region struct{ R0, C0, H, W int }

func (g region) items() []nd.Item {
	return []nd.Item{nd.Range(g.R0, g.R0+g.H), nd.Range(g.C0, g.C0+g.W)}
}

// chunkRegions returns every unit×unit chunk-aligned region, C order.
func chunkRegions(n, unit int) []region {
	var rs []region
	for r := 0; r < n; r += unit {
		for c := 0; c < n; c += unit {
			rs = append(rs, region{r, c, min(unit, n-r), min(unit, n-c)})
		}
	}
	return rs
}

// randomRegions returns k random unit-aligned regions (seeded, repeatable).
func randomRegions(n, unit, k int, seed uint64) []region {
	all := chunkRegions(n, unit)
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667))
	rs := make([]region, k)
	for i := range rs {
		rs[i] = all[rng.IntN(len(all))]
	}
	return rs
}

func openArray(ctx context.Context, j job) (*zarr.Array, error) {
	st, err := fs.New(j.Dir)
	if err != nil {
		return nil, err
	}
	return zarr.OpenArray(ctx, st, "", zarr.WithPipeline(j.Pipe))
}

// check verifies up to k elements of out, the (h×w) result of reading
// rows r0, r0+sr, ... and columns c0, c0+sc, ..., against the generator.
func check(out []byte, g geometry, r0, c0, sr, sc, h, w, k int, salt uint64) (int, error) {
	if h == 0 || w == 0 {
		return 0, nil
	}
	rng := rand.New(rand.NewPCG(g.Seed, salt))
	for range k {
		i, jj := rng.IntN(h), rng.IntN(w)
		got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*(i*w+jj):]))
		want := value(g.Seed, g.N, r0+i*sr, c0+jj*sc)
		if got != want {
			return 0, fmt.Errorf("element [%d, %d] reads %v, generator says %v", r0+i*sr, c0+jj*sc, got, want)
		}
	}
	return k, nil
}

// childRead measures one read workload.
func childRead(j job) (result, error) {
	ctx := context.Background()
	a, err := openArray(ctx, j)
	if err != nil {
		return result{}, err
	}
	g, n := j.Geo, j.Geo.N
	unit := g.unit(j.Layout)
	unitBytes := int64(unit) * int64(unit) * 4
	var (
		op      func() error
		verify  func() (int, error)
		out     []byte
		outB    int64
		decoded int64
		calls   int
	)
	switch j.Workload {
	case "read-all":
		out = make([]byte, g.bytes())
		op = func() error { return a.ReadBytes(ctx, out) }
		verify = func() (int, error) { return check(out, g, 0, 0, 1, 1, n, n, 10000, 1) }
		outB, decoded, calls = g.bytes(), g.bytes(), 1
	case "chunks", "random":
		var rs []region
		if j.Workload == "chunks" {
			rs = chunkRegions(n, unit)
		} else {
			rs = randomRegions(n, unit, j.Random, g.Seed)
		}
		out = make([]byte, unitBytes)
		last := rs[len(rs)-1]
		op = func() error {
			for _, r := range rs {
				if err := a.ReadBytes(ctx, out[:r.H*r.W*4], r.items()...); err != nil {
					return err
				}
			}
			return nil
		}
		verify = func() (int, error) { return check(out, g, last.R0, last.C0, 1, 1, last.H, last.W, 1000, 2) }
		for _, r := range rs {
			outB += int64(r.H * r.W * 4)
		}
		decoded, calls = int64(len(rs))*unitBytes, len(rs)
	case "strided":
		sr, sc := j.Stride[0], j.Stride[1]
		items := []nd.Item{nd.Every(sr), nd.Every(sc)}
		sel, err := a.Selection(items...)
		if err != nil {
			return result{}, err
		}
		shape := sel.Shape()
		out = make([]byte, nd.NumElements(shape)*4)
		op = func() error { return a.ReadBytes(ctx, out, items...) }
		verify = func() (int, error) { return check(out, g, 0, 0, sr, sc, shape[0], shape[1], 10000, 3) }
		outB = int64(len(out))
		decoded, calls = int64(sel.NumChunks([]int{unit, unit}))*unitBytes, 1
	default:
		return result{}, fmt.Errorf("unknown workload %q", j.Workload)
	}
	r, err := measure(j.Reps, op)
	if err != nil {
		return r, fmt.Errorf("%s %s: %w", j.Layout.Name, j.Workload, err)
	}
	if r.Checked, err = verify(); err != nil {
		return r, fmt.Errorf("%s %s: wrong data: %w", j.Layout.Name, j.Workload, err)
	}
	r.OutBytes, r.DecodedBytes, r.Calls = outB, decoded, calls
	return r, nil
}

// childWrite generates the field and writes it as layout j.Layout into
// j.Dir (replacing what is there): the first write is the untimed warm-up
// that creates every file, the timed repetitions rewrite them.
func childWrite(j job) (result, error) {
	ctx := context.Background()
	if err := os.RemoveAll(j.Dir); err != nil {
		return result{}, err
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return result{}, err
	}
	st, err := fs.New(j.Dir)
	if err != nil {
		return result{}, err
	}
	meta, err := metadata(j.Layout, j.Geo)
	if err != nil {
		return result{}, err
	}
	a, err := zarr.CreateArray(ctx, st, "", meta, zarr.WithPipeline(j.Pipe))
	if err != nil {
		return result{}, err
	}
	data := generate(j.Geo.Seed, j.Geo.N)
	r, err := measure(j.Reps, func() error { return a.WriteBytes(ctx, data) })
	if err != nil {
		return r, fmt.Errorf("write %s: %w", j.Layout.Name, err)
	}
	r.OutBytes, r.Calls = j.Geo.bytes(), 1
	r.StoredBytes, err = dirBytes(j.Dir)
	return r, err
}

// dirBytes sums the sizes of the chunk files under dir.
func dirBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == zarr.MetadataKey {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}

// childMemcpy measures one copy of j.Bytes bytes between two buffers
// already faulted in.
func childMemcpy(j job) (result, error) {
	src := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, int(j.Bytes+7)/8)[:j.Bytes]
	dst := make([]byte, j.Bytes)
	r, err := measure(j.Reps, func() error { copy(dst, src); return nil })
	r.OutBytes = j.Bytes
	return r, err
}
