package pcodec

import (
	"math"
	"math/bits"
)

// bin is one bin of a latent variable: weight in the tANS table, the lower
// bound of its range and how many offset bits follow each latent in it.
type bin struct {
	weight uint32
	lower  uint64
	off    uint8
}

// latentVar is a latent variable's chunk metadata.
type latentVar struct {
	width  uint // bits of the latent type: 8, 16, 32 or 64
	ansLog uint
	bins   []bin
	// delta encoding applied to this variable, and how many latents its
	// page state holds
	delta  int
	stateN int
}

// chunkMeta is the metadata of one chunk.
type chunkMeta struct {
	mode     int
	base     uint64   // IntMult / FloatMult base, as a latent
	k        uint     // FloatQuant
	dict     []uint64 // Dict
	delta    int
	order    int  // consecutive order
	secDelta bool // whether the secondary latent is delta encoded
	winLog   uint // lookback window log
	stateLog uint // lookback state log
	quant    uint // conv1
	bias     int64
	weights  []int64
	// latent variables in stream order: the lookback variable (if any),
	// the primary, the secondary (if any)
	lookback  *latentVar
	primary   *latentVar
	secondary *latentVar
}

func (m *chunkMeta) vars() []*latentVar {
	vs := make([]*latentVar, 0, 3)
	if m.lookback != nil {
		vs = append(vs, m.lookback)
	}
	vs = append(vs, m.primary)
	if m.secondary != nil {
		vs = append(vs, m.secondary)
	}
	return vs
}

// offBitsBits is how many bits encode a bin's offset bit count for a
// latent of width w (7 for 64 bits).
func offBitsBits(w uint) uint { return uint(bits.Len(w)) }

// readChunkMeta parses a chunk's metadata for numbers of type t, written
// with wrapped format major version major.
func readChunkMeta(r *bitReader, major int, t NumberType) (*chunkMeta, error) {
	w := t.Bits()
	m := &chunkMeta{}
	m.mode = int(r.read(4))
	switch m.mode {
	case modeClassic:
	case modeIntMult:
		if major == 0 {
			return nil, corrupt("int mult mode of format version 0 (pco 0.0.0's GCD mode) is not supported")
		}
		m.base = r.read64(w)
		if t.IsFloat() || m.base == 0 {
			return nil, corrupt("invalid int mult mode (base %d) for %s", m.base, t)
		}
	case modeFloatMult:
		m.base = r.read64(w)
		if !t.IsFloat() {
			return nil, corrupt("float mult mode for %s", t)
		}
		f := latentToFloat64(t, m.base)
		if math.IsInf(f, 0) || math.IsNaN(f) || f == 0 {
			return nil, corrupt("float mult base %v is not finite and nonzero", f)
		}
	case modeFloatQuant:
		m.k = uint(r.read(8))
		if !t.IsFloat() || m.k == 0 || m.k > mantissaBits(t) {
			return nil, corrupt("invalid float quant mode (k=%d) for %s", m.k, t)
		}
	case modeDict:
		n := uint(r.read(bitsDictLen))
		if err := r.align("dict length"); err != nil {
			return nil, err
		}
		if n*w > r.remaining() {
			return nil, corrupt("dictionary of %d values does not fit in the %d bits left", n, r.remaining())
		}
		m.dict = make([]uint64, n)
		for i := range m.dict {
			m.dict[i] = r.read64(w)
		}
	default:
		return nil, corrupt("unknown mode %d", m.mode)
	}
	if err := r.check("mode"); err != nil {
		return nil, err
	}

	if major < 3 {
		m.order = int(r.read(3))
		if m.order > 0 {
			m.delta = deltaConsecutive
		}
	} else {
		m.delta = int(r.read(4))
		switch m.delta {
		case deltaNone:
		case deltaConsecutive:
			m.order = int(r.read(3))
			if m.order == 0 {
				return nil, corrupt("consecutive delta order 0")
			}
			m.secDelta = r.read(1) == 1
		case deltaLookback:
			m.winLog = uint(r.read(5)) + 1
			m.stateLog = uint(r.read(4))
			if m.winLog > maxLookbackWinLog {
				return nil, corrupt("lookback window log %d exceeds %d", m.winLog, maxLookbackWinLog)
			}
			if m.stateLog > m.winLog {
				return nil, corrupt("lookback state log %d exceeds window log %d", m.stateLog, m.winLog)
			}
			m.secDelta = r.read(1) == 1
		case deltaConv1:
			m.quant = uint(r.read(5))
			m.bias = int64(r.read64(64) ^ 1<<63)
			n := int(r.read(5)) + 1
			m.weights = make([]int64, n)
			for i := range m.weights {
				m.weights[i] = int64(int32(uint32(r.read(32)) ^ 1<<31))
			}
		default:
			return nil, corrupt("unknown delta encoding %d", m.delta)
		}
	}
	if err := r.check("delta encoding"); err != nil {
		return nil, err
	}

	primaryWidth := w
	if m.mode == modeDict {
		primaryWidth = 32
	}
	readVar := func(width uint) (*latentVar, error) {
		v := &latentVar{width: width}
		v.ansLog = uint(r.read(4))
		nBins := int(r.read(bitsNBins))
		if v.ansLog > maxANSBits {
			return nil, corrupt("ANS size log %d exceeds %d", v.ansLog, maxANSBits)
		}
		if 1<<v.ansLog < nBins {
			return nil, corrupt("ANS size log %d is too small for %d bins", v.ansLog, nBins)
		}
		if nBins == 1 && v.ansLog > 0 {
			return nil, corrupt("one bin with ANS size log %d", v.ansLog)
		}
		obb := offBitsBits(width)
		if uint(nBins)*(v.ansLog+width+obb) > r.remaining() {
			return nil, corrupt("%d bins do not fit in the %d bits left", nBins, r.remaining())
		}
		v.bins = make([]bin, nBins)
		for i := range v.bins {
			b := &v.bins[i]
			b.weight = uint32(r.read(v.ansLog)) + 1
			b.lower = r.read64(width)
			off := uint(r.read(obb))
			if off > width {
				return nil, corrupt("bin offset bits %d exceed the %d-bit latent", off, width)
			}
			b.off = uint8(off)
		}
		return v, r.check("bins")
	}
	var err error
	if m.delta == deltaLookback {
		if m.lookback, err = readVar(32); err != nil {
			return nil, err
		}
		win := uint64(1) << m.winLog
		for _, b := range m.lookback.bins {
			if b.lower < 1 || b.lower > win {
				return nil, corrupt("lookback bin lower bound %d outside [1, %d]", b.lower, win)
			}
		}
	}
	if m.primary, err = readVar(primaryWidth); err != nil {
		return nil, err
	}
	if m.mode == modeIntMult || m.mode == modeFloatMult || m.mode == modeFloatQuant {
		if m.secondary, err = readVar(w); err != nil {
			return nil, err
		}
	}
	if err := r.align("chunk metadata"); err != nil {
		return nil, err
	}

	// which delta applies to which variable, and its state size
	switch m.delta {
	case deltaConsecutive:
		m.primary.delta, m.primary.stateN = deltaConsecutive, m.order
		if m.secondary != nil && m.secDelta {
			m.secondary.delta, m.secondary.stateN = deltaConsecutive, m.order
		}
	case deltaLookback:
		m.primary.delta, m.primary.stateN = deltaLookback, 1<<m.stateLog
		if m.secondary != nil && m.secDelta {
			m.secondary.delta, m.secondary.stateN = deltaLookback, 1<<m.stateLog
		}
	case deltaConv1:
		pw := m.primary.width
		if pw > 32 {
			return nil, corrupt("conv1 delta encoding on %d-bit latents", pw)
		}
		convBits := 2 * pw
		maxQuant := min(uint(maxConv1Quant), convBits-1)
		if m.quant > maxQuant {
			return nil, corrupt("conv1 quantization %d exceeds %d", m.quant, maxQuant)
		}
		sum := 0.0
		for _, wt := range m.weights {
			sum += math.Abs(float64(wt))
		}
		maxPred := math.Abs(float64(m.bias)) + math.Ldexp(1, int(pw))*sum
		if maxPred >= math.Ldexp(1, int(convBits)-1) {
			return nil, corrupt("conv1 weights and bias may overflow (%g)", maxPred)
		}
		m.primary.delta, m.primary.stateN = deltaConv1, len(m.weights)
	}
	return m, nil
}

// mantissaBits returns the explicit mantissa bits of a float type.
func mantissaBits(t NumberType) uint {
	switch t {
	case F16:
		return 10
	case F32:
		return 23
	case F64:
		return 52
	}
	return 0
}
