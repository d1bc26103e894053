package pcodec

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// encMode is the mode a page is written in and its parameter.
type encMode struct {
	mode int
	base uint64 // IntMult: the base; FloatMult: the base's ordered latent
	k    uint   // FloatQuant
}

// splitLatents turns the ordered latents xs into the mode's primary and
// secondary latents (xs is reused for the primary). The decoder's joins
// in decodePage invert each exactly.
func splitLatents[L latent](m encMode, xs []L, t NumberType) ([]L, []L) {
	switch m.mode {
	case modeIntMult:
		base := L(m.base)
		sec := make([]L, len(xs))
		for i, x := range xs {
			xs[i], sec[i] = x/base, x%base
		}
		return xs, sec
	case modeFloatQuant:
		k := m.k
		maxLow := L(1)<<k - 1
		md := mid[L]()
		sec := make([]L, len(xs))
		for i, x := range xs {
			low := x & maxLow
			if x < md { // negative
				low = maxLow - low
			}
			xs[i], sec[i] = x>>k, low
		}
		return xs, sec
	case modeFloatMult:
		sec := make([]L, len(xs))
		switch t {
		case F64:
			p, s := any(xs).([]uint64), any(sec).([]uint64)
			base := math.Float64frombits(orderedBits(t, m.base))
			for i, x := range p {
				f := math.Float64frombits(orderedBits(t, x))
				mult := math.Round(f / base)
				unadj := bitsOrdered(t, math.Float64bits(intFloatFromLatent64(intFloatToLatent64(mult))*base))
				p[i], s[i] = intFloatToLatent64(mult), x-unadj+1<<63
			}
		case F32:
			p, s := any(xs).([]uint32), any(sec).([]uint32)
			base := math.Float32frombits(orderedBits(t, uint32(m.base)))
			for i, x := range p {
				f := math.Float32frombits(orderedBits(t, x))
				mult := float32(math.Round(float64(f / base)))
				unadj := bitsOrdered(t, math.Float32bits(intFloatFromLatent32(intFloatToLatent32(mult))*base))
				p[i], s[i] = intFloatToLatent32(mult), x-unadj+1<<31
			}
		}
		return xs, sec
	}
	return xs, nil
}

// chooseMode picks, on a sample of the page (raw number bits xs), the mode
// with the smallest estimated size: classic, int mult by the GCD of the
// differences, float quant by the common trailing zero bits, or float mult
// by a power of ten; a mode other than classic must save half a bit per
// number.
func chooseMode[L latent](xs []L, t NumberType, level int) encMode {
	classic := encMode{mode: modeClassic}
	if len(xs) < 16 || level < 1 {
		return classic
	}
	sample := slices.Clone(xs[:min(len(xs), 2048)])
	toOrdered(t, sample)
	cost := func(m encMode) float64 {
		p, s := splitLatents(m, slices.Clone(sample), t)
		order := chooseOrder(p)
		_, body := deltaEncode(p, order)
		c := sampleBits(body)
		if s != nil {
			c += sampleBits(s)
		}
		return c / float64(len(sample))
	}
	best, bestCost := classic, cost(classic)
	try := func(m encMode) {
		if c := cost(m); c < bestCost-0.5 {
			best, bestCost = m, c
		}
	}
	if !t.IsFloat() {
		var g uint64
		for _, x := range sample[1:] {
			d := uint64(x - sample[0])
			if x < sample[0] {
				d = uint64(sample[0] - x)
			}
			g = gcd(g, d)
		}
		if g > 1 {
			try(encMode{mode: modeIntMult, base: g})
		}
		// approximate multiples (x = base*k + small): the GCDs of the
		// differences within triples, most frequent first
		counts := map[uint64]int{}
		absDiff := func(a, b L) uint64 {
			if a < b {
				return uint64(b - a)
			}
			return uint64(a - b)
		}
		for i := 0; i+2 < len(sample); i += 3 {
			if d := gcd(absDiff(sample[i+1], sample[i]), absDiff(sample[i+2], sample[i])); d > 1 && d != g {
				counts[d]++
			}
		}
		cands := make([]uint64, 0, len(counts))
		for d, c := range counts {
			if c*10 >= len(sample)/3 {
				cands = append(cands, d)
			}
		}
		slices.SortFunc(cands, func(a, b uint64) int {
			if counts[a] != counts[b] {
				return counts[b] - counts[a]
			}
			return cmp.Compare(a, b)
		})
		for _, d := range cands[:min(len(cands), 3)] {
			try(encMode{mode: modeIntMult, base: d})
		}
		return best
	}
	// floats: the page must be finite for float mult (NaN payloads
	// through a multiplication are not worth trusting)
	mant := mantissaBits(t)
	tz := mant
	for _, x := range sample {
		b := uint64(orderedBits(t, x)) & (1<<mant - 1)
		if b != 0 {
			tz = min(tz, uint(bits.TrailingZeros64(b)))
		}
	}
	if tz > 0 && tz <= mant {
		try(encMode{mode: modeFloatQuant, k: tz})
	}
	if t == F16 || !allFinite(xs, t) {
		return best
	}
	for e := 0; e <= 6; e++ {
		var base uint64
		if t == F64 {
			base = bitsOrdered(t, math.Float64bits(math.Pow(10, -float64(e))))
		} else {
			base = uint64(bitsOrdered(t, math.Float32bits(float32(math.Pow(10, -float64(e))))))
		}
		m := encMode{mode: modeFloatMult, base: base}
		// cheap filter: most of the sample must be exact multiples
		_, s := splitLatents(m, slices.Clone(sample), t)
		exact := 0
		for _, a := range s {
			if a == mid[L]() {
				exact++
			}
		}
		if exact*2 >= len(s) {
			try(m)
		}
	}
	return best
}

// sampleBits estimates the bits bins and tANS take for xs.
func sampleBits[L latent](xs []L) float64 {
	if len(xs) == 0 {
		return 0
	}
	width := uint(bits.Len(uint(^L(0))))
	bins, ansLog := chooseBins(xs, width, 6)
	return float64(estimateBits(xs, bins, ansLog)) + float64(len(bins))*float64(ansLog+width+offBitsBits(width))
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// allFinite reports whether every number (raw bits) is finite.
func allFinite[L latent](xs []L, t NumberType) bool {
	w := t.Bits()
	mant := mantissaBits(t)
	expMask := uint64(1)<<(w-1-mant) - 1
	for _, x := range xs {
		if (uint64(x)>>mant)&expMask == expMask {
			return false
		}
	}
	return true
}
