//go:build !linux

package blosc

import "testing"

// cpuMeter reports nothing where thread CPU time is not available.
func cpuMeter(b *testing.B, nbytes int) func() { return func() {} }
