// Command bench is gozarr's benchmark suite: it generates a float32 array
// (a smooth field plus noise, deterministic) in eight layouts, measures
// gozarr reading and writing it, and puts every figure beside the rates of
// memcpy and of the codec's own library decoding the same chunks on all
// cores, and optionally beside zarrita.js reading the same files.
//
// Usage:
//
//	go run ./bench [-quick | -size N] [-peers] [-json FILE] [flags]
//
// Sizes (the array is N×N float32):
//
//	-size 16384 (default)  1 GiB; chunks 512², shards 4096² of 512² inner chunks
//	-size 8192             256 MiB, same chunking (the reference comparison)
//	-quick (= -size 4096)  64 MiB; chunks 256², shards 1024² of 256² inner chunks
//
// Layouts: none, zstd (level 1), gzip (level 1), blosc (lz4, shuffle,
// clevel 5), each unsharded ("zstd") and sharded ("zstd-sharded").
// Workloads: write-all (WriteBytes of the whole array), read-all (ReadBytesInto
// of the whole array into a caller's buffer), chunks (one ReadBytesInto per
// chunk-aligned region: the chunk, or the inner chunk when sharded, in C
// order, into one reused buffer), random (-random regions of one inner
// chunk, chosen at random), strided ([::7, ::3]).
//
// Each measurement runs in its own child process (this binary re-run with
// a hidden -child flag), so its peak RSS (VmHWM) is its own. A child runs
// the operation once untimed, then -reps times, and reports its best time,
// the median, the CPU time (user+system) and the heap allocations
// (runtime.MemStats) per repetition. Files are read from the page cache
// (warm): the suite measures gozarr, not the disk.
//
// Ratios to the baselines are measured in interleaved rounds, because on a
// shared machine the speed of the whole machine drifts from one second to
// the next (CPU time is inflated too, not only waiting). A layout×workload
// runs -rounds rounds (read-all; default 3) or -other-rounds rounds (the
// other workloads; default 1, since their ratios are not targets and the
// codec-only baseline decodes the whole array each round). One round is
// two children: the isolated workload child, whose times, allocations and
// peak RSS are the row's, and a paired child that runs the workload,
// memcpy of the output size and the codec-only decode on all cores
// (compressed layouts) back to back, -reps times, rotating which goes
// first; the round's ratio is the median over those repetitions of
// baseline ÷ workload. The two children alternate order between rounds.
// Each ratio is reported as the median over rounds of the rounds' ratios,
// which the targets use, and as best/best (the best baseline time over
// all rounds ÷ the best workload time). Times are the best over all
// rounds, allocations and peak RSS the worst round's. The codec-only
// baseline on one core is measured once per layout, in its own child.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gozarr/gozarr/pipeline"
)

//go:embed zarrita_bench.mjs
var zarritaScript []byte

// zarritaVersion is the zarrita.js release the suite installs.
const zarritaVersion = "0.7.5"

var workloads = []string{"write-all", "read-all", "chunks", "random", "strided"}

// opts are the command-line settings.
type opts struct {
	size, chunk, shard, inner int
	quick                     bool
	dir                       string
	keep                      bool
	reps, peerReps            int
	rounds, otherRounds       int
	random                    int
	stride                    [2]int
	layouts, workloads        string
	peers                     bool
	zarritaDir                string
	jsonOut                   string
	seed                      uint64
	pipe                      pipeline.Options
}

func main() {
	var o opts
	child := flag.String("child", "", "internal: run one measurement described by this JSON and print its result")
	flag.IntVar(&o.size, "size", 16384, "array edge N (N×N float32); 16384 = 1 GiB, 8192 = 256 MiB")
	flag.BoolVar(&o.quick, "quick", false, "smoke-test preset: -size 4096 (64 MiB), chunks 256, shards 1024 of 256")
	flag.IntVar(&o.chunk, "chunk", 0, "unsharded chunk edge (0: preset)")
	flag.IntVar(&o.shard, "shard", 0, "shard edge (0: preset)")
	flag.IntVar(&o.inner, "inner", 0, "inner chunk edge (0: preset)")
	flag.StringVar(&o.dir, "dir", "", "keep the generated arrays in this directory and reuse them (default: a temporary directory, removed)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory")
	flag.IntVar(&o.reps, "reps", 3, "timed repetitions per measurement (after one untimed run)")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds of read-all (each: the workload child, and a child alternating workload and baselines; ratios are the median over rounds)")
	flag.IntVar(&o.otherRounds, "other-rounds", 1, "interleaved rounds of the other workloads (write-all, chunks, random, strided)")
	flag.IntVar(&o.peerReps, "peer-reps", 0, "timed repetitions for zarrita (0: same as -reps)")
	flag.IntVar(&o.random, "random", 100, "number of random inner-chunk reads")
	flag.IntVar(&o.stride[0], "stride-rows", 7, "row step of the strided workload")
	flag.IntVar(&o.stride[1], "stride-cols", 3, "column step of the strided workload")
	flag.StringVar(&o.layouts, "layouts", "", "comma-separated layouts to run (default all: none, zstd, gzip, blosc and their -sharded forms)")
	flag.StringVar(&o.workloads, "workloads", "", "comma-separated workloads (default all: "+strings.Join(workloads, ", ")+")")
	flag.BoolVar(&o.peers, "peers", false, "also time zarrita.js "+zarritaVersion+" (needs node and npm; installed into a temporary folder)")
	flag.StringVar(&o.zarritaDir, "zarrita-dir", "", "folder where zarrita is (or will be) installed with npm (default: a temporary folder)")
	flag.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the noise and of the random regions")
	flag.IntVar(&o.pipe.IOConcurrency, "io", 0, "pipeline I/O concurrency (0: default)")
	flag.IntVar(&o.pipe.DecodeConcurrency, "decode", 0, "pipeline decode concurrency (0: default GOMAXPROCS)")
	flag.Int64Var(&o.pipe.MaxBytesInFlight, "inflight", 0, "pipeline bytes-in-flight cap (0: default)")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// presetGeometry returns the chunking of a run.
func presetGeometry(o opts) geometry {
	g := geometry{N: o.size, Chunk: 512, Shard: 4096, Inner: 512, Seed: o.seed}
	if o.quick {
		g.N = 4096
	}
	if g.N <= 4096 {
		g.Chunk, g.Shard, g.Inner = 256, 1024, 256
	}
	if o.chunk > 0 {
		g.Chunk = o.chunk
	}
	if o.shard > 0 {
		g.Shard = o.shard
	}
	if o.inner > 0 {
		g.Inner = o.inner
	}
	g.Shard = min(g.Shard, g.N)
	return g
}

// suite is one run of the benchmark.
type suite struct {
	o       opts
	g       geometry
	root    string                      // holds one directory per layout
	command func(spec []byte) *exec.Cmd // starts a child process for a job spec
	nodeDir string                      // node_modules with zarrita, "" when peers are off or missing
	rep     report
}

func run(o opts) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	s := &suite{o: o, command: func(spec []byte) *exec.Cmd { return exec.Command(exe, "-child", string(spec)) }}
	base := o.dir
	if base == "" {
		if base, err = os.MkdirTemp("", "gozarr-bench-"); err != nil {
			return err
		}
		if o.keep {
			fmt.Fprintln(os.Stderr, "keeping data in", base)
		} else {
			defer os.RemoveAll(base)
		}
	}
	return s.run(base, os.Stdout)
}

// run measures every selected layout×workload with data under base and
// writes the markdown report to w (and the JSON to -json).
func (s *suite) run(base string, w io.Writer) error {
	start := time.Now()
	o := s.o
	g := presetGeometry(o)
	if g.N <= 0 || g.Chunk <= 0 || g.Inner <= 0 || g.Shard%g.Inner != 0 {
		return fmt.Errorf("bad geometry %+v: shard edge must be a multiple of the inner chunk edge", g)
	}
	s.g = g
	s.root = filepath.Join(base, fmt.Sprintf("n%d-c%d-s%d-i%d-seed%d", g.N, g.Chunk, g.Shard, g.Inner, g.Seed))
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return err
	}
	layouts, err := pick(allLayouts(), o.layouts, func(l layout) string { return l.Name })
	if err != nil {
		return err
	}
	wls, err := pick(workloads, o.workloads, func(w string) string { return w })
	if err != nil {
		return err
	}
	if o.peers {
		s.nodeDir, err = installZarrita(o.zarritaDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peers: zarrita.js unavailable:", err)
		}
	}
	s.rep = report{
		Command: "go run ./bench " + strings.Join(os.Args[1:], " "), Revision: revision(),
		Geometry: g, GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		Pipeline: o.pipe.WithDefaults(), Date: time.Now().UTC().Format(time.RFC3339),
		Reps: o.reps, Rounds: s.roundsOf("read-all"), OtherRounds: s.roundsOf("chunks"),
		Random: o.random, Stride: o.stride,
	}
	if s.nodeDir != "" {
		s.rep.Zarrita = zarritaVersion
	}
	fmt.Fprintf(os.Stderr, "bench: %d×%d float32 (%.0f MiB), chunks %d², shards %d² of %d², data in %s\n",
		g.N, g.N, float64(g.bytes())/(1<<20), g.Chunk, g.Shard, g.Inner, s.root)
	for _, l := range layouts {
		if err := s.runLayout(l, wls); err != nil {
			return err
		}
	}
	s.rep.Targets = evaluate(s.rep)
	s.rep.WallSeconds = time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "bench: suite took %.0f s\n", s.rep.WallSeconds)
	printMarkdown(w, s.rep)
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(s.rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// roundsOf returns the number of interleaved rounds of workload w (≥ 1).
func (s *suite) roundsOf(w string) int {
	if w == "read-all" {
		return max(s.o.rounds, 1)
	}
	return max(s.o.otherRounds, 1)
}

// pick filters items by a comma-separated list of names ("" keeps all).
func pick[T any](items []T, list string, name func(T) string) ([]T, error) {
	if list == "" {
		return items, nil
	}
	var out []T
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		i := slices.IndexFunc(items, func(t T) bool { return name(t) == want })
		if i < 0 {
			return nil, fmt.Errorf("unknown name %q", want)
		}
		out = append(out, items[i])
	}
	return out, nil
}

// child runs one job in a new process of this binary.
func (s *suite) child(j job) (result, error) {
	j.Geo, j.Reps, j.Pipe, j.Random, j.Stride = s.g, s.o.reps, s.o.pipe, s.o.random, s.o.stride
	spec, err := json.Marshal(j)
	if err != nil {
		return result{}, err
	}
	cmd := s.command(spec)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("child %s %s %s: %w", j.Mode, j.Layout.Name, j.Workload, err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return result{}, fmt.Errorf("child %s %s %s: %w (output %q)", j.Mode, j.Layout.Name, j.Workload, err, out)
	}
	return r, nil
}

// runLayout measures every workload of one layout.
func (s *suite) runLayout(l layout, wls []string) error {
	dir := filepath.Join(s.root, l.Name)
	marker := dir + ".complete"
	_, statErr := os.Stat(marker)
	info := layoutInfo{Layout: l.Name}
	switch {
	case slices.Contains(wls, "write-all"):
		// Every round rewrites the array; the marker is set once all have.
		os.Remove(marker)
		m, err := s.rounds(l, dir, "write-all")
		if err != nil {
			return err
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
		s.addRow(l, "write-all", m)
	case statErr != nil:
		fmt.Fprintf(os.Stderr, "%-14s generate ...\n", l.Name)
		if _, err := s.child(job{Mode: "write", Layout: l, Dir: dir, Workload: "write-all"}); err != nil {
			return err
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
	}
	var err error
	if info.StoredBytes, err = dirBytes(dir); err != nil {
		return err
	}
	info.Ratio = float64(s.g.bytes()) / float64(info.StoredBytes)
	reads := slices.DeleteFunc(slices.Clone(wls), func(w string) bool { return w == "write-all" })
	if l.Codec != "none" && len(reads) > 0 {
		fmt.Fprintf(os.Stderr, "%-14s codec-only (1 core) ...\n", l.Name)
		one, err := s.child(job{Mode: "codec", Layout: l, Dir: dir, Threads: 1})
		if err != nil {
			return err
		}
		info.Codec1MBps = mbps(one.DecodedBytes, one.Seconds)
	}
	var codecSec, codecCPU []float64 // every all-core codec-only repetition of the layout
	var codecBytes int64
	for _, w := range reads {
		m, err := s.rounds(l, dir, w)
		if err != nil {
			return err
		}
		for _, p := range m.paired {
			if p.Pairs != nil && len(p.Pairs.CodecSeconds) > 0 {
				codecSec, codecCPU = append(codecSec, p.Pairs.CodecSeconds...), append(codecCPU, p.Pairs.CodecCPU...)
				codecBytes = p.Pairs.CodecDecodedBytes
			}
		}
		s.addRow(l, w, m)
	}
	if len(codecSec) > 0 {
		info.CodecMBps = mbps(codecBytes, bestOf(codecSec))
		info.CodecCPUMBps = mbps(codecBytes, bestOf(codecCPU))
	}
	s.rep.Layouts = append(s.rep.Layouts, info)
	return nil
}

// rounds measures one layout×workload in interleaved rounds (see
// rounds.go): each round runs the isolated workload child and the paired
// child (the workload, memcpy and, for reads of a compressed layout, the
// codec-only decode on all cores, alternating repetition by repetition),
// alternating which of the two goes first.
func (s *suite) rounds(l layout, dir, w string) (measured, error) {
	var m measured
	n := s.roundsOf(w)
	wj := job{Mode: "read", Layout: l, Dir: dir, Workload: w}
	if w == "write-all" {
		wj.Mode = "write"
	}
	pj := job{Mode: "pair", Layout: l, Dir: dir, Workload: w, Threads: runtime.GOMAXPROCS(0)}
	workload := func() error {
		r, err := s.child(wj)
		m.work = append(m.work, r)
		return err
	}
	paired := func() error {
		r, err := s.child(pj)
		m.paired = append(m.paired, r)
		return err
	}
	for i := range n {
		fmt.Fprintf(os.Stderr, "%-14s %-9s round %d/%d ...\n", l.Name, w, i+1, n)
		steps := []func() error{workload, paired}
		if i%2 == 1 {
			steps[0], steps[1] = paired, workload
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return m, err
			}
		}
		rr := buildRow(l.Name, w, measured{work: m.work[i:], paired: m.paired[i:]}).Rounds[0]
		line := fmt.Sprintf("%-14s %-9s round %d/%d: %.3f s (cpu %.3f s); paired: %.3f s, memcpy %.3f s ×%.2f",
			l.Name, w, i+1, n, rr.Seconds, rr.CPUSeconds, rr.PairedSeconds, rr.MemcpySeconds, rr.MemcpyRatio)
		if rr.CodecSeconds > 0 {
			line += fmt.Sprintf(", codec-only %.3f s ×%.2f (cpu ×%.2f)", rr.CodecSeconds, rr.CodecRatio, rr.CodecCPURatio)
		}
		fmt.Fprintln(os.Stderr, line)
	}
	return m, nil
}

// addRow turns the rounds of a layout×workload into a report row, with its
// peer.
func (s *suite) addRow(l layout, w string, m measured) {
	row := buildRow(l.Name, w, m)
	if s.nodeDir != "" && w != "write-all" {
		z, err := s.zarrita(l, w)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%-14s %s: zarrita: %v\n", l.Name, w, err)
			row.ZarritaError = err.Error()
		} else {
			row.ZarritaSeconds, row.ZarritaRSSMiB = z.Seconds, float64(z.PeakRSS)/(1<<20)
			row.VsZarrita = z.Seconds / row.Seconds
		}
	}
	fmt.Fprintf(os.Stderr, "%-14s %-9s %8.3f s (cpu %.3f s) %9.1f MB/s  memcpy×%.2f (best/best %.2f) codec×%.2f (best/best %.2f, cpu ×%.2f) alloc %.2f%% rss %.0f MiB zarrita %.3f s\n",
		l.Name, w, row.Seconds, row.CPUSeconds, row.MBps, row.MemcpyRatioMedian, row.MemcpyRatio, row.CodecRatioMedian, row.CodecRatio, row.CodecCPURatioMedian, row.AllocPct, row.PeakRSSMiB, row.ZarritaSeconds)
	s.rep.Rows = append(s.rep.Rows, row)
}

func mbps(n int64, sec float64) float64 {
	if sec <= 0 {
		return 0
	}
	return float64(n) / 1e6 / sec
}

// installZarrita returns the node_modules folder holding zarrita, installing
// it with npm into dir (a temporary folder when dir is "") if needed.
func installZarrita(dir string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", err
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "gozarr-zarrita-"); err != nil {
			return "", err
		}
	}
	nm := filepath.Join(dir, "node_modules")
	manifest, err := os.ReadFile(filepath.Join(nm, "zarrita", "package.json"))
	if err == nil && strings.Contains(string(manifest), `"version": "`+zarritaVersion+`"`) {
		return nm, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "peers: npm install zarrita@%s into %s\n", zarritaVersion, dir)
	cmd := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "zarrita@"+zarritaVersion)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install: %w", err)
	}
	return nm, nil
}

// zarrita times zarrita.js on one layout×workload, in its own node process.
func (s *suite) zarrita(l layout, w string) (result, error) {
	script := filepath.Join(s.root, "zarrita_bench.mjs")
	if err := os.WriteFile(script, zarritaScript, 0o644); err != nil {
		return result{}, err
	}
	reps := s.o.peerReps
	if reps <= 0 {
		reps = s.o.reps
	}
	params := map[string]any{"reps": reps, "stride": s.o.stride}
	unit := s.g.unit(l)
	var rs []region
	switch w {
	case "chunks":
		rs = chunkRegions(s.g.N, unit)
	case "random":
		rs = randomRegions(s.g.N, unit, s.o.random, s.g.Seed)
	}
	if rs != nil {
		boxes := make([][4]int, len(rs))
		for i, r := range rs {
			boxes[i] = [4]int{r.R0, r.C0, r.H, r.W}
		}
		params["regions"] = boxes
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return result{}, err
	}
	var r result
	// Large argument lists go through a file (argv has a size limit).
	arg := string(pj)
	if len(pj) > 64<<10 {
		pf := filepath.Join(s.root, "zarrita_params.json")
		if err := os.WriteFile(pf, pj, 0o644); err != nil {
			return r, err
		}
		arg = "@" + pf
	}
	cmd := exec.Command("node", "--max-old-space-size=8192", script, s.nodeDir, filepath.Join(s.root, l.Name), w, arg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("%w: %s", err, lastLines(stderr.String(), 5))
	}
	var z struct {
		Seconds []float64    `json:"seconds"`
		Samples [][3]float64 `json:"samples"`
	}
	if err := json.Unmarshal(out, &z); err != nil {
		return r, fmt.Errorf("%w (output %q)", err, out)
	}
	for _, sm := range z.Samples {
		if want := value(s.g.Seed, s.g.N, int(sm[0]), int(sm[1])); float32(sm[2]) != want {
			return r, fmt.Errorf("element [%v, %v] reads %v, generator says %v", sm[0], sm[1], sm[2], want)
		}
	}
	r.All, r.Seconds, r.Median = z.Seconds, slices.Min(z.Seconds), median(z.Seconds)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSS = int64(ru.Maxrss) << 10
	}
	return r, nil
}

// revision returns the VCS revision the binary was built from.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	return rev + dirty
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
