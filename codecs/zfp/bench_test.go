package zfp

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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

// benchCases is the grid the README's table reports: every mode × type ×
// dimensionality, 2^17 values each (128 K values: 512 KiB of 32-bit, 1 MiB
// of 64-bit values). Fixed accuracy is for floats only (zfpy ignores the
// tolerance of integer arrays).
var benchCases = func() []benchCase {
	shapes := map[int][]int{1: {1 << 17}, 2: {256, 512}, 3: {32, 64, 64}, 4: {8, 16, 32, 32}}
	var cs []benchCase
	for _, mode := range []string{"tol1e-3", "rate", "prec", "reversible"} {
		for _, dt := range []string{"f4", "f8", "i4", "i8"} {
			if mode == "tol1e-3" && dt[0] == 'i' {
				continue
			}
			for d := 1; d <= 4; d++ {
				c := benchCase{DType: dt, Shape: shapes[d], Params: map[string]float64{}}
				c.typ = map[string]Type{"f4": Float32, "f8": Float64, "i4": Int32, "i8": Int64}[dt]
				wide := c.typ.Size() == 8
				name := mode
				switch mode {
				case "tol1e-3":
					c.Params["tolerance"] = 1e-3
					c.p, _ = FixedAccuracy(1e-3)
				case "rate":
					r := map[bool]float64{false: 8, true: 16}[wide]
					c.Params["rate"] = r
					c.p, _ = FixedRate(r, d)
					name = fmt.Sprintf("rate%g", r)
				case "prec":
					pr := map[bool]uint{false: 16, true: 32}[wide]
					c.Params["precision"] = float64(pr)
					c.p = FixedPrecision(pr)
					name = fmt.Sprintf("prec%d", pr)
				default:
					c.p = Reversible()
				}
				c.Name = fmt.Sprintf("%s_%dd_%s", dt, d, name)
				cs = append(cs, c)
			}
		}
	}
	return cs
}()

// data returns the case's array, little-endian: a smooth field with a
// little noise, as simulation output looks (integers: the field × 1000).
func (c benchCase) data() []byte {
	n := 1
	for _, s := range c.Shape {
		n *= s
	}
	b := make([]byte, n*c.typ.Size())
	seed := uint64(12345)
	var coord [4]float64
	for i := 0; i < n; i++ {
		r := i
		for d := len(c.Shape) - 1; d >= 0; d-- {
			coord[len(c.Shape)-1-d] = float64(r % c.Shape[d])
			r /= c.Shape[d]
		}
		x, y, z, w := coord[0], coord[1], coord[2], coord[3]
		seed = seed*6364136223846793005 + 1442695040888963407
		noise := float64(int64(seed>>40)%1000) * 1e-6
		v := 300*math.Sin(x/11)*math.Cos(y/7) + 40*math.Sin(z/5) + 10*math.Cos(w/3) + noise
		switch c.typ {
		case Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		case Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v*1000)))
		case Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(v*1000)))
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
// on one core, and reports Go's speed as a ratio to C's: encode_vs_c and
// decode_vs_c (1 = as fast; the goal is >= 0.7), each the median CPU time
// per call of the thread doing the work on both sides (the machine may be
// shared; a median passes over calls another process disturbed), C's
// cMB/s and Go's cpuMB/s, and the compression ratio. It skips without the
// chroot. Run with -cpu 1; -run X -bench 'VsZfpy/f4_3d' runs a subset
// (bench.py times only the cases the pattern keeps, by name).
func BenchmarkVsZfpy(b *testing.B) {
	tool := refdata.PythonTool(b)
	dir := b.TempDir()
	var cases []benchCase
	for _, c := range benchCases {
		if benchFilter == nil || benchFilter.MatchString(c.Name) {
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.Name+".bin"), c.data(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	js, _ := json.Marshal(cases)
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
	for _, c := range cases {
		src := c.data()
		enc, _ := Compress(nil, src, c.typ, c.Shape, c.p)
		dst := make([]byte, len(src))
		ct := cTimes[c.Name]
		for _, op := range []string{"encode", "decode"} {
			cs := ct[0]
			if op == "decode" {
				cs = ct[1]
			}
			b.Run(fmt.Sprintf("%s/%s", c.Name, op), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var per []float64
				for b.Loop() {
					t0 := cputime.Thread()
					if op == "encode" {
						Compress(enc[:0], src, c.typ, c.Shape, c.p)
					} else {
						Decompress(dst, enc)
					}
					per = append(per, (cputime.Thread() - t0).Seconds())
				}
				slices.Sort(per)
				goSec := per[len(per)/2]
				if goSec <= 0 {
					goSec = b.Elapsed().Seconds() / float64(b.N)
				}
				b.ReportMetric(cs/goSec, op+"_vs_c")
				b.ReportMetric(float64(len(src))/cs/1e6, "cMB/s")
				b.ReportMetric(float64(len(src))/goSec/1e6, "cpuMB/s")
				b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
			})
		}
	}
}

// benchFilter is the second element of -test.bench (the case names), so
// that bench.py times only the cases the run keeps.
var benchFilter = func() *regexp.Regexp {
	for i, a := range os.Args {
		v, ok := strings.CutPrefix(a, "-test.bench=")
		if !ok && a == "-test.bench" && i+1 < len(os.Args) {
			v, ok = os.Args[i+1], true
		}
		if !ok {
			continue
		}
		if parts := strings.SplitN(v, "/", 3); len(parts) > 1 {
			if re, err := regexp.Compile(parts[1]); err == nil {
				return re
			}
		}
	}
	return nil
}()
