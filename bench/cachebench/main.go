// Command cachebench measures gozarr's chunk caches on the workload of the
// HEP caching study: a group of many arrays (zstd, sharded) where every
// array is read once and a few fixed "hot" arrays are re-read after each
// one. For each cache configuration it reports wall time and peak resident
// memory (VmHWM), each configuration run in its own child process (this
// program re-executed with -child) so that peaks do not mix. It also
// measures memory-bounded iteration (zarr.Array.Tiles) over one large
// array.
//
//	go run ./bench/cachebench                # full size: 30 arrays of 100 MiB, a 1 GiB array
//	go run ./bench/cachebench -small         # 30 arrays of 8 MiB, a 128 MiB array
//	go run ./bench/cachebench -configs none,map,tiered -iter=false
//	go run ./bench/cachebench -small -s3     # the group read from S3, 20 ms per request
//
// With -s3 the generated group is uploaded once to an S3 server and every
// child reads it from there through store/s3, each request delayed by
// -latency (s3test.Latency). The server is the real one named by the
// GOZARR_S3_* variables when they are set (eval "$(bash .ci/s3server.sh
// start)" starts one), else an in-memory gofakes3 served by this process on
// 127.0.0.1. The iteration benchmark stays local.
//
// The data is generated once into -data (default a directory under
// os.TempDir, reused while its parameters match) and the disk caches live
// in private temporary directories removed when each child exits.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

const mib = 1 << 20

// cols is the width of every array: rows of 2048 float32 (8 KiB).
const cols = 2048

var (
	dataDir  = flag.String("data", filepath.Join(os.TempDir(), "gozarr-cachebench-data"), "directory of the generated group (created if missing)")
	small    = flag.Bool("small", false, "quick run: 8 MiB arrays and a 128 MiB iteration array (unless -mb / -iter-mb are set)")
	nArrays  = flag.Int("arrays", 30, "number of arrays in the group")
	arrayMB  = flag.Int("mb", 100, "decoded size of each array, MiB")
	hot      = flag.Int("hot", 4, "number of hot arrays re-read after each array")
	configs  = flag.String("configs", "none,map,lru,compressed,disk,tiered", "cache configurations to run, comma-separated")
	doIter   = flag.Bool("iter", true, "run the iteration benchmark")
	iterMB   = flag.Int("iter-mb", 1024, "decoded size of the iteration array, MiB")
	budgetMB = flag.Int("budget", 128, "iteration budget, MiB")
	lruMB    = flag.Int("lru-mb", 500, "LRU configuration's bound, MiB")
	tierMB   = flag.String("tiers", "100,500", "tiered configuration: LRU MiB, compressed MiB (then an unbounded disk tier)")
	child    = flag.String("child", "", "internal: run one configuration in this process and print its result as JSON")
	memLimit = flag.Int("memlimit", 0, "internal: the child's soft memory limit, MiB (0: none)")
	useS3    = flag.Bool("s3", false, "read the group from S3 (GOZARR_S3_* server, else an in-process gofakes3) with -latency per request")
	latency  = flag.Duration("latency", 20*time.Millisecond, "with -s3: delay added to every S3 request")
	cpuProf  = flag.String("cpuprofile", "", "write each child's CPU profile to this path with the configuration's name appended")
	s3Prefix = flag.String("s3-prefix", "", "internal: the child reads the group from S3 under this prefix")
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: cachebench [flags]\n\nConfigurations: none (no cache), map (unbounded in-memory map),\nlru (LRU, -lru-mb), compressed (shuffle+LZ4, unbounded), disk (unbounded, in a temp dir),\ntiered (LRU -> compressed -> disk, -tiers).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *small {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["mb"] {
			*arrayMB = 8
		}
		if !set["iter-mb"] {
			*iterMB = 128
		}
		if !set["budget"] {
			*budgetMB = 16
		}
		if !set["lru-mb"] {
			*lruMB = 40
		}
		if !set["tiers"] {
			*tierMB = "8,40"
		}
	}
	ctx := context.Background()
	if *child != "" {
		if *memLimit > 0 {
			debug.SetMemoryLimit(int64(*memLimit) * mib)
		}
		if *cpuProf != "" {
			f, err := os.Create(*cpuProf + "." + *child)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cachebench:", err)
				os.Exit(1)
			}
			pprof.StartCPUProfile(f)
		}
		res, err := runChild(ctx, *child)
		if *cpuProf != "" {
			pprof.StopCPUProfile()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cachebench:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	if err := ensureData(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
	fmt.Printf("cachebench: %d arrays of %d MiB (float32, zstd level 1, sharded), %d hot; GOMAXPROCS %d; data %s\n",
		*nArrays, *arrayMB, *hot, runtime.GOMAXPROCS(0), *dataDir)
	if *useS3 {
		where, stop, err := startS3()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cachebench:", err)
			os.Exit(1)
		}
		defer stop()
		*s3Prefix = fmt.Sprintf("cachebench-v1-a%d-mb%d", *nArrays, *arrayMB)
		if err := upload(ctx, *s3Prefix); err != nil {
			fmt.Fprintln(os.Stderr, "cachebench: upload:", err)
			exit(1)
		}
		fmt.Printf("source: S3 (%s), s3://%s/%s, %v added to every request\n", where, os.Getenv(s3test.EnvBucket), *s3Prefix, *latency)
		*doIter = false
	}
	fmt.Printf("workload: read each array once, re-read the %d hot arrays after each one (%d reads, %d MiB decoded)\n\n",
		*hot, *nArrays*(1+*hot), *nArrays*(1+*hot)**arrayMB)
	fmt.Printf("%-11s %9s %6s %11s %9s %8s %s\n", "config", "wall s", "CPU s", "peak RSS MiB", "hits", "misses", "cache")
	results := map[string]result{}
	for _, c := range strings.Split(*configs, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		res, err := spawn(c, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cachebench: %s: %v\n", c, err)
			exit(1)
		}
		results[c] = res
		fmt.Printf("%-11s %9.2f %6.2f %11.0f %9d %8d %s\n", c, res.Wall, res.CPU, res.PeakMiB, res.Hits, res.Misses, res.Note)
	}
	if m, ok := results["map"]; ok {
		if t, ok := results["tiered"]; ok {
			fmt.Printf("\ntiered / map: peak RSS %.2f, wall %.2f, CPU %.2f\n", t.PeakMiB/m.PeakMiB, t.Wall/m.Wall, t.CPU/m.CPU)
			if work, note, err := tieredCodecWork(ctx, t); err == nil {
				fmt.Printf("tiered / (map + its codec work): wall %.2f, CPU %.2f  (%s)\n",
					t.Wall/(m.Wall+work/float64(runtime.GOMAXPROCS(0))), t.CPU/(m.CPU+work), note)
			} else {
				fmt.Fprintln(os.Stderr, "cachebench: codec floor:", err)
			}
		}
	}
	if n, ok := results["none"]; ok {
		for _, c := range []string{"tiered", "disk"} {
			if r, ok := results[c]; ok {
				fmt.Printf("none / %s: wall %.2f\n", c, n.Wall/r.Wall)
			}
		}
	}
	if *doIter {
		fmt.Printf("\niteration over a %d MiB array, budget %d MiB (2 blocks of %d MiB at most):\n", *iterMB, *budgetMB, *budgetMB/2)
		for _, lim := range []int{0, *budgetMB + 48} {
			res, err := spawn("iter", lim)
			if err != nil {
				fmt.Fprintf(os.Stderr, "cachebench: iter: %v\n", err)
				os.Exit(1)
			}
			limit := "GOMEMLIMIT off"
			if lim > 0 {
				limit = fmt.Sprintf("GOMEMLIMIT %d MiB", lim)
			}
			fmt.Printf("  %-20s wall %6.2f s  peak RSS %5.0f MiB (budget + %.0f MiB)  %s\n", limit, res.Wall, res.PeakMiB, res.PeakMiB-float64(*budgetMB), res.Note)
		}
	}
}

// result is what a child reports.
type result struct {
	Wall    float64 // seconds of the workload
	CPU     float64 // user+system CPU seconds of the workload
	PeakMiB float64 // VmHWM at the end
	Hits    int64
	Misses  int64
	// TierHits are the hits of each tier (tiered only).
	TierHits []int64
	Note     string
}

// spawn runs one configuration in a child process.
func spawn(config string, limitMiB int) (result, error) {
	args := []string{"-child", config, "-data", *dataDir, "-arrays", strconv.Itoa(*nArrays), "-mb", strconv.Itoa(*arrayMB),
		"-hot", strconv.Itoa(*hot), "-iter-mb", strconv.Itoa(*iterMB), "-budget", strconv.Itoa(*budgetMB),
		"-lru-mb", strconv.Itoa(*lruMB), "-tiers", *tierMB, "-memlimit", strconv.Itoa(limitMiB),
		"-s3-prefix", *s3Prefix, "-cpuprofile", *cpuProf, "-latency", latency.String()}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var res result
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil {
		return result{}, fmt.Errorf("child output %q: %w", out, err)
	}
	return res, nil
}

// peakRSS returns VmHWM in MiB.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}

// rows returns the rows of an array of mb MiB.
func rows(mb int) int { return mb * mib / (cols * 4) }

// arrayDoc is the metadata of one benchmark array: float32 rows of cols,
// shards of 256 rows (2 MiB decoded), inner chunks of 64 × 512 (128 KiB),
// zstd level 1.
func arrayDoc(nrows int) string {
	return fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[%d,%d],"data_type":"float32",
	"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[256,%d]}},
	"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,
	"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[64,512],
	  "codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}],
	  "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]}`, nrows, cols, cols)
}

// fillRows writes rows [r0, r0+len(b)/rowBytes) of array number a: a
// smooth field with a little noise, rounded to 1/64 (zstd gets about 2×).
func fillRows(b []byte, a, r0 int) {
	x := uint32(a*7919 + r0 + 1)
	for i := 0; i < len(b)/4; i++ {
		r, c := r0+i/cols, i%cols
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v := 100*math.Sin(float64(r)/97+float64(a))*math.Cos(float64(c)/61) + float64(x%256)/64
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(math.Round(v*64)/64)))
	}
}

// ensureData writes the group (and the iteration array) unless the data
// directory already holds them with the same parameters.
func ensureData(ctx context.Context) error {
	stamp := fmt.Sprintf("cachebench v1 arrays=%d mb=%d\n", *nArrays, *arrayMB)
	stampPath := filepath.Join(*dataDir, "CACHEBENCH")
	// The iteration array has its own stamp: a run with -iter=false does
	// not write it, and a later run that wants it adds it alone.
	bigStamp := fmt.Sprintf("cachebench v1 big iter-mb=%d\n", *iterMB)
	bigStampPath := filepath.Join(*dataDir, "CACHEBENCH-big")
	if b, err := os.ReadFile(stampPath); err == nil && string(b) == stamp {
		if b, err := os.ReadFile(bigStampPath); !*doIter || (err == nil && string(b) == bigStamp) {
			return nil
		}
		st, err := fsstore.New(*dataDir)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := writeArray(ctx, st, "big", *iterMB, 99); err != nil {
			return err
		}
		fmt.Printf("generated %s/big in %.1f s\n", *dataDir, time.Since(start).Seconds())
		return os.WriteFile(bigStampPath, []byte(bigStamp), 0o644)
	}
	if _, err := os.Stat(*dataDir); err == nil {
		if _, err := os.Stat(stampPath); err != nil {
			return fmt.Errorf("%s exists and is not a cachebench data directory; pick another -data", *dataDir)
		}
		if err := os.RemoveAll(*dataDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		return err
	}
	st, err := fsstore.New(*dataDir)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := zarr.CreateGroup(ctx, st, "", nil); err != nil {
		return err
	}
	for i := range *nArrays {
		if err := writeArray(ctx, st, fmt.Sprintf("a%02d", i), *arrayMB, i); err != nil {
			return err
		}
	}
	if *doIter {
		if err := writeArray(ctx, st, "big", *iterMB, 99); err != nil {
			return err
		}
	}
	fmt.Printf("generated %s in %.1f s\n", *dataDir, time.Since(start).Seconds())
	if *doIter {
		if err := os.WriteFile(bigStampPath, []byte(bigStamp), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(stampPath, []byte(stamp), 0o644)
}

// writeArray writes one generated array of mb MiB under name.
func writeArray(ctx context.Context, st *fsstore.Store, name string, mb, seed int) error {
	meta, err := zarr.ParseArrayMetadata([]byte(arrayDoc(rows(mb))))
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, st, name, meta)
	if err != nil {
		return err
	}
	const band = 2048 // rows per write: 16 MiB
	buf := make([]byte, band*cols*4)
	for r := 0; r < rows(mb); r += band {
		n := min(band, rows(mb)-r)
		fillRows(buf[:n*cols*4], seed, r)
		if err := a.WriteBytes(ctx, buf[:n*cols*4], nd.Range(r, r+n)); err != nil {
			return err
		}
	}
	return nil
}

// chunkBytes is the decoded size of one inner chunk (64 × 512 float32),
// the unit the caches hold.
const chunkBytes = 64 * 512 * 4

// tieredCodecWork estimates the CPU seconds of codec work the tiered
// configuration's compressed tier cannot avoid beyond what the map does
// (the least tiered can cost is the map's time plus this, spread over
// GOMAXPROCS cores for wall time): every chunk that enters it is
// shuffled and LZ4-compressed once (the misses, and the disk-tier hits that
// move up and later down again) and every hit below tier 0 is decompressed
// (a disk-tier hit reads a compressed frame). The rates are measured now,
// on one core, on the chunks of the first array, with the cache's own
// Blosc settings.
func tieredCodecWork(ctx context.Context, t result) (float64, string, error) {
	if len(t.TierHits) != 3 {
		return 0, "", fmt.Errorf("tier hits %v", t.TierHits)
	}
	st, err := fsstore.New(*dataDir, fsstore.ReadOnly())
	if err != nil {
		return 0, "", err
	}
	a, err := zarr.OpenArray(ctx, st, "a00")
	if err != nil {
		return 0, "", err
	}
	data := make([]byte, rows(*arrayMB)*cols*4)
	if err := a.ReadBytesInto(ctx, data); err != nil {
		return 0, "", err
	}
	opt := blosc.Options{Cname: blosc.LZ4, Clevel: 1, Typesize: 4, Shuffle: blosc.ByteShuffle}
	frames := make([][]byte, 0, len(data)/chunkBytes)
	start := time.Now()
	for off := 0; off+chunkBytes <= len(data); off += chunkBytes {
		f, err := blosc.Compress(nil, data[off:off+chunkBytes], opt)
		if err != nil {
			return 0, "", err
		}
		frames = append(frames, f)
	}
	comp := time.Since(start).Seconds() / float64(len(frames))
	out := make([]byte, 0, chunkBytes)
	start = time.Now()
	for _, f := range frames {
		if out, err = blosc.Decompress(out[:0], f, chunkBytes); err != nil {
			return 0, "", err
		}
	}
	decomp := time.Since(start).Seconds() / float64(len(frames))
	compressed := t.Misses + t.TierHits[2]
	decompressed := t.TierHits[1] + t.TierHits[2]
	work := float64(compressed)*comp + float64(decompressed)*decomp
	return work, fmt.Sprintf("%d chunks compressed at %.0f MB/s, %d decompressed at %.0f MB/s on one core: %.2f CPU s",
		compressed, chunkBytes/comp/1e6, decompressed, chunkBytes/decomp/1e6, work), nil
}

// cpuSeconds returns the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// newCache builds a configuration's cache (nil for none) and its closer.
func newCache(config string) (cache.Cache, func(), error) {
	nop := func() {}
	switch config {
	case "none":
		return nil, nop, nil
	case "map":
		return cache.NewLRU(math.MaxInt64), nop, nil
	case "lru":
		return cache.NewLRU(int64(*lruMB) * mib), nop, nil
	case "compressed":
		return cache.NewCompressed(math.MaxInt64, cache.CompressedOptions{ElemSize: 4}), nop, nil
	case "compressed-zstd":
		return cache.NewCompressed(math.MaxInt64, cache.CompressedOptions{ElemSize: 4, Codec: cache.Zstd}), nop, nil
	case "disk":
		d, err := cache.NewDisk(math.MaxInt64, cache.DiskOptions{})
		if err != nil {
			return nil, nop, err
		}
		return d, func() { d.Close() }, nil
	case "tiered":
		var lru, comp int
		if _, err := fmt.Sscanf(*tierMB, "%d,%d", &lru, &comp); err != nil {
			return nil, nop, fmt.Errorf("-tiers %q: %w", *tierMB, err)
		}
		d, err := cache.NewDisk(math.MaxInt64, cache.DiskOptions{})
		if err != nil {
			return nil, nop, err
		}
		t, err := cache.NewTiered(cache.NewLRU(int64(lru)*mib), cache.NewCompressed(int64(comp)*mib, cache.CompressedOptions{ElemSize: 4}), d)
		if err != nil {
			return nil, nop, err
		}
		return t, func() { t.Close() }, nil
	}
	return nil, nop, fmt.Errorf("unknown configuration %q", config)
}

// runChild runs one configuration.
func runChild(ctx context.Context, config string) (result, error) {
	var st store.Reader
	var err error
	if *s3Prefix != "" {
		st, err = openS3(ctx, *s3Prefix)
	} else {
		st, err = fsstore.New(*dataDir, fsstore.ReadOnly())
	}
	if err != nil {
		return result{}, err
	}
	if config == "iter" {
		return runIter(ctx, st)
	}
	c, closeCache, err := newCache(config)
	if err != nil {
		return result{}, err
	}
	defer closeCache()
	g, err := zarr.OpenGroup(ctx, st, "")
	if err != nil {
		return result{}, err
	}
	arrays := make([]*zarr.Array, *nArrays)
	for i := range arrays {
		var opts []zarr.Option
		if c != nil {
			opts = append(opts, zarr.WithCache(c))
		}
		if arrays[i], err = g.OpenArray(ctx, fmt.Sprintf("a%02d", i), opts...); err != nil {
			return result{}, err
		}
	}
	out := make([]byte, rows(*arrayMB)*cols*4) // one output buffer, reused
	var check float64
	read := func(a *zarr.Array) error {
		if err := a.ReadBytesInto(ctx, out); err != nil {
			return err
		}
		check += float64(math.Float32frombits(binary.LittleEndian.Uint32(out[len(out)-4:])))
		return nil
	}
	cpu0 := cpuSeconds()
	start := time.Now()
	for i := range arrays {
		if err := read(arrays[i]); err != nil {
			return result{}, err
		}
		for h := range min(*hot, len(arrays)) {
			if err := read(arrays[h]); err != nil {
				return result{}, err
			}
		}
	}
	res := result{Wall: time.Since(start).Seconds(), CPU: cpuSeconds() - cpu0, PeakMiB: peakRSS()}
	if c != nil {
		s := c.Stats()
		res.Hits, res.Misses = s.Hits, s.Misses
		for _, ts := range s.Tiers {
			res.TierHits = append(res.TierHits, ts.Hits)
		}
		res.Note = fmt.Sprintf("held %d MiB (values %d MiB), errors %d", s.Bytes/mib, s.ValueBytes/mib, s.Errors)
		for i, ts := range s.Tiers {
			res.Note += fmt.Sprintf("; tier %d %d MiB", i, ts.Bytes/mib)
		}
	}
	_ = check
	return res, nil
}

// runIter iterates over the big array with the budget, touching every
// value.
func runIter(ctx context.Context, st store.Reader) (result, error) {
	a, err := zarr.OpenArray(ctx, st, "big")
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	var sum float64
	blocks := 0
	for b, err := range a.Tiles(ctx, int64(*budgetMB)*mib) {
		if err != nil {
			return result{}, err
		}
		blocks++
		for i := 0; i < len(b.Data); i += 4 {
			sum += float64(math.Float32frombits(binary.LittleEndian.Uint32(b.Data[i:])))
		}
	}
	return result{Wall: time.Since(start).Seconds(), PeakMiB: peakRSS(),
		Note: fmt.Sprintf("%d blocks of %v", blocks, a.TileShape(int64(*budgetMB)*mib))}, nil
}

// exitHooks run before exit (stopping the fake S3 server).
var exitHooks []func()

// exit runs the exit hooks and ends the process with code.
func exit(code int) {
	for _, f := range exitHooks {
		f()
	}
	os.Exit(code)
}

// startS3 makes the GOZARR_S3_* variables (inherited by the children) name
// an S3 server: the real one they already name, or an in-memory gofakes3
// served by this process on a loopback port. It returns a description of
// the server and a function that stops the fake (a no-op for a real one).
func startS3() (string, func(), error) {
	if srv, ok := s3test.LookupEnv(); ok {
		return "real server at " + srv.Endpoint, func() {}, nil
	}
	const bucket = "cachebench"
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		return "", nil, fmt.Errorf("gofakes3: creating bucket %q: %w", bucket, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: gofakes3.New(backend).Server()}
	go hs.Serve(ln)
	endpoint := "http://" + ln.Addr().String()
	for k, v := range map[string]string{s3test.EnvEndpoint: endpoint, s3test.EnvAccessKey: "cachebench",
		s3test.EnvSecretKey: "cachebenchsecret", s3test.EnvBucket: bucket, s3test.EnvRegion: "us-east-1"} {
		os.Setenv(k, v)
	}
	stop := func() { hs.Close() }
	exitHooks = append(exitHooks, stop)
	return "in-process gofakes3 at " + endpoint, stop, nil
}

// openS3 opens the group's store on the GOZARR_S3_* server under prefix,
// every request delayed by -latency. With latency = 0 the requests go
// straight to the transport.
func openS3(ctx context.Context, prefix string) (*s3.Store, error) {
	srv, ok := s3test.LookupEnv()
	if !ok {
		return nil, fmt.Errorf("-s3-prefix %q: no S3 server in the environment (%s, %s)", prefix, s3test.EnvEndpoint, s3test.EnvBucket)
	}
	// Keep as many idle connections as requests may be in flight, so the
	// latency measured is the injected one, not connection setup.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	var rt http.RoundTripper = tr
	if *latency > 0 {
		rt = s3test.Latency(tr, *latency)
	}
	return s3.Open(ctx, srv.Bucket, prefix, srv.Options(s3.WithHTTPClient(&http.Client{Transport: rt}))...)
}

// upload copies the group (root metadata and the -arrays arrays, not the
// iteration array) from -data to the S3 server under prefix, without
// injected latency, unless a previous upload with the same parameters
// finished there (its CACHEBENCH stamp is written last).
func upload(ctx context.Context, prefix string) error {
	srv, _ := s3test.LookupEnv()
	st, err := s3.Open(ctx, srv.Bucket, prefix, srv.Options()...)
	if err != nil {
		return err
	}
	stamp, err := os.ReadFile(filepath.Join(*dataDir, "CACHEBENCH"))
	if err != nil {
		return err
	}
	if b, err := st.Get(ctx, "CACHEBENCH", store.Full()); err == nil && bytes.Equal(b, stamp) {
		return nil
	}
	start := time.Now()
	var n, total int64
	err = filepath.WalkDir(*dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(*dataDir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "big" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "CACHEBENCH" {
			return nil
		}
		if top, _, _ := strings.Cut(rel, "/"); top != "zarr.json" && !isGroupArray(top) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		total += int64(len(b))
		return st.Set(ctx, rel, b)
	})
	if err != nil {
		return err
	}
	if err := st.Set(ctx, "CACHEBENCH", stamp); err != nil {
		return err
	}
	fmt.Printf("uploaded %d objects (%d MiB) to s3://%s/%s in %.1f s\n", n, total/mib, srv.Bucket, prefix, time.Since(start).Seconds())
	return nil
}

// isGroupArray reports whether name is one of the -arrays arrays (a00, a01, …).
func isGroupArray(name string) bool {
	for i := range *nArrays {
		if name == fmt.Sprintf("a%02d", i) {
			return true
		}
	}
	return false
}
