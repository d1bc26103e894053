//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputPermissions (issue 27 audit): get -o replaces a file keeping
// its permissions (a 0444 file became 0644, a private 0600 one
// world-readable), creates a new one as a shell's > does (0666 less the
// umask, not always 0644), and a killed get's temporary file is one
// zarrcat clean removes.
func TestOutputPermissions(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	mode := func(p string) os.FileMode {
		t.Helper()
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return info.Mode().Perm()
	}
	fresh := filepath.Join(dir, "new.npy")
	runOK(t, "get", "-o", fresh, a)
	if m := mode(fresh); m != 0o640 {
		t.Errorf("new file: mode %v, want 0640 (0666 less the umask 027)", m)
	}
	for _, perm := range []os.FileMode{0o600, 0o444, 0o755} {
		p := filepath.Join(dir, fmt.Sprintf("old%o.txt", perm))
		if err := os.WriteFile(p, []byte("old"), perm); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, perm)
		runOK(t, "get", "-o", p, a, "0:1")
		if m := mode(p); m != perm {
			t.Errorf("replaced %o file: mode %v", perm, m)
		}
	}
	// A get killed before its rename leaves its temporary file.
	o, err := createOutput(filepath.Join(dir, "killed.npy"), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.WriteString("partial")
	o.Flush()
	if out := runOK(t, "clean", "--older-than", "0", dir); !strings.HasPrefix(out, "removed 1 ") {
		t.Errorf("zarrcat clean after a killed get: %q", out)
	}
	if _, err := os.Stat(o.tmp); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", o.tmp, err)
	}
	o.f.Close()
}
