//go:build !purego

package main

import "golang.org/x/sys/cpu"

// accumF32 and accumF64 are the SSE2 loops of fastFloat32 and fastFloat64
// (stats_amd64.s).
//
//go:noescape
func accumF32(p *float32, n int, shift float64) (s, q float64, lo, hi float32)

// accumF32AVX2 is accumF32 with AVX2 and FMA, which haveAVX2 reports.
//
//go:noescape
func accumF32AVX2(p *float32, n int, shift float64) (s, q float64, lo, hi float32)

// haveAVX2 reports whether accumF32AVX2 can run.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func accumF64(p *float64, n int, shift float64) (s, q, lo, hi float64)

// countF32 and countF64 count the values equal to fill (stats_amd64.s).
//
//go:noescape
func countF32(p *float32, n int, fill float32) int64

//go:noescape
func countF64(p *float64, n int, fill float64) int64

// countEqual counts the values of vals equal to fill: the SSE2 loops over
// whole groups of eight, the rest in Go.
func countEqual[T float32 | float64](vals []T, fill T) int64 {
	n := len(vals) &^ 7
	var c int64
	if n > 0 {
		switch v := any(vals).(type) {
		case []float32:
			c = countF32(&v[0], n, any(fill).(float32))
		case []float64:
			c = countF64(&v[0], n, any(fill).(float64))
		}
	}
	for _, v := range vals[n:] {
		if v == fill {
			c++
		}
	}
	return c
}

// fastFloat32 is accumulateFast for float32 values: the SSE2 loop over
// whole groups of eight (0.4 ns a value on this project's machine, 6× the
// Go loop), the rest in Go.
func fastFloat32(vals []float32, fill float32) (moments, bool) {
	if len(vals) == 0 {
		return moments{}, true
	}
	shift := float64(vals[0])
	n := len(vals) &^ 7
	var l laneSums
	if n > 0 {
		var lo, hi float32
		if haveAVX2 {
			n = len(vals) &^ 15
		}
		switch {
		case haveAVX2 && n > 0:
			l.s, l.q, lo, hi = accumF32AVX2(&vals[0], n, shift)
		case haveAVX2:
			lo, hi = vals[0], vals[0]
		default:
			l.s, l.q, lo, hi = accumF32(&vals[0], n, shift)
		}
		l.lo, l.hi = float64(lo), float64(hi)
	} else {
		l.lo, l.hi = float64(vals[0]), float64(vals[0])
	}
	return finishLanes(l, vals, vals[n:], shift, fill)
}

// fastFloat64 is fastFloat32 for float64 values.
func fastFloat64(vals []float64, fill float64) (moments, bool) {
	if len(vals) == 0 {
		return moments{}, true
	}
	shift := vals[0]
	n := len(vals) &^ 7
	var l laneSums
	if n > 0 {
		l.s, l.q, l.lo, l.hi = accumF64(&vals[0], n, shift)
	} else {
		l.lo, l.hi = vals[0], vals[0]
	}
	return finishLanes(l, vals, vals[n:], shift, fill)
}

// laneSums is what the SSE2 loops return: the sums of deviations from the
// shift and of their squares, and the extremes.
type laneSums struct{ s, q, lo, hi float64 }

// finishLanes adds the values the loop left (fewer than a group) to l and
// returns the moments of all n values, whose last ones tail is, or false
// when they hold NaNs or huge values (accumulateSlow takes them then), as
// accumulateFastGo. Values equal to fill are counted in a second pass
// (countEqual, over values in the CPU's first-level cache by then) only
// when fill lies between the extremes.
func finishLanes[T float32 | float64](l laneSums, vals []T, tail []T, shift float64, fill T) (moments, bool) {
	for _, v := range tail {
		x := float64(v)
		l.lo, l.hi = min(l.lo, x), max(l.hi, x)
		d := x - shift
		l.s += d
		l.q += d * d
	}
	if l.s != l.s || l.q != l.q || l.lo <= -bigValue || l.hi >= bigValue {
		return moments{}, false
	}
	var fills int64
	if f := float64(fill); f >= l.lo && f <= l.hi {
		fills = countEqual(vals, fill)
	}
	fn := float64(len(vals))
	return moments{n: int64(len(vals)), fill: fills, min: l.lo, max: l.hi, sum: fn*shift + l.s,
		mean: shift + l.s/fn, m2: max(0, l.q-l.s*l.s/fn)}, true
}
