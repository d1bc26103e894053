package main

// accumF32 and accumF64 are the SSE2 loops of fastFloat32 and fastFloat64
// (stats_amd64.s).
//
//go:noescape
func accumF32(p *float32, n int, shift float64, fill float32) (s, q float64, lo, hi float32, fills int64)

//go:noescape
func accumF64(p *float64, n int, shift float64, fill float64) (s, q, lo, hi float64, fills int64)

// fastFloat32 is accumulateFast for float32 values: the SSE2 loop over
// whole groups of eight, the rest in Go.
func fastFloat32(vals []float32, fill float32) (moments, bool) {
	if len(vals) == 0 {
		return moments{}, true
	}
	shift := float64(vals[0])
	n := len(vals) &^ 7
	var l laneSums
	if n > 0 {
		var lo, hi float32
		l.s, l.q, lo, hi, l.fills = accumF32(&vals[0], n, shift, fill)
		l.lo, l.hi = float64(lo), float64(hi)
	} else {
		l.lo, l.hi = float64(vals[0]), float64(vals[0])
	}
	return finishLanes(l, vals[n:], len(vals), shift, fill)
}

// fastFloat64 is fastFloat32 for float64 values (groups of four).
func fastFloat64(vals []float64, fill float64) (moments, bool) {
	if len(vals) == 0 {
		return moments{}, true
	}
	shift := vals[0]
	n := len(vals) &^ 3
	var l laneSums
	if n > 0 {
		l.s, l.q, l.lo, l.hi, l.fills = accumF64(&vals[0], n, shift, fill)
	} else {
		l.lo, l.hi = vals[0], vals[0]
	}
	return finishLanes(l, vals[n:], len(vals), shift, fill)
}

// laneSums is what the SSE2 loops return: the sums of deviations from the
// shift and of their squares, the extremes and the fill count.
type laneSums struct {
	s, q, lo, hi float64
	fills        int64
}

// finishLanes adds the values the loop left (fewer than a group) to l and
// returns the moments of all n values, or false when they hold NaNs or
// huge values (accumulateSlow takes them then), as accumulateFastGo.
func finishLanes[T float32 | float64](l laneSums, tail []T, n int, shift float64, fill T) (moments, bool) {
	for _, v := range tail {
		if v == fill {
			l.fills++
		}
		x := float64(v)
		l.lo, l.hi = min(l.lo, x), max(l.hi, x)
		d := x - shift
		l.s += d
		l.q += d * d
	}
	if l.s != l.s || l.q != l.q || l.lo <= -bigValue || l.hi >= bigValue {
		return moments{}, false
	}
	fn := float64(n)
	return moments{n: int64(n), fill: l.fills, min: l.lo, max: l.hi, sum: fn*shift + l.s,
		mean: shift + l.s/fn, m2: max(0, l.q-l.s*l.s/fn)}, true
}
