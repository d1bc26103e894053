package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// zipDir writes dir into a new zip file as "zip -r" run in dir's parent
// does: every entry under the folder named as dir.
func zipDir(t *testing.T, dir, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	base := filepath.Dir(dir)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// runFail runs a command line that must fail, returning its error.
func runFail(t *testing.T, args ...string) error {
	t.Helper()
	var out, errw strings.Builder
	err := run(context.Background(), args, &out, &errw)
	if err == nil {
		t.Fatalf("%v succeeded:\n%s", args, out.String())
	}
	return err
}

// TestTargetErrorsNameTarget (trial F11): a TARGET with no Zarr node, a
// group given to get or stats, and a zip made with "zip -r" (the array in
// a top-level folder) are errors naming the target as typed, never the
// node path "", with what would help: the nodes below, the archive's
// folder, zarrcat ls.
func TestTargetErrorsNameTarget(t *testing.T) {
	testdata := filepath.Join(refDir, "..")
	err := runFail(t, "info", testdata)
	if !errors.Is(err, zarr.ErrNodeNotFound) || !strings.HasPrefix(err.Error(), testdata+": ") || strings.Contains(err.Error(), `""`) {
		t.Errorf("info %s: %v", testdata, err)
	}
	err = runFail(t, "ls", refDir)
	if !strings.Contains(err.Error(), "below it: "+refDir+"/v2_") {
		t.Errorf("ls %s: %v, want the arrays below it named", refDir, err)
	}
	group := filepath.Join(refDir, "v3_group.zarr")
	for _, cmd := range []string{"get", "stats"} {
		err = runFail(t, cmd, group)
		if !errors.Is(err, zarr.ErrNodeType) || !strings.HasPrefix(err.Error(), group+": ") ||
			!strings.Contains(err.Error(), "not an array") || !strings.Contains(err.Error(), "'zarrcat ls "+group+"'") {
			t.Errorf("%s of a group: %v", cmd, err)
		}
	}
	err = runFail(t, "consolidate", "--check", filepath.Join(refDir, "v3_dtype_int16.zarr"))
	if strings.Contains(err.Error(), `""`) || !strings.Contains(err.Error(), "an array, not a group") {
		t.Errorf("consolidate of an array: %v", err)
	}
	a := filepath.Join(t.TempDir(), "a.zip")
	zipDir(t, filepath.Join(refDir, "v3_dtype_int16.zarr"), a)
	err = runFail(t, "info", a)
	if !strings.Contains(err.Error(), "top-level folder is one: give "+a+"/v3_dtype_int16.zarr") {
		t.Errorf("info of a zip -r archive: %v", err)
	}
}

// TestAddressInsideArchive (trial F19): a node inside a .zip or .ozx is a
// TARGET (ARCHIVE/path/in/it), for get, info, stats and ls alike.
func TestAddressInsideArchive(t *testing.T) {
	dir := t.TempDir()
	ozx := filepath.Join(dir, "g.ozx")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), ozx)
	if fi, err := os.Stat(ozx); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("cp wrote %s with %v, %v; want mode 0644 as any new file", ozx, fi.Mode(), err)
	}
	temp := "measurements/temperature"
	want := runOK(t, "get", filepath.Join(refDir, "v3_group.zarr", temp), "0:2")
	if got := runOK(t, "get", ozx+"/"+temp, "0:2"); got != want || want == "" {
		t.Errorf("get %s/%s:\n%s\nwant\n%s", ozx, temp, got, want)
	}
	if out := runOK(t, "ls", ozx+"/measurements"); !strings.Contains(out, "/temperature (array, v3)") {
		t.Errorf("ls inside the archive: %q", out)
	}
	a := filepath.Join(dir, "a.zip")
	zipDir(t, filepath.Join(refDir, "v3_dtype_int16.zarr"), a)
	want = runOK(t, "stats", filepath.Join(refDir, "v3_dtype_int16.zarr"))
	got := runOK(t, "stats", a+"/v3_dtype_int16.zarr")
	if _, g, _ := strings.Cut(got, "\n"); !strings.HasSuffix(want, g) || g == "" {
		t.Errorf("stats inside a zip:\n%s\nwant\n%s", got, want)
	}
	err := runFail(t, "get", a+"/nosuch")
	if !errors.Is(err, zarr.ErrNodeNotFound) || !strings.HasPrefix(err.Error(), a+"/nosuch: ") {
		t.Errorf("get of a missing node inside a zip: %v", err)
	}
}

// TestOutputToDevStdout (trial F20): -o /dev/stdout is standard output as
// -o - is: text, not binary npy on the terminal.
func TestOutputToDevStdout(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	want := runOK(t, "get", a, "0:2")
	for _, o := range []string{"/dev/stdout", "/dev/fd/1", "-"} {
		if got := runOK(t, "get", "-o", o, a, "0:2"); got != want {
			t.Errorf("get -o %s: %q, want %q", o, got, want)
		}
	}
	if f, err := formatOf("", "/dev/tty"); err != nil || f != "text" {
		t.Errorf("format for -o /dev/tty: %q, %v", f, err)
	}
}

// TestWordingItems (trial, wording): the messages the trial found clumsy
// say it once and in English.
func TestWordingItems(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	pts := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(pts, []byte("1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mask := filepath.Join(refDir, "..", "selections", "zarrcat_mask.npy")
	for _, c := range []struct {
		args      []string
		want      string
		wantNot   string
		countPath string // appears once
	}{
		{args: []string{"get", filepath.Join(refDir, "v3_scalar_float64.zarr"), "0"}, want: "1 index for an array of 0 dimensions"},
		{args: []string{"get", "--points", pts, a}, want: "3 coordinates for an array of 2 dimensions"},
		{args: []string{"get", "--mask", mask, filepath.Join(refDir, "v3_dtype_float32.zarr")}, want: "shape (31, 19), the array's is (28, 23)", countPath: mask},
		{args: []string{"get", "--mask", pts, a}, want: `not a .npy file: it starts with "1 2 3\n"`, wantNot: "bad magic", countPath: pts},
		{args: []string{"get", a, "0:3,", "0:2"}, want: "quote the selection, e.g. '0:3, 0:2'"},
		{args: []string{"get", a, "0:3 0:2"}, want: "a comma missing"},
		{args: []string{"get", "-o", filepath.Join(dir, "missing", "x.npy"), a}, want: filepath.Join(dir, "missing", "x.npy") + ": no such file", wantNot: tempPrefix},
	} {
		err := runFail(t, c.args...)
		msg := err.Error()
		if !strings.Contains(msg, c.want) || c.wantNot != "" && strings.Contains(msg, c.wantNot) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
		if c.countPath != "" && strings.Count(msg, c.countPath) != 1 {
			t.Errorf("%v: %q names %s %d times", c.args, msg, c.countPath, strings.Count(msg, c.countPath))
		}
	}
	// float32 extremes in float32 digits, as get prints them; the last
	// histogram bin closed.
	f32 := filepath.Join(refDir, "v3_dtype_float32.zarr")
	out := runOK(t, "stats", "--hist", "3", f32)
	if !strings.Contains(out, "max:       3.4028235e+38\n") {
		t.Errorf("stats of float32:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "3.40282e+38] ") || !strings.Contains(lines[len(lines)-2], ") ") {
		t.Errorf("histogram bins:\n%s", out)
	}
}

// runWarn runs a command line that must succeed, returning its stdout and
// stderr.
func runWarn(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out, errw strings.Builder
	if err := run(context.Background(), args, &out, &errw); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errw.String()
}

// TestConsolidatedStaleAndBadEntry (trial F13, issue 27): tree, ls and
// info warn when a node was written into a consolidated group after it
// was consolidated (by another tool: cp updates the consolidated
// metadata itself), naming it and 'zarrcat consolidate'; a bad entry of
// the consolidated metadata is said to be the consolidated copy, and the
// node is shown from its own metadata rather than failing the tree.
func TestConsolidatedStaleAndBadEntry(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "c.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	runOK(t, "consolidate", g)
	if err := os.CopyFS(filepath.Join(g, "new"), os.DirFS(filepath.Join(refDir, "v3_dtype_int16.zarr"))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tree", g}, {"ls", "--depth", "1", g}, {"info", g}, {"info", "--json", g}} {
		_, warn := runWarn(t, args...)
		if !strings.Contains(warn, `does not list "new"`) || !strings.Contains(warn, "'zarrcat consolidate "+g+"'") {
			t.Errorf("%v: warning %q", args, warn)
		}
	}
	runOK(t, "consolidate", g)
	if _, warn := runWarn(t, "tree", g); warn != "" {
		t.Errorf("tree after consolidate warns %q", warn)
	}
	// A bad entry: mask's data type in the consolidated copy only.
	b, err := os.ReadFile(filepath.Join(g, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["consolidated_metadata"].(map[string]any)["metadata"].(map[string]any)["mask"].(map[string]any)["data_type"] = "bogus"
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g, "zarr.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, warn := runWarn(t, "tree", g)
	if !strings.Contains(out, "mask (array, v3) bool") || !strings.Contains(out, "temperature") {
		t.Errorf("tree with a bad consolidated entry:\n%s", out)
	}
	if !strings.Contains(warn, g+"/mask: the consolidated metadata's entry for it is bad") || !strings.Contains(warn, "bogus") {
		t.Errorf("tree with a bad consolidated entry warns %q", warn)
	}
}

// TestHugeValuesNotEchoed (issue 27): a huge selection is quoted cut short
// in an error, and a coordinate past int in a --points file is printed as
// written, not clamped.
func TestHugeValuesNotEchoed(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	sel := "[[" + strings.Repeat("1, ", 20000) + "x]]"
	err := runFail(t, "get", a, sel)
	if len(err.Error()) > 600 || !strings.Contains(err.Error(), "(60005 bytes)") || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("a 60 kB selection's error is %d bytes: %.300s", len(err.Error()), err)
	}
	dir := t.TempDir()
	txt := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(txt, []byte("1 2\n99999999999999999999 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runFail(t, "get", "--points", txt, a)
	if !errors.Is(err, nd.ErrOutOfBounds) || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "index 99999999999999999999 of dimension 0") {
		t.Errorf("huge text coordinate: %v", err)
	}
	// A uint64 .npy (as NumPy writes one: descr <u8) holding 2^64-1.
	npyFile := filepath.Join(dir, "p.npy")
	var buf bytes.Buffer
	if err := npy.Write(&buf, "<u8", []int{1, 2}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.MaxUint64), 1)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(npyFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runFail(t, "get", "--points", npyFile, a)
	if !errors.Is(err, nd.ErrOutOfBounds) || !strings.Contains(err.Error(), "index 18446744073709551615 of dimension 0") {
		t.Errorf("uint64 coordinate past int: %v", err)
	}
}

// TestDiffGroups (trial F18): diff takes groups as cp copies them: the
// same hierarchy is the same (exit 0, each array compared); nodes only on
// one side, and arrays that differ, are listed by path (exit 3).
func TestDiffGroups(t *testing.T) {
	g := filepath.Join(refDir, "v3_group.zarr")
	if out := runOK(t, "diff", g, g); !strings.Contains(out, "hold the same nodes and values (3 arrays compared)") {
		t.Errorf("diff of a group with itself: %q", out)
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "c.zarr")
	runOK(t, "cp", g, c)
	runOK(t, "cp", "--overwrite", "--chunks", "3,3", filepath.Join(g, "mask"), filepath.Join(c, "mask"))
	if out := runOK(t, "diff", g, c); !strings.Contains(out, "/mask: layout   chunk_shape: [6 × 6] vs [3 × 3]") || !strings.Contains(out, "same nodes and values") {
		t.Errorf("diff after a re-chunked copy: %q", out)
	}
	if err := os.RemoveAll(filepath.Join(c, "empty_group")); err != nil {
		t.Fatal(err)
	}
	runOK(t, "cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), filepath.Join(c, "new"))
	runOK(t, "cp", "--overwrite", "--dtype", "float64", filepath.Join(g, "measurements", "temperature"), filepath.Join(c, "measurements", "temperature"))
	var out, errw strings.Builder
	err := run(context.Background(), []string{"diff", g, c}, &out, &errw)
	if exitCode(err) != exitDiffer {
		t.Fatalf("diff of different groups: %v (exit %d)", err, exitCode(err))
	}
	for _, want := range []string{"only in A  /empty_group (group)\n", "only in B  /new (array)\n", "/measurements/temperature: metadata data_type: float32 vs float64\n", "/measurements/temperature: values   0 of 136 elements differ"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("diff of different groups: %q lacks %q", out.String(), want)
		}
	}
	var js groupDiff
	runJSON := func() {
		var o, e strings.Builder
		run(context.Background(), []string{"diff", "--json", g, c}, &o, &e)
		if err := json.Unmarshal([]byte(o.String()), &js); err != nil {
			t.Fatalf("diff --json: %q: %v", o.String(), err)
		}
	}
	runJSON()
	if js.Same || len(js.OnlyA) != 1 || len(js.OnlyB) != 1 || js.Compared != 3 || js.Arrays["/measurements/temperature"] == nil {
		t.Errorf("diff --json: %+v", js)
	}
}

// TestCpAndInfoWording (trial 2g, 2i): cp names the flag whose shape does
// not fit, and where the inner chunks of --shards alone came from; info
// --size counts a sharded array's shards as shards.
func TestCpAndInfoWording(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	dir := t.TempDir()
	if err := runFail(t, "cp", "--chunks", "8", a, filepath.Join(dir, "x.zarr")); !strings.Contains(err.Error(), "--chunks gives 1 dimension for an array of 2 dimensions") {
		t.Errorf("cp --chunks 8: %v", err)
	}
	if err := runFail(t, "cp", "--shards", "16,16", a, filepath.Join(dir, "y.zarr")); !strings.Contains(err.Error(), "the inner chunks [6 7] are the source's: give --chunks") {
		t.Errorf("cp --shards alone: %v", err)
	}
	if out := runOK(t, "info", "--size", filepath.Join(refDir, "v3_shard_start.zarr")); !strings.Contains(out, "12/12 shards") {
		t.Errorf("info --size of a sharded array: %q", out)
	}
}
