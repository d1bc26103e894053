package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// TestCheckpointSurvivesKill (trial F2): the example killed with SIGKILL
// in the middle of its loop leaves a whole checkpoint every time (it used
// to be truncated in most runs), and -resume continues from it.
func TestCheckpointSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the example several times")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "loaderex")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "ck.json")
	args := []string{"-dir", "../../testdata/refdata", "-array", "v3_dtype_float32.zarr", "-state", state, "-epochs", "1000000", "-batch", "4"}
	for i := range 5 {
		os.Remove(state)
		cmd := exec.Command(bin, args...)
		cmd.Env = localEnv()
		var output bytes.Buffer
		cmd.Stdout, cmd.Stderr = &output, &output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// Kill once the loop runs (the checkpoint exists), at a varying
		// moment. The deadline is generous: CI runs every package's tests
		// at once on two cores.
		deadline := time.Now().Add(90 * time.Second)
	wait:
		for {
			if _, err := os.Stat(state); err == nil || time.Now().After(deadline) {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("run %d: the example exited before its first checkpoint (%v):\n%s", i, err, output.String())
			case <-time.After(5 * time.Millisecond):
				continue wait
			}
		}
		time.Sleep(time.Duration(10+i*37) * time.Millisecond)
		cmd.Process.Kill()
		<-exited
		b, err := os.ReadFile(state)
		if err != nil {
			t.Fatalf("run %d: %v; the example printed:\n%s", i, err, output.String())
		}
		var st struct{ Epoch, Batch int }
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("run %d: checkpoint after SIGKILL is not whole (%d bytes): %v", i, len(b), err)
		}
	}
	resume := exec.Command(bin, append(args[:len(args)-4], "-epochs", "1", "-batch", "4", "-resume")...)
	resume.Env = localEnv()
	out, err := resume.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resuming at epoch") {
		t.Fatalf("-resume: %v\n%s", err, out)
	}
	// The per-epoch ratios say they count the read-ahead, and the run's
	// own comes last (trial, tier 4: epoch 0's 1.882 looked like a bug).
	full := exec.Command(bin, "-dir", "../../testdata/refdata", "-array", "v3_dtype_float32.zarr", "-epochs", "2", "-batch", "4")
	full.Env = localEnv()
	if out, err := full.CombinedOutput(); err != nil || !strings.Contains(string(out), "so far (read-ahead included) decoded ÷ delivered") || !strings.Contains(string(out), "whole run: decoded ÷ delivered") {
		t.Errorf("a 2-epoch run: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "-resume").CombinedOutput(); err == nil || !strings.Contains(string(out), "-state") {
		t.Errorf("-resume without -state: %v\n%s", err, out)
	}
}

// localEnv is the environment without the GOZARR_S3_* variables (CI sets
// them for the S3 tests), so the example reads the local -dir.
func localEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOZARR_S3_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestDemoNeverTouchesUserFiles (trial, tier 4): in a -dir of the user's,
// the demo array gets a name of its own and is refused where anything is
// already; removing it deletes only its keys, not those of a sibling that
// shares its name's prefix.
func TestDemoNeverTouchesUserFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if name, err := demoName(ctx, st, true); err != nil || name != "demo" {
		t.Errorf("in its own directory: %q, %v", name, err)
	}
	name, err := demoName(ctx, st, false)
	if err != nil || name == "demo" {
		t.Fatalf("in a user's directory: %q, %v", name, err)
	}
	if err := st.Set(ctx, name+"/notes.txt", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := demoName(ctx, st, false); err == nil {
		t.Errorf("demoName picked %s, which holds a file", name)
	}
	if err := st.Set(ctx, name+"x/keep", []byte("mine too")); err != nil {
		t.Fatal(err)
	}
	removeAll(ctx, st, name)
	if _, err := st.Get(ctx, name+"x/keep", store.Full()); err != nil {
		t.Errorf("removeAll(%s) deleted %sx/keep: %v", name, name, err)
	}
	// The checksum of a non-float32 batch is a number.
	if c := step([]byte{0xff, 0xff, 0xff, 0x7f}, dtype.TypeInt32); math.IsNaN(c) || c != 3*255+127 {
		t.Errorf("step of int32 bytes: %v", c)
	}
}
