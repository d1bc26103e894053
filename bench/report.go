package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gozarr/gozarr/pipeline"
)

// report is everything one run measured (the -json output).
type report struct {
	Command    string           `json:"command"`
	Revision   string           `json:"revision"` // vcs.revision of the build, "+dirty" if modified
	Date       string           `json:"date"`
	GoVersion  string           `json:"go_version"`
	GOMAXPROCS int              `json:"gomaxprocs"`
	Geometry   geometry         `json:"geometry"`
	Pipeline   pipeline.Options `json:"pipeline"`
	Reps       int              `json:"reps"`
	Random     int              `json:"random_regions"`
	Stride     [2]int           `json:"stride"`
	Zarrita    string           `json:"zarrita_version,omitempty"`
	Layouts    []layoutInfo     `json:"layouts"`
	Rows       []row            `json:"rows"`
	Targets    []target         `json:"targets"`
}

// layoutInfo describes one stored layout and its codec-only baseline.
type layoutInfo struct {
	Layout       string  `json:"layout"`
	StoredBytes  int64   `json:"stored_bytes"`
	Ratio        float64 `json:"compression_ratio"`
	CodecMBps    float64 `json:"codec_only_mbps,omitempty"` // all cores
	Codec1MBps   float64 `json:"codec_only_1core_mbps,omitempty"`
	CodecCPUMBps float64 `json:"codec_only_cpu_mbps,omitempty"` // decoded bytes per CPU second
}

// row is one layout×workload.
type row struct {
	Layout         string    `json:"layout"`
	Workload       string    `json:"workload"`
	Seconds        float64   `json:"seconds"`
	AllSeconds     []float64 `json:"all_seconds"`
	Median         float64   `json:"median_seconds"`
	CPUSeconds     float64   `json:"cpu_seconds"` // user+system per operation
	MBps           float64   `json:"mbps"`        // output (or input, for writes) bytes / 1e6 / s
	OutBytes       int64     `json:"out_bytes"`
	DecodedBytes   int64     `json:"decoded_bytes"`
	Calls          int       `json:"calls"`
	MemcpyRatio    float64   `json:"memcpy_ratio"`         // memcpy time of OutBytes / time
	CodecRatio     float64   `json:"codec_only_ratio"`     // codec-only time of DecodedBytes / time; 0 = n/a
	CodecCPURatio  float64   `json:"codec_only_cpu_ratio"` // the same with CPU times
	Mallocs        float64   `json:"mallocs"`              // per operation
	AllocBytes     float64   `json:"alloc_bytes"`          // per operation
	AllocPct       float64   `json:"alloc_pct_of_output"`  // AllocBytes / OutBytes × 100
	PeakRSSMiB     float64   `json:"peak_rss_mib"`         // the child process's VmHWM
	ZarritaSeconds float64   `json:"zarrita_seconds,omitempty"`
	ZarritaRSSMiB  float64   `json:"zarrita_peak_rss_mib,omitempty"`
	VsZarrita      float64   `json:"speedup_vs_zarrita,omitempty"` // zarrita time / gozarr time
	ZarritaError   string    `json:"zarrita_error,omitempty"`
	Checked        int       `json:"elements_checked"`
}

// target is one of issue 4's "done when" conditions.
type target struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
	Met    bool   `json:"met"`
	Known  bool   `json:"measured"` // false when this run did not measure it
}

func (r report) find(layout, workload string) (row, bool) {
	for _, x := range r.Rows {
		if x.Layout == layout && x.Workload == workload {
			return x, true
		}
	}
	return row{}, false
}

// evaluate checks issue 4's targets against the rows of a run.
func evaluate(r report) []target {
	var ts []target
	if x, ok := r.find("zstd-sharded", "read-all"); ok {
		ts = append(ts, target{Name: "read-all zstd-sharded ≥ 0.85 × codec-only (all cores)",
			Detail: fmt.Sprintf("%.2f × (CPU time: %.2f ×)", x.CodecRatio, x.CodecCPURatio), Met: x.CodecRatio >= 0.85, Known: true})
	}
	for _, l := range []string{"none", "none-sharded"} {
		if x, ok := r.find(l, "read-all"); ok {
			ts = append(ts, target{Name: "read-all " + l + " ≥ 0.6 × memcpy",
				Detail: fmt.Sprintf("%.2f ×", x.MemcpyRatio), Met: x.MemcpyRatio >= 0.6, Known: true})
		}
	}
	var slower []string
	compared := 0
	for _, x := range r.Rows {
		if x.ZarritaSeconds > 0 {
			compared++
			if x.VsZarrita <= 1 {
				slower = append(slower, fmt.Sprintf("%s %s (%.2f×)", x.Layout, x.Workload, x.VsZarrita))
			}
		}
	}
	if compared > 0 {
		d := fmt.Sprintf("faster on %d of %d", compared-len(slower), compared)
		if len(slower) > 0 {
			d += "; not on " + strings.Join(slower, ", ")
		}
		ts = append(ts, target{Name: "faster than zarrita.js on every workload", Detail: d, Met: len(slower) == 0, Known: true})
	} else {
		ts = append(ts, target{Name: "faster than zarrita.js on every workload", Detail: "not measured (run with -peers)"})
	}
	capMiB := float64(r.Pipeline.MaxBytesInFlight) / (1 << 20)
	var allocBad, rssBad []string
	worstAlloc, worstRSS := 0.0, 0.0
	n := 0
	for _, x := range r.Rows {
		if x.Workload != "read-all" {
			continue
		}
		n++
		worstAlloc = max(worstAlloc, x.AllocPct)
		if x.AllocPct > 5 {
			allocBad = append(allocBad, fmt.Sprintf("%s %.1f%%", x.Layout, x.AllocPct))
		}
		limit := float64(x.OutBytes)/(1<<20) + capMiB + 64
		worstRSS = max(worstRSS, x.PeakRSSMiB-limit)
		if x.PeakRSSMiB > limit {
			rssBad = append(rssBad, fmt.Sprintf("%s %.0f MiB > %.0f MiB", x.Layout, x.PeakRSSMiB, limit))
		}
	}
	if n > 0 {
		d := fmt.Sprintf("worst %.2f%%", worstAlloc)
		if len(allocBad) > 0 {
			d += "; over: " + strings.Join(allocBad, ", ")
		}
		ts = append(ts, target{Name: "read-all allocates ≤ 5% of the output", Detail: d, Met: len(allocBad) == 0, Known: true})
		d = fmt.Sprintf("limit output + %.0f MiB cap + 64 MiB; worst margin %+.0f MiB", capMiB, worstRSS)
		if len(rssBad) > 0 {
			d += "; over: " + strings.Join(rssBad, ", ")
		}
		ts = append(ts, target{Name: "read-all peak RSS ≤ output + in-flight cap + 64 MiB", Detail: d, Met: len(rssBad) == 0, Known: true})
	}
	return ts
}

// Reference figures from the brief, for a 256 MiB zstd-sharded
// float32 array on this machine class (2 cores): the -size 8192 run
// reproduces the measurement.
const referenceNote = `Reference (issue brief, 256 MiB zstd-sharded float32 read-all, 2 cores): ` +
	`zarr-python 3.4 ≈ 0.76 s, zarrita.js ≈ 1.55 s, codec alone on both cores ≈ 0.22 s; target ≤ 0.26 s.`

// revNote formats the build revision for the header ("" when unknown).
func revNote(rev string) string {
	if rev == "" {
		return ""
	}
	return " · rev " + rev[:min(len(rev), 12)]
}

// printMarkdown writes the report as markdown tables.
func printMarkdown(w io.Writer, r report) {
	g := r.Geometry
	fmt.Fprintf(w, "\n## gozarr bench: %d×%d float32 (%.0f MiB)\n\n", g.N, g.N, float64(g.bytes())/(1<<20))
	fmt.Fprintf(w, "`%s`%s · %s · GOMAXPROCS %d · chunks %d², shards %d² of %d² inner chunks · best of %d runs after a warm-up · page cache warm",
		r.Command, revNote(r.Revision), r.GoVersion, r.GOMAXPROCS, g.Chunk, g.Shard, g.Inner, r.Reps)
	if r.Zarrita != "" {
		fmt.Fprintf(w, " · zarrita.js %s", r.Zarrita)
	}
	fmt.Fprintf(w, "\n\n| layout | stored MiB | ratio | codec-only MB/s (all cores) | codec-only MB/s (1 core) | codec-only MB per CPU s |\n|---|--:|--:|--:|--:|--:|\n")
	for _, l := range r.Layouts {
		c, c1, cc := "n/a", "n/a", "n/a"
		if l.CodecMBps > 0 {
			c, c1, cc = fmt.Sprintf("%.0f", l.CodecMBps), fmt.Sprintf("%.0f", l.Codec1MBps), fmt.Sprintf("%.0f", l.CodecCPUMBps)
		}
		fmt.Fprintf(w, "| %s | %.1f | %.2f | %s | %s | %s |\n", l.Layout, float64(l.StoredBytes)/(1<<20), l.Ratio, c, c1, cc)
	}
	fmt.Fprintf(w, "\n| layout | workload | time s | CPU s | MB/s | × memcpy | × codec-only | × codec-only (CPU) | alloc %% of out | allocs/op | peak RSS MiB | zarrita s | zarrita / gozarr |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Rows {
		codec, codecCPU := "n/a", "n/a"
		if x.CodecRatio > 0 {
			codec, codecCPU = fmt.Sprintf("%.2f", x.CodecRatio), fmt.Sprintf("%.2f", x.CodecCPURatio)
		}
		zs, zr := "", ""
		switch {
		case x.ZarritaSeconds > 0:
			zs, zr = fmt.Sprintf("%.3f", x.ZarritaSeconds), fmt.Sprintf("%.1f×", x.VsZarrita)
		case x.ZarritaError != "":
			zs = "error"
		}
		fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.0f | %.2f | %s | %s | %.2f | %.0f | %.0f | %s | %s |\n",
			x.Layout, x.Workload, x.Seconds, x.CPUSeconds, x.MBps, x.MemcpyRatio, codec, codecCPU, x.AllocPct, x.Mallocs, x.PeakRSSMiB, zs, zr)
	}
	fmt.Fprintf(w, "\nMB/s: bytes of the output (input, for write-all) / 10⁶ / s. × memcpy: time of one copy() of the output size ÷ time. "+
		"× codec-only: time the codec's own library takes to decode the chunks the workload decodes, on all cores with no Zarr logic, ÷ time; "+
		"(CPU): the same with CPU times (user+system), which other load on the machine does not inflate. "+
		"chunks and random: one ReadBytes call per region, in sequence.\n")
	if g.N == 8192 {
		if x, ok := r.find("zstd-sharded", "read-all"); ok {
			fmt.Fprintf(w, "\n%s Measured here: gozarr %.3f s", referenceNote, x.Seconds)
			if x.ZarritaSeconds > 0 {
				fmt.Fprintf(w, ", zarrita.js %.3f s", x.ZarritaSeconds)
			}
			if x.CodecRatio > 0 {
				fmt.Fprintf(w, ", codec alone %.3f s", x.Seconds*x.CodecRatio)
			}
			fmt.Fprintln(w, ".")
		}
	}
	fmt.Fprintf(w, "\n### Targets (issue 4)\n\n| target | measured | met |\n|---|---|---|\n")
	for _, t := range r.Targets {
		met := "no"
		switch {
		case !t.Known:
			met = "—"
		case t.Met:
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Name, t.Detail, met)
	}
}
