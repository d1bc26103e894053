// Command zarrsbench runs zarrs' benchmark suite (github.com/zarrs/zarr_benchmarks)
// side by side: gozarr and zarr-python 3.4 (in the reference chroot) read
// and round-trip the same three 1024³ uint16 arrays, each run in a fresh
// process, with its wall time, CPU time and peak RSS, and the ratios are
// printed beside those zarrs' README publishes for zarrs and tensorstore
// (measured on 8 cores).
//
//	go run ./bench/zarrsbench [-dir /tmp/zarrsbench] [-small] [-reps 3] [-data python|gozarr] [-only TEXT] [-profile DIR] [-peers=false]
//
// The arrays (made once under -dir and reused; about 2.6 GiB each set at
// full size, 40 MiB with -small, which is 256³):
//   - uncompressed: 256³ chunks, no compression;
//   - compressed: 256³ chunks, zstd level 0 (libzstd's default), no checksum;
//   - sharded: 256³ shards of 64³ inner chunks, zstd level 0 inside;
//
// holding zarrs' values v[z, y, x] = (x + y²/32 + z³) mod 65536, written
// by zarr-python (-data python, the default when the chroot is there) or
// by gozarr (-data gozarr): each implementation reads both (the test
// checks this at a small size).
//
// Workloads, as zarrs' scripts run them: read-all (one read of the whole
// array into memory); chunks/cN (every chunk, or shard, read as a box, N
// at a time); subchunks/cN (every inner chunk of the sharded array, N at a
// time); roundtrip (read all and write it to a new array with the same
// codecs). N is 1, 2 and 8. Each run is a fresh process; the best of -reps
// runs is kept for each figure (as zarrs keeps the best of 5). The page
// cache is warm: this shared machine's caches are not dropped.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// layouts are zarrs' three benchmark arrays.
var layouts = []string{"uncompressed", "compressed", "sharded"}

// value is zarrs' benchmark value at [z, y, x].
func value(z, y, x int) uint16 {
	return uint16((uint64(x) + uint64(y)*uint64(y)/32 + uint64(z)*uint64(z)*uint64(z)) % 65536)
}

// fillBox writes the values of the box at o, shape s (C order) into out.
func fillBox(out []uint16, o, s [3]int) {
	i := 0
	for z := o[0]; z < o[0]+s[0]; z++ {
		for y := o[1]; y < o[1]+s[1]; y++ {
			for x := o[2]; x < o[2]+s[2]; x++ {
				out[i] = value(z, y, x)
				i++
			}
		}
	}
}

// geometry is the array side n, the chunk (shard) side and the inner
// chunk side of the sharded layout: n/4 and n/16, as zarrs' 1024, 256, 64.
type geometry struct{ n, chunk, inner int }

func geom(n int) geometry { return geometry{n, n / 4, n / 16} }

// metadata returns the metadata of layout for g.
func metadata(layout string, g geometry) (*zarr.ArrayMetadata, error) {
	shape := []int{g.n, g.n, g.n}
	chunk := []int{g.chunk, g.chunk, g.chunk}
	zstd, err := codecs.NewZstd(0, false)
	if err != nil {
		return nil, err
	}
	switch layout {
	case "uncompressed":
		return zarr.NewArrayMetadata(shape, dtype.TypeUint16, chunk)
	case "compressed":
		return zarr.NewArrayMetadata(shape, dtype.TypeUint16, chunk, zarr.Compress(zstd))
	case "sharded":
		return zarr.NewArrayMetadata(shape, dtype.TypeUint16, []int{g.inner, g.inner, g.inner}, zarr.Shards(chunk...), zarr.Compress(zstd))
	}
	return nil, fmt.Errorf("unknown layout %q", layout)
}

// makeGozarr writes layout at path with gozarr, one chunk (shard) at a
// time, two at once.
func makeGozarr(ctx context.Context, path, layout string, g geometry) error {
	meta, err := metadata(layout, g)
	if err != nil {
		return err
	}
	os.RemoveAll(path)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	st, err := fs.New(path)
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		return err
	}
	var next atomic.Int64
	nb := g.n / g.chunk
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			buf := make([]uint16, g.chunk*g.chunk*g.chunk)
			for {
				i := int(next.Add(1) - 1)
				if i >= nb*nb*nb || errs[w] != nil {
					return
				}
				o := [3]int{i / (nb * nb) * g.chunk, i / nb % nb * g.chunk, i % nb * g.chunk}
				fillBox(buf, o, [3]int{g.chunk, g.chunk, g.chunk})
				errs[w] = zarr.Write(ctx, a, buf, boxItems(o, g.chunk)...)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func boxItems(o [3]int, side int) []nd.Item {
	return []nd.Item{nd.Range(o[0], o[0]+side), nd.Range(o[1], o[1]+side), nd.Range(o[2], o[2]+side)}
}

// ensure makes the array of layout by writer under dir unless it is there
// already (with a marker naming its geometry) and returns its path.
func ensure(ctx context.Context, dir, writer, layout string, g geometry, py string) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("%s-%d", writer, g.n), layout+".zarr")
	marker := filepath.Join(filepath.Dir(path), layout+".done")
	made := fmt.Sprintf("%v\n", g)
	if b, err := os.ReadFile(marker); err == nil && string(b) == made {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "zarrsbench: writing %s with %s (%d³)…\n", layout, writer, g.n)
	var err error
	if writer == "gozarr" {
		err = makeGozarr(ctx, path, layout, g)
	} else {
		_, err = runPython(py, "gen", path, layout, strconv.Itoa(g.n))
	}
	if err != nil {
		return "", fmt.Errorf("writing %s with %s: %w", layout, writer, err)
	}
	return path, os.WriteFile(marker, []byte(made), 0o644)
}

// childResult is what a measured process prints: the seconds of its timed
// region and how many values it checked against the formula.
type childResult struct {
	Seconds float64 `json:"seconds"`
	Checked int64   `json:"checked"`
}

// run is one measured process: its timed region, its whole wall time, CPU
// time (user + system) and peak RSS.
type run struct {
	Timed, Wall, CPU float64
	RSS              int64
}

// measure runs cmd as a fresh process and returns its figures.
func measure(cmd *exec.Cmd) (run, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0).Seconds()
	if err != nil {
		return run{}, fmt.Errorf("%v: %w: %s", cmd.Args, err, lastLines(stderr.String(), 5))
	}
	var cr childResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &cr); err != nil || cr.Checked == 0 {
		return run{}, fmt.Errorf("%v: output %q: %v", cmd.Args, out, err)
	}
	r := run{Timed: cr.Seconds, Wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		r.RSS = int64(ru.Maxrss) << 10
	}
	return r, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// pythonScript is the zarr-python side, beside this file: its path from
// the repository's root (the command's working directory) or from this
// folder (the tests').
var pythonScript = func() string {
	for _, p := range []string{"bench/zarrsbench/zarr_python_zarrsbench.py", "zarr_python_zarrsbench.py"} {
		if _, err := os.Stat(p); err == nil {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	return ""
}()

func pythonCmd(py string, args ...string) *exec.Cmd {
	script := pythonScript
	cmd := exec.Command(py, append([]string{script}, args...)...)
	bind := []string{filepath.Dir(script), "/tmp"}
	for _, a := range args {
		if filepath.IsAbs(a) && !strings.HasPrefix(a, "/tmp/") {
			bind = append(bind, filepath.Dir(a))
		}
	}
	cmd.Env = append(os.Environ(), "REFPY_BIND="+strings.Join(slices.Compact(bind), ":"))
	return cmd
}

func runPython(py string, args ...string) (run, error) { return measure(pythonCmd(py, args...)) }

// workload is one of zarrs' benchmarks on one layout.
type workload struct {
	layout, name string
	args         []string // the child's arguments after the array's path
}

func workloads(only string) []workload {
	var ws []workload
	for _, l := range layouts {
		ws = append(ws, workload{l, "read-all", []string{"read", "all", "1"}})
		for _, c := range []string{"1", "2", "8"} {
			ws = append(ws, workload{l, "chunks/c" + c, []string{"read", "chunks", c}})
		}
		if l == "sharded" {
			for _, c := range []string{"1", "2", "8"} {
				ws = append(ws, workload{l, "subchunks/c" + c, []string{"read", "subchunks", c}})
			}
		}
		ws = append(ws, workload{l, "roundtrip", []string{"roundtrip"}})
	}
	return slices.DeleteFunc(ws, func(w workload) bool { return !strings.Contains(w.layout+"/"+w.name, only) })
}

// published are the figures of zarrs' README (github.com/zarrs/zarr_benchmarks
// at 5f65c77, measurements/*.md; 8-core Intel Core Ultra 7 268V, caches
// dropped, best of 5): seconds for zarrs, tensorstore and zarr-python 3.1.5.
var published = map[string][3]float64{
	"uncompressed/read-all":  {0.54, 0.72, 1.03},
	"compressed/read-all":    {0.27, 0.53, 0.82},
	"sharded/read-all":       {0.45, 0.60, 1.97},
	"uncompressed/chunks/c1": {0.93, 1.73, 1.93},
	"uncompressed/chunks/c2": {0.59, 1.04, 1.14},
	"uncompressed/chunks/c8": {0.49, 0.73, 1.00},
	"compressed/chunks/c1":   {0.38, 1.10, 1.28},
	"compressed/chunks/c2":   {0.22, 0.69, 0.91},
	"compressed/chunks/c8":   {0.10, 0.45, 0.67},
	"sharded/chunks/c1":      {0.68, 1.71, 2.11},
	"sharded/chunks/c2":      {0.48, 1.01, 1.81},
	"sharded/chunks/c8":      {0.35, 0.57, 1.83},
	"sharded/subchunks/c1":   {1.80, 3.81, 7.34},
	"sharded/subchunks/c2":   {0.96, 2.75, 3.78},
	"sharded/subchunks/c8":   {0.49, 0.85, 3.65},
	"uncompressed/roundtrip": {0.59, 2.04, 4.03},
	"compressed/roundtrip":   {0.46, 2.04, 3.81},
	"sharded/roundtrip":      {1.37, 1.46, 7.23},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		if err := child(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "zarrsbench child:", err)
			os.Exit(1)
		}
		return
	}
	dir := flag.String("dir", filepath.Join(os.TempDir(), "zarrsbench"), "where the arrays are made (once) and kept")
	small := flag.Bool("small", false, "256³ arrays (64³ chunks, 16³ inner chunks) in place of 1024³: a quick run")
	size := flag.Int("size", 0, "array side (a multiple of 16; overrides -small)")
	reps := flag.Int("reps", 3, "fresh processes per workload and implementation (the best is kept)")
	data := flag.String("data", "", "which implementation writes the arrays: python or gozarr (default python when the chroot is there)")
	only := flag.String("only", "", "run only the workloads whose layout/name contains this text")
	profile := flag.String("profile", "", "write a CPU profile of each gozarr workload (its last run) into this folder")
	peers := flag.Bool("peers", true, "also time zarr-python 3.4 in the reference chroot")
	flag.Parse()
	n := 1024
	if *small {
		n = 256
	}
	if *size > 0 {
		n = *size
	}
	if n%16 != 0 || n < 16 {
		fmt.Fprintln(os.Stderr, "zarrsbench: -size must be a positive multiple of 16")
		os.Exit(2)
	}
	if err := bench(*dir, geom(n), *reps, *data, *only, *profile, *peers); err != nil {
		fmt.Fprintln(os.Stderr, "zarrsbench:", err)
		os.Exit(1)
	}
}

// zarrPython returns the zarr-python wrapper when the chroot is present.
func zarrPython() (string, error) {
	tool, err := filepath.Abs("../shared/tools/zarr-python")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(tool); err != nil {
		return "", fmt.Errorf("no %s", tool)
	}
	env := os.Getenv("REFENV")
	if env == "" {
		env = "/tmp/refenv"
	}
	if _, err := os.Stat(filepath.Join(env, "usr/bin/python3")); err != nil {
		return "", fmt.Errorf("no chroot at %s (build it with ../shared/tools/zarr-python-env.sh)", env)
	}
	return tool, nil
}

func bench(dir string, g geometry, reps int, data, only, profile string, peers bool) error {
	ctx := context.Background()
	if pythonScript == "" {
		return errors.New("run from the repository's root (bench/zarrsbench/zarr_python_zarrsbench.py not found)")
	}
	py, pyErr := zarrPython()
	if pyErr != nil {
		if peers || data == "python" {
			fmt.Fprintln(os.Stderr, "zarrsbench: zarr-python:", pyErr, "— peers skipped, gozarr writes the data")
		}
		peers = false
	}
	if data == "" {
		data = "python"
		if pyErr != nil {
			data = "gozarr"
		}
	}
	if data == "python" && pyErr != nil {
		return pyErr
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			return err
		}
	}
	paths := map[string]string{}
	for _, l := range layouts {
		if paths[l], err = ensure(ctx, dir, data, l, g, py); err != nil {
			return err
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("zarrs' benchmark, %d³ uint16 (chunks %d³, inner chunks %d³), data written by %s, best of %d fresh processes, GOMAXPROCS %d, load %s\n\n",
		g.n, g.chunk, g.inner, data, reps, runtime.GOMAXPROCS(0), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| layout | workload | gozarr wall | CPU | peak RSS | zarr-python wall | CPU | peak RSS | gozarr faster by (wall) | (timed region) | (CPU) | zarrs (8 cores) | tensorstore (8 cores) |")
	fmt.Println("| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
	for _, w := range workloads(only) {
		path := paths[w.layout]
		var goRuns, pyRuns []run
		for rep := range reps {
			args := append([]string{"-child"}, w.args[0], path)
			args = append(args, w.args[1:]...)
			out := filepath.Join(dir, "roundtrip-out.zarr")
			if w.args[0] == "roundtrip" {
				args = append(args, out)
			}
			if profile != "" && rep == reps-1 {
				args = append(args, "-cpuprofile="+filepath.Join(profile, strings.ReplaceAll(w.layout+"-"+w.name, "/", "-")+".prof"))
			}
			r, err := measure(exec.Command(self, args...))
			os.RemoveAll(out)
			if err != nil {
				return fmt.Errorf("gozarr %s/%s: %w", w.layout, w.name, err)
			}
			goRuns = append(goRuns, r)
			if peers {
				pargs := append([]string{w.args[0], path}, w.args[1:]...)
				if w.args[0] == "roundtrip" {
					pargs = append(pargs, out)
				}
				r, err := runPython(py, pargs...)
				os.RemoveAll(out)
				if err != nil {
					return fmt.Errorf("zarr-python %s/%s: %w", w.layout, w.name, err)
				}
				pyRuns = append(pyRuns, r)
			}
		}
		gb, pb := best(goRuns), best(pyRuns)
		line := fmt.Sprintf("| %s | %s | %.2f s | %.2f s | %s | ", w.layout, w.name, gb.Wall, gb.CPU, mib(gb.RSS))
		if peers {
			line += fmt.Sprintf("%.2f s | %.2f s | %s | %.1f× | %.1f× | %.1f× | ", pb.Wall, pb.CPU, mib(pb.RSS), pb.Wall/gb.Wall, pb.Timed/gb.Timed, pb.CPU/gb.CPU)
		} else {
			line += "— | — | — | — | — | — | "
		}
		if p, ok := published[w.layout+"/"+w.name]; ok && g.n == 1024 {
			line += fmt.Sprintf("%.1f× | %.1f× |", p[2]/p[0], p[2]/p[1])
		} else {
			line += "— | — |"
		}
		fmt.Println(line)
		fmt.Fprintf(os.Stderr, "  %s/%s timed regions: gozarr %s; zarr-python %s\n", w.layout, w.name, timed(goRuns), timed(pyRuns))
	}
	return nil
}

// best is the minimum of each figure over runs (zarrs keeps the best of 5
// of each).
func best(rs []run) run {
	if len(rs) == 0 {
		return run{}
	}
	b := rs[0]
	for _, r := range rs[1:] {
		b.Timed, b.Wall, b.CPU, b.RSS = min(b.Timed, r.Timed), min(b.Wall, r.Wall), min(b.CPU, r.CPU), min(b.RSS, r.RSS)
	}
	return b
}

func timed(rs []run) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.2f", r.Timed))
	}
	return strings.Join(s, " ") + " s"
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// child is a measured process: read PATH all|chunks|subchunks CONC,
// roundtrip PATH OUT or verify PATH, with an optional -cpuprofile=FILE
// last. It prints a childResult.
func child(args []string) error {
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "-cpuprofile=") {
		f, err := os.Create(strings.TrimPrefix(args[n-1], "-cpuprofile="))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
		args = args[:n-1]
	}
	if len(args) < 2 {
		return fmt.Errorf("child: arguments %q", args)
	}
	ctx := context.Background()
	st, err := fs.New(args[1], fs.ReadOnly())
	if err != nil {
		return err
	}
	a, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		return err
	}
	var res childResult
	switch {
	case args[0] == "read" && len(args) == 4:
		conc, err := strconv.Atoi(args[3])
		if err != nil || conc < 1 {
			return fmt.Errorf("child: concurrency %q", args[3])
		}
		res, err = read(ctx, a, args[2], conc)
		if err != nil {
			return err
		}
	case args[0] == "roundtrip" && len(args) == 3:
		if res, err = roundtrip(ctx, a, args[2]); err != nil {
			return err
		}
	case args[0] == "verify" && len(args) == 2:
		if res, err = verify(ctx, a); err != nil {
			return err
		}
	default:
		return fmt.Errorf("child: arguments %q", args)
	}
	b, _ := json.Marshal(res)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "%s\n", b)
	return w.Flush()
}

// check compares 64 random values of out (the box at o, shape s) with the
// formula.
func check(out []uint16, o, s [3]int, r *rand.Rand) (int64, error) {
	for range 64 {
		p := [3]int{r.IntN(s[0]), r.IntN(s[1]), r.IntN(s[2])}
		got := out[(p[0]*s[1]+p[1])*s[2]+p[2]]
		if want := value(o[0]+p[0], o[1]+p[1], o[2]+p[2]); got != want {
			return 0, fmt.Errorf("value at [%d %d %d] is %d, want %d", o[0]+p[0], o[1]+p[1], o[2]+p[2], got, want)
		}
	}
	return 64, nil
}

// read reads all of a, or every chunk (shard) or inner chunk as a box,
// conc at a time, each reader into its own buffer.
func read(ctx context.Context, a *zarr.Array, mode string, conc int) (childResult, error) {
	shape := a.Shape()
	if len(shape) != 3 {
		return childResult{}, fmt.Errorf("array of rank %d", len(shape))
	}
	r := rand.New(rand.NewPCG(1, 2))
	if mode == "all" {
		out := make([]uint16, nd.NumElements(shape))
		t0 := time.Now()
		if err := zarr.ReadInto(ctx, a, out); err != nil {
			return childResult{}, err
		}
		t := time.Since(t0).Seconds()
		n, err := check(out, [3]int{}, [3]int(shape), r)
		return childResult{t, n}, err
	}
	box, _ := a.Units() // the shard shape of a sharded array
	if mode == "subchunks" {
		if a.Sharding() == nil {
			return childResult{}, fmt.Errorf("subchunks of an array that is not sharded")
		}
		box = a.Sharding().ChunkShape()
	} else if mode != "chunks" {
		return childResult{}, fmt.Errorf("read mode %q", mode)
	}
	var grid [3]int
	for d := range 3 {
		grid[d] = (shape[d] + box[d] - 1) / box[d]
	}
	total := grid[0] * grid[1] * grid[2]
	var next atomic.Int64
	var checked atomic.Int64
	errs := make([]error, conc)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := range conc {
		wr := rand.New(rand.NewPCG(uint64(w), 3))
		wg.Go(func() {
			buf := make([]uint16, box[0]*box[1]*box[2])
			for {
				i := int(next.Add(1) - 1)
				if i >= total || errs[w] != nil {
					return
				}
				var o, s [3]int
				c := [3]int{i / (grid[1] * grid[2]), i / grid[2] % grid[1], i % grid[2]}
				items := make([]nd.Item, 3)
				for d := range 3 {
					o[d] = c[d] * box[d]
					s[d] = min(box[d], shape[d]-o[d])
					items[d] = nd.Range(o[d], o[d]+s[d])
				}
				out := buf[:s[0]*s[1]*s[2]]
				if errs[w] = zarr.ReadInto(ctx, a, out, items...); errs[w] != nil {
					return
				}
				var n int64
				n, errs[w] = check(out, o, s, wr)
				checked.Add(n)
			}
		})
	}
	wg.Wait()
	t := time.Since(t0).Seconds()
	return childResult{t, checked.Load()}, errors.Join(errs...)
}

// roundtrip reads all of a and writes it to a new array at out with the
// same metadata, as zarrs' zarr-python round trip does (out[:] = a[:]).
func roundtrip(ctx context.Context, a *zarr.Array, out string) (childResult, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return childResult{}, err
	}
	st, err := fs.New(out)
	if err != nil {
		return childResult{}, err
	}
	t0 := time.Now()
	b, err := zarr.CreateArray(ctx, st, "", a.Metadata())
	if err != nil {
		return childResult{}, err
	}
	buf := make([]uint16, nd.NumElements(a.Shape()))
	if err := zarr.ReadInto(ctx, a, buf); err != nil {
		return childResult{}, err
	}
	if err := zarr.Write(ctx, b, buf); err != nil {
		return childResult{}, err
	}
	t := time.Since(t0).Seconds()
	// Read a corner back from the new array.
	side := min(64, a.Shape()[0], a.Shape()[1], a.Shape()[2])
	corner := make([]uint16, side*side*side)
	if err := zarr.ReadInto(ctx, b, corner, boxItems([3]int{}, side)...); err != nil {
		return childResult{}, err
	}
	n, err := check(corner, [3]int{}, [3]int{side, side, side}, rand.New(rand.NewPCG(2, 2)))
	return childResult{t, n}, err
}

// verify reads all of a and compares every value with the formula.
func verify(ctx context.Context, a *zarr.Array) (childResult, error) {
	shape := a.Shape()
	if len(shape) != 3 {
		return childResult{}, fmt.Errorf("array of rank %d", len(shape))
	}
	out := make([]uint16, nd.NumElements(shape))
	if err := zarr.ReadInto(ctx, a, out); err != nil {
		return childResult{}, err
	}
	want := make([]uint16, len(out))
	fillBox(want, [3]int{}, [3]int(shape))
	if i := slices.Compare(out, want); i != 0 {
		for j := range out {
			if out[j] != want[j] {
				return childResult{}, fmt.Errorf("value %d of %v is %d, want %d", j, shape, out[j], want[j])
			}
		}
	}
	return childResult{0, int64(len(out))}, nil
}
