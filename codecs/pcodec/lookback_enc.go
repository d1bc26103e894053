package pcodec

import (
	"math/bits"
	"slices"
)

// chooseLookbacks picks, for each latent after the first, how far back the
// latent it is encoded against lies (1..min(i, 2^winLog)): the closest in
// value among the last 8, the last exact repeat (found by hash) and the
// previous choice, preferring the previous choice on ties.
func chooseLookbacks[L latent](xs []L, winLog uint) []uint32 {
	n := len(xs)
	if n <= 1 {
		return nil
	}
	win := 1 << winLog
	tableLog := winLog + 1
	table := make([]int32, 1<<tableLog) // last index+1 of a hash
	hash := func(x L) uint64 {
		h := (uint64(x) ^ uint64(x)>>32) * 11400714819323197441
		return (h ^ h>>32) & (1<<tableLog - 1)
	}
	dist := func(a, b L) int {
		d := a - b
		if b-a < d {
			d = b - a
		}
		return bits.Len64(uint64(d))
	}
	out := make([]uint32, n-1)
	prev := 1
	table[hash(xs[0])] = 1
	for i := 1; i < n; i++ {
		x := xs[i]
		best, bestD := prev, 65
		if prev <= i {
			bestD = dist(x, xs[i-prev])
		} else {
			best = 1
			bestD = dist(x, xs[i-1])
		}
		for lb := 1; lb <= min(8, i); lb++ {
			if d := dist(x, xs[i-lb]); d < bestD {
				best, bestD = lb, d
			}
		}
		h := hash(x)
		if j := int(table[h]) - 1; j >= 0 && i-j <= win && xs[j] == x && bestD > 0 {
			best, bestD = i-j, 0
		}
		table[h] = int32(i + 1)
		out[i-1] = uint32(best)
		prev = best
	}
	return out
}

// lookbackEncode replaces each latent after the first with its difference
// from the one lbs says, sign bit toggled; it returns the delta state (the
// first latent) and the body.
func lookbackEncode[L latent](xs []L, lbs []uint32) ([]L, []L) {
	md := mid[L]()
	for i := len(xs) - 1; i >= 1; i-- {
		xs[i] = (xs[i] - xs[i-int(lbs[i-1])]) ^ md
	}
	return []L{xs[0]}, xs[1:]
}

// lookbackPays estimates, on a sample, whether lookback encoding beats the
// consecutive order by at least half a bit per number.
func lookbackPays[L latent](prim []L, order int) bool {
	sample := slices.Clone(prim[:min(len(prim), 4096)])
	_, body := deltaEncode(slices.Clone(sample), order)
	consec := sampleBits(body)
	winLog := min(max(uint(bits.Len(uint(len(prim)-1))), 4), 15)
	lbs := chooseLookbacks(sample, winLog)
	_, lbody := lookbackEncode(sample, lbs)
	look := sampleBits(lbody) + sampleBits(lbs)
	return look < consec-0.5*float64(len(sample))
}
