package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// progressInterval is how often the progress line is redrawn.
const progressInterval = 200 * time.Millisecond

// progress draws one line on a terminal for long work: a bar, bytes done
// of the total, the rate and the time left, redrawn in place, and a final
// state when the work ends. It draws nothing when stderr is not a
// terminal or with -q; a nil *progress is a valid silent one.
type progress struct {
	w     io.Writer
	label string
	width int
	total atomic.Int64
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	now   func() time.Time
	// failed: the final state says the work failed.
	failed bool
}

// newProgress returns a progress line on stderr when it is a terminal and
// -q is not among the flags, else nil.
func newProgress(stderr io.Writer, flags map[string]string, label string) *progress {
	if _, quiet := flags["q"]; quiet {
		return nil
	}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width < 40 {
		width = 80
	}
	return startProgress(f, label, width, time.Now)
}

// startProgress starts drawing on w, a terminal width columns wide.
func startProgress(w io.Writer, label string, width int, now func() time.Time) *progress {
	p := &progress{w: w, label: label, width: width, start: now(), stop: make(chan struct{}), now: now}
	p.wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw(false)
			case <-p.stop:
				return
			}
		}
	})
	return p
}

// setTotal sets the amount of work, in bytes.
func (p *progress) setTotal(n int64) {
	if p != nil {
		p.total.Store(n)
	}
}

// add counts n more bytes done.
func (p *progress) add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// finish stops the redraws and draws the final state: "done" with the
// time taken and mean rate, or "failed".
func (p *progress) finish(err error) {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.failed = err != nil
	p.draw(true)
	fmt.Fprintln(p.w)
}

// progressTail is the room kept for the figures after the bar: " 100%
// 1023.9 MiB/1023.9 MiB 1023.9 MiB/s ETA 59m59s" and the like.
const progressTail = 52

// draw writes the line: "\r" then label, bar, bytes, rate, ETA, padded to
// the terminal's width.
func (p *progress) draw(final bool) {
	done, total := p.done.Load(), p.total.Load()
	elapsed := p.now().Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	frac := 0.0
	if total > 0 {
		frac = min(1, float64(done)/float64(total))
	}
	tail := fmt.Sprintf(" %3.0f%% %s/%s %s/s", 100*frac, humanBytes(done), humanBytes(total), humanBytes(int64(rate)))
	switch {
	case final && p.failed:
		tail += " failed after " + elapsed.Round(time.Millisecond).String()
	case final:
		tail += " done in " + elapsed.Round(time.Millisecond).String()
	case rate > 0 && total > done:
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		if eta < time.Second {
			tail += " ETA <1s" // not "0s" with half the work left
		} else {
			tail += " ETA " + eta.Round(time.Second).String()
		}
	}
	// The bar keeps one width from draw to draw: it leaves room for the
	// longest tail, not for this one (whose length changes with the
	// figures), so it does not jump.
	barWidth := max(10, p.width-len(p.label)-max(progressTail, len([]rune(tail)))-4)
	fill := int(frac * float64(barWidth))
	line := p.label + " [" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "]" + tail
	if pad := p.width - 1 - len([]rune(line)); pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	fmt.Fprint(p.w, "\r"+line)
}
