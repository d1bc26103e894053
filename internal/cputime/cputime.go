// Package cputime measures the CPU time of the calling OS thread, so that
// benchmarks on a shared machine can report throughput per second of CPU
// actually received rather than of wall time.
package cputime

import "time"

// Thread returns the CPU time (user + system) the calling OS thread has
// used, or 0 where the platform cannot tell. Callers lock the goroutine to
// its thread (runtime.LockOSThread) around what they measure.
func Thread() time.Duration { return thread() }

// Process returns the CPU time (user + system) the whole process has used,
// or 0 where the platform cannot tell.
func Process() time.Duration { return process() }
