// Command loaderbench measures package loader: samples per second, read
// amplification and peak RSS of each sampler over a zstd-sharded float32
// array, from the local filesystem and from an S3 server with an injected
// per-request latency, and zarr-python 3.4 doing the same block-shuffled
// reads in a simple loop when its chroot is present.
//
//	eval "$(bash .ci/s3server.sh start)"   # versitygw on loopback (optional)
//	go run ./bench/loaderbench -reads 32         # 1 GiB, 3 runs each: ~4 min on 2 cores
//	go run ./bench/loaderbench -size 128MiB      # a quick run
//
// The array is rows of 16 KiB (4096 float32; -cols), size ÷ 16 KiB of them,
// in shards of 1024 rows holding inner chunks of 256 whole rows (-inner-cols)
// (zstd level 1 inside; bytes+crc32c index at the end). A sample is a row;
// blocks are 256 rows (an inner chunk row), so a block-shuffle window of K
// blocks reads each inner chunk once. Each sampler runs in a child process
// of its own, so the peak RSS reported (VmHWM) is its own: the limit it is
// held to is Budget + one batch + 64 MiB. The global permutation runs a few
// batches only (-perm-batches): its rows are scattered, so it decodes a
// 4 MiB inner chunk for one or two 16 KiB rows of it, and its amplification
// says so. LOADERBENCH_CPUPROFILE=path writes each child's CPU profile.
//
// Ratios are within the run: block-shuffle ÷ sequential (target ≥ 0.8),
// S3 with latency ÷ local (target ≥ 0.8), amplification (target ≤ 1.05),
// and S3 with latency ÷ S3 without (what prefetching hides). Each job runs
// -reps times, interleaved, and its fastest run is reported; the CPU
// seconds of the child (and of the S3 server, from its pid file) tell a
// run bound by CPU, as on a shared machine, from one waiting for requests.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// job is one measurement, run in a child process.
type job struct {
	Store    string // "local" or "s3"
	Dir      string // the local array's directory
	Prefix   string // the S3 array's prefix
	Latency  time.Duration
	Sampler  string
	Rows     int
	Cols     int
	Inner    int // inner chunk columns
	Batch    int
	K        int
	Budget   int64
	Reads    int
	Prefetch int
	Batches  int // stop after this many batches (0: the epoch)
	Seed     uint64
}

// result is what a child reports.
type result struct {
	Job        job
	Samples    int64
	Seconds    float64
	Delivered  int64
	Decoded    int64
	Fetched    int64
	Requests   int64
	StallMS    float64
	ReadP50MS  float64
	ReadP99MS  float64
	FetchP50MS float64
	FetchP99MS float64
	PeakRSS    int64
	ChunkReuse float64
	CPU        float64 // the child's user+system seconds
	ServerCPU  float64 // the S3 server's during the child's run (-1: unknown)
}

func (r result) rate() float64 { return float64(r.Samples) / r.Seconds }
func (r result) amp() float64  { return float64(r.Decoded) / float64(r.Delivered) }

const arrayPath = "rows"

// childEnv carries a child's job: the child is this program again (or the
// test binary, whose TestMain looks for it too).
const childEnv = "LOADERBENCH_CHILD"

func main() {
	if j := os.Getenv(childEnv); j != "" {
		if err := child(j, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "loaderbench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loaderbench:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	f := flag.NewFlagSet("loaderbench", flag.ContinueOnError)
	size := f.String("size", "1GiB", "array size (KiB, MiB, GiB suffixes)")
	cols := f.Int("cols", 4096, "float32 per row")
	inner := f.Int("inner-cols", 4096, "columns of an inner chunk (256 rows × this)")
	batch := f.Int("batch", 256, "samples per batch")
	k := f.Int("k", 16, "blocks per read window")
	budget := f.String("budget", "512MiB", "loader byte budget")
	reads := f.Int("reads", 16, "array reads at once")
	prefetch := f.Int("prefetch", 4, "batches prepared ahead")
	samplers := f.String("samplers", "sequential,block-shuffle,chunk-shuffle,permutation", "samplers to run")
	permBatches := f.Int("perm-batches", 4, "batches the permutation sampler runs")
	reps := f.Int("reps", 3, "runs of each job, interleaved (the fastest run's figures are reported)")
	latency := f.Duration("latency", 20*time.Millisecond, "per-request latency injected over S3")
	useS3 := f.String("s3", "auto", "auto (when GOZARR_S3_* name a server), on or off")
	python := f.String("python", "auto", "zarr-python comparison: auto (when its chroot exists) or off")
	dir := f.String("dir", "", "directory for the local array (default: a new one in /tmp, removed after)")
	if err := f.Parse(args); err != nil {
		return err
	}
	n, err := parseSize(*size)
	if err != nil {
		return fmt.Errorf("-size: %w", err)
	}
	bud, err := parseSize(*budget)
	if err != nil {
		return fmt.Errorf("-budget: %w", err)
	}
	rows := int(n / int64(*cols*4))
	if rows < 1024 || *inner <= 0 || *cols%*inner != 0 {
		return fmt.Errorf("need at least 1024 rows and columns a multiple of -inner-cols (got %d × %d, inner %d)", rows, *cols, *inner)
	}
	rows = rows / 1024 * 1024
	ctx := context.Background()
	if *dir == "" {
		d, err := os.MkdirTemp("/tmp", "loaderbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	t0 := time.Now()
	st, err := fs.New(*dir)
	if err != nil {
		return err
	}
	if err := writeArray(ctx, st, rows, *cols, *inner); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loaderbench: wrote %d × %d float32 (%d MiB) to %s in %.1f s\n", rows, *cols, int64(rows)*int64(*cols)*4>>20, *dir, time.Since(t0).Seconds())
	base := job{Store: "local", Dir: *dir, Rows: rows, Cols: *cols, Inner: *inner, Batch: *batch, K: *k, Budget: bud, Reads: *reads, Prefetch: *prefetch, Seed: 1}
	var jobs []job
	names := strings.Split(*samplers, ",")
	for _, s := range names {
		j := base
		j.Sampler = s
		if s == "permutation" {
			j.Batches = *permBatches
		}
		jobs = append(jobs, j)
	}
	srv, haveS3 := s3test.LookupEnv()
	switch {
	case *useS3 == "on" && !haveS3:
		return errors.New("-s3 on: GOZARR_S3_* are unset (eval \"$(bash .ci/s3server.sh start)\")")
	case *useS3 == "off":
		haveS3 = false
	}
	var note string
	if haveS3 {
		prefix := fmt.Sprintf("loaderbench-%d", os.Getpid())
		t0 := time.Now()
		sst, err := s3.Open(ctx, srv.Bucket, prefix, srv.Options()...)
		if err != nil {
			return err
		}
		defer cleanup(ctx, sst)
		if err := writeArray(ctx, sst, rows, *cols, *inner); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "loaderbench: wrote it to %s/%s/%s in %.1f s\n", srv.Endpoint, srv.Bucket, prefix, time.Since(t0).Seconds())
		for _, s := range names {
			if s == "chunk-shuffle" {
				continue // as block-shuffle, through the same reads
			}
			j := base
			j.Store, j.Prefix, j.Latency, j.Sampler = "s3", prefix, *latency, s
			if s == "permutation" {
				j.Batches = *permBatches
			}
			jobs = append(jobs, j)
			if s == "block-shuffle" && *latency > 0 {
				// The same with no latency: what the transport and the
				// server's CPU allow, so latency hiding shows on its own.
				j.Latency = 0
				jobs = append(jobs, j)
			}
		}
	} else {
		note = "S3: skipped (no GOZARR_S3_* server; eval \"$(bash .ci/s3server.sh start)\")"
	}
	// Rounds of every job, so that a machine whose load changes (a shared
	// one) weighs on every job alike; each job's fastest run is reported
	// (the one the machine's other work disturbed least), with the highest
	// peak RSS of its runs.
	runs := make([][]result, len(jobs))
	load := loadAvg()
	for rep := range max(*reps, 1) {
		for i, j := range jobs {
			r, err := runChild(j)
			if err != nil {
				return fmt.Errorf("%s %s: %w", j.Store, j.Sampler, err)
			}
			fmt.Fprintf(os.Stderr, "loaderbench: run %d: %s %v %s: %.0f samples/s, amplification %.3f, peak RSS %d MiB\n", rep, j.Store, j.Latency, j.Sampler, r.rate(), r.amp(), r.PeakRSS>>20)
			runs[i] = append(runs[i], r)
		}
	}
	var results []result
	for _, rs := range runs {
		slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.rate(), b.rate()) })
		m := rs[len(rs)-1]
		for _, r := range rs {
			m.PeakRSS = max(m.PeakRSS, r.PeakRSS)
		}
		results = append(results, m)
	}
	note = strings.TrimPrefix(note+"; load average "+load+" before, "+loadAvg()+" after", "; ")
	var py string
	if *python != "off" {
		py = pythonRun(*dir, rows, *batch, *k)
	}
	report(w, results, note, py, args)
	return nil
}

// loadAvg returns the 1-minute load average, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// child runs the job blob names and prints its result; with
// LOADERBENCH_CPUPROFILE set, it writes a CPU profile of the job there.
func child(blob string, w io.Writer) error {
	var j job
	if err := json.Unmarshal([]byte(blob), &j); err != nil {
		return err
	}
	if path := os.Getenv("LOADERBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(fmt.Sprintf("%s.%s-%v-%s", path, j.Store, j.Latency, j.Sampler))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	r, err := measure(context.Background(), j)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(r)
}

// parseSize reads "512MiB", "1GiB", "4096".
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(v * float64(mult)), nil
}

// value is element (r, c) of the benchmark array: the row number plus a
// quantised noise (1/1024 steps), so zstd does real work (about 2×) and a reader can
// check any element.
func value(r, c, cols int) float32 {
	x := uint64(r)*uint64(cols) + uint64(c)
	x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15
	return float32(r%1024) + float32(x>>54)/1024
}

// metadata is the benchmark array's zarr.json.
func metadata(rows, cols, inner int) string {
	return fmt.Sprintf(`{
  "zarr_format": 3, "node_type": "array",
  "shape": [%d, %d], "data_type": "float32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024, %d]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0.0,
  "codecs": [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [256, %d],
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "end"}}]
}`, rows, cols, cols, inner)
}

// writeArray writes the benchmark array a shard row at a time.
func writeArray(ctx context.Context, st store.Store, rows, cols, inner int) error {
	meta, err := zarr.ParseArrayMetadata([]byte(metadata(rows, cols, inner)))
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, st, arrayPath, meta)
	if err != nil {
		return err
	}
	buf := make([]byte, 1024*cols*4)
	for r0 := 0; r0 < rows; r0 += 1024 {
		for i := range 1024 {
			for c := range cols {
				binary.LittleEndian.PutUint32(buf[(i*cols+c)*4:], math.Float32bits(value(r0+i, c, cols)))
			}
		}
		if err := a.WriteBytes(ctx, buf, nd.Range(r0, r0+1024), nd.All()); err != nil {
			return err
		}
	}
	return nil
}

// cleanup deletes the S3 array.
func cleanup(ctx context.Context, st *s3.Store) {
	var keys []string
	for key, err := range st.List(ctx, "") {
		if err != nil {
			fmt.Fprintln(os.Stderr, "loaderbench: cleanup:", err)
			return
		}
		keys = append(keys, key)
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			fmt.Fprintln(os.Stderr, "loaderbench: cleanup:", err)
			return
		}
	}
}

// runChild runs j in a new process of this program.
func runChild(j job) (result, error) {
	blob, _ := json.Marshal(j)
	s0, s0ok := serverCPU()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+string(blob))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return result{}, fmt.Errorf("child said %q: %w", out, err)
	}
	r.ServerCPU = -1
	if s1, ok := serverCPU(); ok && j.Store == "s3" && s0ok {
		r.ServerCPU = s1 - s0
	}
	return r, nil
}

// openStore opens j's store, with latency over S3.
func openStore(ctx context.Context, j job) (store.Reader, error) {
	if j.Store == "local" {
		return fs.New(j.Dir, fs.ReadOnly())
	}
	srv, ok := s3test.LookupEnv()
	if !ok {
		return nil, errors.New("GOZARR_S3_* unset")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 128, 64
	client := &http.Client{Transport: s3test.Latency(tr, j.Latency)}
	return s3.Open(ctx, srv.Bucket, j.Prefix, srv.Options(s3.WithHTTPClient(client))...)
}

// measure runs one job in this process.
func measure(ctx context.Context, j job) (result, error) {
	st, err := openStore(ctx, j)
	if err != nil {
		return result{}, err
	}
	cs := loader.NewCountingStore(st)
	a, err := zarr.OpenArray(ctx, cs, arrayPath)
	if err != nil {
		return result{}, err
	}
	kind := map[string]loader.SamplerKind{"sequential": loader.Sequential, "chunk-shuffle": loader.ChunkShuffle,
		"block-shuffle": loader.BlockShuffle, "permutation": loader.Permutation}
	sk, ok := kind[j.Sampler]
	if !ok {
		return result{}, fmt.Errorf("unknown sampler %q", j.Sampler)
	}
	start := time.Now()
	l, err := loader.New(ctx, loader.Dataset{Fields: []loader.Field{{Name: "rows", Array: a}}}, loader.Config{
		BatchSize: j.Batch, Sampler: loader.Sampler{Kind: sk, K: j.K}, Seed: j.Seed,
		Budget: j.Budget, Reads: j.Reads, Prefetch: j.Prefetch, Counter: cs,
	})
	if err != nil {
		return result{}, err
	}
	defer l.Close()
	for n := 0; j.Batches == 0 || n < j.Batches; n++ {
		b, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return result{}, err
		}
		rowBytes := j.Cols * 4
		for i, s := range b.Samples {
			c := (i * 7) % j.Cols
			got := math.Float32frombits(binary.LittleEndian.Uint32(b.Data[0][i*rowBytes+c*4:]))
			if want := value(s, c, j.Cols); got != want {
				return result{}, fmt.Errorf("batch %d sample %d column %d: %v, want %v", b.Index, s, c, got, want)
			}
		}
		b.Release()
	}
	secs := time.Since(start).Seconds()
	s := l.Stats()
	r := result{Job: j, Samples: s.Samples, Seconds: secs, Delivered: s.DeliveredBytes, Decoded: s.DecodedBytes,
		Fetched: s.FetchedBytes, Requests: cs.Requests(), StallMS: float64(s.Stall.Microseconds()) / 1e3,
		ReadP50MS: float64(s.Read.P50.Microseconds()) / 1e3, ReadP99MS: float64(s.Read.P99.Microseconds()) / 1e3,
		FetchP50MS: float64(s.Fetch.P50.Microseconds()) / 1e3, FetchP99MS: float64(s.Fetch.P99.Microseconds()) / 1e3,
		PeakRSS: peakRSS(), CPU: selfCPU()}
	if s.DistinctChunks > 0 {
		r.ChunkReuse = float64(s.ChunkDecodes) / float64(s.DistinctChunks)
	}
	return r, nil
}

// selfCPU returns this process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// serverCPU returns the CPU seconds of the S3 server .ci/s3server.sh runs
// (its pid file; GOZARR_S3_STATE or /tmp/gozarr-s3), from /proc/<pid>/stat.
func serverCPU() (float64, bool) {
	dir := cmp.Or(os.Getenv("GOZARR_S3_STATE"), "/tmp/gozarr-s3")
	pid, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		return 0, false
	}
	// utime and stime: the 12th and 13th fields after the command name,
	// which is in parentheses; in ticks of 1/100 s.
	_, rest, _ := strings.Cut(string(b), ")")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, err1 == nil && err2 == nil
}

// peakRSS returns this process's VmHWM (its own since exec), or -1.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// pythonRun runs the block-shuffled reads with zarr-python, when its
// chroot exists, and returns its report line (or why not).
func pythonRun(dir string, rows, batch, k int) string {
	tool, _ := filepath.Abs("../shared/tools/zarr-python")
	if _, err := os.Stat("/tmp/refenv/usr/bin/python3"); err != nil {
		return "zarr-python: skipped (no chroot at /tmp/refenv; bash ../shared/tools/zarr-python-env.sh builds it)"
	}
	if _, err := os.Stat(tool); err != nil {
		return "zarr-python: skipped (no " + tool + ")"
	}
	script := filepath.Join(dir, "blockshuffle.py")
	if err := os.WriteFile(script, []byte(pyScript), 0o644); err != nil {
		return "zarr-python: " + err.Error()
	}
	cmd := exec.Command(tool, script, filepath.Join(dir, arrayPath), strconv.Itoa(batch), strconv.Itoa(k), "256")
	cmd.Env = append(os.Environ(), "REFPY_BIND="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Sprintf("zarr-python: failed (%v)", err)
	}
	return "zarr-python 3.4 block-shuffle (local, a Python loop over zarr.Array slices): " + strings.TrimSpace(string(out))
}

// pyScript is zarr-python reading the array as block-shuffle does: K random
// blocks of 256 rows per window, read one slice each, shuffled together,
// cut into batches.
const pyScript = `import sys, time, numpy as np, zarr
path, batch, k, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
a = zarr.open_array(path, mode="r")
rng = np.random.default_rng(1)
nb = a.shape[0] // block
t0 = time.perf_counter()
n = 0
order = rng.permutation(nb)
for w in range(0, nb, k):
    win = np.concatenate([a[b*block:(b+1)*block] for b in order[w:w+k]])
    win = win[rng.permutation(len(win))]
    for i in range(0, len(win), batch):
        n += len(win[i:i+batch])
dt = time.perf_counter() - t0
print(f"{n/dt:.0f} samples/s ({n} samples in {dt:.2f} s)")
`

// report prints the results as a markdown table and the ratios.
func report(w io.Writer, rs []result, note, py string, args []string) {
	fmt.Fprintf(w, "loaderbench %s\n\n", strings.Join(args, " "))
	if len(rs) > 0 {
		j := rs[0].Job
		fmt.Fprintf(w, "%d rows × %d float32 (%d MiB), zstd-sharded (shards 1024 rows, inner 256 × %d); batch %d, K %d, budget %d MiB, reads %d, prefetch %d\n\n",
			j.Rows, j.Cols, int64(j.Rows)*int64(j.Cols)*4>>20, j.Inner, j.Batch, j.K, j.Budget>>20, j.Reads, j.Prefetch)
	}
	fmt.Fprintln(w, "| store | sampler | samples | samples/s | MB/s | decoded ÷ delivered | fetched ÷ delivered | requests | chunk reuse | stall ms | read p50/p99 ms | fetch p50/p99 ms | CPU s (server) | samples per CPU s | peak RSS MiB | RSS limit MiB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	rate := map[string]float64{}
	for _, r := range rs {
		j := r.Job
		name := j.Store
		if j.Latency > 0 {
			name += fmt.Sprintf(" +%v", j.Latency)
		}
		limit := j.Budget + int64(j.Batch*j.Cols*4) + 64<<20
		cpu, all := fmt.Sprintf("%.1f", r.CPU), r.CPU
		if r.ServerCPU >= 0 {
			cpu += fmt.Sprintf(" (%.1f)", r.ServerCPU)
			all += r.ServerCPU
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.0f | %.3f | %.3f | %d | %.2f | %.0f | %.1f / %.1f | %.1f / %.1f | %s | %.0f | %d | %d |\n",
			name, j.Sampler, r.Samples, r.rate(), float64(r.Delivered)/r.Seconds/1e6, r.amp(),
			float64(r.Fetched)/float64(r.Delivered), r.Requests, r.ChunkReuse, r.StallMS, r.ReadP50MS, r.ReadP99MS, r.FetchP50MS, r.FetchP99MS, cpu, float64(r.Samples)/all, r.PeakRSS>>20, limit>>20)
		key := j.Store + "/" + j.Sampler
		if j.Store == "s3" && j.Latency == 0 {
			key += "/0"
		}
		rate[key] = r.rate()
	}
	fmt.Fprintln(w)
	ratio := func(label, a, b string, target float64) {
		if rate[a] > 0 && rate[b] > 0 {
			x := rate[a] / rate[b]
			ok := "meets"
			if x < target {
				ok = "MISSES"
			}
			fmt.Fprintf(w, "- %s: %.2f (target ≥ %.2f: %s)\n", label, x, target, ok)
		}
	}
	ratio("block-shuffle ÷ sequential, local", "local/block-shuffle", "local/sequential", 0.8)
	ratio("chunk-shuffle ÷ sequential, local", "local/chunk-shuffle", "local/sequential", 0.8)
	ratio("block-shuffle over S3 with latency ÷ local", "s3/block-shuffle", "local/block-shuffle", 0.8)
	ratio("block-shuffle over S3 with latency ÷ over S3 without (latency hidden)", "s3/block-shuffle", "s3/block-shuffle/0", 0.8)
	ratio("sequential over S3 with latency ÷ local", "s3/sequential", "local/sequential", 0.8)
	if note != "" {
		fmt.Fprintln(w, "-", note)
	}
	if py != "" {
		fmt.Fprintln(w, "-", py)
	}
}
