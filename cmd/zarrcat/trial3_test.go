package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHTTPGroupNeedsConsolidated (trial 2h): tree and ls of a group over
// plain HTTP, not consolidated, fail naming the URL typed and what makes
// it work (consolidated metadata), not the node path "".
func TestHTTPGroupNeedsConsolidated(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir(refDir)))
	defer srv.Close()
	url := srv.URL + "/v3_group.zarr"
	for _, cmd := range []string{"tree", "ls"} {
		err := runFail(t, cmd, url)
		if msg := err.Error(); !strings.HasPrefix(msg, url+": the store cannot list") || !strings.Contains(msg, "'zarrcat consolidate'") || strings.Contains(msg, `""`) {
			t.Errorf("%s over HTTP: %v", cmd, err)
		}
	}
	// A consolidated group lists from its zarr.json alone.
	csrv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(refDir, "..", "consolidated"))))
	defer csrv.Close()
	if out := runOK(t, "tree", csrv.URL+"/v3_group.zarr"); !strings.Contains(out, "(array") {
		t.Errorf("tree of a consolidated group over HTTP:\n%s", out)
	}
}

// TestResumeRemovesKilledTemp (trial F25): cp --resume completes a killed
// copy and removes the temporary files the killed run left (a kill stops
// a write between creating its temporary file and renaming it), saying
// how many; files of the destination and a fresh copy's are kept.
func TestResumeRemovesKilledTemp(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	d := filepath.Join(t.TempDir(), "k.zarr")
	runOK(t, "cp", "--chunks", "8,8", a, d)
	// The killed run: one chunk never renamed into place, its temporary
	// file left beside where it was going.
	if err := os.Remove(filepath.Join(d, "c", "1", "1")); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d, "c", "1", ".gozarr-tmp-123456")
	if err := os.WriteFile(tmp, []byte("half a chunk"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Second)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "cp", "--resume", "--chunks", "8,8", a, d)
	if !strings.Contains(out, "12 write units (11 found complete)") || !strings.Contains(out, "1 temporary file of the killed copy removed") {
		t.Errorf("cp --resume: %q", out)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the killed run's temporary file stays: %v", err)
	}
	runOK(t, "diff", a, d)
	if out := runOK(t, "cp", "--resume", "--chunks", "8,8", a, d); strings.Contains(out, "temporary") {
		t.Errorf("a second resume: %q", out)
	}
}

// TestInfoV2InItsOwnTerms (trial 2c): info of a v2 array also says what
// its .zarray (written by zarr-python) says, in v2's terms (order F, the
// compressor), beside the codecs' v3 translation; v3 arrays have no such
// line.
func TestInfoV2InItsOwnTerms(t *testing.T) {
	out := runOK(t, "info", filepath.Join(refDir, "v2_order_F_2d.zarr"))
	if !strings.Contains(out, `v2 .zarray:          dtype "<f8", order "F", compressor {"id":"zstd","level":1}, filters null`) || !strings.Contains(out, "transpose{") {
		t.Errorf("info of a v2 array:\n%s", out)
	}
	if out := runOK(t, "info", filepath.Join(refDir, "v3_dtype_int16.zarr")); strings.Contains(out, ".zarray") {
		t.Errorf("info of a v3 array:\n%s", out)
	}
}
