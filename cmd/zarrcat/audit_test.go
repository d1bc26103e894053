package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/zarr"
)

// TestTextViewWholeStreamed (issue 27 audit): a text view shown whole
// (--threshold 0, which the summary's header suggests) streams the result
// twice within --budget instead of reading every element as a point: 10^6
// elements held about 300 bytes each (a 2048² float32 array took 307 MB,
// an 8192² one would not fit). Its text is the in-memory view's, for a
// 4-D result (labelled planes), a 2-D one and a pointwise one.
func TestTextViewWholeStreamed(t *testing.T) {
	ctx := context.Background()
	view := func(args ...string) string {
		var out bytes.Buffer
		if err := run(ctx, append([]string{"get", "--threshold", "0"}, args...), &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	cases := [][]string{
		{filepath.Join(refDir, "v3_ndim4.zarr")},
		{filepath.Join(refDir, "v3_dtype_float64.zarr"), "::-1, 3:"},
		{filepath.Join(refDir, "v3_dtype_int16.zarr"), "[[0], [5], [30]], [1, 1, -1, 4]"},
	}
	var inMemory []string
	for _, c := range cases {
		inMemory = append(inMemory, view(c...))
	}
	old := viewInMemory
	viewInMemory = 0
	for i, c := range cases {
		if got := view(c...); got != inMemory[i] {
			t.Errorf("%v: streamed view\n%s\nin-memory view\n%s", c, got, inMemory[i])
		}
	}
	viewInMemory = old
	if testing.Short() {
		t.Skip("reads 10^6 elements")
	}
	a, _ := writePointsArray(t, t.TempDir(), 0) // 1000 × 1000 int16
	peak := peakHeap(func() {
		if err := run(ctx, []string{"get", "--threshold", "0", "--budget", "4MiB", a}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("get --threshold 0 of 10^6 elements: peak heap %d bytes above the start", peak)
	if peak > 16<<20 {
		t.Errorf("get --threshold 0 of 10^6 int16 elements with --budget 4MiB: peak heap %d bytes, want at most 16 MiB", peak)
	}
}

// TestQuoteHint (issue 27 audit): the hint for a selection given as
// several arguments is a selection that parses: '0:3' '0:2' gets '0:3,
// 0:2' (it got '0:3 0:2', which is an error of its own: a comma missing),
// unquoted 0:3, 0:2 gets the same.
func TestQuoteHint(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	for _, args := range [][]string{{"0:3", "0:2"}, {"0:3,", "0:2"}} {
		msg := runErr(t, append([]string{"get", a}, args...)...)
		if !strings.Contains(msg, "e.g. '0:3, 0:2'") {
			t.Errorf("get %v: %s", args, msg)
		}
	}
	if got, want := runOK(t, "get", a, "0:3, 0:2"), runOK(t, "get", a, "0:3,0:2"); got != want || got == "" {
		t.Errorf("the hinted selection: %q, want %q", got, want)
	}
}

// TestPointsErrorNamesPoint (issue 27 audit): an out-of-bounds point of a
// --points text file is named by its line and its number in the file (the
// third point was "point 0": each was checked alone).
func TestPointsErrorNamesPoint(t *testing.T) {
	pts := filepath.Join(t.TempDir(), "pts.txt")
	if err := os.WriteFile(pts, []byte("# i j\n0 0\n1 1\n40 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := runErr(t, "get", "--points", pts, filepath.Join(refDir, "v3_dtype_int16.zarr"))
	if !strings.Contains(msg, "line 4: index out of bounds: index 40 of dimension 0 (length 31), point 2") {
		t.Errorf("error: %s", msg)
	}
}

// TestCleanWording (issue 27 audit): zarrcat clean counts in words ("1
// temporary file", not "1 temporary files") and a missing or non-directory
// DIR is said as typed, without the store's "fs: root: stat ...".
func TestCleanWording(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".gozarr-tmp-a", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, want := runOK(t, "clean", "--older-than", "0", dir), "removed 1 temporary file older than 0s from "+dir+"\n"; out != want {
		t.Errorf("clean: %q, want %q", out, want)
	}
	missing, file := filepath.Join(dir, "nosuch"), filepath.Join(dir, "keep.txt")
	for p, want := range map[string]string{missing: "clean " + missing + ": no such file or directory", file: "clean " + file + ": not a directory"} {
		if msg := runErr(t, "clean", p); msg != want {
			t.Errorf("clean %s: %q, want %q", p, msg, want)
		}
	}
}

// TestCpOntoOtherNodeType (issue 27 audit): cp of an array onto a group,
// or of a group onto an array, says what is there and what to give (it
// said `open "": wrong zarr node type: found a group, not an array`, and
// for a group onto an array "exists: give --resume", which then failed).
func TestCpOntoOtherNodeType(t *testing.T) {
	dir := t.TempDir()
	arr, grp := filepath.Join(dir, "a.zarr"), filepath.Join(dir, "g.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), arr)
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), grp)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), grp}, "destination array " + grp + ": a group is there, not an array: give --overwrite"},
		{[]string{"cp", filepath.Join(refDir, "v3_group.zarr"), arr}, "destination group " + arr + ": an array is there, not a group: give --overwrite"},
		{[]string{"cp", "--resume", filepath.Join(refDir, "v3_group.zarr"), arr}, "an array is there, not a group"},
	} {
		err := runFail(t, c.args...)
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), `""`) {
			t.Errorf("%v: %v", c.args, err)
		}
		if !errors.Is(err, zarr.ErrNodeType) && !errors.Is(err, zarr.ErrNodeExists) {
			t.Errorf("%v: %v wraps neither ErrNodeType nor ErrNodeExists", c.args, err)
		}
	}
}

// TestConsolidatedNamedAsTyped (issue 27 audit): cp into a consolidated
// group names the group it consolidated again by its path ('of group "/"'
// read as the filesystem root), and consolidate --check names a stale
// group as typed (it said 'group ""').
func TestConsolidatedNamedAsTyped(t *testing.T) {
	g := filepath.Join(t.TempDir(), "g.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	runOK(t, "consolidate", g)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), g + "/measurements/new"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if want := "zarrcat: updated the consolidated metadata of " + g + "\n"; errb.String() != want {
		t.Errorf("cp into a consolidated group: stderr %q, want %q", errb.String(), want)
	}
	stale := filepath.Join("..", "..", "testdata", "consolidated", "v3_stale.zarr")
	err := runFail(t, "consolidate", "--check", stale)
	if !strings.HasPrefix(err.Error(), stale+": consolidated metadata is stale: ") || !errors.Is(err, zarr.ErrStaleConsolidated) {
		t.Errorf("consolidate --check: %v", err)
	}
}

// TestNodesBelowHint (issue 27 audit): the "not found" hint lists the
// Zarr nodes below a directory, with "..." only when there are more than
// the three it names (three were followed by "...").
func TestNodesBelowHint(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	for n, want := range map[int]string{2: "/x1", 3: "/x2", 4: "/x2, ..."} {
		sub := filepath.Join(dir, strconv.Itoa(n))
		for i := range n {
			runOK(t, "cp", a, filepath.Join(sub, "x"+strconv.Itoa(i)))
		}
		msg := runErr(t, "info", sub)
		if !strings.HasSuffix(msg, want) || strings.Count(msg, sub+"/x") != min(n, 3) {
			t.Errorf("%d arrays below: %s", n, msg)
		}
	}
}

// TestDiffLayoutWording (issue 27 audit): diff names a sharded array's
// outer grid shard_shape, as info does (it said chunk_shape), says "(not
// sharded)" for the side without inner chunks (it printed "[]" and an
// empty codec list), and writes the first differing element's coordinates
// as cp's errors do, [0, 0] (it printed Go's [0 0]).
func TestDiffLayoutWording(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(refDir, "v2_dtype_int16.zarr")
	s1, s2 := filepath.Join(dir, "s1.zarr"), filepath.Join(dir, "s2.zarr")
	runOK(t, "cp", "--chunks", "4,4", "--shards", "8,8", v2, s1)
	runOK(t, "cp", "--chunks", "4,4", "--shards", "16,16", v2, s2)
	if out := runOK(t, "diff", s1, s2); !strings.Contains(out, "layout   shard_shape: [8 × 8] vs [16 × 16]\n") {
		t.Errorf("two sharded arrays:\n%s", out)
	}
	out := runOK(t, "diff", v2, s1)
	for _, want := range []string{"inner_chunk_shape: (not sharded) vs [4 × 4]\n", "inner_codecs: (not sharded) vs bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("unsharded vs sharded: no %q in\n%s", want, out)
		}
	}
	// One value changed: the first difference's coordinates.
	c := filepath.Join(dir, "c.zarr")
	runOK(t, "cp", "--chunks", "37,20", "--codec", "none", v2, c)
	b, err := os.ReadFile(filepath.Join(c, "c", "0", "0"))
	if err != nil {
		t.Fatal(err)
	}
	b[(3*20+5)*2] ^= 1 // element [3, 5] of a raw little-endian int16 chunk
	if err := os.WriteFile(filepath.Join(c, "c", "0", "0"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runFail(t, "diff", v2, c); !errors.Is(err, errDiffer) {
		t.Fatalf("diff after a change: %v", err)
	}
	var o bytes.Buffer
	run(context.Background(), []string{"diff", v2, c}, &o, &o)
	if !strings.Contains(o.String(), "1 of 740 elements differ; first at [3, 5]: ") {
		t.Errorf("one element changed:\n%s", o.String())
	}
}

// TestReadErrorsNameTarget (issue 27 audit): an error reading an array's
// chunks names the array as typed, for get, get --points, stats and cp (of
// an array and of a group), where it said 'read "": chunk ...' (the node
// path, "" for a store's root); get --points no longer blames a line of
// its file for it. The codec's sentinel stays wrapped.
func TestReadErrorsNameTarget(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	arr := filepath.Join(g, "measurements", "temperature")
	if err := os.WriteFile(filepath.Join(arr, "c", "0", "0"), []byte("xx"), 0o644); err != nil {
		t.Fatal(err)
	}
	pts := filepath.Join(dir, "pts.txt")
	os.WriteFile(pts, []byte("0 0\n1 1\n"), 0o644)
	for _, c := range []struct {
		args  []string
		shown string
	}{
		{[]string{"get", arr}, arr},
		{[]string{"get", "--points", pts, arr}, arr},
		{[]string{"stats", arr}, arr},
		{[]string{"cp", arr, filepath.Join(dir, "c1.zarr")}, arr},
		{[]string{"cp", g, filepath.Join(dir, "c2.zarr")}, g + "/measurements/temperature"},
		{[]string{"cp", filepath.Join(g, "measurements"), filepath.Join(dir, "c3.zarr")}, g + "/measurements/temperature"},
	} {
		err := runFail(t, c.args...)
		if !strings.HasPrefix(err.Error(), c.shown+": chunk ") || strings.Contains(err.Error(), "line ") || !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%v: %v", c.args, err)
		}
	}
}

// TestTreeWarnsGoneNodes (issue 27 audit, trial F13): tree and ls warn
// of nodes that stale consolidated metadata still lists but the store no
// longer holds (they were shown without a word; only unlisted new nodes
// were warned of), and say nothing of an up-to-date group.
func TestTreeWarnsGoneNodes(t *testing.T) {
	cons := filepath.Join("..", "..", "testdata", "consolidated")
	for _, cmd := range []string{"tree", "ls"} {
		for _, c := range []struct {
			group, warn string
		}{
			{"v3_stale.zarr", `its consolidated metadata lists "names", no longer stored`},
			{"v2_stale.zarr", `its consolidated metadata lists "names", no longer stored`},
			{"v3_group.zarr", ""},
		} {
			var out, errb bytes.Buffer
			if err := run(context.Background(), []string{cmd, filepath.Join(cons, c.group)}, &out, &errb); err != nil {
				t.Fatal(err)
			}
			if c.warn == "" && strings.Contains(errb.String(), "no longer stored") || !strings.Contains(errb.String(), c.warn) {
				t.Errorf("%s %s: stderr %q", cmd, c.group, errb.String())
			}
		}
	}
}

// TestHelpWording (issue 27 audit, trial F10): cp's help does not speak
// of a selection (it has none; its exit-status lines were get's), and
// "zarrcat help inof" suggests info as "zarrcat inof" does.
func TestHelpWording(t *testing.T) {
	if out := runOK(t, "help", "cp"); strings.Contains(out, "selection") {
		t.Errorf("help cp mentions a selection:\n%s", out)
	}
	if out := runOK(t, "help", "get"); !strings.Contains(out, "a selection that does not fit the array") {
		t.Errorf("help get lost its exit statuses:\n%s", out)
	}
	if msg := runErr(t, "help", "inof"); !strings.Contains(msg, `did you mean "info"?`) {
		t.Errorf("help inof: %s", msg)
	}
}

// TestStatsUnsupportedWording (issue 27 audit): stats of a type it cannot
// reduce names the array and says the limit is stats' (it began
// "unsupported zarr feature", as if the array used one), still wrapping
// zarr.ErrUnsupported, exit status 1.
func TestStatsUnsupportedWording(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "vlen", "v3_string.zarr")
	err := runFail(t, "stats", a)
	if want := a + ": stats of string values: only booleans, integers and real floats are supported"; err.Error() != want || !errors.Is(err, zarr.ErrUnsupported) || exitCode(err) != 1 {
		t.Errorf("stats of strings: %v (exit %d), want %q", err, exitCode(err), want)
	}
}

// TestChunkLimitWording (issue 27 audit): a chunk over --max-chunk-bytes
// is said to be over the limit, with the flag that raises it, not also an
// "(unsupported zarr feature)" of the array; the sentinels stay wrapped.
func TestChunkLimitWording(t *testing.T) {
	small := chunkedArray(t, 2<<20)
	err := runFail(t, "get", "--max-chunk-bytes", "1MiB", small, "0:3")
	if msg := err.Error(); strings.Contains(msg, "unsupported") || !strings.Contains(msg, "over a size limit: a chunk decodes to 2097152 bytes") || !strings.Contains(msg, "--max-chunk-bytes") || !errors.Is(err, zarr.ErrChunkTooLarge) {
		t.Errorf("chunk over --max-chunk-bytes: %v", err)
	}
}

// TestCpOverwriteArchive (issue 27 audit): cp --overwrite onto an existing
// .ozx replaces it (it was refused like a plain cp, "remove it first"),
// through a new archive renamed over it: a failed --overwrite leaves the
// old archive and no temporary file. Without --overwrite the refusal
// names the flag.
func TestCpOverwriteArchive(t *testing.T) {
	dir := t.TempDir()
	ozx := filepath.Join(dir, "g.ozx")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), ozx)
	if msg := runErr(t, "cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), ozx); !strings.Contains(msg, "--overwrite replaces it") {
		t.Errorf("cp onto an archive: %s", msg)
	}
	runOK(t, "cp", "--overwrite", filepath.Join(refDir, "v3_dtype_int16.zarr"), ozx)
	if out := runOK(t, "info", ozx); !strings.Contains(out, "node_type:           array") || !strings.Contains(out, "[31 × 19]") {
		t.Errorf("after cp --overwrite:\n%s", out)
	}
	before, _ := os.ReadFile(ozx)
	runFail(t, "cp", "--overwrite", "--codec", "zstd:30", filepath.Join(refDir, "v3_group.zarr"), ozx)
	if after, _ := os.ReadFile(ozx); !bytes.Equal(before, after) {
		t.Errorf("a failed cp --overwrite changed the archive")
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("after a failed cp --overwrite the directory holds %v", names)
	}
	// Failing once values are staged (a corrupt source chunk): the old
	// archive stays, and no staging directory or new archive is left.
	bad := filepath.Join(t.TempDir(), "bad.zarr")
	runOK(t, "cp", "--codec", "zstd:1", filepath.Join(refDir, "v3_dtype_int16.zarr"), bad)
	if err := os.WriteFile(filepath.Join(bad, "c", "1", "1"), []byte("xx"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFail(t, "cp", "--overwrite", bad, ozx)
	if after, _ := os.ReadFile(ozx); !bytes.Equal(before, after) {
		t.Errorf("a failed cp --overwrite changed the archive")
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("after a failed cp --overwrite the directory holds %v", names)
	}
}

// TestCpFailedArchiveLeavesNothing (issue 27 audit): a cp to a new .ozx
// that fails once values are staged (a corrupt source chunk) leaves
// nothing in the directory (its .gozarr-tmp-zip-* staging directory
// stayed).
func TestCpFailedArchiveLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.zarr")
	runOK(t, "cp", "--codec", "zstd:1", filepath.Join(refDir, "v3_dtype_int16.zarr"), bad)
	if err := os.WriteFile(filepath.Join(bad, "c", "1", "1"), []byte("xx"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFail(t, "cp", bad, filepath.Join(dir, "new.ozx"))
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("after a failed copy to a new archive the directory holds %v", names)
	}
}

// TestCpUsageWording (issue 27 audit): a cp flag that does not fit the
// source (--chunks of the wrong rank) says "usage" once, as the exit
// status and the usage block do, not mid-sentence ("copy of X: usage:
// --chunks gives ...").
func TestCpUsageWording(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "c.zarr")
	err := runFail(t, "cp", "--chunks", "8", filepath.Join(refDir, "v3_dtype_int16.zarr"), dst)
	if want := "usage: copy of " + dst + ": --chunks gives 1 dimension for an array of 2 dimensions"; err.Error() != want || exitCode(err) != 2 {
		t.Errorf("cp --chunks 8: %q (exit %d), want %q", err, exitCode(err), want)
	}
}

// TestPointsNpyMemory (issue 27 audit, hostile input "10^8 points"): get
// --points of a .npy file holds far less than 16 bytes a point, as of a
// text file: the file is checked, then read batch by batch (it was read
// whole and copied: 32 bytes a point for int64 (n, 2)). The values are
// those of the same points given as text; a point out of bounds is named
// by its number in the file.
func TestPointsNpyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 10^6 points")
	}
	n := 1_000_000
	dir := t.TempDir()
	a, txt := writePointsArray(t, dir, 1000)
	// The text file's 1000 points, repeated to n, as int64 (n, 2).
	b, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	var first []int64
	for _, f := range strings.Fields(string(b)) {
		v, _ := strconv.ParseInt(f, 10, 64)
		first = append(first, v)
	}
	data := make([]byte, 0, n*16)
	for i := range n {
		data = binary.LittleEndian.AppendUint64(data, uint64(first[2*(i%1000)]))
		data = binary.LittleEndian.AppendUint64(data, uint64(first[2*(i%1000)+1]))
	}
	pts := filepath.Join(dir, "points.npy")
	if err := npy.WriteFile(pts, "<i8", []int{n, 2}, data); err != nil {
		t.Fatal(err)
	}
	data = nil
	peak := peakHeap(func() {
		if err := run(context.Background(), []string{"get", "-q", "--budget", "8MiB", "--format", "raw", "-o", os.DevNull, "--points", pts, a}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	per := float64(peak) / float64(n)
	t.Logf("%d points from .npy: peak heap %d bytes above the start, %.2f a point", n, peak, per)
	if per > 16 {
		t.Errorf("get --points FILE.npy of %d points: %.1f bytes a point, want at most 16", n, per)
	}
	// Same values as the text file's points (the array is all fill, so
	// write one chunk of values first).
	runOK(t, "cp", "--overwrite", filepath.Join(refDir, "v3_dtype_int16.zarr"), a) // 31 × 19
	small := filepath.Join(dir, "small.npy")
	npy.WriteFile(small, "<i8", []int{3, 2}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 30), 18), 0), 0), ^uint64(0)), 3))
	stxt := filepath.Join(dir, "small.txt")
	os.WriteFile(stxt, []byte("30 18\n0 0\n-1 3\n"), 0o644)
	if got, want := runOK(t, "get", "--points", small, a), runOK(t, "get", "--points", stxt, a); got != want || want == "" {
		t.Errorf(".npy points: %q, text points: %q", got, want)
	}
	bad := filepath.Join(dir, "bad.npy")
	npy.WriteFile(bad, "<i8", []int{3, 2}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0), 0), 1), 1), 40), 2))
	if msg := runErr(t, "get", "--points", bad, a); !strings.Contains(msg, "index 40 of dimension 0 (length 31), point 2") {
		t.Errorf("out-of-bounds .npy point: %s", msg)
	}
}

// TestTextViewSummaryAsNumPy (issue 27 audit): a summarised view's rows
// are NumPy's (np.array2string, threshold 100, brackets taken off), the
// "..." between the edge columns included: NumPy does not pad it to the
// column's width (it was, "      ...").
func TestTextViewSummaryAsNumPy(t *testing.T) {
	out := runOK(t, "get", "--threshold", "100", filepath.Join(refDir, "v3_dtype_float32.zarr"))
	lines := strings.Split(out, "\n")
	if want := "  4.5872903   -0.45507908  -1.852468   ...  28.36419     16.70314      4.4074306 "; len(lines) < 2 || lines[1] != want {
		t.Errorf("first row %q, NumPy's %q", lines[1], want)
	}
	out = runOK(t, "get", "--threshold", "100", filepath.Join(refDir, "v3_dtype_int16.zarr"))
	if lines := strings.Split(out, "\n"); len(lines) < 2 || lines[1] != "-8 -5  4 ... -1  4  9" {
		t.Errorf("int16 first row %q, NumPy's %q", lines[1], "-8 -5  4 ... -1  4  9")
	}
}

// TestCpFlagValueIsUsage (issue 27 audit, trial F28): a --codec level or
// --chunks/--shards shapes the library refuses are usage mistakes, exit
// status 2 as --chunks 0,8 is (they were 1), still wrapping the codec's
// sentinel (the dry run's error was flattened to text), nothing written.
func TestCpFlagValueIsUsage(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	for _, flags := range [][]string{{"--codec", "zstd:30"}, {"--codec", "gzip:12"}, {"--chunks", "8,8", "--shards", "12,12"}, {"--shards", "16,16"}} {
		dst := filepath.Join(t.TempDir(), "c.zarr")
		err := runFail(t, append(append([]string{"cp"}, flags...), a, dst)...)
		if exitCode(err) != 2 || !errors.Is(err, codecs.ErrInvalidConfig) || !errors.Is(err, errUsage) || !strings.HasPrefix(err.Error(), "copy of "+dst+": ") {
			t.Errorf("cp %v: %v (exit %d)", flags, err, exitCode(err))
		}
		if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
			t.Errorf("cp %v left %s", flags, dst)
		}
	}
}

// TestDiffReadErrorNamesSide (issue 27 audit): diff of an array, or of a
// group, with a corrupt chunk names the side that failed as typed (it
// said 'read "": chunk ...' for either side, or the node path below the
// group), wrapping the codec's sentinel, exit status 1.
func TestDiffReadErrorNamesSide(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.zarr"), filepath.Join(dir, "bad.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), good)
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), bad)
	if err := os.WriteFile(filepath.Join(bad, "measurements", "temperature", "c", "0", "0"), []byte("xx"), 0o644); err != nil {
		t.Fatal(err)
	}
	arr := "/measurements/temperature"
	for _, c := range []struct{ a, b, shown string }{
		{good + arr, bad + arr, bad + arr},
		{bad + arr, good + arr, bad + arr},
		{good, bad, bad + arr},
		{bad + "/measurements", good + "/measurements", bad + arr},
	} {
		err := runFail(t, "diff", c.a, c.b)
		if !strings.HasPrefix(err.Error(), c.shown+": chunk ") || !errors.Is(err, codecs.ErrCorrupt) || exitCode(err) != 1 {
			t.Errorf("diff %s %s: %v (exit %d)", c.a, c.b, err, exitCode(err))
		}
	}
}

// closedPipe is a reader that went away after n bytes (zarrcat get | head).
type closedPipe struct{ n int }

func (p *closedPipe) Write(b []byte) (int, error) {
	if len(b) > p.n {
		k := p.n
		p.n = 0
		return k, syscall.EPIPE
	}
	p.n -= len(b)
	return len(b), nil
}

// TestTrialCommandsThatWork (issue 27 audit): commands of the trial that
// behaved well and had no test of their own: get into a closed pipe ends
// quietly with exit status 0 (README: "a closed pipe ends zarrcat
// quietly"); --budget 1 (one byte) still gives every value; flags after
// the positionals work as before them; -o with an unknown extension
// writes npy; an unquoted negative selection is no flag.
func TestTrialCommandsThatWork(t *testing.T) {
	ctx := context.Background()
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	var errb bytes.Buffer
	err := run(ctx, []string{"get", a}, &closedPipe{n: 20}, &errb)
	if !errors.Is(err, errBrokenPipe) || exitCode(err) != 0 || errb.Len() != 0 {
		t.Errorf("get into a closed pipe: %v (exit %d), stderr %q", err, exitCode(err), errb.String())
	}
	all := runOK(t, "get", a)
	if got := runOK(t, "get", "--budget", "1", a); got != all {
		t.Errorf("--budget 1 changed the values")
	}
	if x, y := runOK(t, "get", a, "--format", "csv", "0:2"), runOK(t, "get", "--format", "csv", a, "0:2"); x != y || !strings.Contains(x, ",") {
		t.Errorf("flags after positionals: %q vs %q", x, y)
	}
	dat := filepath.Join(t.TempDir(), "x.dat")
	runOK(t, "get", "-o", dat, a, "0:1")
	if got, err := npy.ReadFile(dat); err != nil || got.Descr != "<i2" || len(got.Shape) != 2 || got.Shape[1] != 19 {
		t.Errorf("-o x.dat: %v %+v", err, got)
	}
	if last, want := runOK(t, "get", a, "-1"), strings.SplitAfter(all, "\n")[30]; last != want {
		t.Errorf("get A -1: %q, the last row is %q", last, want)
	}
}

// TestPointsMaskFileMistakes (issue 27 audit, trial F28): a --mask or
// --points file that is no .npy is a usage mistake, exit status 2, as a
// bad line of a --points text file is (it was 1), with the path once and
// npy's sentinel wrapped; a missing file stays an error, 1.
func TestPointsMaskFileMistakes(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	txt := filepath.Join(dir, "pts.npy")
	os.WriteFile(txt, []byte("0 0\n1 2\n"), 0o644)
	for _, flag := range []string{"--mask", "--points"} {
		err := runFail(t, "get", flag, txt, a)
		if exitCode(err) != 2 || !errors.Is(err, npy.ErrFormat) || strings.Count(err.Error(), txt) != 1 {
			t.Errorf("get %s %s: %v (exit %d)", flag, txt, err, exitCode(err))
		}
		missing := filepath.Join(dir, "missing.npy")
		if err := runFail(t, "get", flag, missing, a); exitCode(err) != 1 || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("get %s %s: %v (exit %d)", flag, missing, err, exitCode(err))
		}
	}
}
