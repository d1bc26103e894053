//go:build !purego

package main

import "testing"

// TestFastKernelsSSE2: TestFastKernels with the SSE2 loop on a machine
// that has AVX2 (which the float32 loop uses there).
func TestFastKernelsSSE2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: TestFastKernels ran the SSE2 loop")
	}
	haveAVX2 = false
	defer func() { haveAVX2 = true }()
	checkFastKernels(t)
}
