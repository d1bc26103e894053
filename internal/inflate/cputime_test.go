package inflate

import (
	"runtime"
	"testing"
)

// loopCPU runs op under b.Loop on a locked thread and reports MB per
// second of thread CPU time (the machine is shared: wall time counts the
// waits for a core).
func loopCPU(b *testing.B, n int, op func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(n))
	start := threadCPU()
	iters := 0
	for b.Loop() {
		op()
		iters++
	}
	if el := threadCPU() - start; el > 0 {
		b.ReportMetric(float64(n)*float64(iters)/el.Seconds()/1e6, "MB/cpu-s")
	}
}
