package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
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
