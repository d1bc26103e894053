package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
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
