package zfp

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/internal/refdata"
)

// benchCase is an array the benchmarks code: a smooth 3-D field with a
// little noise, as simulation output looks.
type benchCase struct {
	Name   string             `json:"name"`
	DType  string             `json:"dtype"`
	Shape  []int              `json:"shape"`
	Params map[string]float64 `json:"params"`
	typ    Type
	p      Params
}

var benchCases = func() []benchCase {
	cs := []benchCase{
		{Name: "f8_3d_tol1e-3", DType: "f8", Params: map[string]float64{"tolerance": 1e-3}},
		{Name: "f8_3d_rate16", DType: "f8", Params: map[string]float64{"rate": 16}},
		{Name: "f8_3d_reversible", DType: "f8", Params: map[string]float64{}},
		{Name: "f4_3d_prec16", DType: "f4", Params: map[string]float64{"precision": 16}},
		{Name: "f4_2d_reversible", DType: "f4", Params: map[string]float64{}},
		{Name: "i4_1d_reversible", DType: "i4", Params: map[string]float64{}},
	}
	for i := range cs {
		c := &cs[i]
		switch {
		case strings.Contains(c.Name, "_3d_"):
			c.Shape = []int{48, 64, 64}
		case strings.Contains(c.Name, "_2d_"):
			c.Shape = []int{384, 512}
		default:
			c.Shape = []int{1 << 18}
		}
		c.typ = map[string]Type{"f4": Float32, "f8": Float64, "i4": Int32}[c.DType]
		switch {
		case c.Params["tolerance"] != 0:
			c.p, _ = FixedAccuracy(c.Params["tolerance"])
		case c.Params["rate"] != 0:
			c.p, _ = FixedRate(c.Params["rate"], len(c.Shape))
		case c.Params["precision"] != 0:
			c.p = FixedPrecision(uint(c.Params["precision"]))
		default:
			c.p = Reversible()
		}
	}
	return cs
}()

// data returns the case's array, little-endian.
func (c benchCase) data() []byte {
	n := 1
	for _, s := range c.Shape {
		n *= s
	}
	b := make([]byte, n*c.typ.Size())
	seed := uint64(12345)
	for i := 0; i < n; i++ {
		x, y, z := float64(i%c.Shape[len(c.Shape)-1]), float64(i/c.Shape[len(c.Shape)-1]%64), float64(i/4096)
		seed = seed*6364136223846793005 + 1442695040888963407
		noise := float64(int64(seed>>40)%1000) * 1e-6
		v := 300*math.Sin(x/11)*math.Cos(y/7) + 40*math.Sin(z/5) + noise
		switch c.typ {
		case Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		case Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v*1000)))
		}
	}
	return b
}

// BenchmarkCompress and BenchmarkDecompress time the pure-Go codec alone
// (bytes per second of uncompressed array).
func BenchmarkCompress(b *testing.B) {
	for _, c := range benchCases {
		src := c.data()
		dst := make([]byte, 0, MaxSize(c.typ, c.Shape, c.p))
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cputime.Meter(b, len(src))
			for b.Loop() {
				if _, err := Compress(dst[:0], src, c.typ, c.Shape, c.p); err != nil {
					b.Fatal(err)
				}
			}
			done()
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, c := range benchCases {
		src := c.data()
		enc, _ := Compress(nil, src, c.typ, c.Shape, c.p)
		dst := make([]byte, len(src))
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cputime.Meter(b, len(src))
			for b.Loop() {
				if _, err := Decompress(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
			done()
		})
	}
}

// BenchmarkVsZfpy times the C library through zfpy (bench.py, in the
// reference chroot) on the same arrays in the same run, then the Go codec
// on one core, and reports Go's speed as a ratio to C's, both in CPU time
// of the thread doing the work (the machine may be shared): encode_vs_c
// and decode_vs_c (1 = as fast; the goal is >= 0.7), C's cMB/s and Go's
// cpuMB/s, and the compression ratio. It skips without the chroot. Run
// with -cpu 1.
func BenchmarkVsZfpy(b *testing.B) {
	tool := refdata.PythonTool(b)
	dir := b.TempDir()
	for _, c := range benchCases {
		if err := os.WriteFile(filepath.Join(dir, c.Name+".bin"), c.data(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	js, _ := json.Marshal(benchCases)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), js, 0o644); err != nil {
		b.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join(refDir, "bench.py"))
	cmd := exec.Command(tool, script, dir)
	cmd.Env = append(os.Environ(), "REFPY_BIND="+filepath.Dir(script)+":"+dir+":/tmp")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	cTimes := map[string][2]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			b.Fatalf("bench.py: %q", line)
		}
		te, _ := strconv.ParseFloat(f[1], 64)
		td, _ := strconv.ParseFloat(f[2], 64)
		cTimes[f[0]] = [2]float64{te, td}
	}
	if runtime.GOMAXPROCS(0) != 1 {
		b.Logf("GOMAXPROCS=%d; the Go codec is serial either way, but run with -cpu 1 for the README figure", runtime.GOMAXPROCS(0))
	}
	for _, c := range benchCases {
		src := c.data()
		enc, _ := Compress(nil, src, c.typ, c.Shape, c.p)
		dst := make([]byte, len(src))
		ct := cTimes[c.Name]
		for op, cs := range map[string]float64{"encode": ct[0], "decode": ct[1]} {
			b.Run(fmt.Sprintf("%s/%s", c.Name, op), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				done := cputime.Meter(b, len(src))
				for b.Loop() {
					if op == "encode" {
						Compress(enc[:0], src, c.typ, c.Shape, c.p)
					} else {
						Decompress(dst, enc)
					}
				}
				goSec := done()
				if goSec == 0 {
					goSec = b.Elapsed().Seconds() / float64(b.N)
				}
				b.ReportMetric(cs/goSec, op+"_vs_c")
				b.ReportMetric(float64(len(src))/cs/1e6, "cMB/s")
				b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
			})
		}
	}
}
