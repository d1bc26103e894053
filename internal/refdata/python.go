package refdata

import (
	"os"
	"path/filepath"
	"testing"
)

// PythonTool returns the zarr-python chroot runner beside the checkout
// (../shared/tools/zarr-python, which runs the reference chroot's
// python3), or skips t with the reason it cannot run: GOZARR_NO_PYTHON
// set, not root, no runner, or no chroot at $REFENV (default
// /tmp/refenv).
func PythonTool(t testing.TB) string {
	t.Helper()
	tool := filepath.Join(Dir(), "..", "..", "..", "shared", "tools", "zarr-python")
	refenv := os.Getenv("REFENV")
	if refenv == "" {
		refenv = "/tmp/refenv"
	}
	switch {
	case os.Getenv("GOZARR_NO_PYTHON") != "":
		t.Skip("GOZARR_NO_PYTHON is set")
	case os.Geteuid() != 0:
		t.Skip("the zarr-python chroot needs root")
	}
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("no zarr-python runner: %v", err)
	}
	if _, err := os.Stat(filepath.Join(refenv, "usr", "bin", "python3")); err != nil {
		t.Skipf("no zarr-python chroot at %s (build it with ../shared/tools/zarr-python-env.sh): %v", refenv, err)
	}
	return tool
}
