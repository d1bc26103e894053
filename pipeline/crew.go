package pipeline

import (
	"runtime"
	"sync/atomic"
	"time"
)

// crew runs the passes of one grouping of points on the calling goroutine
// (worker 0) and helpers started once for all of them. A pass lasts a
// fraction of a millisecond, about as long as waking a parked goroutine
// takes on a small machine (0.05–0.13 ms measured here), so goroutines
// started for each pass (as the passes once were) mostly ran one after
// the other: a helper stays awake between passes, spinning up to
// crewSpin before it parks, and the first pass, which needs no fixed
// split, is taken in blocks by whoever is running, so the calling
// goroutine never waits for a helper to wake. A nil *crew runs every pass
// on the calling goroutine. Only the calling goroutine calls its methods;
// close it when done (its helpers then end on their own).
type crew struct {
	helpers int
	started atomic.Int32 // helpers that have begun, each taking the next number as its worker number
	width   int          // workers of the split passes, fixed at the first (0: none yet)
	gen     uint64       // the last task's number
	task    atomic.Pointer[crewTask]
	busy    atomic.Int32 // helpers looking at or running a task
	done    atomic.Int32 // helpers done with the current split pass
	wake    []chan struct{}
}

// crewTask is one pass: f(w) for worker w, or the end of the crew (nil f).
type crewTask struct {
	gen   uint64
	f     func(w int)
	split bool // a split pass: workers w < width each run f(w) once
	width int
}

// crewSpin is how long a helper waits for the next pass awake.
const crewSpin = 200 * time.Microsecond

// crewBlock is the number of points a worker takes at a time in a pass
// taken in blocks.
const crewBlock = 4096

// newCrew returns a crew of workers goroutines in all, or nil for one.
func newCrew(workers int) *crew {
	if workers <= 1 {
		return nil
	}
	c := &crew{helpers: workers - 1, wake: make([]chan struct{}, workers-1)}
	for i := range c.wake {
		c.wake[i] = make(chan struct{}, 1)
		go c.help(c.wake[i])
	}
	return c
}

// help is a helper's loop: it runs the tasks published until the end.
func (c *crew) help(wake chan struct{}) {
	w := int(c.started.Add(1))
	var seen uint64
	for {
		c.busy.Add(1)
		if t := c.task.Load(); t != nil && t.gen != seen {
			seen = t.gen
			if t.f == nil {
				c.busy.Add(-1)
				return
			}
			if !t.split {
				t.f(w)
			} else if w < t.width {
				t.f(w)
				c.done.Add(1)
			}
		}
		c.busy.Add(-1)
		deadline := time.Now().Add(crewSpin)
		for {
			if t := c.task.Load(); t != nil && t.gen != seen {
				break
			}
			if time.Now().After(deadline) {
				<-wake // a token is sent with every task: none is missed
				deadline = time.Now().Add(crewSpin)
				continue
			}
			runtime.Gosched()
		}
	}
}

// publish hands t to the helpers.
func (c *crew) publish(t *crewTask) {
	c.gen++
	t.gen = c.gen
	c.task.Store(t)
	for _, ch := range c.wake {
		select {
		case ch <- struct{}{}:
		default: // a token waits already
		}
	}
}

// close ends the crew's helpers (without waiting for them).
func (c *crew) close() {
	if c != nil {
		c.publish(&crewTask{})
	}
}

// workers returns the number of workers of the split passes, fixing it
// at the first call: the calling goroutine and the helpers begun by then.
func (c *crew) workers() int {
	if c == nil {
		return 1
	}
	if c.width == 0 {
		c.width = 1 + min(int(c.started.Load()), c.helpers)
	}
	return c.width
}

// split runs f(w, lo, hi) for each of the c.workers() slices [lo, hi) of
// [0, n), worker w on slice w (the same slices in every split pass of n),
// and returns when all have.
func (c *crew) split(n int, f func(w, lo, hi int)) {
	width := c.workers()
	if width == 1 {
		f(0, 0, n)
		return
	}
	c.done.Store(0)
	c.publish(&crewTask{split: true, width: width, f: func(w int) { f(w, n*w/width, n*(w+1)/width) }})
	f(0, 0, n/width)
	for c.done.Load() < int32(width-1) {
		runtime.Gosched()
	}
}

// claim runs f(w, lo, hi) over [0, n) in blocks of crewBlock, each taken
// by whichever worker w (0 to c.helpers) is free, and returns when all
// have run.
func (c *crew) claim(n int, f func(w, lo, hi int)) {
	if c == nil {
		f(0, 0, n)
		return
	}
	var next atomic.Int64
	take := func(w int) {
		for {
			lo := int(next.Add(crewBlock)) - crewBlock
			if lo >= n {
				return
			}
			f(w, lo, min(n, lo+crewBlock))
		}
	}
	c.publish(&crewTask{f: take})
	take(0)
	for c.busy.Load() != 0 {
		runtime.Gosched()
	}
}
