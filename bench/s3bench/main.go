// Command s3bench measures reading a sharded Zarr array from an S3 server
// through gozarr's pipeline, with and without an injected per-request
// latency, and compares each read with its latency floor.
//
//	eval "$(bash .ci/s3server.sh start)"   # versitygw on loopback
//	go run ./bench/s3bench                 # ~30 s on 2 cores (-server both: ~1 min)
//	bash .ci/s3server.sh stop
//
// It writes the benchmark array (float32, a smooth field plus noise,
// default 4096×4096 = 64 MiB in shards of 1024×1024 holding inner chunks of
// 256×256, zstd level 1 inside, bytes+crc32c index at the end) to the server
// named by the GOZARR_S3_* variables, or, when they are unset, to an
// in-process gofakes3 server (it says so; -server both runs the two one
// after the other). It then reads it back for four workloads:
//
//   - all: the whole array with one zarr.Array.ReadBytesInto.
//   - random: N distinct inner chunks in a random order, one ReadBytesInto each,
//     issued by as many goroutines as the concurrency.
//   - shard: one whole shard (the middle one) with one ReadBytesInto.
//   - probe: N GETs of 4 KiB at random offsets of one shard object straight
//     through the S3 store, as many at once as the concurrency: the store
//     and server alone, no zarr, for comparison.
//
// Every array read opens the array afresh, so shard indexes are not cached
// (the metadata GET of the open is not timed nor counted). Each
// combination of latency (-latency) and concurrency (-conc: both the
// pipeline's IOConcurrency and the S3 store's request limit) runs -reps
// times after one warm-up; the table shows the run with the median time.
// -trace prints every run to stderr with how many requests started in each
// latency-wide slot (the "rounds"), -cpuprofile profiles the reads.
// Every value read is compared with what was written.
//
// floor = ceil(requests ÷ concurrency) × latency is the time the requests
// would take if each cost exactly the latency and they were perfectly
// packed; time/floor says how far a read is from it. The floor ignores
// transfer and decoding, and that an inner chunk's GET must wait for its
// shard's index: a read needing the index first has at least two rounds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gozarr/gozarr/store/s3/s3test"
)

// config is what the flags set.
type config struct {
	n, shard, inner int
	seed            uint64
	latencies       []time.Duration
	concs           []int
	random          int
	reps            int
	servers         []string // "real", "fake"
	workloads       []string
	keep            bool
	trace           bool
	cpuProfile      string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3bench:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "s3bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("s3bench", flag.ContinueOnError)
	fs.IntVar(&cfg.n, "n", 4096, "the array is n×n float32")
	fs.IntVar(&cfg.shard, "shard", 1024, "shard edge (elements)")
	fs.IntVar(&cfg.inner, "inner", 256, "inner chunk edge (elements); must divide -shard")
	seed := fs.Uint64("seed", 1, "seed of the noise and of the random chunk order")
	lat := fs.String("latency", "0,20ms", "comma-separated per-request latencies to inject")
	conc := fs.String("conc", "16,64", "comma-separated I/O concurrencies (pipeline IOConcurrency and s3.WithConcurrency)")
	fs.IntVar(&cfg.random, "random", 200, "inner chunks read by the random workload")
	fs.IntVar(&cfg.reps, "reps", 3, "measured runs per row (after one warm-up); the median is shown")
	server := fs.String("server", "auto", "auto (GOZARR_S3_* server, else gofakes3), real, fake or both")
	work := fs.String("workloads", "all,random,shard,probe", "comma-separated workloads: all, random, shard, probe")
	fs.BoolVar(&cfg.keep, "keep", false, "leave the written array in the bucket")
	fs.BoolVar(&cfg.trace, "trace", false, "print to stderr, for every run with latency, how many requests started in each latency-wide time slot")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the reads (this process only) to this file")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.seed = *seed
	if cfg.n < 1 || cfg.shard < 1 || cfg.inner < 1 || cfg.shard%cfg.inner != 0 || cfg.shard > cfg.n {
		return cfg, fmt.Errorf("need 1 <= -inner, -inner dividing -shard, -shard <= -n (got n=%d shard=%d inner=%d)", cfg.n, cfg.shard, cfg.inner)
	}
	if cfg.reps < 1 || cfg.random < 1 {
		return cfg, fmt.Errorf("-reps and -random must be at least 1")
	}
	for f := range strings.SplitSeq(*lat, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if f == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 {
			return cfg, fmt.Errorf("-latency: bad duration %q", f)
		}
		cfg.latencies = append(cfg.latencies, d)
	}
	for f := range strings.SplitSeq(*conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return cfg, fmt.Errorf("-conc: bad concurrency %q", f)
		}
		cfg.concs = append(cfg.concs, c)
	}
	for f := range strings.SplitSeq(*work, ",") {
		switch f = strings.TrimSpace(f); f {
		case "all", "random", "shard", "probe":
			cfg.workloads = append(cfg.workloads, f)
		default:
			return cfg, fmt.Errorf("-workloads: unknown workload %q", f)
		}
	}
	_, haveReal := s3test.LookupEnv()
	switch *server {
	case "auto":
		if haveReal {
			cfg.servers = []string{"real"}
		} else {
			fmt.Fprintf(os.Stderr, "s3bench: note: %s/%s are unset, so this run uses the in-process gofakes3 server, not a real S3 server (eval \"$(bash .ci/s3server.sh start)\" starts versitygw)\n", s3test.EnvEndpoint, s3test.EnvBucket)
			cfg.servers = []string{"fake"}
		}
	case "real", "both":
		if !haveReal {
			return cfg, fmt.Errorf("-server %s: %s and %s are unset (eval \"$(bash .ci/s3server.sh start)\" starts versitygw)", *server, s3test.EnvEndpoint, s3test.EnvBucket)
		}
		cfg.servers = []string{"real"}
		if *server == "both" {
			cfg.servers = append(cfg.servers, "fake")
		}
	case "fake":
		cfg.servers = []string{"fake"}
	default:
		return cfg, fmt.Errorf("-server: want auto, real, fake or both, got %q", *server)
	}
	return cfg, nil
}

// target is one S3 server under test.
type target struct {
	name string // "versitygw" or "gofakes3"
	srv  *s3test.Server
	pid  int // the server's process, for its CPU time; 0 when in-process
	stop func()
}

func openTarget(kind string) (*target, error) {
	if kind == "real" {
		srv, _ := s3test.LookupEnv()
		return &target{name: "versitygw", srv: srv, pid: serverPID(), stop: func() {}}, nil
	}
	backend := s3mem.New()
	const bucket = "s3bench"
	if err := backend.CreateBucket(bucket); err != nil {
		return nil, fmt.Errorf("gofakes3: creating bucket: %w", err)
	}
	ts := httptest.NewServer(gofakes3.New(backend).Server())
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "test", SecretKey: "testsecret", Bucket: bucket, Region: "us-east-1"}
	return &target{name: "gofakes3", srv: srv, stop: ts.Close}, nil
}

// run benchmarks every server of cfg and writes the report to w.
func run(ctx context.Context, cfg config, w io.Writer) error {
	load := loadAvg()
	t0 := time.Now()
	data := field(cfg.seed, cfg.n)
	genTime := time.Since(t0)
	var results []result
	var notes []string
	// The profile covers the reads, not the data generation or the writes.
	startProfile := func() {}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		started := false
		startProfile = func() {
			if !started {
				started = pprof.StartCPUProfile(f) == nil
			}
		}
		defer pprof.StopCPUProfile()
	}
	for _, kind := range cfg.servers {
		tg, err := openTarget(kind)
		if err != nil {
			return err
		}
		rs, note, err := benchTarget(ctx, cfg, tg, data, startProfile)
		tg.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
		results = append(results, rs...)
		notes = append(notes, note)
	}
	printReport(w, cfg, load, genTime, notes, results)
	return nil
}

// transport returns a fresh HTTP transport keeping up to conc idle
// connections to the server (Go's default keeps 2, which would make most
// requests open a new connection).
func transport(conc int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(100, conc)
	tr.MaxIdleConnsPerHost = conc
	return tr
}

// errMismatch reports values read that differ from those written.
var errMismatch = errors.New("values read differ from those written")

func cpuCount() int { return runtime.NumCPU() }
