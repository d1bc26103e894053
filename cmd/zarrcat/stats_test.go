package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// npyValue decodes element i of a little-endian .npy of a real type.
func npyValue(t *testing.T, a *npy.Array, i int) float64 {
	le := binary.LittleEndian
	switch a.Descr[1:] {
	case "b1", "u1":
		return float64(a.Data[i])
	case "i1":
		return float64(int8(a.Data[i]))
	case "i2":
		return float64(int16(le.Uint16(a.Data[2*i:])))
	case "u2":
		return float64(le.Uint16(a.Data[2*i:]))
	case "i4":
		return float64(int32(le.Uint32(a.Data[4*i:])))
	case "u4":
		return float64(le.Uint32(a.Data[4*i:]))
	case "i8":
		return float64(int64(le.Uint64(a.Data[8*i:])))
	case "u8":
		return float64(le.Uint64(a.Data[8*i:]))
	case "f2":
		return float64(dtype.Float16(le.Uint16(a.Data[2*i:])).Float32())
	case "f4":
		return float64(math.Float32frombits(le.Uint32(a.Data[4*i:])))
	case "f8":
		return math.Float64frombits(le.Uint64(a.Data[8*i:]))
	}
	t.Fatalf("descr %s", a.Descr)
	return 0
}

// TestStats compares stats --json, in blocks of a few elements and whole,
// with an exact sum and a two-pass deviation over the expected .npy.
func TestStats(t *testing.T) {
	for _, name := range []string{"v3_dtype_int16", "v3_dtype_float32", "v3_dtype_uint64", "v3_dtype_bool", "v2_fill_nan", "v3_dtype_float16", "v3_shard_start", "v2_dtype_int8"} {
		want, err := npy.ReadFile(filepath.Join(refDir, name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		n := want.NumElements()
		var vals []float64
		nan := 0
		for i := range n {
			if v := npyValue(t, want, i); math.IsNaN(v) {
				nan++
			} else {
				vals = append(vals, v)
			}
		}
		exact, lo, hi := new(big.Float).SetPrec(4096), math.Inf(1), math.Inf(-1)
		for _, v := range vals {
			exact.Add(exact, big.NewFloat(v))
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		mean, _ := exact.Quo(exact, big.NewFloat(float64(len(vals)))).Float64()
		ss := 0.0
		for _, v := range vals {
			ss += (v - mean) * (v - mean)
		}
		std := math.Sqrt(ss / float64(len(vals)))
		for _, budget := range []string{"64", "256MiB"} {
			var out bytes.Buffer
			if err := run(context.Background(), []string{"stats", "--json", "--hist", "5", "--budget", budget, filepath.Join(refDir, name+".zarr")}, &out, &out); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var r statsReport
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			var hsum int64
			for _, b := range r.Histogram {
				hsum += b.Count
			}
			if r.Count != int64(n) || r.NaN != int64(nan) || r.Min == nil || *r.Min != lo || *r.Max != hi ||
				!close(*r.Mean, mean) || !close(*r.Std, std) || hsum != int64(len(vals)) || len(r.Histogram) != 5 {
				t.Errorf("%s --budget %s: %s\nwant count %d nan %d min %g max %g mean %g std %g", name, budget, out.String(), n, nan, lo, hi, mean, std)
			}
		}
	}
}

// TestStatsErrors: unsupported types and bad flags are one clear error.
func TestStatsErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"stats", filepath.Join(refDir, "v3_dtype_complex64.zarr")}, "only booleans, integers and real floats"},
		{[]string{"stats", "--hist", "0", filepath.Join(refDir, "v3_dtype_int16.zarr")}, "--hist"},
		{[]string{"stats"}, "TARGET"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), c.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.msg)
		}
	}
}

// TestFastKernels: the float loops (SSE2 on amd64) agree with the portable
// one on values with and without NaNs, infinities, huge values, the fill
// value and signed zeros, at every length around their group sizes: the
// same counts and extremes, sums within rounding, and the same verdict on
// whether the slow path must take the sub-chunk.
func TestFastKernels(t *testing.T) { checkFastKernels(t) }

// checkFastKernels is TestFastKernels.
func checkFastKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1 << 41, -(1 << 45), 0, math.Copysign(0, -1), 7}
	for trial := range 3000 {
		n := trial % 41
		if trial%100 == 0 {
			n = accumBlock
		}
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = math.Round(rng.NormFloat64()*1000) / 8
			if trial%3 == 0 && rng.IntN(16) == 0 {
				vals[i] = specials[rng.IntN(len(specials))]
			}
		}
		fill := []float64{0, 7, math.NaN()}[trial%3]
		f32 := make([]float32, n)
		for i, v := range vals {
			f32[i] = float32(v)
		}
		check := func(name string, got moments, gotOK bool, want moments, wantOK bool) {
			t.Helper()
			if gotOK != wantOK {
				t.Fatalf("%s trial %d (n %d): fast path %v, want %v: %v", name, trial, n, gotOK, wantOK, vals)
			}
			if !gotOK {
				return
			}
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
			if got.n != want.n || got.fill != want.fill || got.min != want.min || got.max != want.max ||
				!close(got.sum, want.sum) || !close(got.mean, want.mean) || math.Abs(got.m2-want.m2) > 1e-9*math.Max(1, want.m2) {
				t.Fatalf("%s trial %d (n %d): got %+v, want %+v", name, trial, n, got, want)
			}
		}
		m, ok := fastFloat64(vals, fill)
		w, wok := accumulateFastGo(vals, fill)
		check("float64", m, ok, w, wok)
		m, ok = fastFloat32(f32, float32(fill))
		w, wok = accumulateFastGo(f32, float32(fill))
		check("float32", m, ok, w, wok)
	}
}

// TestChunkBoxes: the boxes of chunkBoxes cover every selected element
// once, each within one unit along every dimension after the first (and,
// for the whole array, within as many units along the first as fit), and
// within the target size; for plain, strided, reversed and partial
// selections.
func TestChunkBoxes(t *testing.T) {
	shape, units := []int{37, 29, 11}, []int{8, 5, 4}
	a := memFloatArray(t, shape, units)
	for _, c := range []struct {
		sel    string
		target int64
	}{{"", 1 << 20}, {"", 4 * 8 * 5 * 4 * 2}, {"", 4 * 8 * 5 * 4}, {"", 40}, {"", 1}, {"3:30:2, ::-3, 1:10", 4 * 8 * 5 * 4}, {"::-1, 4, 3:", 300}, {"::-7, 28:0:-2, ::5", 64}} {
		items, err := nd.ParseSelection(c.sel)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := nd.Normalize(items, shape)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[[3]int]int{}
		for box := range chunkBoxes(a, sel, c.target) {
			for d, dim := range box {
				lo, hi := dim.Start, dim.Start+(dim.Count-1)*dim.Step
				lo, hi = min(lo, hi), max(lo, hi)
				span := 1
				if d == 0 {
					span = max(1, int(c.target/(4*8*5*4)))
				}
				if d > 0 && lo/units[d] != hi/units[d] || d == 0 && c.sel == "" && hi/units[0]-lo/units[0] >= span {
					t.Errorf("[%s] target %d: box %v spans more than %d unit(s) along %d", c.sel, c.target, box, span, d)
				}
			}
			if b := int64(box.NumElements() * 4); b > c.target && box.NumElements() > 1 {
				t.Errorf("[%s] target %d: box %v of %d bytes", c.sel, c.target, box, b)
			}
			for i := range box[0].Count {
				for j := range box[1].Count {
					for k := range box[2].Count {
						seen[[3]int{box[0].Start + i*box[0].Step, box[1].Start + j*box[1].Step, box[2].Start + k*box[2].Step}]++
					}
				}
			}
		}
		want := 0
		for i := range sel[0].Count {
			for j := range sel[1].Count {
				for k := range sel[2].Count {
					want++
					if p := [3]int{sel[0].Start + i*sel[0].Step, sel[1].Start + j*sel[1].Step, sel[2].Start + k*sel[2].Step}; seen[p] != 1 {
						t.Fatalf("[%s] target %d: element %v covered %d times", c.sel, c.target, p, seen[p])
					}
				}
			}
		}
		if len(seen) != want {
			t.Errorf("[%s] target %d: %d elements covered, want %d", c.sel, c.target, len(seen), want)
		}
	}
}

// TestFusedMomentsDeterministic: stats over the fused reads gives the same
// bits with one worker as with several (the boxes merge in their order),
// and agrees with the streamed blocks, on sharded and plain arrays with
// strided selections; cancelled, it returns the context's error.
func TestFusedMomentsDeterministic(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ arr, sel string }{
		{"v3_shard_start.zarr", ""},
		{"v3_shard_start.zarr", "2:50:3, ::-1"},
		{"v3_dtype_float32.zarr", ""},
		{"v3_dtype_int16.zarr", "::-3, 1:18"},
		{"v2_fill_nan.zarr", ""},
	} {
		pos := []string{filepath.Join(refDir, c.arr)}
		if c.sel != "" {
			pos = append(pos, c.sel)
		}
		a, sel, err := openSelection(ctx, pos, map[string]string{}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var got []moments
		for _, target := range []int64{1 << 21, 64} {
			for _, workers := range []int{1, 3} {
				m, err := fusedMoments(ctx, a, sel, target, workers, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, m)
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := fusedMoments(cctx, a, sel, 64, 3, nil, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s [%s]: cancelled: %v, want context.Canceled", c.arr, c.sel, err)
		}
		s, err := streamedMoments(ctx, a, sel, 1<<28, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
		for i, m := range got {
			if i%2 == 1 && m != got[i-1] {
				t.Errorf("%s [%s]: 3 workers %+v, 1 worker %+v", c.arr, c.sel, m, got[i-1])
			}
			if m.n != s.n || m.nan != s.nan || m.fill != s.fill || m.min != s.min || m.max != s.max || !close(m.total(), s.total()) || !close(m.m2, s.m2) {
				t.Errorf("%s [%s]: fused %+v, streamed %+v", c.arr, c.sel, m, s)
			}
		}
	}
}

// BenchmarkAccumulate: stats' reduction of float32 values (a smooth field
// whose sub-chunks span the fill value, so the fill count runs too), by
// accumulate (the vector loop where there is one) and by the Go loop.
func BenchmarkAccumulate(b *testing.B) {
	v := make([]float32, 1<<18)
	for i := range v {
		x := float64(i) / 1000
		v[i] = float32(math.Round((100*math.Sin(3*x)+0.5*math.Cos(7.1*x))*64) / 64)
	}
	for _, c := range []struct {
		name string
		f    func([]float32, float32) (moments, bool)
	}{{"accumulate", accumulateFast[float32]}, {"go", accumulateFastGo[float32]}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(v)))
			for b.Loop() {
				for i := 0; i < len(v); i += accumBlock {
					c.f(v[i:i+accumBlock], 0)
				}
			}
		})
	}
}

// TestFusedPlan: boxes of fusedBoxBytes for small read units, one unit
// per box where a unit is larger but within a sixteenth of the budget, and
// no fused reads (streamed blocks) beyond that; workers within the budget.
func TestFusedPlan(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		chunk      int
		budget     int64
		target     int64
		maxWorkers int
	}{
		{512, 256 << 20, fusedBoxBytes, runtime.GOMAXPROCS(0)},
		{1024, 256 << 20, 4 << 20, runtime.GOMAXPROCS(0)},
		{1024, 32 << 20, 0, 0},
		{4096, 256 << 20, 0, 0},
		{512, 64 << 10, 0, 0},
		{64, 1 << 20, 16 << 10, runtime.GOMAXPROCS(0)},
	} {
		meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32, []int{c.chunk, c.chunk})
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, mem.New(), "", meta)
		if err != nil {
			t.Fatal(err)
		}
		target, workers := fusedPlan(a, c.budget)
		if c.target == 0 {
			if workers != 0 {
				t.Errorf("chunk %d², budget %d: %d workers, want none (streamed)", c.chunk, c.budget, workers)
			}
			continue
		}
		if target != c.target || workers < 1 || workers > c.maxWorkers || int64(workers)*8*target > c.budget {
			t.Errorf("chunk %d², budget %d: boxes of %d bytes, %d workers; want %d bytes, 1 to %d workers", c.chunk, c.budget, target, workers, c.target, c.maxWorkers)
		}
	}
}
