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
	Mode     string // "read", "write", "memcpy", "codec" or "pair"
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
	Calls        int       `json:"calls"`           // ReadBytesInto/WriteBytes calls per repetition
	Mallocs      float64   `json:"mallocs"`         // heap allocations per repetition
	AllocBytes   float64   `json:"alloc_bytes"`     // bytes allocated per repetition
	PeakRSS      int64     `json:"peak_rss"`        // VmHWM of the process, bytes
	Checked      int       `json:"checked"`         // elements verified against the generator
	Pairs        *pairs    `json:"pairs,omitempty"` // "pair" mode: every operation's times
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
	case "pair":
		r, err = childPair(j)
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
// with other work it is the least disturbed one (contention inflates the
// CPU time per repetition too, if less).
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
		return int64(ru.Maxrss) << 10
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

// workOp is one prepared operation: the thing a child times.
type workOp struct {
	op      func() error
	verify  func() (int, error) // checks elements of the last result; nil: nothing to check
	out     int64               // bytes the operation produces (or writes)
	decoded int64               // bytes of chunks it must decode
	calls   int                 // ReadBytesInto/WriteBytes calls per operation
}

// prepareRead opens the array and prepares one read workload.
func prepareRead(ctx context.Context, j job) (workOp, error) {
	a, err := openArray(ctx, j)
	if err != nil {
		return workOp{}, err
	}
	g, n := j.Geo, j.Geo.N
	unit := g.unit(j.Layout)
	unitBytes := int64(unit) * int64(unit) * 4
	var w workOp
	switch j.Workload {
	case "read-all":
		out := make([]byte, g.bytes())
		w.op = func() error { return a.ReadBytesInto(ctx, out) }
		w.verify = func() (int, error) { return check(out, g, 0, 0, 1, 1, n, n, 10000, 1) }
		w.out, w.decoded, w.calls = g.bytes(), g.bytes(), 1
	case "chunks", "random":
		var rs []region
		if j.Workload == "chunks" {
			rs = chunkRegions(n, unit)
		} else {
			rs = randomRegions(n, unit, j.Random, g.Seed)
		}
		out := make([]byte, unitBytes)
		last := rs[len(rs)-1]
		w.op = func() error {
			for _, r := range rs {
				if err := a.ReadBytesInto(ctx, out[:r.H*r.W*4], r.items()...); err != nil {
					return err
				}
			}
			return nil
		}
		w.verify = func() (int, error) { return check(out, g, last.R0, last.C0, 1, 1, last.H, last.W, 1000, 2) }
		for _, r := range rs {
			w.out += int64(r.H * r.W * 4)
		}
		w.decoded, w.calls = int64(len(rs))*unitBytes, len(rs)
	case "strided":
		sr, sc := j.Stride[0], j.Stride[1]
		items := []nd.Item{nd.Every(sr), nd.Every(sc)}
		sel, err := a.Selection(items...)
		if err != nil {
			return w, err
		}
		shape := sel.Shape()
		out := make([]byte, nd.NumElements(shape)*4)
		w.op = func() error { return a.ReadBytesInto(ctx, out, items...) }
		w.verify = func() (int, error) { return check(out, g, 0, 0, sr, sc, shape[0], shape[1], 10000, 3) }
		w.out = int64(len(out))
		w.decoded, w.calls = int64(sel.NumChunks([]int{unit, unit}))*unitBytes, 1
	default:
		return w, fmt.Errorf("unknown workload %q", j.Workload)
	}
	return w, nil
}

// childRead measures one read workload.
func childRead(j job) (result, error) {
	w, err := prepareRead(context.Background(), j)
	if err != nil {
		return result{}, err
	}
	r, err := measure(j.Reps, w.op)
	if err != nil {
		return r, fmt.Errorf("%s %s: %w", j.Layout.Name, j.Workload, err)
	}
	if r.Checked, err = w.verify(); err != nil {
		return r, fmt.Errorf("%s %s: wrong data: %w", j.Layout.Name, j.Workload, err)
	}
	r.OutBytes, r.DecodedBytes, r.Calls = w.out, w.decoded, w.calls
	return r, nil
}

// prepareWrite generates the field and creates layout j.Layout in j.Dir
// (replacing what is there); the operation writes the whole array. The
// first call creates every file, later ones rewrite them.
func prepareWrite(ctx context.Context, j job) (workOp, error) {
	if err := os.RemoveAll(j.Dir); err != nil {
		return workOp{}, err
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return workOp{}, err
	}
	st, err := fs.New(j.Dir)
	if err != nil {
		return workOp{}, err
	}
	meta, err := metadata(j.Layout, j.Geo)
	if err != nil {
		return workOp{}, err
	}
	a, err := zarr.CreateArray(ctx, st, "", meta, zarr.WithPipeline(j.Pipe))
	if err != nil {
		return workOp{}, err
	}
	data := generate(j.Geo.Seed, j.Geo.N)
	return workOp{op: func() error { return a.WriteBytes(ctx, data) }, out: j.Geo.bytes(), calls: 1}, nil
}

// childWrite generates the field and writes it as layout j.Layout into
// j.Dir (replacing what is there): the first write is the untimed warm-up
// that creates every file, the timed repetitions rewrite them.
func childWrite(j job) (result, error) {
	w, err := prepareWrite(context.Background(), j)
	if err != nil {
		return result{}, err
	}
	r, err := measure(j.Reps, w.op)
	if err != nil {
		return r, fmt.Errorf("write %s: %w", j.Layout.Name, err)
	}
	r.OutBytes, r.Calls = w.out, w.calls
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

// prepareMemcpy prepares one copy of n bytes between two buffers already
// faulted in.
func prepareMemcpy(n int64) workOp {
	src := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, int(n+7)/8)[:n]
	dst := make([]byte, n)
	return workOp{op: func() error { copy(dst, src); return nil }, out: n}
}

// childMemcpy measures one copy of j.Bytes bytes.
func childMemcpy(j job) (result, error) {
	w := prepareMemcpy(j.Bytes)
	r, err := measure(j.Reps, w.op)
	r.OutBytes = j.Bytes
	return r, err
}

// pairs holds a paired child's times: repetition i of the workload, of
// memcpy of its output size and of the codec-only decode (compressed
// layouts, read workloads) ran back to back, within a second or so.
type pairs struct {
	WorkSeconds       []float64 `json:"work_seconds"`
	WorkCPU           []float64 `json:"work_cpu_seconds"`
	MemcpySeconds     []float64 `json:"memcpy_seconds"`
	CodecSeconds      []float64 `json:"codec_only_seconds,omitempty"`
	CodecCPU          []float64 `json:"codec_only_cpu_seconds,omitempty"`
	CodecDecodedBytes int64     `json:"codec_only_decoded_bytes,omitempty"`
}

// childPair measures a workload and its baselines in one process,
// alternating them repetition by repetition, so that each repetition's
// ratios compare operations that ran under the same machine load.
func childPair(j job) (result, error) {
	ctx := context.Background()
	var (
		w   workOp
		err error
	)
	if j.Workload == "write-all" {
		w, err = prepareWrite(ctx, j)
	} else {
		w, err = prepareRead(ctx, j)
	}
	if err != nil {
		return result{}, err
	}
	ops := []func() error{w.op, prepareMemcpy(w.out).op}
	var codec workOp
	switch {
	case j.Layout.Codec == "none":
	case j.Workload == "write-all":
		// Writes are put beside the codec-only encode of the same chunks.
		if codec, err = prepareEncode(j); err != nil {
			return result{}, err
		}
		w.decoded = codec.decoded
		ops = append(ops, codec.op)
	default:
		if codec, err = prepareCodec(j); err != nil {
			return result{}, err
		}
		ops = append(ops, codec.op)
	}
	secs, cpu, err := measurePaired(j.Reps, ops)
	if err != nil {
		return result{}, fmt.Errorf("%s %s paired: %w", j.Layout.Name, j.Workload, err)
	}
	r := result{OutBytes: w.out, DecodedBytes: w.decoded, Calls: w.calls}
	if w.verify != nil {
		if r.Checked, err = w.verify(); err != nil {
			return r, fmt.Errorf("%s %s: wrong data: %w", j.Layout.Name, j.Workload, err)
		}
	}
	r.Pairs = &pairs{WorkSeconds: secs[0], WorkCPU: cpu[0], MemcpySeconds: secs[1]}
	if len(ops) > 2 {
		r.Pairs.CodecSeconds, r.Pairs.CodecCPU, r.Pairs.CodecDecodedBytes = secs[2], cpu[2], codec.decoded
	}
	r.All, r.Seconds, r.Median, r.CPUSeconds = secs[0], slices.Min(secs[0]), median(secs[0]), slices.Min(cpu[0])
	return r, nil
}

// measurePaired runs every op once untimed, then reps rounds of all ops
// back to back, rotating which goes first (round i starts with op i mod
// len(ops)), and returns each op's wall and CPU time per round. The ops
// must not leave work running when they return, so that the process's
// CPU time between two timestamps is the op's own.
func measurePaired(reps int, ops []func() error) (secs, cpu [][]float64, err error) {
	for _, op := range ops {
		if err := op(); err != nil {
			return nil, nil, err
		}
	}
	runtime.GC()
	secs, cpu = make([][]float64, len(ops)), make([][]float64, len(ops))
	for i := range reps {
		for k := range ops {
			o := (i + k) % len(ops)
			c0, t0 := cpuSeconds(), time.Now()
			if err := ops[o](); err != nil {
				return nil, nil, err
			}
			secs[o] = append(secs[o], time.Since(t0).Seconds())
			cpu[o] = append(cpu[o], cpuSeconds()-c0)
		}
	}
	return secs, cpu, nil
}
