package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCpZip copies a sharded array and a group into .ozx archives and back
// out (validated both ways): info and get read the archives, and diff
// finds the array's round trip equal.
func TestCpZip(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{"v3_shard_end_edges.zarr", "v3_group.zarr"} {
		from := filepath.Join(refDir, src)
		ozx := filepath.Join(dir, strings.TrimSuffix(src, ".zarr")+".ozx")
		runOK(t, "cp", "--validate", from, ozx)
		if fi, err := os.Stat(ozx); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: %v", ozx, err)
		}
		if entries, _ := filepath.Glob(filepath.Join(dir, ".gozarr-tmp-*")); len(entries) != 0 {
			t.Errorf("staging left behind: %q", entries)
		}
		if out := runOK(t, "info", ozx); !strings.Contains(out, "zarr_format 3") {
			t.Errorf("info %s: %q", ozx, out)
		}
		back := filepath.Join(dir, src)
		runOK(t, "cp", "--validate", ozx, back)
		if !strings.Contains(src, "group") {
			runOK(t, "diff", from, back)
		}
	}
	a := filepath.Join(dir, "v3_shard_end_edges.ozx")
	if got, want := runOK(t, "get", a, "0:4, 0:6"), runOK(t, "get", filepath.Join(refDir, "v3_shard_end_edges.zarr"), "0:4, 0:6"); got != want {
		t.Errorf("get from the archive:\n%s\nwant\n%s", got, want)
	}
}
