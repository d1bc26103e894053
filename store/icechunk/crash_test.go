package icechunk_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/internal/arraytest"
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
	forSpecs(t, killedCommitter)
}

func killedCommitter(t *testing.T, spec string) {
	ctx := context.Background()
	dir, r := fixtureCopy(t, spec)
	s := session(t, r, "main")
	arraytest.Create(t, s, "crash", []int{64, 64}, dtype.TypeUint16, []int{4, 4})
	commit(t, s, "crash")
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
		s := session(t, r, "main")
		arraytest.Write(t, arraytest.Open(t, s, "crash"), []byte{1, 2}, nd.Range(0, 1), nd.Range(0, 1))
		if _, err := s.Commit(ctx, "after a kill", nil); err != nil {
			t.Fatalf("commit after kill %d: %v", k, err)
		}
	}
}

func killedWorker(t *testing.T, dir string) {
	r := openRepo(t, dir)
	os.Stdout.WriteString(strings.Repeat("x", 64))
	for i := 0; ; i++ {
		s := session(t, r, "main")
		v := arraytest.Ramp(2*16*64, 1)
		for j := range v {
			v[j] += byte(i)
		}
		row := (i % 4) * 16
		arraytest.Write(t, arraytest.Open(t, s, "crash"), v, nd.Range(row, row+16), nd.Range(0, 64))
		commit(t, s, "loop")
	}
}
