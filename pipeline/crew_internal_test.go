package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// TestCrewPassesCoverEveryIndexOnce runs passes of both kinds on crews of
// several sizes, back to back as a grouping does, and checks that every
// index of every pass is run exactly once, that split passes give every
// worker the same slice each time, and that the workers' numbers stay
// within the crew.
func TestCrewPassesCoverEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		c := newCrew(workers)
		for pass := range 40 {
			n := []int{0, 1, crewBlock - 1, crewBlock*5 + 7, 100_000}[pass%5]
			hits := make([]atomic.Int32, n)
			if pass%2 == 0 {
				c.claim(n, func(w, lo, hi int) {
					if w < 0 || w >= workers {
						t.Errorf("claim: worker %d of a crew of %d", w, workers)
					}
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
				})
			} else {
				width := c.workers()
				c.split(n, func(w, lo, hi int) {
					if w < 0 || w >= width || lo != n*w/width || hi != n*(w+1)/width {
						t.Errorf("split: worker %d of %d got [%d, %d) of %d", w, width, lo, hi, n)
					}
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
				})
				if c.workers() != width {
					t.Errorf("split width changed from %d to %d", width, c.workers())
				}
			}
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("crew of %d, pass %d of %d indices: index %d run %d times", workers, pass, n, i, h)
				}
			}
		}
		c.close()
	}
}

// TestCrewCloseEndsItsHelpers checks that closing crews leaves no
// goroutine behind, whether their helpers are spinning, parked or not
// yet begun.
func TestCrewCloseEndsItsHelpers(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := range 50 {
		c := newCrew(4)
		switch i % 3 {
		case 0: // closed at once: helpers may not have begun
		case 1:
			c.claim(10, func(w, lo, hi int) {})
		case 2:
			c.claim(10, func(w, lo, hi int) {})
			time.Sleep(2 * crewSpin) // helpers parked
		}
		c.close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after closing the crews, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGathersEndTheirCrews: reads of enough points to group on a crew
// (groupParallelMin) end it, whether they succeed, fail in the grouping
// (a point out of bounds) or fail in the read (a cancelled context), and
// their values are the points' own.
func TestGathersEndTheirCrews(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	g, st, data := randomCube32(t, []int{16, 16, 16}, dtype.TypeUint8, r, 256)
	n := groupParallelMin * 2
	lists := [][]int{make([]int, n), make([]int, n), make([]int, n)}
	for k := range n {
		for d := range lists {
			lists[d][k] = r.IntN(32)
		}
	}
	opt := Options{DecodeConcurrency: 3}
	before := runtime.NumGoroutine()
	for range 20 {
		out := make([]byte, n)
		if err := ReadPointLists(ctx, st, g, lists, out, opt); err != nil {
			t.Fatal(err)
		}
		for k := range n {
			if want := data[(lists[0][k]*32+lists[1][k])*32+lists[2][k]]; out[k] != want {
				t.Fatalf("point %d: %d, want %d", k, out[k], want)
			}
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := ReadPointLists(cancelled, st, g, lists, out, opt); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled read: %v", err)
		}
		bad := [][]int{lists[0], lists[1], append([]int(nil), lists[2]...)}
		bad[2][n-1] = 32
		if err := ReadPointLists(ctx, st, g, bad, out, opt); !errors.Is(err, nd.ErrOutOfBounds) {
			t.Fatalf("a point out of bounds: %v", err)
		}
		pts := nd.Points{Rank: 3}
		for k := range n {
			pts.Coords = append(pts.Coords, lists[0][k], lists[1][k], lists[2][k])
		}
		if err := ReadPoints(ctx, st, g, pts, out, opt); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the reads, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
