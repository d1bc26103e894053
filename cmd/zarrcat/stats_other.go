//go:build !amd64 || purego

package main

// fastFloat32 is accumulateFast for float32 values: the portable loop on
// platforms without stats_amd64.s.
func fastFloat32(vals []float32, fill float32) (moments, bool) { return accumulateFastGo(vals, fill) }

// fastFloat64 is fastFloat32 for float64 values.
func fastFloat64(vals []float64, fill float64) (moments, bool) { return accumulateFastGo(vals, fill) }
