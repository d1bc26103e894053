package store

import (
	"testing"
	"time"
)

// TestHistogram: percentiles of 1..1000 ms within 10%, the count and
// maximum exact, an empty histogram all zero.
func TestHistogram(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	l := h.Summary()
	for _, c := range []struct {
		got, want time.Duration
	}{{l.P50, 500 * time.Millisecond}, {l.P90, 900 * time.Millisecond}, {l.P99, 990 * time.Millisecond}} {
		if r := float64(c.got) / float64(c.want); r < 0.9 || r > 1.1 {
			t.Errorf("percentile %v, want %v ± 10%%", c.got, c.want)
		}
	}
	if l.N != 1000 || l.Max != time.Second {
		t.Errorf("%+v", l)
	}
	var empty Histogram
	if empty.Summary() != (Latency{}) {
		t.Error("empty histogram has percentiles")
	}
}
