//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// TestProgressInTerminal runs the zarrcat binary in a real terminal (a
// tmux pane: send-keys, capture-pane) on a 32 MiB copy and a stats run:
// the progress line is drawn on the terminal's stderr and its final state
// reads 100% and done; with -q, or with stderr not a terminal, nothing is
// drawn.
func TestProgressInTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux): the terminal run is skipped")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "zarrcat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A 2048×4096 float32 array of 256×256 chunks, every chunk stored.
	src := filepath.Join(dir, "src.zarr")
	ctx := context.Background()
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := fsstore.New(src)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{2048, 4096}, dtype.TypeFloat32, []int{256, 256})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "", meta)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, 2048*4096)
	for i := range vals {
		vals[i] = float32(i%1000) + 0.5
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}

	session := fmt.Sprintf("zarrcat-test-%d", os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", session}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "20", "sh")
	defer exec.Command("tmux", "-L", session, "kill-server").Run()

	// run types a command line into the pane and returns the pane once the
	// command has printed its end marker.
	run := func(cmdline, marker string) string {
		tmux("send-keys", "-t", session, cmdline+"; echo "+marker+" $?", "Enter")
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			pane := tmux("capture-pane", "-p", "-t", session)
			if strings.Contains(pane, marker+" ") && !strings.Contains(pane, "echo "+marker+" $?\n"+marker) {
				for _, l := range strings.Split(pane, "\n") {
					if strings.HasPrefix(l, marker+" ") {
						return pane
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%q did not finish:\n%s", cmdline, tmux("capture-pane", "-p", "-t", session))
		return ""
	}
	dst := filepath.Join(dir, "dst.zarr")
	pane := run(fmt.Sprintf("%s cp --shards 1024,1024 --chunks 256,256 --codec zstd:1 %s %s", bin, src, dst), "CP-END")
	t.Logf("pane after cp:\n%s", pane)
	if !strings.Contains(pane, "CP-END 0") {
		t.Fatalf("cp failed in the terminal:\n%s", pane)
	}
	var final string
	for _, l := range strings.Split(pane, "\n") {
		if strings.HasPrefix(l, "cp [") {
			final = l
		}
	}
	if !strings.Contains(final, "[====") || !strings.Contains(final, "100% 32.0 MiB/32.0 MiB") || !strings.Contains(final, "done in") {
		t.Errorf("final progress state %q; want a full bar, 100%% 32.0 MiB/32.0 MiB and done", final)
	}

	pane = run(fmt.Sprintf("clear; %s stats -q %s; %s stats %s 2>/dev/null | head -1", bin, dst, bin, dst), "STATS-END")
	t.Logf("pane after stats:\n%s", pane)
	if strings.Contains(pane, "stats [") {
		t.Errorf("a progress line with -q or with stderr not a terminal:\n%s", pane)
	}
	if !strings.Contains(pane, "count:     8388608") {
		t.Errorf("stats -q printed no report:\n%s", pane)
	}
}
