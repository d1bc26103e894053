package icechunk_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// TestKilledCommitter SIGKILLs a process committing in a loop at several
// moments: each time the repository opens, main names a snapshot that
// reads whole, and a new commit goes through.
func TestKilledCommitter(t *testing.T) {
	if os.Getenv("ICECHUNK_TEST_KILLED") != "" {
		killedWorker(t, os.Getenv("ICECHUNK_TEST_KILLED"))
		return
	}
	for _, spec := range []string{"spec1", "spec2"} {
		t.Run(spec, func(t *testing.T) { killedCommitter(t, spec) })
	}
}

func killedCommitter(t *testing.T, spec string) {
	ctx := context.Background()
	dir := copyDir(t, filepath.Join(fixtures, spec))
	r := openRepo(t, dir)
	s, err := r.Session(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{64, 64}, dtype.TypeUint16, []int{4, 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.CreateArray(ctx, s, "crash", meta); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, "crash", nil); err != nil {
		t.Fatal(err)
	}
	kills := 6
	if testing.Short() {
		kills = 2
	}
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCommitter$")
		cmd.Env = append(os.Environ(), "ICECHUNK_TEST_KILLED="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		out.Read(buf) // the worker has started committing
		time.Sleep(time.Duration(20+37*k) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		r := openRepo(t, dir)
		snap, err := r.CheckoutRef(ctx, "main")
		if err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		a, err := zarr.OpenArray(ctx, snap, "crash")
		if err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		if _, _, err := a.ReadBytes(ctx); err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		s, err := r.Session(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		a, err = zarr.OpenArray(ctx, s, "crash")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteBytes(ctx, []byte{1, 2}, nd.Range(0, 1), nd.Range(0, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, "after a kill", nil); err != nil {
			t.Fatalf("commit after kill %d: %v", k, err)
		}
	}
}

func killedWorker(t *testing.T, dir string) {
	ctx := context.Background()
	r := openRepo(t, dir)
	os.Stdout.WriteString(strings.Repeat("x", 64))
	for i := 0; ; i++ {
		s, err := r.Session(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, s, "crash")
		if err != nil {
			t.Fatal(err)
		}
		v := make([]byte, 2*16*64)
		for j := range v {
			v[j] = byte(i + j)
		}
		row := (i % 4) * 16
		if err := a.WriteBytes(ctx, v, nd.Range(row, row+16), nd.Range(0, 64)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, "loop", nil); err != nil {
			t.Fatal(err)
		}
	}
}
