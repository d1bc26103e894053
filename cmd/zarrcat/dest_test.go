package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runErr runs a command line that must fail and returns its error text.
func runErr(t *testing.T, args ...string) string {
	t.Helper()
	return runFail(t, args...).Error()
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestCpIntoExistingDirectory (trial F1): cp into an existing directory
// that is not Zarr makes DIR/NAME, as cp -r does, and never writes next to
// the files there; a second non-Zarr DIR/NAME is refused, so is a file.
func TestCpIntoExistingDirectory(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "cp", a, home)
	if got := dirNames(t, home); !slices.Equal(got, []string{"notes.txt", "v3_dtype_int16.zarr"}) {
		t.Fatalf("home holds %v", got)
	}
	if !strings.Contains(out, filepath.Join(home, "v3_dtype_int16.zarr")) {
		t.Errorf("cp does not say where the copy went: %s", out)
	}
	runOK(t, "diff", a, filepath.Join(home, "v3_dtype_int16.zarr"))
	// The same into a directory whose NAME is a non-Zarr directory with files.
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "v3_dtype_int16.zarr"), 0o755)
	os.WriteFile(filepath.Join(other, "v3_dtype_int16.zarr", "x.txt"), nil, 0o644)
	if e := runErr(t, "cp", a, other); !strings.Contains(e, "not a Zarr array or group") {
		t.Errorf("cp into a non-Zarr DIR/NAME: %s", e)
	}
	file := filepath.Join(t.TempDir(), "exist.txt")
	os.WriteFile(file, nil, 0o644)
	if e := runErr(t, "cp", a, file); !strings.Contains(e, "is a file") || strings.Contains(e, "storeurl") {
		t.Errorf("cp onto a file: %s", e)
	}
}

// TestCpFailedLeavesNothing (trial F3): an out-of-range codec level, and
// a value the new dtype cannot hold, are refused before anything is
// written (not even a directory made and removed: the parents' mtimes
// stay), and the corrected command then succeeds; the error names the
// source coordinates.
func TestCpFailedLeavesNothing(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	dir := t.TempDir()
	dst := filepath.Join(dir, "zz.zarr")
	if e := runErr(t, "cp", "--codec", "zstd:30", a, dst); !strings.Contains(e, "level 30") {
		t.Errorf("zstd:30: %s", e)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("zstd:30 left %s: %v", dst, err)
	}
	runOK(t, "cp", "--codec", "zstd:3", a, dst)
	d8 := filepath.Join(dir, "zz8.zarr")
	mtime := func(p string) time.Time {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	e := runErr(t, "cp", "--dtype", "int8", a, d8)
	// v3_dtype_int16.zarr[3, 16] is -32768, its first value outside int8
	// in C order (zarrcat get A '3, 14:18': -3 -2 -32768 11).
	if !strings.Contains(e, "-32768 overflows int8") || !strings.Contains(e, " at [3, 16]") || !strings.Contains(e, "nothing was written") {
		t.Errorf("--dtype int8: %s", e)
	}
	if !mtime(dir).Equal(old) {
		t.Errorf("failed --dtype int8 changed %s (made and removed something)", dir)
	}
	if _, err := os.Stat(d8); !os.IsNotExist(err) {
		t.Fatalf("failed --dtype int8 left %s: %v", d8, err)
	}
	if e := runErr(t, "cp", "--chunks", "8", a, d8); !strings.Contains(e, "--chunks gives 1 dimension") {
		t.Errorf("--chunks 8: %s", e)
	}
	if _, err := os.Stat(d8); !os.IsNotExist(err) {
		t.Fatalf("--chunks 8 left %s", d8)
	}
	// A failed copy inside a hierarchy removes only the groups it made.
	g := filepath.Join(dir, "g.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	runOK(t, "consolidate", g)
	if err := os.Chtimes(g, old, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(g, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	runErr(t, "cp", "--dtype", "int8", a, filepath.Join(g, "new", "x"))
	if _, err := os.Stat(filepath.Join(g, "new")); !os.IsNotExist(err) {
		t.Errorf("failed copy left g.zarr/new: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(g, "zarr.json")); !mtime(g).Equal(old) || string(after) != string(before) {
		t.Errorf("failed copy into g.zarr touched it (mtime %v, zarr.json changed: %v)", mtime(g), string(after) != string(before))
	}
	// Resuming into an existing copy: refused before a chunk is replaced.
	runOK(t, "cp", "--chunks", "8,8", a, d8)
	if err := os.Chtimes(filepath.Join(d8, "c"), old, old); err != nil {
		t.Fatal(err)
	}
	runErr(t, "cp", "--resume", "--chunks", "8,8", "--dtype", "int8", a, d8)
	if !mtime(filepath.Join(d8, "c")).Equal(old) {
		t.Errorf("failed cp --resume --dtype int8 wrote into %s", d8)
	}
	runOK(t, "diff", filepath.Join(refDir, "v3_group.zarr", "mask"), filepath.Join(g, "mask"))
}

// TestCpParentsAndNesting (trial F4): a nested destination gets its parent
// groups (visible to tree), a node inside an array is refused with nothing
// written, and a second plain cp is refused naming the path typed, while
// --overwrite replaces the copy.
func TestCpParentsAndNesting(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	dir := t.TempDir()
	g := filepath.Join(dir, "g.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	runOK(t, "cp", a, filepath.Join(g, "new", "sub", "x"))
	tree := runOK(t, "ls", g)
	for _, want := range []string{"/new", "/new/sub", "/new/sub/x"} {
		if !strings.Contains(tree, want+" ") && !strings.Contains(tree, want+"\n") {
			t.Errorf("ls lacks %s:\n%s", want, tree)
		}
	}
	e := runErr(t, "cp", filepath.Join(refDir, "v3_group.zarr"), filepath.Join(g, "mask", "inside"))
	if !strings.Contains(e, "is an array") {
		t.Errorf("group inside an array: %s", e)
	}
	if _, err := os.Stat(filepath.Join(g, "mask", "inside")); !os.IsNotExist(err) {
		t.Errorf("refused copy left mask/inside")
	}
	c1 := filepath.Join(dir, "c1.zarr")
	runOK(t, "cp", a, c1)
	e = runErr(t, "cp", a, c1)
	if !strings.Contains(e, c1) || strings.Contains(e, `"/"`) || !strings.Contains(e, "--overwrite") {
		t.Errorf("second cp: %s", e)
	}
	runOK(t, "cp", "--overwrite", "--chunks", "31,19", a, c1)
	if n := len(dirNames(t, filepath.Join(c1, "c"))); n != 1 {
		t.Errorf("--overwrite kept old chunks: c/ holds %d entries", n)
	}
	runOK(t, "diff", a, c1)
}

// TestCpUpdatesConsolidated (trial F13): cp into a consolidated group
// consolidates it again, so tree (which reads the consolidated metadata)
// shows the new node.
func TestCpUpdatesConsolidated(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "c.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), c)
	runOK(t, "consolidate", c)
	runOK(t, "cp", filepath.Join(refDir, "v3_dtype_int16.zarr"), filepath.Join(c, "new"))
	if tree := runOK(t, "tree", c); !strings.Contains(tree, "new") {
		t.Errorf("tree after cp into a consolidated group:\n%s", tree)
	}
	runOK(t, "consolidate", "--check", c)
}
