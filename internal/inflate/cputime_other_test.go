//go:build !linux

package inflate

import "time"

// threadCPU is 0 where there is no per-thread CPU clock: loopCPU then
// reports no MB/cpu-s.
func threadCPU() time.Duration { return 0 }
