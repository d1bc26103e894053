// Command zarrcatbench measures the zarrcat binary against the figures of
// issue 15, in one run:
//
//		go run ./bench/zarrcatbench            # 1 GiB array; ~4 min on 2 cores
//		go run ./bench/zarrcatbench -size 4096 # 64 MiB smoke run
//		go run ./bench/zarrcatbench -skip-cp -skip-s3 -rounds 9  # get and stats only
//
//	  - get: zarrcat get of a float32 array of -size² (16384² = 1 GiB) in
//	    shards of 4096² holding zstd level-1 inner chunks of 512², written to
//	    an .npy file on the work directory's disk, on /dev/shm and to
//	    /dev/null: wall and CPU time and the child's peak RSS, against the
//	    codec-only decode of the same inner chunks (klauspost/compress's zstd
//	    on GOMAXPROCS goroutines, each with a reused buffer, every chunk in
//	    memory beforehand), and against the codec-only decode plus the same
//	    1 GiB written alone (32 MiB writes to a new file in the same place).
//	  - stats: zarrcat stats of the same array, its rate against the
//	    codec-only rate.
//	  - cp: zarrcat cp re-encoding it to blosc lz4 with 1024² chunks in 4096²
//	    shards: wall time and peak RSS; then the same copy killed (SIGKILL)
//	    once half its shards are written and resumed with --resume, compared
//	    file by file with the uninterrupted copy.
//	  - tree: zarrcat tree --size of a group of -arrays arrays (one stored
//	    chunk each) on an S3 server behind a proxy that delays every request
//	    by -latency: the server named by the GOZARR_S3_* variables, or an
//	    in-process gofakes3.
//
// Each zarrcat run is a child process; its peak RSS is what /usr/bin/time
// reports (see measure). get, stats, the codec-only decode and the writes
// alone run in -rounds interleaved rounds after a warm-up round, each round
// in a rotated order, and every ratio is taken within a round, then
// reported as the median over rounds with its range: this shared machine's
// speed drifts from second to second. cp and tree are the median of -reps
// after one warm-up (the kill-and-resume run is done once).
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

type options struct {
	size, shard, inner int
	reps, rounds       int
	skipCp             bool
	only               string
	dir                string
	arrays             int
	latency            time.Duration
	skipS3             bool
	jsonOut            string
}

func main() {
	var o options
	flag.IntVar(&o.size, "size", 16384, "array edge N (N×N float32): 16384 = 1 GiB")
	flag.IntVar(&o.shard, "shard", 4096, "shard edge of the source and of cp's copy")
	flag.IntVar(&o.inner, "inner", 512, "inner chunk edge of the source")
	flag.IntVar(&o.reps, "reps", 3, "timed repetitions of cp and tree (after one warm-up)")
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds of codec-only, write-alone, get and stats (after one warm-up round)")
	flag.BoolVar(&o.skipCp, "skip-cp", false, "skip the cp runs")
	flag.StringVar(&o.only, "only", "", "run only these of the rounds' runs (comma-separated: write, get, get-null, stats, write-shm, get-shm; codec always)")
	flag.StringVar(&o.dir, "dir", "", "work directory, kept (default: a temporary one, removed)")
	flag.IntVar(&o.arrays, "arrays", 1000, "arrays in the group tree lists over S3")
	flag.DurationVar(&o.latency, "latency", 20*time.Millisecond, "delay added to every S3 request of the tree run")
	flag.BoolVar(&o.skipS3, "skip-s3", false, "skip the tree run over S3")
	flag.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "zarrcatbench:", err)
		os.Exit(1)
	}
}

// result is one measured zarrcat run.
type result struct {
	Name    string        `json:"name"`
	Wall    time.Duration `json:"wall_ns"`
	PeakRSS int64         `json:"peak_rss_bytes"`
	CPU     time.Duration `json:"cpu_ns,omitempty"` // user + system
	Note    string        `json:"note,omitempty"`
}

func run(o options) error {
	ctx := context.Background()
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "zarrcatbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	o.shard = min(o.shard, o.size)
	bin := filepath.Join(dir, "zarrcat")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gozarr/gozarr/cmd/zarrcat").CombinedOutput(); err != nil {
		return fmt.Errorf("go build zarrcat: %v\n%s", err, out)
	}
	src := filepath.Join(dir, fmt.Sprintf("src-%d.zarr", o.size))
	if _, err := os.Stat(filepath.Join(src, "zarr.json")); err != nil {
		fmt.Fprintf(os.Stderr, "writing the %d² float32 array (zstd-sharded) to %s\n", o.size, src)
		if err := writeSource(ctx, src, o); err != nil {
			return err
		}
	}
	arrayBytes := int64(o.size) * int64(o.size) * 4
	var results []result
	report := func(r result) {
		results = append(results, r)
		fmt.Printf("%-44s %9.3f s  CPU %6.3f s  peak RSS %7.1f MiB  %s\n", r.Name, r.Wall.Seconds(), r.CPU.Seconds(), float64(r.PeakRSS)/(1<<20), r.Note)
	}

	rounds, err := getAndStatsRounds(bin, src, dir, arrayBytes, o)
	if err != nil {
		return err
	}
	for _, r := range rounds.results {
		report(r)
	}
	if !o.skipCp {
		if err := cpRuns(bin, src, dir, arrayBytes, o, report); err != nil {
			return err
		}
	}
	if !o.skipS3 {
		for _, cons := range []bool{false, true} {
			tree, err := treeOverS3(ctx, bin, o, cons)
			if err != nil {
				return err
			}
			report(tree)
		}
	}
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"size": o.size, "shard": o.shard, "inner": o.inner, "gomaxprocs": runtime.GOMAXPROCS(0), "results": results, "rounds": rounds.perRound}, "", "  ")
		return os.WriteFile(o.jsonOut, append(b, '\n'), 0o644)
	}
	return nil
}

// rounds is what getAndStatsRounds measured: one summary result per
// run, and each round's walls and ratios.
type rounds struct {
	results  []result
	perRound []map[string]float64
}

// task is one run timed in every round.
type task struct {
	name string
	run  func() (result, error)
}

// getAndStatsRounds times, in o.rounds interleaved rounds after a warm-up
// round (each round rotates which run goes first, as the machine's speed
// drifts): the codec-only decode; 1 GiB written alone (32 MiB writes) to
// the work directory and to /dev/shm; zarrcat
// get to an .npy on the work directory's disk, on /dev/shm and to
// /dev/null; and zarrcat stats. Ratios are taken within each round (get
// against the codec-only time, and against the codec-only time plus the
// write alone to the same place; stats' rate against the codec-only
// rate) and reported as the median over rounds with their range.
func getAndStatsRounds(bin, src, dir string, arrayBytes int64, o options) (rounds, error) {
	decode, err := codecOnly(src, o)
	if err != nil {
		return rounds{}, err
	}
	wall := func(f func() (time.Duration, error)) func() (result, error) {
		return func() (result, error) {
			c := cpuTime()
			d, err := f()
			return result{Wall: d, CPU: cpuTime() - c}, err
		}
	}
	buf := make([]byte, 32<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	get := func(out string) func() (result, error) {
		return func() (result, error) {
			if out != os.DevNull {
				defer os.Remove(out)
			}
			return child(bin, "get", "-q", "--format", "npy", "-o", out, src)
		}
	}
	shm := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shm = filepath.Join("/dev/shm", fmt.Sprintf("zarrcatbench-%d", os.Getpid()))
	}
	disk := filepath.Join(dir, "out.npy")
	tasks := []task{
		{"codec", wall(decode)},
		{"write", wall(func() (time.Duration, error) { return writeAlone(disk+".w", buf, arrayBytes) })},
		{"get", get(disk)},
		{"get-null", get(os.DevNull)},
		{"stats", func() (result, error) { return child(bin, "stats", "-q", src) }},
	}
	if shm != "" {
		tasks = append(tasks,
			task{"write-shm", wall(func() (time.Duration, error) { return writeAlone(shm+".w", buf, arrayBytes) })},
			task{"get-shm", get(shm + ".npy")})
	}
	if o.only != "" {
		keep := strings.Split(o.only+",codec", ",")
		tasks = slices.DeleteFunc(tasks, func(t task) bool { return !slices.Contains(keep, t.name) })
	}
	var rs rounds
	runs := map[string][]result{}
	for r := -1; r < max(o.rounds, 1); r++ {
		round := map[string]float64{}
		for k := range tasks {
			t := tasks[(k+max(r, 0))%len(tasks)]
			res, err := t.run()
			if err != nil {
				return rounds{}, fmt.Errorf("%s: %w", t.name, err)
			}
			round[t.name] = res.Wall.Seconds()
			round[t.name+" cpu"] = res.CPU.Seconds()
			if r >= 0 {
				runs[t.name] = append(runs[t.name], res)
			}
		}
		if r < 0 {
			continue // warm-up
		}
		// ratioOf sets round[key] to num over the sum of den, where all ran.
		ratioOf := func(key, num string, den ...string) {
			d := 0.0
			for _, k := range append(den, num) {
				if _, ok := round[k]; !ok {
					return
				}
				if k != num {
					d += round[k]
				}
			}
			round[key] = round[num] / d
		}
		ratioOf("get/codec", "get", "codec")
		ratioOf("get/(codec+write)", "get", "codec", "write")
		ratioOf("get-null/codec", "get-null", "codec")
		ratioOf("get-shm/codec", "get-shm", "codec")
		ratioOf("get-shm/(codec+write-shm)", "get-shm", "codec", "write-shm")
		ratioOf("stats rate/codec rate", "codec", "stats")
		ratioOf("get cpu/codec cpu", "get cpu", "codec cpu")
		ratioOf("get cpu/(codec+write) cpu", "get cpu", "codec cpu", "write cpu")
		ratioOf("get-null cpu/codec cpu", "get-null cpu", "codec cpu")
		ratioOf("stats cpu/codec cpu", "stats cpu", "codec cpu")
		rs.perRound = append(rs.perRound, round)
		line := fmt.Sprintf("round %d:", r+1)
		for _, t := range tasks {
			line += fmt.Sprintf(" %s %.3f s", t.name, round[t.name])
		}
		for _, k := range []string{"get/codec", "get/(codec+write)", "stats rate/codec rate"} {
			if v, ok := round[k]; ok {
				line += fmt.Sprintf(", %s %.2f×", k, v)
			}
		}
		fmt.Fprintln(os.Stderr, line)
	}
	// ratio formats a ratio's median over rounds and its range.
	ratio := func(key string) string {
		var v []float64
		for _, r := range rs.perRound {
			if x, ok := r[key]; ok {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return "-"
		}
		slices.Sort(v)
		return fmt.Sprintf("%.2f× (%.2f–%.2f)", v[len(v)/2], v[0], v[len(v)-1])
	}
	// summary is a run's median wall and largest peak RSS over rounds.
	summary := func(name, label string) result {
		r := slices.Clone(runs[name])
		if len(r) == 0 {
			return result{}
		}
		slices.SortFunc(r, func(a, b result) int { return int(a.Wall - b.Wall) })
		m := r[len(r)/2]
		for _, x := range r {
			m.PeakRSS = max(m.PeakRSS, x.PeakRSS)
		}
		m.Name = label
		m.Note = fmt.Sprintf("%s; range %.3f–%.3f s", rate(arrayBytes, m.Wall), r[0].Wall.Seconds(), r[len(r)-1].Wall.Seconds())
		return m
	}
	n := len(rs.perRound)
	add := func(r result, note string) {
		if r.Name == "" {
			return // not run (-only)
		}
		if note != "" {
			r.Note += "; " + note
		}
		rs.results = append(rs.results, r)
	}
	add(summary("codec", "codec-only zstd decode (in-memory chunks)"), fmt.Sprintf("medians of %d rounds", n))
	add(summary("write", "write 1 GiB alone to "+dir), "")
	add(summary("get", "zarrcat get -o "+disk), "time "+ratio("get/codec")+" the codec-only's, "+ratio("get/(codec+write)")+" codec-only + write; CPU "+ratio("get cpu/codec cpu")+", "+ratio("get cpu/(codec+write) cpu"))
	if shm != "" {
		add(summary("write-shm", "write 1 GiB alone to /dev/shm"), "")
		add(summary("get-shm", "zarrcat get -o "+shm+".npy"), "time "+ratio("get-shm/codec")+" the codec-only's, "+ratio("get-shm/(codec+write-shm)")+" codec-only + write")
	}
	add(summary("get-null", "zarrcat get -o /dev/null"), "time "+ratio("get-null/codec")+" the codec-only's; CPU "+ratio("get-null cpu/codec cpu"))
	add(summary("stats", "zarrcat stats"), "rate "+ratio("stats rate/codec rate")+" the codec-only rate; CPU "+ratio("stats cpu/codec cpu"))
	return rs, nil
}

// writeAlone writes n bytes of buf over and over to a new file at path
// (writes of len(buf), as dd does and as zarrcat get writes its blocks),
// and returns the time from creating the file to closing it; the file is
// removed afterwards.
func writeAlone(path string, buf []byte, n int64) (time.Duration, error) {
	defer os.Remove(path)
	start := time.Now()
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	for n > 0 {
		k, err := f.Write(buf[:min(int64(len(buf)), n)])
		if err != nil {
			f.Close()
			return 0, err
		}
		n -= int64(k)
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// rate formats bytes per wall time.
func rate(n int64, d time.Duration) string {
	return fmt.Sprintf("%.0f MiB/s", float64(n)/(1<<20)/d.Seconds())
}

// child runs the zarrcat binary and measures its wall time and peak RSS.
func child(bin string, args ...string) (result, error) {
	return measure(exec.Command(bin, args...))
}

// measure runs cmd and returns its wall time and peak RSS. The RSS is read
// by /usr/bin/time (GNU time's %M) where it exists: the ru_maxrss Go's
// exec.Cmd reports counts this process's own RSS at the child's exec (Go
// starts children with vfork sharing its memory, and Linux carries the
// high-water mark across exec), so every child would seem as large as the
// bench. Without /usr/bin/time, that upper bound is reported.
func measure(cmd *exec.Cmd) (result, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	rssFile := ""
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		f, err := os.CreateTemp("", "zarrcatbench-rss-")
		if err != nil {
			return result{}, err
		}
		f.Close()
		defer os.Remove(f.Name())
		rssFile = f.Name()
		cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", "-o", rssFile}, cmd.Args...)
		cmd.Path = "/usr/bin/time"
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	var rss int64
	if rssFile != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return result{}, err
		}
		if _, err := fmt.Sscan(string(b), &rss); err != nil {
			return result{}, fmt.Errorf("/usr/bin/time wrote %q: %v", b, err)
		}
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss)
	}
	// The CPU time of /usr/bin/time's wait includes its child's.
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return result{Wall: wall, PeakRSS: rss * 1024, CPU: cpu}, nil // KiB
}

// timed runs f once untimed, then reps times, and returns the run of
// median wall time with the largest peak RSS seen.
func timed(reps int, f func() (result, error)) (result, error) {
	if _, err := f(); err != nil {
		return result{}, err
	}
	var rs []result
	peak := int64(0)
	for range max(reps, 1) {
		r, err := f()
		if err != nil {
			return result{}, err
		}
		rs = append(rs, r)
		peak = max(peak, r.PeakRSS)
	}
	slices.SortFunc(rs, func(a, b result) int { return int(a.Wall - b.Wall) })
	m := rs[len(rs)/2]
	m.PeakRSS = peak
	return m, nil
}

// value is the field: a smooth function plus quantised noise, like an
// instrument's readings (zstd level 1 stores it in about half).
func value(i, j, n int) float32 {
	x, y := 2*math.Pi*float64(i)/float64(n), 2*math.Pi*float64(j)/float64(n)
	h := uint64(i)*uint64(n) + uint64(j)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	u := float64(h>>11) / (1 << 53)
	v := 100*math.Sin(3*x)*math.Cos(2*y) + 10*math.Sin(5*(x+y)) + 0.5*(u-0.5)
	return float32(math.Round(v*64) / 64)
}

// writeSource writes the source array: shards of o.shard² holding zstd
// level-1 inner chunks of o.inner², one shard row at a time.
func writeSource(ctx context.Context, dir string, o options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	st, err := fsstore.New(dir)
	if err != nil {
		return err
	}
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		return err
	}
	meta, err := zarr.NewArrayMetadata([]int{o.size, o.size}, dtype.TypeFloat32, []int{o.inner, o.inner}, zarr.Shards(o.shard, o.shard), zarr.Compress(zs))
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		return err
	}
	rows := make([]float32, o.shard*o.size)
	for r0 := 0; r0 < o.size; r0 += o.shard {
		var wg sync.WaitGroup
		for w := range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := w; i < o.shard; i += runtime.GOMAXPROCS(0) {
					for j := range o.size {
						rows[i*o.size+j] = value(r0+i, j, o.size)
					}
				}
			})
		}
		wg.Wait()
		if err := zarr.Write(ctx, a, rows, nd.Range(r0, r0+o.shard)); err != nil {
			return err
		}
	}
	return nil
}

// codecOnly loads every inner chunk of the source's shards into memory and
// returns a function decoding them all with zstd on GOMAXPROCS goroutines
// (each its own decoder and reused buffer), which returns the time taken.
func codecOnly(src string, o options) (func() (time.Duration, error), error) {
	var chunks [][]byte
	per := (o.shard / o.inner) * (o.shard / o.inner)
	err := filepath.WalkDir(filepath.Join(src, "c"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ix := b[len(b)-per*16-4:]
		for k := range per {
			off, n := binary.LittleEndian.Uint64(ix[16*k:]), binary.LittleEndian.Uint64(ix[16*k+8:])
			if off != math.MaxUint64 {
				chunks = append(chunks, b[off:off+n])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	chunkBytes := o.inner * o.inner * 4
	once := func() (time.Duration, error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make([]error, runtime.GOMAXPROCS(0))
		start := time.Now()
		for w := range errs {
			wg.Go(func() {
				d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
				if err != nil {
					errs[w] = err
					return
				}
				defer d.Close()
				buf := make([]byte, 0, chunkBytes+128<<10)
				for {
					i := next.Add(1) - 1
					if i >= int64(len(chunks)) {
						return
					}
					out, err := d.DecodeAll(chunks[i], buf[:0])
					if err == nil && len(out) != chunkBytes {
						err = fmt.Errorf("chunk of %d bytes, want %d", len(out), chunkBytes)
					}
					if err != nil {
						errs[w] = err
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start), errors.Join(errs...)
	}
	return once, nil
}

// cpRuns times zarrcat cp re-encoding the source (blosc lz4, 1024²
// chunks in shards of o.shard²), then the same copy killed half-way and
// resumed.
func cpRuns(bin, src, dir string, arrayBytes int64, o options, report func(result)) error {
	cpFlags := []string{"cp", "-q", "--chunks", "1024,1024", "--shards", fmt.Sprintf("%d,%d", o.shard, o.shard), "--codec", "blosc:lz4:shuffle:5"}
	full := filepath.Join(dir, "cp-full.zarr")
	cp, err := timed(o.reps, func() (result, error) {
		os.RemoveAll(full)
		return child(bin, append(cpFlags, src, full)...)
	})
	if err != nil {
		return err
	}
	cp.Name = "zarrcat cp → blosc lz4, 1024² in 4096² shards"
	cp.Note = rate(arrayBytes, cp.Wall)
	report(cp)
	resumed, err := killAndResume(bin, cpFlags, src, full, dir, o)
	if err != nil {
		return err
	}
	report(resumed)
	return nil
}

// killAndResume starts the copy into a new directory, kills it (SIGKILL)
// once half the shards are stored, resumes it and compares the result
// with the uninterrupted copy file by file.
func killAndResume(bin string, cpFlags []string, src, full, dir string, o options) (result, error) {
	part := filepath.Join(dir, "cp-part.zarr")
	os.RemoveAll(part)
	shards := (o.size / o.shard) * (o.size / o.shard)
	cmd := exec.Command(bin, append(cpFlags, src, part)...)
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	stored := 0
	for stored < (shards+1)/2 {
		time.Sleep(5 * time.Millisecond)
		stored = countShards(part)
		if cmd.ProcessState != nil {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	killedAt := countShards(part)
	r, err := child(bin, append(append([]string{}, cpFlags...), "--resume", src, part)...)
	if err != nil {
		return result{}, err
	}
	r.Name = "zarrcat cp killed half-way, then --resume"
	same, err := sameTree(full, part)
	if err != nil {
		return result{}, err
	}
	r.Note = fmt.Sprintf("killed with %d of %d shards stored; resumed copy byte-identical to the uninterrupted one: %v", killedAt, shards, same)
	if !same {
		return r, fmt.Errorf("%s", r.Note)
	}
	return r, nil
}

// countShards counts the shard files of a copy in progress.
func countShards(dir string) int {
	n := 0
	filepath.WalkDir(filepath.Join(dir, "c"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}

// sameTree reports whether two directories hold the same files with the
// same bytes (temporary files of killed writes left out).
func sameTree(a, b string) (bool, error) {
	read := func(root string) (map[string][]byte, error) {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel], err = os.ReadFile(p)
			return err
		})
		return m, err
	}
	ma, err := read(a)
	if err != nil {
		return false, err
	}
	mb, err := read(b)
	if err != nil {
		return false, err
	}
	if len(ma) != len(mb) {
		return false, nil
	}
	for k, v := range ma {
		if !bytes.Equal(v, mb[k]) {
			return false, nil
		}
	}
	return true, nil
}

// treeOverS3 writes a group of o.arrays small arrays to S3 and times
// zarrcat tree --size of it through a proxy adding o.latency to every
// request.
func treeOverS3(ctx context.Context, bin string, o options, consolidated bool) (result, error) {
	srv, real := s3test.LookupEnv()
	if !real {
		backend := s3mem.New()
		if err := backend.CreateBucket("zarrcatbench"); err != nil {
			return result{}, err
		}
		ts := httptest.NewServer(gofakes3.New(backend).Server())
		defer ts.Close()
		srv = &s3test.Server{Endpoint: ts.URL, AccessKey: "test", SecretKey: "testsecret", Bucket: "zarrcatbench", Region: "us-east-1"}
	}
	// The group is written once per server and kept for later runs.
	prefix := fmt.Sprintf("zarrcatbench-tree-%d", o.arrays)
	if consolidated {
		prefix += "-consolidated"
	}
	st, err := s3.Open(ctx, srv.Bucket, prefix, srv.Options()...)
	if err != nil {
		return result{}, err
	}
	if _, err := st.Get(ctx, "a0000/zarr.json", store.Full()); errors.Is(err, store.ErrNotFound) || !real {
		if err := writeGroup(ctx, st, o.arrays); err != nil {
			return result{}, err
		}
		if consolidated {
			if _, err := zarr.Consolidate(ctx, st, ""); err != nil {
				return result{}, err
			}
		}
	} else if err != nil {
		return result{}, err
	}
	target, _ := url.Parse(srv.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var requests atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		time.Sleep(o.latency)
		proxy.ServeHTTP(w, r)
	}))
	defer slow.Close()
	env := append(os.Environ(), "AWS_ENDPOINT_URL_S3="+slow.URL, "AWS_ACCESS_KEY_ID="+srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+srv.SecretKey, "AWS_REGION="+srv.Region, "AWS_EC2_METADATA_DISABLED=true")
	loc := "s3://" + srv.Bucket + "/" + prefix
	var out bytes.Buffer
	r, err := timed(o.reps, func() (result, error) {
		requests.Store(0)
		out.Reset()
		args := []string{"tree", "--size", loc}
		if consolidated {
			args = []string{"tree", loc} // --size would ask each chunk's size
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Stdout = &out
		return measure(cmd)
	})
	if err != nil {
		return result{}, err
	}
	lines := strings.Count(out.String(), "\n")
	server := "in-process gofakes3"
	if real {
		server = srv.Endpoint
	}
	r.Name = fmt.Sprintf("zarrcat tree --size, %d arrays, S3 +%v", o.arrays, o.latency)
	if consolidated {
		r.Name = fmt.Sprintf("zarrcat tree, %d arrays consolidated, S3 +%v", o.arrays, o.latency)
	}
	r.Note = fmt.Sprintf("%d nodes listed, %d requests (%s)", lines, requests.Load(), server)
	if lines != o.arrays+1 {
		return r, fmt.Errorf("tree listed %d nodes, want %d", lines, o.arrays+1)
	}
	return r, nil
}

// writeGroup writes a group of n arrays of 100 uint8 in one stored chunk.
func writeGroup(ctx context.Context, st store.Store, n int) error {
	if _, err := zarr.CreateGroup(ctx, st, "", map[string]any{"bench": "zarrcat tree"}); err != nil {
		return err
	}
	meta, err := zarr.NewArrayMetadata([]int{100}, dtype.TypeUint8, []int{100})
	if err != nil {
		return err
	}
	data := make([]byte, 100)
	for i := range data {
		data[i] = byte(i + 1)
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a, err := zarr.CreateArray(ctx, st, fmt.Sprintf("a%04d", i), meta)
			if err == nil {
				err = a.WriteBytes(ctx, data)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
