package blosc

import (
	"testing"

	"github.com/gozarr/gozarr/internal/cputime"
)

// cpuMeter reports, besides ns/op (wall time, inflated when the machine is
// shared), the throughput per second of this thread's CPU time as
// "cpuMB/s". Call it before the b.Loop loop and call the returned function
// after it.
func cpuMeter(b *testing.B, nbytes int) func() {
	done := cputime.Meter(b, nbytes)
	return func() { done() }
}
