package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// rectFixture is a zarr-python rectilinear array (testdata/rectilinear).
func rectFixture(name string) string {
	return filepath.Join("..", "..", "testdata", "rectilinear", name+".zarr")
}

// TestRectilinearInfoGetCp: info prints a rectilinear grid's edges, get
// reads across chunks of different shapes, cp copies it whole (the same
// grid, the same values).
func TestRectilinearInfoGetCp(t *testing.T) {
	out := runOK(t, "info", rectFixture("r2d_int32"))
	for _, want := range []string{"chunk_grid:          rectilinear, chunk edges [[3,7],[[4,2],5]]", "chunk_shape:         [7 × 5] (largest)", "chunks:              6 (grid [2 × 3])"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	var n struct {
		ChunkGrid json.RawMessage `json:"chunk_grid"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "info", "--json", rectFixture("r2d_sharded"))), &n); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, n.ChunkGrid)
	if compact.String() != `{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[4,8],[6,4]]}}` {
		t.Errorf("info --json chunk_grid %s", compact.String())
	}
	// Rows 2..3, columns 3..5 of arange(130).reshape(10, 13): rows in chunks of 3 and 7.
	if got := runOK(t, "get", "--format", "csv", rectFixture("r2d_int32"), "2:4, 3:6"); strings.TrimSpace(got) != "29,30,31\n42,43,44" {
		t.Errorf("get: %q", got)
	}
	dst := filepath.Join(t.TempDir(), "copy.zarr")
	runOK(t, "cp", rectFixture("r2d_sharded"), dst)
	if out := runOK(t, "diff", rectFixture("r2d_sharded"), dst); !strings.Contains(out, "hold the same values") {
		t.Errorf("diff after cp: %s", out)
	}
	if out := runOK(t, "info", dst); !strings.Contains(out, "rectilinear, chunk edges [[4,8],[6,4]]") {
		t.Errorf("copy's info: %s", out)
	}
}
