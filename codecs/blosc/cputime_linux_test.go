package blosc

import (
	"runtime"
	"syscall"
	"testing"
)

// cpuMeter reports, besides ns/op (wall time, inflated when the machine is
// shared), the throughput per second of this thread's CPU time as
// "cpuMB/s". Call it before the b.Loop loop and call the returned function
// after it.
func cpuMeter(b *testing.B, nbytes int) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		el := threadCPU() - start
		runtime.UnlockOSThread()
		if el > 0 {
			b.ReportMetric(float64(nbytes)*float64(b.N)/el/1e6, "cpuMB/s")
		}
	}
}

// threadCPU returns the CPU time of the calling OS thread in seconds.
func threadCPU() float64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
