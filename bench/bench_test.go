package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// The generator's bulk and per-element forms agree, so children can check
// any element they read.
func TestGenerateMatchesValue(t *testing.T) {
	for _, n := range []int{1, 7, 64} {
		data := generate(3, n)
		for i := range n {
			for j := range n {
				got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*n+j):]))
				if want := value(3, n, i, j); got != want {
					t.Fatalf("n=%d [%d, %d]: generate %v, value %v", n, i, j, got, want)
				}
			}
		}
	}
	if a, b := value(1, 64, 5, 9), value(2, 64, 5, 9); a == b {
		t.Errorf("seeds 1 and 2 give the same element %v", a)
	}
	// Quantised to 1/64.
	if v := value(1, 64, 5, 9); v*64 != float32(math.Round(float64(v)*64)) {
		t.Errorf("value %v is not a multiple of 1/64", v)
	}
}

// Every layout round-trips through gozarr, and its chunk files decode with
// the codec-only baseline to the same total.
func TestLayoutsRoundTrip(t *testing.T) {
	g := geometry{N: 64, Chunk: 16, Shard: 32, Inner: 16, Seed: 1}
	data := generate(g.Seed, g.N)
	for _, l := range allLayouts() {
		t.Run(l.Name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := fs.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			meta, err := metadata(l, g)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a, err := zarr.CreateArray(ctx, st, "", meta)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.WriteBytes(ctx, data); err != nil {
				t.Fatal(err)
			}
			if got := a.Sharding() != nil; got != l.Sharded {
				t.Fatalf("sharded = %v, want %v", got, l.Sharded)
			}
			out := make([]byte, len(data))
			if err := a.ReadBytesInto(ctx, out); err != nil {
				t.Fatal(err)
			}
			if n, err := check(out, g, 0, 0, 1, 1, g.N, g.N, 500, 9); err != nil || n != 500 {
				t.Fatalf("check: %d, %v", n, err)
			}
			if l.Codec == "none" {
				return
			}
			chunks, err := loadChunks(dir, l, g)
			if err != nil {
				t.Fatal(err)
			}
			unit := g.unit(l)
			if want := (g.N / unit) * (g.N / unit); len(chunks) != want {
				t.Fatalf("%d chunks, want %d", len(chunks), want)
			}
			dec, err := newDecoder(l.Codec)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, unit*unit*4, unit*unit*4+decoderSlack)
			for i, c := range chunks {
				if err := dec(buf, c); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
		})
	}
}

func TestRegions(t *testing.T) {
	rs := chunkRegions(10, 4)
	if len(rs) != 9 || rs[8] != (region{8, 8, 2, 2}) || rs[1] != (region{0, 4, 4, 4}) {
		t.Errorf("chunkRegions(10, 4) = %v", rs)
	}
	a, b := randomRegions(64, 16, 20, 7), randomRegions(64, 16, 20, 7)
	for i := range a {
		if a[i] != b[i] || a[i].R0%16 != 0 || a[i].C0%16 != 0 || a[i].H != 16 {
			t.Fatalf("random regions not repeatable or not aligned: %v vs %v", a[i], b[i])
		}
	}
}

// The ratio targets are judged on the median of the rounds' ratios, not
// on best/best: each row below has the two on opposite sides of its target.
func TestEvaluate(t *testing.T) {
	r := report{Rows: []row{
		{Layout: "zstd-sharded", Workload: "read-all", CodecRatio: 0.9, CodecRatioMedian: 0.8, OutBytes: 1 << 30, AllocPct: 1, PeakRSSMiB: 1500, ZarritaSeconds: 2, VsZarrita: 3,
			Rounds: []roundRow{{CodecRatio: 0.7}, {CodecRatio: 0.8}, {CodecRatio: 0.95}}},
		{Layout: "none", Workload: "read-all", MemcpyRatio: 0.5, MemcpyRatioMedian: 0.65, OutBytes: 1 << 30, AllocPct: 8, PeakRSSMiB: 1000},
		{Layout: "none", Workload: "chunks", ZarritaSeconds: 1, VsZarrita: 0.8},
	}}
	r.Pipeline.MaxBytesInFlight = 256 << 20
	want := map[string]bool{
		"read-all zstd-sharded ≥ 0.85 × codec-only (all cores)": false, // median 0.8, best/best 0.9
		"read-all none ≥ 0.6 × memcpy":                          true,  // median 0.65, best/best 0.5
		"faster than zarrita.js on every workload":              false,
		"read-all allocates ≤ 5% of the output":                 false,
		"read-all peak RSS ≤ output + in-flight cap + 64 MiB":   false, // 1500 > 1024+256+64
	}
	got := evaluate(r)
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for _, x := range got {
		if w, ok := want[x.Name]; !ok || w != x.Met {
			t.Errorf("%s: met=%v (%s), want %v", x.Name, x.Met, x.Detail, w)
		}
	}
	if d := got[0].Detail; !strings.HasPrefix(d, "0.80 × (3 rounds 0.70–0.95;") {
		t.Errorf("zstd-sharded detail %q: want the median, then the rounds' range", d)
	}
	if bb := got[0].BestBest; !strings.HasPrefix(bb, "0.90 ×") {
		t.Errorf("zstd-sharded best/best %q, want 0.90 ×", bb)
	}
}

func TestRatioOf(t *testing.T) {
	tests := []struct {
		name       string
		base, work []float64
		scale      float64
		best, med  float64
		lo, hi     float64
		rounds     int
	}{
		// Per round 0.25/0.30, 0.40/0.50, 0.30/0.32: 0.8333, 0.8, 0.9375;
		// best/best 0.25/0.30 = 0.8333, median 0.8333.
		{"three", []float64{0.25, 0.40, 0.30}, []float64{0.30, 0.50, 0.32}, 1, 0.25 / 0.30, 0.25 / 0.30, 0.8, 0.9375, 3},
		// Best times from different rounds (the 0.20 baseline in round 1,
		// the 0.30 workload in round 2) give best/best 0.67; per round
		// 0.625, 1.333, 0.9, median 0.9.
		{"drift", []float64{0.20, 0.40, 0.45}, []float64{0.32, 0.30, 0.50}, 1, 0.20 / 0.30, 0.9, 0.625, 0.40 / 0.30, 3},
		// Even count: the mean of the two middle ratios (0.5 and 1).
		{"even", []float64{1, 2, 3, 4}, []float64{4, 4, 3, 1}, 1, 1.0 / 1, 0.75, 0.25, 4, 4},
		// scale multiplies every baseline (decoded bytes of the workload
		// over those of the baseline).
		{"scaled", []float64{2, 4}, []float64{1, 1}, 0.25, 0.5, 0.75, 0.5, 1, 2},
		// A failed or missing round is skipped, not counted as zero.
		{"skip", []float64{1, 0, 3}, []float64{2, 1, 3}, 1, 0.5, 0.75, 0.5, 1, 2},
		{"uneven lengths", []float64{1, 1, 1}, []float64{2}, 1, 0.5, 0.5, 0.5, 0.5, 1},
		{"none", nil, nil, 1, 0, 0, 0, 0, 0},
	}
	const eps = 1e-12
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ratioOf(tc.base, tc.work, tc.scale)
			if math.Abs(r.Best-tc.best) > eps || math.Abs(r.Median-tc.med) > eps ||
				math.Abs(r.Min-tc.lo) > eps || math.Abs(r.Max-tc.hi) > eps || len(r.Rounds) != tc.rounds {
				t.Errorf("ratioOf(%v, %v, %v) = %+v, want best %v median %v min %v max %v over %d rounds",
					tc.base, tc.work, tc.scale, r, tc.best, tc.med, tc.lo, tc.hi, tc.rounds)
			}
		})
	}
}

// buildRow keeps the isolated children's best times and worst
// allocations and RSS, takes each round's ratios from its paired child
// (median over repetitions, the codec-only one scaled to the decoded
// bytes), and reports their median over rounds beside best/best.
func TestBuildRow(t *testing.T) {
	const mib = 1 << 20
	iso := func(sec, cpu float64, all []float64, mallocs, alloc float64, rss int64) result {
		return result{Seconds: sec, CPUSeconds: cpu, All: all, OutBytes: 256 * mib, DecodedBytes: 128 * mib, Calls: 1, Mallocs: mallocs, AllocBytes: alloc, PeakRSS: rss, Checked: 7}
	}
	pair := func(work, workCPU, mem, codec, codecCPU []float64) result {
		return result{OutBytes: 256 * mib, DecodedBytes: 128 * mib, Pairs: &pairs{
			WorkSeconds: work, WorkCPU: workCPU, MemcpySeconds: mem,
			// The baseline decodes 256 MiB, twice the workload's 128: scale 0.5.
			CodecSeconds: codec, CodecCPU: codecCPU, CodecDecodedBytes: 256 * mib}}
	}
	m := measured{
		work: []result{
			iso(0.30, 0.60, []float64{0.30, 0.31}, 10, mib, 300*mib),
			iso(0.50, 0.90, []float64{0.50, 0.52}, 30, 2*mib, 280*mib),
			iso(0.40, 0.70, []float64{0.40, 0.40}, 20, mib, 310*mib),
		},
		paired: []result{
			// memcpy per rep 0.5, 0.4, 0.75: median 0.5; codec 0.8, 0.9, 1.0: 0.9; CPU 1, 1, 1.
			pair([]float64{0.4, 0.5, 0.4}, []float64{0.5, 0.6, 0.5}, []float64{0.2, 0.2, 0.3}, []float64{0.64, 0.9, 0.8}, []float64{1.0, 1.2, 1.0}),
			// memcpy 0.2, 0.25, 0.3: 0.25; codec 0.6, 0.7, 0.8: 0.7; CPU 0.8, 0.9, 0.9.
			pair([]float64{1, 0.8, 0.5}, []float64{1, 1, 1}, []float64{0.2, 0.2, 0.15}, []float64{1.2, 1.12, 0.8}, []float64{1.6, 1.8, 1.8}),
			// Two reps (a shorter child): memcpy 0.3, 0.5: 0.4; codec 0.5, 0.7: 0.6; CPU 0.8, 0.6: 0.7.
			pair([]float64{0.4, 0.6}, []float64{0.5, 0.5}, []float64{0.12, 0.3}, []float64{0.4, 0.84}, []float64{0.8, 0.6}),
		},
	}
	x := buildRow("zstd-sharded", "read-all", m)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("Seconds", x.Seconds, 0.30)
	near("CPUSeconds", x.CPUSeconds, 0.60)
	near("Median", x.Median, 0.40) // of 0.30 0.31 0.40 0.40 0.50 0.52
	near("Mallocs", x.Mallocs, 30)
	near("AllocPct", x.AllocPct, 100*2.0/256)
	near("PeakRSSMiB", x.PeakRSSMiB, 310)
	near("MBps", x.MBps, 256*mib/1e6/0.30)
	near("round 1 memcpy", x.Rounds[0].MemcpyRatio, 0.5)
	near("round 2 memcpy", x.Rounds[1].MemcpyRatio, 0.25)
	near("round 3 memcpy", x.Rounds[2].MemcpyRatio, 0.4)
	near("MemcpyRatioMedian", x.MemcpyRatioMedian, 0.4)
	near("MemcpyRatio (best/best)", x.MemcpyRatio, 0.12/0.30)
	near("round 2 codec", x.Rounds[1].CodecRatio, 0.7)
	near("round 2 codec seconds", x.Rounds[1].CodecSeconds, 0.4) // best 0.8, scaled 0.5
	near("round 2 paired seconds", x.Rounds[1].PairedSeconds, 0.5)
	near("CodecRatioMedian", x.CodecRatioMedian, 0.7)
	near("CodecRatio (best/best)", x.CodecRatio, 0.2/0.30)
	near("CodecCPURatioMedian", x.CodecCPURatioMedian, 0.9)
	near("CodecCPURatio (best/best)", x.CodecCPURatio, 0.3/0.60)
	if len(x.AllSeconds) != 6 || len(x.Rounds) != 3 || x.Checked != 7 || x.DecodedBytes != 128*mib {
		t.Errorf("row %+v", x)
	}
	// An uncompressed layout's paired child has no codec-only times.
	for _, p := range m.paired {
		p.Pairs.CodecSeconds, p.Pairs.CodecCPU, p.Pairs.CodecDecodedBytes = nil, nil, 0
	}
	x = buildRow("none", "read-all", m)
	if x.CodecRatio != 0 || x.CodecRatioMedian != 0 || x.Rounds[0].CodecRatio != 0 || x.MemcpyRatioMedian != 0.4 {
		t.Errorf("no codec baseline: codec ratios %v %v, memcpy median %v", x.CodecRatio, x.CodecRatioMedian, x.MemcpyRatioMedian)
	}
}

// childEnv carries a child's job spec when the test binary re-runs itself.
const childEnv = "GOZARR_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := runChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A tiny suite end to end, children included: every row has its rounds,
// per-round ratios and the median among them, and the report says how it
// was measured.
func TestTinySuite(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := opts{size: 64, chunk: 16, shard: 32, inner: 16, reps: 2, rounds: 2, otherRounds: 1, random: 5,
		stride: [2]int{7, 3}, layouts: "zstd-sharded", workloads: "write-all,read-all,random", seed: 1}
	s := &suite{o: o, command: func(spec []byte) *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
		return cmd
	}}
	var out bytes.Buffer
	if err := s.run(t.TempDir(), &out); err != nil {
		t.Fatal(err)
	}
	wantRounds := map[string]int{"write-all": 1, "read-all": 2, "random": 1}
	if len(s.rep.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(s.rep.Rows))
	}
	for _, x := range s.rep.Rows {
		name := x.Layout + " " + x.Workload
		if len(x.Rounds) != wantRounds[x.Workload] || len(x.AllSeconds) != 2*wantRounds[x.Workload] {
			t.Errorf("%s: %d rounds, %d times; want %d rounds of 2", name, len(x.Rounds), len(x.AllSeconds), wantRounds[x.Workload])
		}
		if x.Seconds <= 0 || x.MemcpyRatio <= 0 || x.MemcpyRatioMedian <= 0 || x.PeakRSSMiB <= 0 {
			t.Errorf("%s: %+v", name, x)
		}
		lo, hi := spread(x.Rounds, func(r roundRow) float64 { return r.MemcpyRatio })
		if x.MemcpyRatioMedian < lo || x.MemcpyRatioMedian > hi {
			t.Errorf("%s: median %v outside the rounds' %v–%v", name, x.MemcpyRatioMedian, lo, hi)
		}
		for i, r := range x.Rounds {
			if r.PairedSeconds <= 0 || r.MemcpySeconds <= 0 {
				t.Errorf("%s round %d: %+v", name, i+1, r)
			}
		}
		// Reads are put beside the codec-only decode, write-all beside the
		// codec-only encode of the same chunks.
		codec := x.Layout == "zstd-sharded"
		if got := x.CodecRatioMedian > 0 && x.Rounds[0].CodecSeconds > 0; got != codec {
			t.Errorf("%s: codec-only ratio %v, want one: %v", name, x.CodecRatioMedian, codec)
		}
		if x.Workload == "random" && x.DecodedBytes != 5*16*16*4 {
			t.Errorf("%s: decoded %d bytes, want %d", name, x.DecodedBytes, 5*16*16*4)
		}
	}
	if l := s.rep.Layouts[0]; l.Layout != "zstd-sharded" || l.CodecMBps <= 0 || l.Codec1MBps <= 0 {
		t.Errorf("layout %+v", l)
	}
	for _, want := range []string{"2 rounds interleaved", "median (best/best)", "| read-all zstd-sharded ≥ 0.85 × codec-only (all cores) |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
