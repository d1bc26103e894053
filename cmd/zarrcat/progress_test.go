package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the progress goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressLine: the line shows bar, percentage, bytes, rate and ETA,
// redrawn in place with \r, never wider than the terminal; the final state
// says done (or failed) with the time taken. Not a terminal: nothing.
func TestProgressLine(t *testing.T) {
	var buf lockedBuffer
	clock := time.Unix(0, 0)
	p := startProgress(&buf, "cp", 60, func() time.Time { return clock })
	p.setTotal(100 << 20)
	p.add(25 << 20)
	clock = clock.Add(time.Second)
	p.draw(false)
	line := buf.String()[strings.LastIndexByte(buf.String(), '\r')+1:]
	for _, want := range []string{"cp [==        ]", " 25% 25.0 MiB/100.0 MiB 25.0 MiB/s ETA 3s"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if n := len([]rune(line)); n > 59 {
		t.Errorf("progress line is %d columns on a terminal of 60", n)
	}
	// 55% done at 55 MiB/s: under a second left is "<1s", not "0s"
	// (trial 2i: "ETA 0s" from 55 %).
	p.add(30 << 20)
	p.draw(false)
	if line := buf.String()[strings.LastIndexByte(buf.String(), '\r')+1:]; !strings.Contains(line, " 55% ") || !strings.HasSuffix(strings.TrimRight(line, " "), "ETA <1s") {
		t.Errorf("progress line at 55%% of a fast copy: %q", line)
	}
	p.add(45 << 20)
	clock = clock.Add(time.Second)
	p.finish(nil)
	out := buf.String()
	final := out[strings.LastIndexByte(out, '\r')+1:]
	// The bar keeps its width whatever the figures after it (trial 2i:
	// 51 then 42 columns).
	if strings.Index(final, "]") != strings.Index(line, "]") {
		t.Errorf("the bar's end moved from column %d to %d:\n%q\n%q", strings.Index(line, "]"), strings.Index(final, "]"), line, final)
	}
	if !strings.Contains(final, "100% 100.0 MiB/100.0 MiB 50.0 MiB/s done in 2s") || !strings.HasSuffix(final, "\n") {
		t.Errorf("final state %q", final)
	}

	if p := newProgress(&buf, map[string]string{}, "x"); p != nil {
		t.Error("a progress line on a writer that is not a terminal")
	}
	var nilp *progress
	nilp.add(1)
	nilp.setTotal(1)
	nilp.finish(nil)
}
