package main

import "slices"

// Interleaved rounds. On a shared machine the speed of the whole machine
// drifts over minutes (other processes, CPU frequency), and it inflates CPU
// time as well as wall time, so a ratio of a workload's best time to a
// baseline's best time measured minutes apart mixes two machine states.
// Instead, a layout×workload runs in rounds; a round measures the
// workload and its baselines (memcpy of the output size; the codec-only
// decode on all cores) back to back, each in its own child process with its
// own warm-up and -reps repetitions, and the round's ratio compares those
// neighbours. Within a round the order alternates (workload first in even
// rounds, baselines first in odd ones: W B | B W | W B ...), so that a
// steady drift makes some rounds' ratios high and others low rather than
// all of them wrong the same way. The suite reports, per ratio, best/best
// (the best baseline time over all rounds ÷ the best workload time over
// all rounds, which is what a single round gives too) and the median over
// rounds of the per-round ratios, which is the figure the targets use.

// measured holds every round of one layout×workload: work[i], memcpy[i]
// and codec[i] were measured in round i (codec is empty when the layout
// has no codec-only baseline).
type measured struct {
	work, memcpy, codec []result
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

// roundRow is one round of a layout×workload in the report.
type roundRow struct {
	Seconds         float64 `json:"seconds"`                          // workload, best of the round's reps
	CPUSeconds      float64 `json:"cpu_seconds"`                      // workload, per rep
	MemcpySeconds   float64 `json:"memcpy_seconds"`                   // copy() of the output size
	CodecSeconds    float64 `json:"codec_only_seconds,omitempty"`     // codec-only, scaled to the decoded bytes
	CodecCPUSeconds float64 `json:"codec_only_cpu_seconds,omitempty"` // the same in CPU time
	MemcpyRatio     float64 `json:"memcpy_ratio"`
	CodecRatio      float64 `json:"codec_only_ratio,omitempty"`
	CodecCPURatio   float64 `json:"codec_only_cpu_ratio,omitempty"`
}

// buildRow turns the rounds of one layout×workload into a report row:
// times are the best over all rounds, allocations and peak RSS the worst
// round's, ratios both best/best and the median of the rounds' ratios.
func buildRow(layoutName, workload string, m measured) row {
	x := row{Layout: layoutName, Workload: workload}
	if len(m.work) == 0 {
		return x
	}
	first := m.work[0]
	x.OutBytes, x.DecodedBytes, x.Calls, x.Checked = first.OutBytes, first.DecodedBytes, first.Calls, first.Checked
	work, workCPU := seconds(m.work), cpuTimes(m.work)
	x.Seconds, x.CPUSeconds = bestOf(work), bestOf(workCPU)
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
	for i, r := range m.work {
		x.Rounds[i].Seconds, x.Rounds[i].CPUSeconds = r.Seconds, r.CPUSeconds
	}

	mem := ratioOf(seconds(m.memcpy), work, 1)
	x.MemcpyRatio, x.MemcpyRatioMedian = mem.Best, mem.Median
	for i := range min(len(m.memcpy), len(x.Rounds)) {
		x.Rounds[i].MemcpySeconds = m.memcpy[i].Seconds
		if m.memcpy[i].Seconds > 0 && work[i] > 0 {
			x.Rounds[i].MemcpyRatio = m.memcpy[i].Seconds / work[i]
		}
	}
	if len(m.codec) == 0 || x.DecodedBytes <= 0 || m.codec[0].DecodedBytes <= 0 {
		return x
	}
	// The codec-only time for the chunks this workload decodes.
	scale := float64(x.DecodedBytes) / float64(m.codec[0].DecodedBytes)
	c := ratioOf(seconds(m.codec), work, scale)
	cc := ratioOf(cpuTimes(m.codec), workCPU, scale)
	x.CodecRatio, x.CodecRatioMedian = c.Best, c.Median
	x.CodecCPURatio, x.CodecCPURatioMedian = cc.Best, cc.Median
	for i := range min(len(m.codec), len(x.Rounds)) {
		rr := &x.Rounds[i]
		rr.CodecSeconds, rr.CodecCPUSeconds = m.codec[i].Seconds*scale, m.codec[i].CPUSeconds*scale
		if work[i] > 0 {
			rr.CodecRatio = rr.CodecSeconds / work[i]
		}
		if workCPU[i] > 0 {
			rr.CodecCPURatio = rr.CodecCPUSeconds / workCPU[i]
		}
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
