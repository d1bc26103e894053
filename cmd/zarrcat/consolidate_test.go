package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/zarr"
)

// copyDir copies the directory src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsolidate checks zarr-python's consolidated groups with
// "consolidate --check" (fresh: ok; changed after consolidating: stale,
// naming the nodes), rewrites the stale ones with "consolidate" and checks
// them again.
func TestConsolidate(t *testing.T) {
	ctx := context.Background()
	const dir = "../../testdata/consolidated"
	for _, v := range []string{"v2", "v3"} {
		var out bytes.Buffer
		if err := run(ctx, []string{"consolidate", "--check", filepath.Join(dir, v+"_group.zarr")}, &out, &out); err != nil || !strings.Contains(out.String(), "up to date: 5 nodes") {
			t.Errorf("%s fresh: %q, %v", v, out.String(), err)
		}
		stale := filepath.Join(t.TempDir(), "stale.zarr")
		copyDir(t, filepath.Join(dir, v+"_stale.zarr"), stale)
		out.Reset()
		err := run(ctx, []string{"consolidate", "--check", stale}, &out, &out)
		if !errors.Is(err, zarr.ErrStaleConsolidated) || !strings.Contains(err.Error(), "1 changed (temp); 1 gone (names); 1 not listed (extra)") {
			t.Errorf("%s stale: %v", v, err)
		}
		out.Reset()
		if err := run(ctx, []string{"consolidate", stale}, &out, &out); err != nil || !strings.Contains(out.String(), "consolidated 5 nodes (zarr "+v+")") {
			t.Errorf("%s consolidate: %q, %v", v, out.String(), err)
		}
		out.Reset()
		if err := run(ctx, []string{"consolidate", "--check", stale}, &out, &out); err != nil {
			t.Errorf("%s after consolidating: %q, %v", v, out.String(), err)
		}
	}
	if err := run(ctx, []string{"consolidate"}, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, errUsage) {
		t.Errorf("no target: %v", err)
	}
}
