package pipeline

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
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
