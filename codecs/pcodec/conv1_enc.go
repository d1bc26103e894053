package pcodec

import (
	"math"
	"math/bits"
	"slices"
)

// conv1Config is a conv1 delta encoding: each latent after the first
// len(weights) is stored minus the prediction
// max(bias + Σ weights[j]·l[i-order+j], 0) >> quant (in 2w-bit signed
// arithmetic for w-bit latents), as undelta decodes it.
type conv1Config struct {
	quant   uint
	bias    int64
	weights []int64
}

// conv1FitN bounds how many latents the weights are fitted to (the first
// of the page): enough for a few dozen weights, at a fixed cost.
const conv1FitN = 1 << 15

// chooseConv1 fits a conv1 encoding of the given order to xs: the least
// squares weights and bias predicting each latent from the order before it
// (ridge-regularised by 0.1, centred on the mean), quantized to the
// largest power of two the format's overflow bound allows. It returns nil
// when xs is too short or no quantization keeps the arithmetic in range;
// the page then gets no delta encoding, as pco does.
func chooseConv1[P latent](xs []P, order int) *conv1Config {
	n := len(xs)
	if order < 1 || n < order+1 {
		return nil
	}
	fit := xs[:min(n, conv1FitN)]
	mean := 0.0
	for _, x := range fit {
		mean += float64(x)
	}
	mean /= float64(len(fit))
	v := make([]float64, len(fit))
	for i, x := range fit {
		v[i] = float64(x) - mean
	}
	// normal equations of v[i] ~ Σ w[j]·v[i-order+j] + b
	k := order + 1
	a := make([]float64, k*k)
	y := make([]float64, k)
	f := make([]float64, k)
	for i := order; i < len(v); i++ {
		copy(f, v[i-order:i])
		f[order] = 1
		for r := range k {
			fr := f[r]
			y[r] += fr * v[i]
			row := a[r*k : r*k+r+1]
			for c := range row {
				row[c] += fr * f[c]
			}
		}
	}
	for r := range k {
		for c := r + 1; c < k; c++ {
			a[r*k+c] = a[c*k+r]
		}
		a[r*k+r] += 0.1
	}
	beta, ok := solveSPD(a, y, k)
	if !ok {
		return nil
	}
	sum, abs := 0.0, 0.0
	for _, w := range beta[:order] {
		sum += w
		abs += math.Abs(w)
	}
	bias := (1-sum)*mean + beta[order]
	if math.IsNaN(abs) || math.IsInf(abs, 0) || math.IsNaN(bias) || math.IsInf(bias, 0) {
		return nil
	}
	pw := latentBits[P]()
	convBits := 2 * int(pw)
	convMax := math.Ldexp(1, convBits-1) - 1
	lmax := math.Ldexp(1, int(pw)) - 1
	q := int(math.Floor(math.Log2(convMax/(abs*lmax+math.Abs(bias)+1)))) - 1
	q = min(q, maxConv1Quant, convBits-1)
	for ; q >= 0; q-- {
		c := &conv1Config{quant: uint(q), weights: make([]int64, order)}
		scale := math.Ldexp(1, q)
		c.bias = int64(bias * scale)
		total := 0.0
		fits := true
		for j, w := range beta[:order] {
			c.weights[j] = int64(math.Round(w * scale))
			if c.weights[j] != int64(int32(c.weights[j])) {
				fits = false
			}
			total += math.Abs(float64(c.weights[j]))
		}
		// the bound readChunkMeta checks
		if fits && math.Abs(float64(c.bias))+math.Ldexp(1, int(pw))*total < math.Ldexp(1, convBits-1) {
			return c
		}
	}
	return nil
}

// solveSPD solves a·x = y for the symmetric positive definite k×k matrix a
// (row-major) by Cholesky decomposition.
func solveSPD(a, y []float64, k int) ([]float64, bool) {
	l := make([]float64, k*k)
	for j := range k {
		s := a[j*k+j]
		for p := range j {
			s -= l[j*k+p] * l[j*k+p]
		}
		if !(s > 0) {
			return nil, false
		}
		d := math.Sqrt(s)
		l[j*k+j] = d
		for i := j + 1; i < k; i++ {
			s := a[i*k+j]
			for p := range j {
				s -= l[i*k+p] * l[j*k+p]
			}
			l[i*k+j] = s / d
		}
	}
	z := slices.Clone(y) // L z = y
	for i := range k {
		for p := range i {
			z[i] -= l[i*k+p] * z[p]
		}
		z[i] /= l[i*k+i]
	}
	for i := k - 1; i >= 0; i-- { // Lᵀ x = z
		for p := i + 1; p < k; p++ {
			z[i] -= l[p*k+i] * z[p]
		}
		z[i] /= l[i*k+i]
	}
	return z, true
}

// conv1Encode replaces each latent after the first len(c.weights) with its
// difference from the prediction, sign bit toggled; it returns the delta
// state (the first latents) and the body.
func conv1Encode[P latent](xs []P, c *conv1Config) ([]P, []P) {
	order := len(c.weights)
	md := mid[P]()
	for p := len(xs) - 1; p >= order; p-- {
		s := c.bias
		for j, w := range c.weights {
			s += w * int64(xs[p-order+j])
		}
		xs[p] = (xs[p] - P(max(s, 0)>>c.quant)) ^ md
	}
	return slices.Clone(xs[:order]), xs[order:]
}

// latentBits returns the width of L in bits.
func latentBits[L latent]() uint { return uint(bits.Len(uint(^L(0)))) }
