package zfp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
)

// TestDifferential compares Compress and Decompress with zfpy in the
// reference chroot on random arrays (type, shape, mode, parameters and
// values, bit patterns included): the same stream, the same decoded
// values. It skips without the chroot; GOZARR_ZFP_CASES sets the number
// of cases (default 300).
func TestDifferential(t *testing.T) {
	tool := refdata.PythonTool(t)
	n := 300
	if s := os.Getenv("GOZARR_ZFP_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 3))
	types := []struct {
		name string
		dt   dtype.DataType
		t    Type
	}{{"f4", dtype.TypeFloat32, Float32}, {"f8", dtype.TypeFloat64, Float64}, {"i4", dtype.TypeInt32, Int32}, {"i8", dtype.TypeInt64, Int64}}
	type tcase struct {
		DType  string             `json:"dtype"`
		Shape  []int              `json:"shape"`
		Params map[string]float64 `json:"params"`
		typ    Type
		p      Params
		in     []byte
	}
	cases := make([]tcase, n)
	for i := range cases {
		ty := types[r.IntN(4)]
		d := 1 + r.IntN(4)
		shape := make([]int, d)
		size := 1
		for k := range shape {
			shape[k] = 1 + r.IntN([]int{0, 70, 14, 9, 6}[d])
			size *= shape[k]
		}
		c := tcase{DType: ty.name, Shape: shape, typ: ty.t, Params: map[string]float64{}}
		raw := r.IntN(4) == 0
		switch r.IntN(4) {
		case 0:
			c.p = Reversible()
		case 1:
			// At least the block exponent's bits, which zfp needs (modes.rst).
			bs := float64(int(1) << (2 * d))
			rate := float64(r.IntN(40)) + 12/bs + float64(r.IntN(8))/bs
			c.Params["rate"] = rate
			c.p, _ = FixedRate(rate, d)
		case 2:
			prec := r.IntN(66)
			c.Params["precision"] = float64(prec)
			c.p = FixedPrecision(uint(prec))
		case 3:
			tol := []float64{0, 1e-9, 1e-3, 0.25, 7, 1e200}[r.IntN(6)]
			c.Params["tolerance"] = tol
			c.p, _ = FixedAccuracy(tol)
		}
		c.in = randomChunk(ty.dt, size, raw, r.Uint64())
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".bin"), c.in, 0o644); err != nil {
			t.Fatal(err)
		}
		cases[i] = c
	}
	js, _ := json.Marshal(cases)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join(refDir, "diff.py"))
	cmd := exec.Command(tool, script, dir)
	cmd.Env = append(os.Environ(), "REFPY_BIND="+filepath.Dir(script)+":"+dir+":/tmp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, c := range cases {
		enc, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".zfp"))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".dec"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Compress(nil, c.in, c.typ, c.Shape, c.p)
		if err != nil {
			t.Fatalf("case %d %s %v %v: %v", i, c.DType, c.Shape, c.Params, err)
		}
		if !bytes.Equal(got, enc) {
			t.Errorf("case %d %s %v %v: encoding differs from zfpy's (%d vs %d bytes)", i, c.DType, c.Shape, c.Params, len(got), len(enc))
		}
		out := make([]byte, len(c.in))
		if _, err := Decompress(out, enc); err != nil || !bytes.Equal(out, dec) {
			t.Errorf("case %d %s %v %v: decoding differs from zfpy's (%v)", i, c.DType, c.Shape, c.Params, err)
		}
	}
}
