package cputime

import (
	"runtime"
	"testing"
)

// Meter locks the calling goroutine to its thread and returns a function
// that, called after the benchmark loop, reports the throughput per
// second of that thread's CPU time as "cpuMB/s" (nbytes per iteration;
// none when 0) and returns the CPU seconds per iteration (0 where thread
// CPU time is not available, and then reports nothing).
func Meter(b *testing.B, nbytes int) func() float64 {
	runtime.LockOSThread()
	start := Thread()
	return func() float64 {
		el := (Thread() - start).Seconds()
		runtime.UnlockOSThread()
		if el <= 0 || b.N == 0 {
			return 0
		}
		if nbytes > 0 {
			b.ReportMetric(float64(nbytes)*float64(b.N)/el/1e6, "cpuMB/s")
		}
		return el / float64(b.N)
	}
}
