package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// buildRefs2parq builds the Parquet module's refs2parq command into a
// temporary directory and points GOZARR_REFS2PARQ at it (skipped without
// a go command, or with -short).
func buildRefs2parq(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: refs2parq not built")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build refs2parq")
	}
	exe := filepath.Join(t.TempDir(), "refs2parq")
	cmd := exec.Command(gobin, "build", "-o", exe, "./cmd/refs2parq")
	cmd.Dir = "../../store/kerchunk/parquet"
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building refs2parq: %v\n%s", err, msg)
	}
	t.Setenv("GOZARR_REFS2PARQ", exe)
}

// TestVirtualTargets runs get, info, tree and stats on the NetCDF-4 file
// cf.nc as each kind of TARGET: kerchunk's own JSON and Parquet
// references (hdf5/testdata/kerchunk), gozarr's Parquet references
// (virtualize -o refs.parq) and the file itself (virtualized on open).
// get's values equal h5py's; info, tree and stats say what h5py's values
// and the file's structure say.
func TestVirtualTargets(t *testing.T) {
	buildRefs2parq(t)
	ctx := context.Background()
	data, _ := filepath.Abs("../../hdf5/testdata")
	tmp := t.TempDir()
	var buf bytes.Buffer
	gozarrParq := filepath.Join(tmp, "refs.parq")
	if err := run(ctx, []string{"virtualize", "-o", gozarrParq, filepath.Join(data, "cf.nc")}, &buf, &buf); err != nil {
		t.Fatalf("virtualize -o refs.parq: %v\n%s", err, buf.String())
	}
	want, err := npy.ReadFile(filepath.Join(data, "values", "cf.nc__temp.npy"))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i+4 <= len(want.Data); i += 4 {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(want.Data[i:])))
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, c := range []struct {
		name, target string
		allow        []string
	}{
		{"kerchunk JSON", filepath.Join(data, "kerchunk", "cf.json"), []string{"--allow", data}},
		{"kerchunk Parquet", filepath.Join(data, "kerchunk", "cf.parq"), []string{"--allow", data}},
		{"gozarr Parquet", gozarrParq, []string{"--allow", data}},
		{"NetCDF-4 file", filepath.Join(data, "cf.nc"), nil},
	} {
		cmd := func(args ...string) (string, error) {
			var out bytes.Buffer
			err := run(ctx, append(append([]string{}, c.allow...), args...), &out, &out)
			return out.String(), err
		}
		npyOut := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "_")+".npy")
		if out, err := cmd("get", "--format", "npy", "-o", npyOut, c.target+"/temp"); err != nil {
			t.Errorf("%s: get: %v\n%s", c.name, err, out)
		} else if got, err := npy.ReadFile(npyOut); err != nil || !bytes.Equal(got.Data, want.Data) || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
			t.Errorf("%s: get: values differ from h5py's (%v)", c.name, err)
		}
		out, err := cmd("info", c.target+"/temp")
		if err != nil || !strings.Contains(out, "[5 × 6 × 8]") || !strings.Contains(out, "float32") || !strings.Contains(out, "[2 × 3 × 4]") {
			t.Errorf("%s: info: %v\n%s", c.name, err, out)
		}
		out, err = cmd("tree", c.target)
		if err != nil || !strings.Contains(out, "temp (array") || !strings.Contains(out, "pressure (array") || !strings.Contains(out, "surface (group") {
			t.Errorf("%s: tree: %v\n%s", c.name, err, out)
		}
		out, err = cmd("stats", c.target+"/temp")
		if err != nil || !strings.Contains(out, fmt.Sprintf("count:     %d", len(want.Data)/4)) ||
			!strings.Contains(out, fmt.Sprintf("min:       %g\n", lo)) || !strings.Contains(out, fmt.Sprintf("max:       %g\n", hi)) {
			t.Errorf("%s: stats (h5py: min %g, max %g): %v\n%s", c.name, lo, hi, err, out)
		}
	}
	// Without --allow, kerchunk's references (to ../cf.nc) are refused,
	// naming the file, and gozarr's (absolute) too.
	for _, target := range []string{filepath.Join(data, "kerchunk", "cf.parq", "temp"), gozarrParq + "/temp"} {
		var out bytes.Buffer
		err := run(ctx, []string{"get", target, "0, 0, 0"}, &out, &out)
		if err == nil || !strings.Contains(err.Error()+out.String(), "cf.nc") {
			t.Errorf("get %s without --allow: %v\n%s", target, err, out.String())
		}
	}
	// Without refs2parq: a clear error.
	t.Setenv("GOZARR_REFS2PARQ", filepath.Join(tmp, "missing"))
	t.Setenv("PATH", "")
	if err := run(ctx, []string{"tree", gozarrParq}, &buf, &buf); err == nil || !strings.Contains(err.Error(), "refs2parq") {
		t.Errorf("tree without refs2parq: %v", err)
	}
	if _, err := os.Stat(filepath.Join(gozarrParq, ".zmetadata")); err != nil {
		t.Error(err)
	}
}
