//go:build !purego

package inflate

import "golang.org/x/sys/cpu"

// haveAdlerKernel reports whether adlerBlock (AVX2) can run.
var haveAdlerKernel = cpu.X86.HasAVX2

// adlerBlock returns, for p of a multiple of 32 bytes and at most
// adlerNmax, the sum of its bytes and their sum weighted by len(p)-k for
// byte k (so Adler-32's s2 grows by len(p)·s1 plus the weighted sum).
//
//go:noescape
func adlerBlock(p []byte) (sum, weighted uint64)
