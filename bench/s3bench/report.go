package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// printReport writes the markdown report.
func printReport(w io.Writer, cfg config, load string, genTime time.Duration, notes []string, rs []result) {
	fmt.Fprintf(w, "## gozarr S3 read benchmark\n\n")
	fmt.Fprintf(w, "Command: `go run ./bench/s3bench %s`  \n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(w, "Machine: %s, %d CPUs (GOMAXPROCS %d), %s %s/%s, load average %s at the start  \n",
		cpuModel(), cpuCount(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
	fmt.Fprintf(w, "Array: %d×%d float32 (%.0f MiB), shards %d×%d of inner chunks %d×%d (bytes+zstd 1), index bytes+crc32c at the end; generated in %.2f s  \n",
		cfg.n, cfg.n, float64(cfg.n)*float64(cfg.n)*4/(1<<20), cfg.shard, cfg.shard, cfg.inner, cfg.inner, genTime.Seconds())
	for _, n := range notes {
		fmt.Fprintf(w, "Write: %s  \n", n)
	}
	fmt.Fprintf(w, "Workloads: all = whole array, one ReadBytesInto; random = %[1]d inner chunks, one ReadBytesInto each, `conc` at a time; shard = the middle shard, one ReadBytesInto; "+
		"probe = %[1]d GETs of 4 KiB at random offsets of one shard object straight through the S3 store, `conc` at a time (no zarr: the store and server alone). "+
		"Each run opens the array afresh (cold shard-index cache; the metadata GET is not counted). Median of %d runs after a warm-up. "+
		"Every value read was checked against the data written.  \n", cfg.random, cfg.reps)
	fmt.Fprintf(w, "GETs s/r/f: suffix (index) / bounded range (inner chunks) / whole object (shard). MB/s: array bytes delivered per second (10^6 B). "+
		"floor = ceil(requests ÷ conc) × latency. CPU: user+system during the run, of this process (client; includes gofakes3 when it is the server) and of the server process.\n\n")
	fmt.Fprintln(w, "| server | latency | conc | workload | requests | GETs s/r/f | fetched MiB | time ms | MB/s | floor ms | time/floor | time − time at 0 ms | client CPU ms | server CPU ms |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		floor, ratio, added := "–", "–", "–"
		if f := r.floor(); f > 0 {
			floor = ms(f)
			ratio = fmt.Sprintf("%.2f", float64(r.wall)/float64(f))
		}
		for _, z := range rs {
			if r.latency > 0 && z.latency == 0 && z.server == r.server && z.conc == r.conc && z.workload == r.workload {
				added = ms(r.wall - z.wall)
			}
		}
		srv := "–"
		if r.serverCPU >= 0 {
			srv = ms(r.serverCPU)
		}
		fmt.Fprintf(w, "| %s | %v | %d | %s | %d | %d/%d/%d | %.1f | %s | %.0f | %s | %s | %s | %s | %s |\n",
			r.server, r.latency, r.conc, r.workload, r.requests, r.suffix, r.ranged, r.full,
			float64(r.fetched)/(1<<20), ms(r.wall), float64(r.out)/r.wall.Seconds()/1e6,
			floor, ratio, added, ms(r.clientCPU), srv)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }

// cpuModel returns the first "model name" of /proc/cpuinfo, or "unknown CPU".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

// loadAvg returns the 1-minute load average from /proc/loadavg, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
