// Package xproctest runs the safe-writes check of the remote store modules
// (store/gcs, store/azure) across processes: writer processes (the test
// binary run again) each write disjoint slabs of one sharded array whose
// shards they share, so every shard is read, modified and written by
// several processes at once; afterwards no value may be lost. It is the
// pattern of pipeline's TestCrossProcessShardWriters (zarr-python #3682),
// on a smaller array, for stores whose only guard across processes is
// their conditional writes (store.ConditionalWriter).
package xproctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// Environment of a writer process.
const (
	envPrefix = "GOZARR_XPROC_PREFIX"
	envWriter = "GOZARR_XPROC_WRITER"
)

// A 40³ float64 array in 20³ shards of 10³ inner chunks, written as 4
// slabs of 10 planes by 2 processes (slabs w and w+2): every shard holds
// slabs of both writers.
const (
	n       = 40
	slabs   = 4
	writers = 2
)

// Run is the whole test: in a writer process (its environment says so)
// it writes that writer's slabs into open(prefix) and returns true, and
// the caller returns. Otherwise it runs rounds rounds, each on a fresh
// prefix base-round: it creates the array, starts the writers (the test
// binary running test name again) and checks every value.
func Run(t *testing.T, name, base string, rounds int, open func(t *testing.T, prefix string) store.Store) bool {
	t.Helper()
	if prefix := os.Getenv(envPrefix); prefix != "" {
		writeSlabs(t, open(t, prefix))
		return true
	}
	ctx := context.Background()
	for round := range rounds {
		prefix := fmt.Sprintf("%s-%d", base, round)
		st := open(t, prefix)
		if !store.IsLocal(st) && store.CapabilitiesOf(st).Conditional == nil {
			t.Fatalf("%T has no conditional writes: writers in other processes would lose updates", st)
		}
		meta, err := zarr.NewArrayMetadata([]int{n, n, n}, dtype.TypeFloat64, []int{10, 10, 10}, zarr.Shards(20, 20, 20))
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, st, "a", meta)
		if err != nil {
			t.Fatal(err)
		}
		procs := make([]*exec.Cmd, writers)
		for w := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), envPrefix+"="+prefix, envWriter+"="+strconv.Itoa(w))
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs[w] = cmd
		}
		for _, cmd := range procs {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d: writer: %v", round, err)
			}
		}
		got, _, err := zarr.Read[float64](ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for i, v := range got {
			if v != float64(i+1) {
				lost++
			}
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d values lost", round, lost, len(got))
		}
	}
	return false
}

// writeSlabs is one writer process: its slabs, one Write each.
func writeSlabs(t *testing.T, st store.Store) {
	ctx := context.Background()
	w, err := strconv.Atoi(os.Getenv(envWriter))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	for slab := w; slab < slabs; slab += writers {
		lo, hi := slab*n/slabs, (slab+1)*n/slabs
		vals := make([]float64, (hi-lo)*n*n)
		for i := range vals {
			vals[i] = float64(lo*n*n + i + 1)
		}
		if err := zarr.Write(ctx, a, vals, nd.Range(lo, hi), nd.All(), nd.All()); err != nil {
			t.Fatal(fmt.Errorf("writer %d, slab %d: %w", w, slab, err))
		}
	}
}
