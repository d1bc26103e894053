// Command gatherbench measures gathers — orthogonal selections of random
// rows and coordinate selections of random points — on zstd-sharded
// arrays, against the codec alone decoding the same inner chunks on all
// cores in the same run, and beside zarr-python 3.4 doing the same
// oindex/vindex reads in the reference chroot when it is present.
//
//	go run ./bench/gatherbench [-dir D] [-rows 100000] [-points 100000] [-reps 3] [-min-block 0.1] [-small] [-peers=false]
//
// Arrays (made once, kept in -dir):
//   - rows: 65536 × 4096 float32 (1 GiB), shards of 4096² made of 512²
//     inner chunks (1 MiB), zstd level 1, as the main bench's zstd-sharded
//     layout; a row is 16 KiB (the loader's samples); rows are drawn with
//     replacement, so a gather repeats some;
//   - cube16: 256³ float32 (64 MiB), shards of 128³ of 16³ inner chunks
//     (16 KiB, 4096 of them), zstd level 1: the same gather, where the cost
//     per chunk weighs more;
//   - cube: 512 × 512 × 256 float32 (256 MiB), shards of 256 × 256 × 128 of
//     32³ inner chunks (128 KiB), zstd level 1.
//
// Every measurement is paired: after one uncounted warm-up, each of -reps
// repetitions runs gozarr's gather and the codec-only decode back to back
// (ABBA order), then the baselines below, and every ratio is the median of
// the per-rep ratios (with their range), so load that drifts during a run
// weighs on both sides of a ratio alike. A rep shorter than -min-block
// seconds runs its measurement back to back that long and counts the
// mean: the CPU time of the process is accounted in scheduler ticks, so
// one gather of a few milliseconds has no CPU time to speak of.
//
// Reported per workload: wall time (median of -reps), the codec-only decode
// of the inner chunks the selection touches (median, all cores) and the
// ratio, the reads from the store such a gather needs at least
// (fetch-only, all cores: codec-only leaves them out) and gozarr's ratio
// to fetch-only + codec-only, the same in CPU time of the process (steadier than wall
// time on a shared machine), the time to write the output once (output fill: a
// gather of repeated rows delivers far more than it decodes) and the ratio
// to all three, sort-only (grouping the indices asked by the inner chunk
// they fall in, on one core: per-point work any gather does and codec-only
// leaves out) and the ratio to codec-only + sort-only, zarr-python's wall and CPU times and gozarr's speed-up over
// it in each, bytes fetched from the store and bytes decoded ÷ bytes delivered.
package main

import (
	"context"
	"encoding/binary"
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
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

var (
	cpuProfile, only string
	minBlock         float64
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "gozarr-gatherbench"), "where the arrays are made (once) and kept")
	nrows := flag.Int("rows", 100_000, "random rows to gather")
	npoints := flag.Int("points", 100_000, "random points to gather")
	reps := flag.Int("reps", 3, "repetitions (the median is reported)")
	small := flag.Bool("small", false, "arrays 1/8 the size (a quick run)")
	peers := flag.Bool("peers", true, "also time zarr-python 3.4 in the reference chroot (../shared/tools/zarr-python), when present")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of gozarr's reads of the first workload run (not the baselines) to this file")
	flag.StringVar(&only, "only", "", "run only the workloads whose name contains this text")
	flag.Float64Var(&minBlock, "min-block", 0.1, "seconds a rep of each measurement lasts at least: shorter ones run back to back that long, and count their mean (CPU time is accounted in scheduler ticks)")
	flag.Parse()
	if err := run(*dir, *nrows, *npoints, *reps, *small, *peers); err != nil {
		fmt.Fprintln(os.Stderr, "gatherbench:", err)
		os.Exit(1)
	}
}

// geometry is one benchmark array.
type geometry struct {
	name         string
	shape, shard []int
	inner        []int
}

func geometries(small bool) []geometry {
	rows := geometry{name: "rows", shape: []int{65536, 4096}, shard: []int{4096, 4096}, inner: []int{512, 512}}
	cube := geometry{name: "cube", shape: []int{512, 512, 256}, shard: []int{256, 256, 128}, inner: []int{32, 32, 32}}
	fine := geometry{name: "cube16", shape: []int{256, 256, 256}, shard: []int{128, 128, 128}, inner: []int{16, 16, 16}}
	if small {
		rows.name, cube.name, fine.name = "rows-small", "cube-small", "cube16-small"
		fine.shape[0] /= 2
		rows.shape[0] /= 8
		rows.shard[0] /= 8
		cube.shape[0] /= 8
		cube.shard[0] /= 4
	}
	return []geometry{rows, cube, fine}
}

// elem is the value stored at C-order index i: quantised noise, which zstd
// compresses about 2×, so the codec does real work.
func elem(i uint64) float32 {
	x := i*0x9e3779b97f4a7c15 + 1
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x ^= x >> 31
	return float32(math.Round(float64(x>>40)/float64(1<<24)*4096) / 64)
}

// makeArray creates g under dir unless it is there, writing one shard row
// at a time (bounded memory).
func makeArray(ctx context.Context, dir string, g geometry) (string, error) {
	path := filepath.Join(dir, g.name+".zarr")
	// The marker holds the geometry the array was made with: another one
	// (an older version of this program) makes it again.
	made := fmt.Sprintf("%v %v %v\n", g.shape, g.shard, g.inner)
	if b, err := os.ReadFile(filepath.Join(path, "done")); err == nil && string(b) == made {
		return path, nil
	}
	os.RemoveAll(path)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", err
	}
	st, err := fs.New(path)
	if err != nil {
		return "", err
	}
	zstd, err := codecs.NewZstd(1, false)
	if err != nil {
		return "", err
	}
	meta, err := zarr.NewArrayMetadata(g.shape, dtype.TypeFloat32, g.inner, zarr.Shards(g.shard...), zarr.Compress(zstd))
	if err != nil {
		return "", err
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "making %s %v (%d MiB)…\n", g.name, g.shape, nd.NumElements(g.shape)*4>>20)
	rowElems := nd.NumElements(g.shape[1:])
	buf := make([]float32, g.shard[0]*rowElems)
	for r0 := 0; r0 < g.shape[0]; r0 += g.shard[0] {
		base := uint64(r0 * rowElems)
		for i := range buf {
			buf[i] = elem(base + uint64(i))
		}
		if err := zarr.Write(ctx, a, buf, nd.Range(r0, r0+g.shard[0])); err != nil {
			return "", err
		}
	}
	return path, os.WriteFile(filepath.Join(path, "done"), []byte(made), 0o644)
}

// workload is one gather.
type workload struct {
	name    string
	arr     int // index into the geometries
	read    func(ctx context.Context, a *zarr.Array, out []byte) error
	out     int                       // bytes delivered
	touched map[string]map[int]bool   // shard key → inner chunk (C-order index) → touched
	lists   [][]int                   // the indices asked, a list per dimension indexed (sort-only groups them)
	pyArgs  func(dir string) []string // the zarr-python side's arguments
}

func run(dir string, nrows, npoints, reps int, small, peers bool) error {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	geos := geometries(small)
	paths := make([]string, len(geos))
	arrays := make([]*zarr.Array, len(geos))
	counters := make([]*store.CountingStore, len(geos))
	for i, g := range geos {
		p, err := makeArray(ctx, dir, g)
		if err != nil {
			return err
		}
		st, err := fs.New(p, fs.ReadOnly())
		if err != nil {
			return err
		}
		counters[i] = store.NewCountingStore(st) // keeps the store's capabilities
		if arrays[i], err = zarr.OpenArray(ctx, counters[i], ""); err != nil {
			return err
		}
		paths[i] = p
	}
	r := rand.New(rand.NewPCG(7, 11))
	rg := geos[0]
	rowBytes := nd.NumElements(rg.shape[1:]) * 4
	rows := make([]int, nrows) // random rows, with replacement
	for k := range rows {
		rows[k] = r.IntN(rg.shape[0])
	}
	sorted := slices.Sorted(slices.Values(rows))
	cg := geos[1]
	pts := make([][]int, 3)
	for d := range 3 {
		pts[d] = make([]int, npoints)
		for k := range npoints {
			pts[d][k] = r.IntN(cg.shape[d])
		}
	}
	fg := geos[2]
	finePts := make([][]int, 3)
	for d := range 3 {
		finePts[d] = make([]int, npoints)
		for k := range npoints {
			finePts[d][k] = r.IntN(fg.shape[d])
		}
	}
	rowTouched := touchedRows(arrays[0], rows)
	wls := []workload{
		{name: fmt.Sprintf("%d random rows, sorted (oindex)", len(rows)), arr: 0, out: len(rows) * rowBytes, touched: rowTouched, lists: [][]int{sorted},
			read: func(ctx context.Context, a *zarr.Array, out []byte) error {
				return a.ReadBytesInto(ctx, out, nd.IndexArray(sorted...), nd.All())
			},
			pyArgs: func(d string) []string { return []string{"oindex", paths[0], saveInts(d, "rows_sorted.npy", sorted)} }},
		{name: fmt.Sprintf("%d random rows, unsorted (oindex)", len(rows)), arr: 0, out: len(rows) * rowBytes, touched: rowTouched, lists: [][]int{rows},
			read: func(ctx context.Context, a *zarr.Array, out []byte) error {
				return a.ReadBytesInto(ctx, out, nd.IndexArray(rows...), nd.All())
			},
			pyArgs: func(d string) []string { return []string{"oindex", paths[0], saveInts(d, "rows.npy", rows)} }},
		{name: fmt.Sprintf("%d random points of a 3-D array (vindex)", npoints), arr: 1, out: npoints * 4, touched: touchedPoints(arrays[1], pts), lists: pts,
			read: func(ctx context.Context, a *zarr.Array, out []byte) error {
				return a.ReadPointsInto(ctx, out, pts)
			},
			pyArgs: func(d string) []string {
				return []string{"vindex", paths[1], saveInts(d, "p0.npy", pts[0]), saveInts(d, "p1.npy", pts[1]), saveInts(d, "p2.npy", pts[2])}
			}},
		{name: fmt.Sprintf("%d random points, 16³ inner chunks (vindex)", npoints), arr: 2, out: npoints * 4, touched: touchedPoints(arrays[2], finePts), lists: finePts,
			read: func(ctx context.Context, a *zarr.Array, out []byte) error {
				return a.ReadPointsInto(ctx, out, finePts)
			},
			pyArgs: func(d string) []string {
				return []string{"vindex", paths[2], saveInts(d, "f0.npy", finePts[0]), saveInts(d, "f1.npy", finePts[1]), saveInts(d, "f2.npy", finePts[2])}
			}},
	}
	py := zarrPython(peers)
	fmt.Println("| workload | gozarr (min–max over reps) | codec-only | ratio (min–max) | fetch-only | ratio to fetch + codec | gozarr CPU (min–max) | codec-only CPU | CPU ratio (min–max) | sort-only (one core) | ratio to codec + sort, wall / CPU | fetch-only CPU | CPU ratio to fetch + codec | map-only CPU | CPU ratio to map + codec | output fill | ratio to fetch + codec + fill | zarr-python 3.4 | speed-up | fetched | decoded ÷ delivered |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var prof *os.File
	if cpuProfile != "" {
		var err error
		if prof, err = os.Create(cpuProfile); err != nil {
			return err
		}
		defer prof.Close()
	}
	for _, w := range wls {
		if !strings.Contains(w.name, only) {
			continue
		}
		a := arrays[w.arr]
		out := make([]byte, w.out)
		var fetched int64
		gozarr := func() (timing, error) {
			before := counters[w.arr].Bytes()
			t0, c0 := time.Now(), cputime.Process()
			if err := w.read(ctx, a, out); err != nil {
				return timing{}, fmt.Errorf("%s: %w", w.name, err)
			}
			t := timing{time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()}
			fetched = counters[w.arr].Bytes() - before
			return t, nil
		}
		codec, decoded, err := codecOnly(ctx, a, paths[w.arr], w.touched)
		if err != nil {
			return err
		}
		fetch, closeFetch, err := fetchOnly(a, paths[w.arr], w.touched)
		if err != nil {
			return err
		}
		mapped, err := mapOnly(ctx, a, paths[w.arr], w.touched)
		if err != nil {
			closeFetch()
			return err
		}
		fill := fillOnly(out)
		if prof != nil { // one profile: reps reads of the first workload run, before the paired ones
			if err := pprof.StartCPUProfile(prof); err != nil {
				closeFetch()
				return err
			}
			for range reps {
				if _, err := gozarr(); err != nil {
					closeFetch()
					return err
				}
			}
			pprof.StopCPUProfile()
			prof = nil
		}
		sort := sortOnly(w.lists, a.Shape(), a.Chunks())
		m, err := paired(reps, minBlock, gozarr, codec, fetch, mapped, fill, sort, func() error { return check(w, out, rows, sorted, pts, finePts, geos) })
		closeFetch()
		if err != nil {
			return err
		}
		pyCell, speedCell := "—", "—"
		if py != "" {
			pt, pc, err := timePython(py, w.pyArgs(dir), reps)
			if err != nil {
				fmt.Fprintln(os.Stderr, "zarr-python:", err)
			} else {
				pyCell = fmt.Sprintf("%.3f s (CPU %.3f s)", pt, pc)
				speedCell = fmt.Sprintf("%.1f× (CPU %.1f×)", pt/median(m.gozarr.walls()), pc/median(m.gozarr.cpus()))
			}
		}
		mapCell, mapRatio := "—", "—"
		if mapped != nil {
			mapCell, mapRatio = ms(median(m.mapped.cpus())), fmt.Sprintf("%.2f", median(ratios(m.gozarr.cpus(), m.codec.cpus(), m.mapped.cpus())))
		}
		gz, gzCPU := m.gozarr.walls(), m.gozarr.cpus()
		fmt.Printf("| %s | %s (%s–%s) | %s | %s | %s | %.2f | %s (%s–%s) | %s | %s | %s | %.2f / %.2f | %s | %.2f | %s | %s | %s | %.2f | %s | %s | %d MiB | %.2f |\n", w.name,
			ms(median(gz)), ms(slices.Min(gz)), ms(slices.Max(gz)), ms(median(m.codec.walls())), spread(ratios(gz, m.codec.walls())),
			ms(median(m.fetch.walls())), median(ratios(gz, m.codec.walls(), m.fetch.walls())),
			ms(median(gzCPU)), ms(slices.Min(gzCPU)), ms(slices.Max(gzCPU)), ms(median(m.codec.cpus())), spread(ratios(gzCPU, m.codec.cpus())),
			ms(median(m.sort.walls())), median(ratios(gz, m.codec.walls(), m.sort.walls())), median(ratios(gzCPU, m.codec.cpus(), m.sort.cpus())),
			ms(median(m.fetch.cpus())), median(ratios(gzCPU, m.codec.cpus(), m.fetch.cpus())),
			mapCell, mapRatio, ms(median(m.fill.walls())), median(ratios(gz, m.codec.walls(), m.fetch.walls(), m.fill.walls())),
			pyCell, speedCell, fetched>>20, float64(decoded)/float64(w.out))
	}
	return nil
}

// timing is one measured run: wall and CPU (process) seconds.
type timing struct{ wall, cpu float64 }

// measure runs one repetition of a measurement.
type measure func() (timing, error)

// series is a measurement's repetitions, in order.
type series []timing

func (s series) walls() []float64 {
	v := make([]float64, len(s))
	for i, t := range s {
		v[i] = t.wall
	}
	return v
}

func (s series) cpus() []float64 {
	v := make([]float64, len(s))
	for i, t := range s {
		v[i] = t.cpu
	}
	return v
}

// measurements are the paired repetitions of one workload: rep i of every
// series ran back to back, so a ratio of rep i to rep i compares runs made
// under the same load.
type measurements struct {
	gozarr, codec, fetch, mapped, fill, sort series
}

// paired runs one uncounted warm-up of every measurement (check runs
// after gozarr's: the reads it verifies are those the output holds), then
// reps paired reps: in each, gozarr and codec-only back to back, in ABBA
// order (gozarr first on even reps, codec-only first on odd ones) so
// neither always pays the other's after-effects (caches, the collector),
// then fetch-only, map-only (when mapped is not nil), the output fill and
// sort-only. Timing the gozarr reps in one block and the baselines in
// another lets load that drifts between the blocks land in every ratio;
// pairing leaves it out of the per-rep ratios.
//
// A rep of a measurement shorter than minBlock seconds (its warm-up's
// wall time) runs it back to back as many times as make minBlock, and
// counts their mean: the CPU time of the process is accounted in
// scheduler ticks (a 5 ms spin on both cores of this machine reads
// 6.3–13.9 ms), so a single gather of a few milliseconds has no CPU time
// to speak of.
func paired(reps int, minBlock float64, gozarr, codec, fetch, mapped, fill, sort measure, check func() error) (measurements, error) {
	ms := []measure{gozarr, codec, fetch, mapped, fill, sort}
	runs := make([]int, len(ms))
	block := func(i int) (timing, error) {
		var sum timing
		for range runs[i] {
			t, err := ms[i]()
			if err != nil {
				return t, err
			}
			sum.wall, sum.cpu = sum.wall+t.wall, sum.cpu+t.cpu
		}
		return timing{sum.wall / float64(runs[i]), sum.cpu / float64(runs[i])}, nil
	}
	for i, m := range ms {
		if m == nil {
			continue
		}
		t, err := m()
		if err != nil {
			return measurements{}, err
		}
		if i == 0 {
			if err := check(); err != nil {
				return measurements{}, err
			}
		}
		runs[i] = max(1, min(10000, int(math.Ceil(minBlock/max(t.wall, 1e-9)))))
	}
	got := make([]series, len(ms))
	for rep := range reps {
		order := []int{0, 1, 2, 3, 4, 5}
		if rep%2 == 1 {
			order[0], order[1] = 1, 0
		}
		for _, i := range order {
			var t timing
			if ms[i] != nil {
				var err error
				if t, err = block(i); err != nil {
					return measurements{}, err
				}
			}
			got[i] = append(got[i], t)
		}
	}
	return measurements{gozarr: got[0], codec: got[1], fetch: got[2], mapped: got[3], fill: got[4], sort: got[5]}, nil
}

// ratios returns, rep by rep, num[i] divided by the sum of den[k][i].
func ratios(num []float64, den ...[]float64) []float64 {
	r := make([]float64, len(num))
	for i, x := range num {
		var d float64
		for _, s := range den {
			d += s[i]
		}
		r[i] = x / d
	}
	return r
}

// spread formats per-rep ratios as their median and range.
func spread(r []float64) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(r), slices.Min(r), slices.Max(r))
}

// check verifies the gathered values against elem.
func check(w workload, out []byte, rows, sorted []int, pts, finePts [][]int, geos []geometry) error {
	at := func(k int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(out[4*k:])) }
	switch w.arr {
	case 0:
		list := rows
		if strings.Contains(w.name, "sorted") && !strings.Contains(w.name, "unsorted") {
			list = sorted
		}
		cols := geos[0].shape[1]
		for k, i := range list {
			for _, j := range []int{0, cols - 1} {
				if got, want := at(k*cols+j), elem(uint64(i*cols+j)); got != want {
					return fmt.Errorf("%s: row %d col %d = %v, want %v", w.name, i, j, got, want)
				}
			}
		}
	case 1, 2:
		s := geos[w.arr].shape
		p := pts
		if w.arr == 2 {
			p = finePts
		}
		for k := range p[0] {
			if got, want := at(k), elem(uint64((p[0][k]*s[1]+p[1][k])*s[2]+p[2][k])); got != want {
				return fmt.Errorf("%s: point %d = %v, want %v", w.name, k, got, want)
			}
		}
	}
	return nil
}

// touchedRows lists the inner chunks that rows (all columns) touch.
func touchedRows(a *zarr.Array, rows []int) map[string]map[int]bool {
	l := a.Sharding()
	shard, inner := a.Shards(), a.Chunks()
	t := map[string]map[int]bool{}
	for _, i := range rows {
		key := a.ChunkKey([]int{i / shard[0], 0})
		if t[key] == nil {
			t[key] = map[int]bool{}
		}
		for j := 0; j < shard[1]; j += inner[1] {
			t[key][l.Linear([]int{(i % shard[0]) / inner[0], j / inner[1]})] = true
		}
	}
	return t
}

// touchedPoints lists the inner chunks that the points touch.
func touchedPoints(a *zarr.Array, pts [][]int) map[string]map[int]bool {
	l := a.Sharding()
	shard, inner := a.Shards(), a.Chunks()
	t := map[string]map[int]bool{}
	for k := range pts[0] {
		sc, ic := make([]int, 3), make([]int, 3)
		for d := range 3 {
			sc[d] = pts[d][k] / shard[d]
			ic[d] = (pts[d][k] % shard[d]) / inner[d]
		}
		key := a.ChunkKey(sc)
		if t[key] == nil {
			t[key] = map[int]bool{}
		}
		t[key][l.Linear(ic)] = true
	}
	return t
}

// codecOnly loads the encoded bytes of the touched inner chunks (outside
// the timing) and returns a measurement that decodes them with the
// array's inner codec chain on all cores, and the bytes it decodes.
func codecOnly(ctx context.Context, a *zarr.Array, path string, touched map[string]map[int]bool) (measure, int64, error) {
	l := a.Sharding()
	var encs [][]byte
	for key, inner := range touched {
		b, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(key)))
		if err != nil {
			return nil, 0, err
		}
		ix, err := l.IndexOf(b)
		if err != nil {
			return nil, 0, err
		}
		for lin := range inner {
			if off, n, ok := ix.Entry(lin); ok {
				encs = append(encs, b[off:off+n])
			}
		}
	}
	decode := func() (timing, error) {
		return onAllCores(len(encs), func(int) func(int) error {
			dst := make([]byte, l.InnerBytes()+codecs.DecodeSlack)
			return func(i int) error { return l.Inner().Decode(dst[:l.InnerBytes()], encs[i]) }
		})
	}
	return decode, int64(len(encs)) * int64(l.InnerBytes()), nil
}

// fetchOnly returns a measurement that reads, on all cores, the bytes a
// gather of the touched inner chunks must read from the store at least —
// each touched shard's index and inner chunks, or the whole shard when
// every inner chunk is touched (as gozarr then reads it) — into reused
// buffers: the I/O that codec-only leaves out. close closes the files it
// reads.
func fetchOnly(a *zarr.Array, path string, touched map[string]map[int]bool) (m measure, close func(), err error) {
	l := a.Sharding()
	type read struct {
		f      *os.File
		off, n int64
	}
	var reads []read
	var files []*os.File
	close = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for key, inner := range touched {
		f, err := os.Open(filepath.Join(path, filepath.FromSlash(key)))
		if err != nil {
			close()
			return nil, nil, err
		}
		files = append(files, f)
		fi, err := f.Stat()
		if err != nil {
			close()
			return nil, nil, err
		}
		if len(inner) == l.NumChunks() {
			reads = append(reads, read{f, 0, fi.Size()})
			continue
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			close()
			return nil, nil, err
		}
		ix, err := l.IndexOf(b)
		if err != nil {
			close()
			return nil, nil, err
		}
		reads = append(reads, read{f, fi.Size() - int64(l.IndexSize()), int64(l.IndexSize())})
		for lin := range inner {
			if off, n, ok := ix.Entry(lin); ok {
				reads = append(reads, read{f, off, n})
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	// Each worker's buffer is made (and its pages touched) once, before the
	// timing, as a gather reads into pooled buffers: the first read into
	// fresh memory would time the kernel's page faults, not the fetch.
	var most int64
	for _, r := range reads {
		most = max(most, r.n)
	}
	bufs := make([][]byte, workers)
	for w := range bufs {
		bufs[w] = make([]byte, most)
		for i := range bufs[w] {
			bufs[w][i] = 1
		}
	}
	m = func() (timing, error) {
		return onAllCores(len(reads), func(w int) func(int) error {
			return func(i int) error {
				r := reads[i]
				_, err := r.f.ReadAt(bufs[w][:r.n], r.off)
				return err
			}
		})
	}
	return m, close, nil
}

// mapOnly returns a measurement that maps, on all cores, each touched
// shard through the store's Mapper (as a gather of a local store reads
// whole shards), reads one byte of every page of the inner chunks touched
// and of the index (the page faults a decode from the mapping pays) and
// unmaps it: the fetch of a mapped gather, which fetch-only's copies
// overstate (its CPU time is the figure to read). It is nil where the
// store maps nothing. Its store keeps no mappings across reads
// (fs.MapCache(0, 0)): each rep pays the mapping, as a first read does.
func mapOnly(ctx context.Context, a *zarr.Array, path string, touched map[string]map[int]bool) (measure, error) {
	st, err := fs.New(path, fs.ReadOnly(), fs.MapCache(0, 0))
	if err != nil {
		return nil, err
	}
	m := store.CapabilitiesOf(st).Mapper
	if m == nil {
		return nil, nil
	}
	l := a.Sharding()
	type shard struct {
		key    string
		ranges [][2]int64
	}
	var shards []shard
	for key, inner := range touched {
		b, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(key)))
		if err != nil {
			return nil, err
		}
		ix, err := l.IndexOf(b)
		if err != nil {
			return nil, err
		}
		sh := shard{key: key, ranges: [][2]int64{{int64(len(b) - l.IndexSize()), int64(l.IndexSize())}}}
		for lin := range inner {
			if off, n, ok := ix.Entry(lin); ok {
				sh.ranges = append(sh.ranges, [2]int64{off, n})
			}
		}
		shards = append(shards, sh)
	}
	page := int64(os.Getpagesize())
	var sink atomic.Int64
	return func() (timing, error) {
		return onAllCores(len(shards), func(int) func(int) error {
			return func(i int) error {
				b, unmap, err := m.Map(ctx, shards[i].key)
				if err != nil {
					return err
				}
				sum := 0
				for _, r := range shards[i].ranges {
					for o := r[0] / page * page; o < r[0]+r[1]; o += page {
						sum += int(b[max(o, r[0])])
					}
				}
				unmap()
				sink.Add(int64(sum))
				return nil
			}
		})
	}, nil
}

// sortOnly returns a measurement that groups the indices asked (lists,
// one per dimension indexed, of equal length) by the inner chunk they
// fall in, on one core, as any gather must before it places a value: each
// index's chunk (its C-order number in the grid of chunks of shape chunk)
// from one table per dimension, then a counting sort (a count per chunk,
// starts, each index's number written at its chunk's next place). Its
// memory is made before the timing, as a gather pools its own. This is
// the work per point that codec-only leaves out.
func sortOnly(lists [][]int, shape, chunk []int) measure {
	n := len(lists[0])
	tabs := make([][]int32, len(lists))
	units := 1
	for d := len(lists) - 1; d >= 0; d-- {
		tabs[d] = make([]int32, shape[d])
		for c := range tabs[d] {
			tabs[d][c] = int32(c / chunk[d] * units)
		}
		units *= (shape[d] + chunk[d] - 1) / chunk[d]
	}
	unit := make([]int32, n)
	count := make([]int32, units+1)
	order := make([]int32, n)
	return func() (timing, error) {
		t0, c0 := time.Now(), cputime.Process()
		clear(count)
		if len(lists) == 3 {
			t0, t1, t2 := tabs[0], tabs[1], tabs[2]
			l0, l1, l2 := lists[0][:n], lists[1][:n], lists[2][:n]
			for k := range unit {
				u := t0[l0[k]] + t1[l1[k]] + t2[l2[k]]
				unit[k] = u
				count[u+1]++
			}
		} else {
			for k := range unit {
				var u int32
				for d, l := range lists {
					u += tabs[d][l[k]]
				}
				unit[k] = u
				count[u+1]++
			}
		}
		for u := 1; u < len(count); u++ {
			count[u] += count[u-1]
		}
		for k, u := range unit {
			order[count[u]] = int32(k)
			count[u]++
		}
		return timing{time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()}, nil
	}
}

// onAllCores times n items of work on GOMAXPROCS workers, which take the
// items in turn; worker(w) makes worker w's function (and its scratch,
// inside the timing) that does item i. It returns the first error.
func onAllCores(n int, worker func(w int) func(i int) error) (timing, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	t0, c0 := time.Now(), cputime.Process()
	for w := range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			do := worker(w)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	t := timing{time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()}
	if err, _ := firstErr.Load().(error); err != nil {
		return t, err
	}
	return t, nil
}

// fillOnly returns a measurement that writes every byte of out once, on
// all cores, from a 4 MiB source copied over and over: the output's own
// writes, which a gather whose output is larger than the chunks it
// decodes (repeated rows) pays beyond decoding.
func fillOnly(out []byte) measure {
	src := make([]byte, min(len(out), 4<<20))
	for i := range src {
		src[i] = byte(i)
	}
	workers := runtime.GOMAXPROCS(0)
	return func() (timing, error) {
		var wg sync.WaitGroup
		t0, c0 := time.Now(), cputime.Process()
		for w := range workers {
			lo, hi := len(out)*w/workers, len(out)*(w+1)/workers
			wg.Go(func() {
				for o := lo; o < hi; o += len(src) {
					copy(out[o:min(hi, o+len(src))], src)
				}
			})
		}
		wg.Wait()
		return timing{time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()}, nil
	}
}

// zarrPython returns the zarr-python wrapper when the chroot is present.
func zarrPython(want bool) string {
	if !want {
		return ""
	}
	tool, err := filepath.Abs("../shared/tools/zarr-python")
	if err != nil {
		return ""
	}
	env := os.Getenv("REFENV")
	if env == "" {
		env = "/tmp/refenv"
	}
	if _, err := os.Stat(filepath.Join(env, "usr/bin/python3")); err != nil {
		fmt.Fprintln(os.Stderr, "zarr-python: no chroot at", env, "(build it with ../shared/tools/zarr-python-env.sh): peers skipped")
		return ""
	}
	if _, err := os.Stat(tool); err != nil {
		fmt.Fprintln(os.Stderr, "zarr-python: no", tool, ": peers skipped")
		return ""
	}
	return tool
}

// timePython runs the zarr-python side (bench/gatherbench/zarr_python_gather.py)
// and returns its median wall and CPU times, which the script measures
// around the read alone.
func timePython(tool string, args []string, reps int) (wall, cpu float64, err error) {
	script, err := filepath.Abs("bench/gatherbench/zarr_python_gather.py")
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(tool, append([]string{script, strconv.Itoa(reps)}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("zarr-python printed %q, want two times", out)
	}
	if wall, err = strconv.ParseFloat(f[0], 64); err == nil {
		cpu, err = strconv.ParseFloat(f[1], 64)
	}
	return wall, cpu, err
}

// saveInts writes v as an int64 .npy file in dir and returns its path.
func saveInts(dir, name string, v []int) string {
	path := filepath.Join(dir, name)
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	err := npy.WriteFile(path, "<i8", []int{len(v)}, b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatherbench:", err)
	}
	return path
}

// ms formats seconds as milliseconds with four significant digits, so a
// 10% change of a few-millisecond gather is visible.
func ms(s float64) string { return fmt.Sprintf("%.4g ms", s*1e3) }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
