package main

import "slices"

// Interleaved rounds. On a shared machine the speed of the whole machine
// changes from one second to the next (other processes, CPU frequency),
// and it inflates CPU time as well as wall time, so a ratio of a
// workload's best time to a baseline's best time measured minutes apart
// mixes two machine states; so does one measured a few seconds apart in
// two child processes. Instead, a layout×workload runs in rounds, and a
// round runs two children: the isolated workload child, whose times,
// allocations and peak RSS are the row's, and a paired child that holds
// the workload and its baselines (memcpy of the output size; the
// codec-only decode on all cores for reads of a compressed layout) and
// runs them back to back repetition by repetition, rotating which goes
// first. The round's ratio is the median over the paired child's
// repetitions of baseline ÷ workload, each from operations less than a
// second apart. Within a round the two children alternate order (W P | P
// W | W P ...). The suite reports, per ratio, the median over rounds of
// the rounds' ratios, which is the figure the targets use, and best/best:
// the best baseline time over all rounds ÷ the row's best time.

// measured holds every round of one layout×workload: work[i] is the
// isolated workload child of round i, paired[i] its paired child.
type measured struct {
	work, paired []result
}

// ratio summarises a baseline÷workload time ratio over rounds.
type ratio struct {
	Best   float64   // min(base)·scale ÷ min(work): best time ÷ best time
	Median float64   // median over rounds of base[i]·scale ÷ work[i]
	Min    float64   // least per-round ratio
	Max    float64   // greatest per-round ratio
	Rounds []float64 // per-round ratios, in round order
}

// ratioOf computes the ratio of baseline times to workload times over
// rounds: base[i] and work[i] are the times (seconds, best of the round's
// repetitions) of round i, and scale converts a baseline time to the
// workload's amount of work (for the codec-only baseline: the workload's
// decoded bytes ÷ the baseline's). Rounds with a missing or non-positive
// time are skipped; with no usable round the result is zero.
func ratioOf(base, work []float64, scale float64) ratio {
	var r ratio
	bestBase, bestWork := 0.0, 0.0
	for i := range min(len(base), len(work)) {
		b, w := base[i], work[i]
		if b <= 0 || w <= 0 {
			continue
		}
		r.Rounds = append(r.Rounds, b*scale/w)
		if bestBase == 0 || b < bestBase {
			bestBase = b
		}
		if bestWork == 0 || w < bestWork {
			bestWork = w
		}
	}
	if len(r.Rounds) == 0 {
		return ratio{}
	}
	r.Best = bestBase * scale / bestWork
	r.Median = median(r.Rounds)
	r.Min, r.Max = slices.Min(r.Rounds), slices.Max(r.Rounds)
	return r
}

// seconds returns the best wall time of each result.
func seconds(rs []result) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Seconds
	}
	return out
}

// cpuTimes returns the CPU time per repetition of each result.
func cpuTimes(rs []result) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.CPUSeconds
	}
	return out
}

// bestOf returns the least of xs (0 when empty).
func bestOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Min(xs)
}

// roundRow is one round of a layout×workload in the report. Baseline
// times are the best of the paired child's repetitions; ratios are the
// median over its repetitions of baseline ÷ workload.
type roundRow struct {
	Seconds         float64 `json:"seconds"`                          // isolated workload child, best of reps
	CPUSeconds      float64 `json:"cpu_seconds"`                      // isolated workload child, per rep
	PairedSeconds   float64 `json:"paired_seconds"`                   // workload in the paired child, best
	MemcpySeconds   float64 `json:"memcpy_seconds"`                   // copy() of the output size
	CodecSeconds    float64 `json:"codec_only_seconds,omitempty"`     // codec-only, scaled to the decoded bytes
	CodecCPUSeconds float64 `json:"codec_only_cpu_seconds,omitempty"` // the same in CPU time
	MemcpyRatio     float64 `json:"memcpy_ratio"`
	CodecRatio      float64 `json:"codec_only_ratio,omitempty"`
	CodecCPURatio   float64 `json:"codec_only_cpu_ratio,omitempty"`
}

// codecScale converts codec-only times of a paired child to the
// workload's decoded bytes (0 when there is no codec-only baseline).
func codecScale(p result) float64 {
	if p.Pairs == nil || len(p.Pairs.CodecSeconds) == 0 || p.Pairs.CodecDecodedBytes <= 0 || p.DecodedBytes <= 0 {
		return 0
	}
	return float64(p.DecodedBytes) / float64(p.Pairs.CodecDecodedBytes)
}

// buildRow turns the rounds of one layout×workload into a report row:
// times are the best over the isolated children, allocations and peak RSS
// the worst round's; each ratio is the median over rounds of the round's
// paired ratio, and best/best is the best baseline time of every paired
// child ÷ the row's best time.
func buildRow(layoutName, workload string, m measured) row {
	x := row{Layout: layoutName, Workload: workload}
	if len(m.work) == 0 {
		return x
	}
	first := m.work[0]
	x.OutBytes, x.DecodedBytes, x.Calls, x.Checked = first.OutBytes, first.DecodedBytes, first.Calls, first.Checked
	x.Seconds, x.CPUSeconds = bestOf(seconds(m.work)), bestOf(cpuTimes(m.work))
	var peak int64
	for _, r := range m.work {
		x.AllSeconds = append(x.AllSeconds, r.All...)
		x.Mallocs = max(x.Mallocs, r.Mallocs)
		x.AllocBytes = max(x.AllocBytes, r.AllocBytes)
		peak = max(peak, r.PeakRSS)
	}
	x.Median = median(x.AllSeconds)
	x.MBps = mbps(x.OutBytes, x.Seconds)
	if x.OutBytes > 0 {
		x.AllocPct = 100 * x.AllocBytes / float64(x.OutBytes)
	}
	x.PeakRSSMiB = float64(peak) / (1 << 20)
	x.Rounds = make([]roundRow, len(m.work))
	var mem, codec, codecCPU []float64 // per round
	var bestMem, bestCodec, bestCodecCPU []float64
	for i, r := range m.work {
		rr := &x.Rounds[i]
		rr.Seconds, rr.CPUSeconds = r.Seconds, r.CPUSeconds
		if i >= len(m.paired) || m.paired[i].Pairs == nil {
			continue
		}
		p := m.paired[i].Pairs
		rr.PairedSeconds, rr.MemcpySeconds = bestOf(p.WorkSeconds), bestOf(p.MemcpySeconds)
		rr.MemcpyRatio = ratioOf(p.MemcpySeconds, p.WorkSeconds, 1).Median
		mem, bestMem = append(mem, rr.MemcpyRatio), append(bestMem, rr.MemcpySeconds)
		if scale := codecScale(m.paired[i]); scale > 0 {
			rr.CodecSeconds, rr.CodecCPUSeconds = bestOf(p.CodecSeconds)*scale, bestOf(p.CodecCPU)*scale
			rr.CodecRatio = ratioOf(p.CodecSeconds, p.WorkSeconds, scale).Median
			rr.CodecCPURatio = ratioOf(p.CodecCPU, p.WorkCPU, scale).Median
			codec, codecCPU = append(codec, rr.CodecRatio), append(codecCPU, rr.CodecCPURatio)
			bestCodec, bestCodecCPU = append(bestCodec, rr.CodecSeconds), append(bestCodecCPU, rr.CodecCPUSeconds)
		}
	}
	if len(mem) > 0 && x.Seconds > 0 {
		x.MemcpyRatio, x.MemcpyRatioMedian = bestOf(bestMem)/x.Seconds, median(mem)
	}
	if len(codec) > 0 && x.Seconds > 0 && x.CPUSeconds > 0 {
		x.CodecRatio, x.CodecRatioMedian = bestOf(bestCodec)/x.Seconds, median(codec)
		x.CodecCPURatio, x.CodecCPURatioMedian = bestOf(bestCodecCPU)/x.CPUSeconds, median(codecCPU)
	}
	return x
}

// spread returns the least and greatest of the rounds' ratios picked by f.
func spread(rs []roundRow, f func(roundRow) float64) (lo, hi float64) {
	for i, r := range rs {
		v := f(r)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}
