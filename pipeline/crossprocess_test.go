//go:build unix

package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// Environment of a writer process of TestCrossProcessShardWriters (and
// its S3 form, where envWriterS3 names the prefix on the test server).
const (
	envWriterDir  = "GOZARR_TEST_WRITER_DIR"
	envWriterS3   = "GOZARR_TEST_WRITER_S3_PREFIX"
	envWriterSlab = "GOZARR_TEST_WRITER_SLAB"
)

// The zarr-python #3682 pattern: a 100³ float64 array in 50³ shards of
// 25³ inner chunks, written as 8 disjoint slabs (of 12 or 13 planes) that
// share shards, by xpWriters processes (two slabs each).
const (
	xpN       = 100
	xpSlabs   = 8
	xpWriters = 4
)

// TestCrossProcessShardWriters: 4 OS processes writing disjoint slabs of
// one filesystem array whose shards they share (the zarr-python #3682
// pattern, 20 times) lose nothing: the filesystem store locks each shard key across
// processes (store.KeyLocker, flock) around the read-modify-write. The
// test binary runs itself as the writers.
func TestCrossProcessShardWriters(t *testing.T) {
	if dir := os.Getenv(envWriterDir); dir != "" {
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		writeSlab(t, st)
		return
	}
	if testing.Short() {
		t.Skip("starts 4 processes per round")
	}
	rounds := 20
	if raceEnabled {
		rounds = 3
	}
	for round := range rounds {
		dir := t.TempDir()
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		runWriters(t, round, st, "TestCrossProcessShardWriters", envWriterDir+"="+dir)
	}
}

// TestCrossProcessShardWritersS3 is TestCrossProcessShardWriters against
// the real S3 server (versitygw in CI; skipped without one): there is no
// lock across processes, and the writers' read-modify-writes of shared
// shards are conditional (If-Match on the ETag read), the losers of each
// race re-reading and retrying.
func TestCrossProcessShardWritersS3(t *testing.T) {
	srv := s3test.FromEnv(t)
	if prefix := os.Getenv(envWriterS3); prefix != "" {
		writeSlab(t, srv.Store(t, prefix))
		return
	}
	if testing.Short() {
		t.Skip("starts 4 processes per round")
	}
	rounds := 20
	if raceEnabled {
		rounds = 2
	}
	for round := range rounds {
		prefix := fmt.Sprintf("xproc-%d-%d/", time.Now().UnixNano(), round)
		runWriters(t, round, srv.Store(t, prefix), "TestCrossProcessShardWritersS3", envWriterS3+"="+prefix)
	}
}

// runWriters creates the array in st, runs xpWriters processes of the
// test binary (test name, with env) that each write one slab, and checks
// that no value was lost.
func runWriters(t *testing.T, round int, st store.Store, name, env string) {
	ctx := context.Background()
	meta, err := zarr.NewArrayMetadata([]int{xpN, xpN, xpN}, dtype.TypeFloat64, []int{25, 25, 25}, zarr.Shards(50, 50, 50))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*exec.Cmd, xpWriters)
	for w := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
		cmd.Env = append(os.Environ(), env, envWriterSlab+"="+strconv.Itoa(w))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[w] = cmd
	}
	for _, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	got, _, err := zarr.Read[float64](ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if lost := lostValues(got); lost > 0 {
		t.Fatalf("round %d: %d of %d values lost", round, lost, len(got))
	}
}

// writeSlab is one writer process: it writes its slabs of the array in
// st, one Write each, as the #3682 writers do.
func writeSlab(t *testing.T, st store.Store) {
	ctx := context.Background()
	w, err := strconv.Atoi(os.Getenv(envWriterSlab))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	for slab := w; slab < xpSlabs; slab += xpWriters {
		lo, hi := slab*xpN/xpSlabs, (slab+1)*xpN/xpSlabs
		vals := make([]float64, (hi-lo)*xpN*xpN)
		for i := range vals {
			vals[i] = float64(lo*xpN*xpN + i + 1)
		}
		if err := zarr.Write(ctx, a, vals, nd.Range(lo, hi), nd.All(), nd.All()); err != nil {
			t.Fatal(fmt.Errorf("writer %d, slab %d: %w", w, slab, err))
		}
	}
}

// envKillDir makes the test binary a writer that rewrites the array in
// the directory until it is killed.
const envKillDir = "GOZARR_TEST_KILL_DIR"

// TestKilledWriterLeavesNoTornShard: 50 times, a writer process rewriting
// a sharded filesystem array over and over (generation g writes every
// element as g) is SIGKILLed at a random moment; afterwards the array
// reads without error and every shard holds a single generation: each
// key is its old value or its new one, never torn, and no temporary file
// is listed as a key.
func TestKilledWriterLeavesNoTornShard(t *testing.T) {
	if dir := os.Getenv(envKillDir); dir != "" {
		rewriteForever(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("starts and kills 50 processes")
	}
	ctx := context.Background()
	meta, err := zarr.NewArrayMetadata([]int{64, 64}, dtype.TypeFloat64, []int{8, 8}, zarr.Shards(32, 32))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := 50
	if raceEnabled {
		rounds = 10
	}
	for round := range rounds {
		dir := t.TempDir()
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, st, "a", meta)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLeavesNoTornShard$")
		cmd.Env = append(os.Environ(), envKillDir+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random moment after the writer's first write, while
		// it writes more.
		started := make(chan error, 1)
		go func() {
			line, err := bufio.NewReader(out).ReadString('\n')
			if err == nil && line != "wrote\n" {
				err = fmt.Errorf("writer said %q", line)
			}
			started <- err
			io.Copy(io.Discard, out)
		}()
		select {
		case err := <-started:
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("round %d: the writer wrote nothing in a minute", round)
		}
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		got, _, err := zarr.Read[float64](ctx, a)
		if err != nil {
			t.Fatalf("round %d: reading after the kill: %v", round, err)
		}
		for sr := 0; sr < 64; sr += 32 {
			for sc := 0; sc < 64; sc += 32 {
				g := got[sr*64+sc]
				for r := sr; r < sr+32; r++ {
					for c := sc; c < sc+32; c++ {
						if got[r*64+c] != g {
							t.Fatalf("round %d: shard at [%d %d] torn: %v and %v", round, sr, sc, g, got[r*64+c])
						}
					}
				}
			}
		}
		for k, err := range st.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(k, ".gozarr-") {
				t.Fatalf("round %d: temporary file listed as key %q", round, k)
			}
		}
	}
}

// rewriteForever is the writer process of TestKilledWriterLeavesNoTornShard.
func rewriteForever(t *testing.T, dir string) {
	ctx := context.Background()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, 64*64)
	for g := 1; ; g++ {
		for i := range vals {
			vals[i] = float64(g)
		}
		if err := zarr.Write(ctx, a, vals); err != nil {
			t.Fatal(err)
		}
		if g == 1 {
			fmt.Println("wrote") // the parent kills after this
		}
	}
}
