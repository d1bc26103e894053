package cputime

import (
	"runtime"
	"testing"
	"time"
)

func TestThreadAdvances(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is measured on linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Thread()
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	if el := Thread() - start; el <= 0 || x == 0 {
		t.Fatalf("thread CPU time did not advance: %v", el)
	}
}
