package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gozarr/gozarr/pipeline"
)

// report is everything one run measured (the -json output).
type report struct {
	Command     string           `json:"command"`
	Revision    string           `json:"revision"` // vcs.revision of the build, "+dirty" if modified
	Date        string           `json:"date"`
	GoVersion   string           `json:"go_version"`
	GOMAXPROCS  int              `json:"gomaxprocs"`
	Geometry    geometry         `json:"geometry"`
	Pipeline    pipeline.Options `json:"pipeline"`
	Reps        int              `json:"reps"`         // timed repetitions per child, after one warm-up
	Rounds      int              `json:"rounds"`       // interleaved rounds of read-all
	OtherRounds int              `json:"other_rounds"` // interleaved rounds of the other workloads
	WallSeconds float64          `json:"wall_seconds"` // the whole suite, data generation included
	Random      int              `json:"random_regions"`
	Stride      [2]int           `json:"stride"`
	Zarrita     string           `json:"zarrita_version,omitempty"`
	Layouts     []layoutInfo     `json:"layouts"`
	Rows        []row            `json:"rows"`
	Targets     []target         `json:"targets"`
}

// layoutInfo describes one stored layout and its codec-only baseline.
type layoutInfo struct {
	Layout       string  `json:"layout"`
	StoredBytes  int64   `json:"stored_bytes"`
	Ratio        float64 `json:"compression_ratio"`
	CodecMBps    float64 `json:"codec_only_mbps,omitempty"` // all cores, best over every round
	Codec1MBps   float64 `json:"codec_only_1core_mbps,omitempty"`
	CodecCPUMBps float64 `json:"codec_only_cpu_mbps,omitempty"` // decoded bytes per CPU second
}

// row is one layout×workload, over all its rounds.
type row struct {
	Layout        string    `json:"layout"`
	Workload      string    `json:"workload"`
	Seconds       float64   `json:"seconds"`        // best over all rounds
	AllSeconds    []float64 `json:"all_seconds"`    // every timed repetition of every round
	Median        float64   `json:"median_seconds"` // median of AllSeconds
	CPUSeconds    float64   `json:"cpu_seconds"`    // user+system per operation, best round
	MBps          float64   `json:"mbps"`           // output (or input, for writes) bytes / 1e6 / s
	OutBytes      int64     `json:"out_bytes"`
	DecodedBytes  int64     `json:"decoded_bytes"`
	Calls         int       `json:"calls"`
	MemcpyRatio   float64   `json:"memcpy_ratio"`         // best/best: best memcpy time of OutBytes / best time
	CodecRatio    float64   `json:"codec_only_ratio"`     // best/best: codec-only time of DecodedBytes / time; 0 = n/a
	CodecCPURatio float64   `json:"codec_only_cpu_ratio"` // the same with CPU times
	// The same ratios as the median over rounds of each round's ratio.
	MemcpyRatioMedian   float64    `json:"memcpy_ratio_median"`
	CodecRatioMedian    float64    `json:"codec_only_ratio_median"`
	CodecCPURatioMedian float64    `json:"codec_only_cpu_ratio_median"`
	Rounds              []roundRow `json:"rounds"`
	Mallocs             float64    `json:"mallocs"`             // per operation, worst round
	AllocBytes          float64    `json:"alloc_bytes"`         // per operation, worst round
	AllocPct            float64    `json:"alloc_pct_of_output"` // AllocBytes / OutBytes × 100
	PeakRSSMiB          float64    `json:"peak_rss_mib"`        // the child process's VmHWM, worst round
	ZarritaSeconds      float64    `json:"zarrita_seconds,omitempty"`
	ZarritaRSSMiB       float64    `json:"zarrita_peak_rss_mib,omitempty"`
	VsZarrita           float64    `json:"speedup_vs_zarrita,omitempty"` // zarrita time / gozarr time
	ZarritaError        string     `json:"zarrita_error,omitempty"`
	Checked             int        `json:"elements_checked"`
}

// target is one of issue 4's "done when" conditions.
type target struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
	Met    bool   `json:"met"`
	Known  bool   `json:"measured"` // false when this run did not measure it
	// BestBest is, for a ratio target, the ratio of best times over all
	// rounds, shown beside the median of the rounds' ratios that decides Met.
	BestBest string `json:"best_best,omitempty"`
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
	// Ratio targets are judged on the median over rounds of each round's
	// ratio (a baseline and the workload measured back to back).
	if x, ok := r.find("zstd-sharded", "read-all"); ok {
		lo, hi := spread(x.Rounds, func(rr roundRow) float64 { return rr.CodecRatio })
		ts = append(ts, target{Name: "read-all zstd-sharded ≥ 0.85 × codec-only (all cores)",
			Detail: fmt.Sprintf("%.2f × (%s %.2f–%.2f; CPU time %.2f ×)", x.CodecRatioMedian, roundsWord(len(x.Rounds)), lo, hi, x.CodecCPURatioMedian),
			Met:    x.CodecRatioMedian >= 0.85, Known: true,
			BestBest: fmt.Sprintf("%.2f × (CPU time %.2f ×)", x.CodecRatio, x.CodecCPURatio)})
	}
	if x, ok := r.find("zstd-sharded", "write-all"); ok && x.CodecRatioMedian > 0 {
		lo, hi := spread(x.Rounds, func(rr roundRow) float64 { return rr.CodecRatio })
		ts = append(ts, target{Name: "write-all zstd-sharded ≥ 0.8 × codec-only encode (all cores)",
			Detail: fmt.Sprintf("%.2f × (%s %.2f–%.2f; CPU time %.2f ×)", x.CodecRatioMedian, roundsWord(len(x.Rounds)), lo, hi, x.CodecCPURatioMedian),
			Met:    x.CodecRatioMedian >= 0.8, Known: true,
			BestBest: fmt.Sprintf("%.2f × (CPU time %.2f ×)", x.CodecRatio, x.CodecCPURatio)})
	}
	for _, l := range []string{"none", "none-sharded"} {
		if x, ok := r.find(l, "read-all"); ok {
			lo, hi := spread(x.Rounds, func(rr roundRow) float64 { return rr.MemcpyRatio })
			ts = append(ts, target{Name: "read-all " + l + " ≥ 0.6 × memcpy",
				Detail: fmt.Sprintf("%.2f × (%s %.2f–%.2f)", x.MemcpyRatioMedian, roundsWord(len(x.Rounds)), lo, hi),
				Met:    x.MemcpyRatioMedian >= 0.6, Known: true,
				BestBest: fmt.Sprintf("%.2f ×", x.MemcpyRatio)})
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
		if n == 1 {
			worstRSS = x.PeakRSSMiB - limit
		}
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
	fmt.Fprintf(w, "`%s`%s · %s · GOMAXPROCS %d · chunks %d², shards %d² of %d² inner chunks · "+
		"each child best of %d runs after a warm-up · %s interleaved with the baselines (read-all; %s for the others) · page cache warm · suite wall time %.0f s",
		r.Command, revNote(r.Revision), r.GoVersion, r.GOMAXPROCS, g.Chunk, g.Shard, g.Inner, r.Reps, roundsWord(r.Rounds), roundsWord(r.OtherRounds), r.WallSeconds)
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
	fmt.Fprintf(w, "\n| layout | workload | rounds | time s | CPU s | MB/s | × memcpy | × codec-only | × codec-only (CPU) | alloc %% of out | allocs/op | peak RSS MiB | zarrita s | zarrita / gozarr |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Rows {
		codec, codecCPU := "n/a", "n/a"
		if x.CodecRatio > 0 {
			codec, codecCPU = ratioCell(x.CodecRatioMedian, x.CodecRatio), ratioCell(x.CodecCPURatioMedian, x.CodecCPURatio)
		}
		zs, zr := "", ""
		switch {
		case x.ZarritaSeconds > 0:
			zs, zr = fmt.Sprintf("%.3f", x.ZarritaSeconds), fmt.Sprintf("%.1f×", x.VsZarrita)
		case x.ZarritaError != "":
			zs = "error"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %.0f | %s | %s | %s | %.2f | %.0f | %.0f | %s | %s |\n",
			x.Layout, x.Workload, len(x.Rounds), x.Seconds, x.CPUSeconds, x.MBps, ratioCell(x.MemcpyRatioMedian, x.MemcpyRatio), codec, codecCPU, x.AllocPct, x.Mallocs, x.PeakRSSMiB, zs, zr)
	}
	fmt.Fprintf(w, "\nMB/s: bytes of the output (input, for write-all) / 10⁶ / s. × memcpy: time of one copy() of the output size ÷ time. "+
		"× codec-only: time the codec's own library takes to decode the chunks the workload decodes (for write-all: the chunk codecs encoding every chunk, cut out beforehand), on all cores with no Zarr logic, ÷ time; "+
		"(CPU): the same with CPU times (user+system), which contention on a shared machine inflates too, if less. "+
		"chunks and random: one ReadBytesInto call per region, in sequence.\n")
	fmt.Fprintf(w, "\nMethod: the machine's speed changes from one second to the next, so each layout×workload runs in rounds of two child processes: "+
		"the workload alone (its times, allocations and peak RSS are the row's), and a paired child that runs the workload, memcpy and the "+
		"codec-only decode back to back (%d repetitions of each, rotating which goes first); the round's ratio is the median over those repetitions of baseline ÷ workload. "+
		"A ratio cell reads \"median (best/best)\": the median over rounds of the rounds' ratios, then the best baseline time over all rounds ÷ the best "+
		"workload time. Times are the best over all rounds; allocations and peak RSS the worst round's. The targets use the median.\n", r.Reps)
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
	fmt.Fprintf(w, "\n### Targets (issue 4)\n\nRatio targets are judged on the median over rounds of each round's ratio; best/best beside it.\n\n"+
		"| target | measured (median of rounds) | best/best | met |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		met := "no"
		switch {
		case !t.Known:
			met = "—"
		case t.Met:
			met = "yes"
		}
		bb := t.BestBest
		if bb == "" {
			bb = "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.Name, t.Detail, bb, met)
	}
}

// ratioCell formats a ratio as "median (best/best)".
func ratioCell(med, best float64) string {
	return fmt.Sprintf("%.2f (%.2f)", med, best)
}

// roundsWord returns "1 round" or "n rounds".
func roundsWord(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}
