//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store/storetest"
)

// TestFIFOTarget checks that an array whose zarr.json is a FIFO is an error
// at once, not a zarrcat blocked forever (issue 11 finding 5).
func TestFIFOTarget(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "zarr.json"), 0o666); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, cmd := range []string{"info", "get"} {
		var out bytes.Buffer
		err := storetest.NoHang(t, cmd, func() error { return run(context.Background(), []string{cmd, dir}, &out, &out) })
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("zarrcat %s on a FIFO zarr.json: %v; want a not-a-regular-file error", cmd, err)
		}
	}
}

// TestTimeoutFlag checks that a server that accepts requests and never
// answers makes zarrcat fail after --timeout, not hang (issue 11 finding
// 7), and that the flag is checked.
func TestTimeoutFlag(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	for _, args := range [][]string{
		{"info", "--timeout", "100ms", ts.URL + "/a.zarr"},
		{"--timeout=100ms", "get", ts.URL + "/a.zarr", "0"},
	} {
		var out bytes.Buffer
		err := storetest.NoHang(t, strings.Join(args, " "), func() error { return run(context.Background(), args, &out, &out) })
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("zarrcat %q against a server that never answers: %v; want a timeout error", args, err)
		}
	}
	for _, bad := range []string{"soon", "-1s"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"info", "--timeout", bad, ts.URL}, &out, &out); !errors.Is(err, errUsage) {
			t.Errorf("--timeout %s: %v; want a usage error", bad, err)
		}
	}
}

// TestClean checks zarrcat clean: stale temporary files removed, fresh
// ones kept unless --older-than 0, values untouched (issue 11 finding 11).
func TestClean(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-3 * time.Hour)
	for name, mtime := range map[string]time.Time{
		"c/0/.gozarr-tmp-a": old, "c/0/.gozarr-tmp-b": old, ".gozarr-tmp-c": time.Now(), "c/0/0": old,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"clean", dir}, &out, &out); err != nil || !strings.HasPrefix(out.String(), "removed 2 temporary files older than 1h0m0s") {
		t.Errorf("zarrcat clean: %v, %q; want 2 removed", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"clean", "--older-than", "0", "file://" + dir}, &out, &out); err != nil || !strings.HasPrefix(out.String(), "removed 1 temporary file older") {
		t.Errorf("zarrcat clean --older-than 0: %v, %q; want 1 removed", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "0", "0")); err != nil {
		t.Errorf("value c/0/0 after clean: %v", err)
	}
	for _, args := range [][]string{{"clean"}, {"clean", "--older-than", "x", dir}, {"clean", "s3://bucket/x"}} {
		if err := run(ctx, args, &out, &out); err == nil {
			t.Errorf("zarrcat %q succeeded", args)
		}
	}
}
