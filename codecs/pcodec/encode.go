package pcodec

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/gozarr/gozarr/codecs"
)

// EncodeOptions are the encoder's choices. The zero value is not valid; use
// DefaultEncodeOptions.
type EncodeOptions struct {
	// Level, 0..12, bounds how many bins (numerical ranges) a latent
	// variable may use: up to 2^min(Level, 8). Default 8.
	Level int
	// DeltaOrder is the consecutive delta encoding order: 0..7, or -1 (the
	// default) to choose per page among 0, 1 and 2 by estimated size.
	DeltaOrder int
	// PageN is the largest number of numbers in a page (each page is a
	// chunk of the standalone format), 1..2^24. Default 2^18, numcodecs'
	// equal_pages_up_to.
	PageN int
	// Lookback lets a page use lookback delta encoding (each number minus
	// an earlier one, up to 2^15 back) when it estimates smaller than the
	// consecutive order. Default true.
	Lookback bool
	// Classic keeps every page in classic mode (numcodecs' mode_spec
	// "classic"); false (default) lets a page use int mult, float mult or
	// float quant mode when it estimates smaller.
	Classic bool
	// Dict writes every page in dict mode (pco's ModeSpec::TryDict): the
	// page's distinct numbers once, most frequent first, then a u32 index
	// per number. It suits IDs: few distinct values over a wide range. As
	// in pco, the automatic choice never picks it. It overrides Classic.
	Dict bool
	// Conv1, 1..32, delta encodes every page by conv1 of this order (pco's
	// DeltaSpec::TryConv1): each latent minus a linear prediction from the
	// previous Conv1 ones, weights and bias fitted by least squares to the
	// page. A page it cannot fit (fewer than Conv1+1 numbers, weights that
	// would overflow) gets no delta encoding, as in pco. Like pco, it is
	// refused for 64-bit types (even in dict mode). 0 (default): none; the
	// automatic choice never picks conv1, as in pco. It overrides
	// DeltaOrder and Lookback.
	Conv1 int
	// SecondaryDelta lets a page delta encode its secondary latents (int
	// mult, float mult and float quant modes) as its primary ones, when that
	// estimates at least half a bit per number smaller. pco's encoder never
	// does this (its format and decoder allow it). Default true.
	SecondaryDelta bool
}

// DefaultEncodeOptions returns the options numcodecs' PCodec defaults to,
// as far as this encoder has them.
func DefaultEncodeOptions() EncodeOptions {
	return EncodeOptions{Level: defaultLevel, DeltaOrder: -1, PageN: defaultPageN, Lookback: true, SecondaryDelta: true}
}

func (o EncodeOptions) check() error {
	if o.Level < 0 || o.Level > maxLevel {
		return fmt.Errorf("%w: pcodec: level %d is not in 0..%d", codecs.ErrInvalidConfig, o.Level, maxLevel)
	}
	if o.DeltaOrder < -1 || o.DeltaOrder > maxConsecutive {
		return fmt.Errorf("%w: pcodec: delta encoding order %d is not in 0..%d", codecs.ErrInvalidConfig, o.DeltaOrder, maxConsecutive)
	}
	if o.Conv1 < 0 || o.Conv1 > maxConv1Order {
		return fmt.Errorf("%w: pcodec: conv1 order %d is not in 0..%d", codecs.ErrInvalidConfig, o.Conv1, maxConv1Order)
	}
	if o.PageN < 1 || o.PageN > maxEqualPagesUpTo {
		return fmt.Errorf("%w: pcodec: equal_pages_up_to %d is not in 1..%d", codecs.ErrInvalidConfig, o.PageN, maxEqualPagesUpTo)
	}
	return nil
}

// pageSizes splits n numbers into the fewest pages of at most pageN, of
// sizes differing by at most one (pcodec's EqualPagesUpTo).
func pageSizes(n, pageN int) []int {
	if n == 0 {
		return nil
	}
	p := (n + pageN - 1) / pageN
	out := make([]int, p)
	for i := range out {
		out[i] = n / p
		if i < n%p {
			out[i]++
		}
	}
	return out
}

// Compress appends to dst the standalone pcodec stream of the numbers in
// src (little-endian numbers of type t) and returns the extended slice. It
// writes wrapped format version 4.0, which pcodec 0.4.8 and later read (1.0
// and later for 8-bit types), or 4.1 (pcodec 1.0) with Dict or Conv1. Compress is safe
// for concurrent use.
func Compress(dst, src []byte, t NumberType, o EncodeOptions) ([]byte, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	w := t.Bits()
	if w == 0 {
		return nil, fmt.Errorf("%w: pcodec: unknown number type %d", codecs.ErrInvalidConfig, byte(t))
	}
	if o.Conv1 > 0 && w == 64 {
		return nil, fmt.Errorf("%w: pcodec: conv1 delta encoding is only for types of at most 32 bits, not %s (as in pco)", codecs.ErrInvalidConfig, t)
	}
	size := int(w / 8)
	if len(src)%size != 0 {
		return nil, fmt.Errorf("%w: pcodec: input of %d bytes is not a whole number of %s", codecs.ErrInvalidConfig, len(src), t)
	}
	n := len(src) / size
	bw := &bitWriter{buf: dst}
	bw.bytes([]byte(magic))
	bw.write(standaloneVersion, 8)
	bw.write(uint64(t), 8)
	power := max(bits.Len(uint(n)), 1)
	bw.write(uint64(power-1), bitsVarintPower)
	bw.write64(uint64(n), uint(power))
	bw.align()
	bw.write(formatMajor, 8)
	if o.Dict || o.Conv1 > 0 {
		bw.write(formatMinor, 8) // dict mode is a 4.1 addition (pco 1.0)
	} else {
		bw.write(0, 8) // minor version 0: older readers (pco 0.4.8) read it
	}
	off := 0
	for _, pn := range pageSizes(n, o.PageN) {
		page := src[off*size : (off+pn)*size]
		switch w {
		case 8:
			encodePage[uint8](bw, page, t, pn, o)
		case 16:
			encodePage[uint16](bw, page, t, pn, o)
		case 32:
			encodePage[uint32](bw, page, t, pn, o)
		default:
			encodePage[uint64](bw, page, t, pn, o)
		}
		off += pn
	}
	bw.write(terminationByte, 8)
	bw.flush()
	return bw.buf, nil
}

// bitWriter appends little-endian bit-packed values to buf.
type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

// write appends the low n bits of v (n <= 56).
func (w *bitWriter) write(v uint64, n uint) {
	w.acc |= (v & (1<<n - 1)) << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// write64 appends the low n bits of v (n <= 64).
func (w *bitWriter) write64(v uint64, n uint) {
	if n <= 56 {
		w.write(v, n)
		return
	}
	w.write(v&(1<<32-1), 32)
	w.write(v>>32, n-32)
}

// align pads with zero bits to a byte boundary.
func (w *bitWriter) align() {
	if w.nacc > 0 {
		w.write(0, 8-w.nacc)
	}
}

func (w *bitWriter) flush() { w.align() }

func (w *bitWriter) bytes(b []byte) {
	w.align()
	w.buf = append(w.buf, b...)
}

// encBin is a bin being chosen: its range, count and the tANS weight.
type encBin struct {
	lower, upper uint64
	count        int
	weight       uint32
	off          uint
}

// encVar is one latent variable being encoded: its body (after delta
// encoding), delta moments, bins and tANS output.
type encVar[L latent] struct {
	body    []L
	moments []L
	bins    []encBin
	ansLog  uint
	chunks  []ansChunk
	finals  [ansInterleave]uint32
}

func newEncVar[L latent](body, moments []L, width uint, level int) *encVar[L] {
	v := &encVar[L]{body: body, moments: moments}
	v.bins, v.ansLog = chooseBins(body, width, level)
	// fall back to a single bin over the whole range when the optimised
	// table would cost more (it never costs more than the raw numbers)
	if len(body) > 0 && len(v.bins) > 1 {
		if est := estimateBits(body, v.bins, v.ansLog); est > trivialBits(body) {
			v.bins, v.ansLog = trivialBins(body), 0
		}
	}
	v.chunks, v.finals = ansEncode(body, v.bins, v.ansLog)
	return v
}

func (v *encVar[L]) writeMeta(bw *bitWriter, width uint) {
	bw.write(uint64(v.ansLog), 4)
	bw.write(uint64(len(v.bins)), bitsNBins)
	obb := offBitsBits(width)
	for _, b := range v.bins {
		bw.write(uint64(b.weight-1), v.ansLog)
		bw.write64(b.lower, width)
		bw.write(uint64(b.off), obb)
	}
}

func (v *encVar[L]) writePageMeta(bw *bitWriter, width uint) {
	for _, m := range v.moments {
		bw.write64(uint64(m), width)
	}
	for _, s := range v.finals {
		bw.write(uint64(s), v.ansLog)
	}
}

// writeBatch writes latents [at, at+k) of the body: tANS bits, then offsets.
func (v *encVar[L]) writeBatch(bw *bitWriter, at, k int) {
	end := min(at+k, len(v.body))
	for i := at; i < end; i++ {
		bw.write(uint64(v.chunks[i].v), uint(v.chunks[i].n))
	}
	for i := at; i < end; i++ {
		b := &v.bins[v.chunks[i].bin]
		bw.write64(uint64(v.body[i])-b.lower, b.off)
	}
}

// encWriter is an encVar of any latent type.
type encWriter interface {
	writeMeta(bw *bitWriter, width uint)
	writePageMeta(bw *bitWriter, width uint)
	writeBatch(bw *bitWriter, at, k int)
}

// encodePage writes one standalone chunk (type byte, count, chunk
// metadata, page) of the n numbers in src.
func encodePage[L latent](bw *bitWriter, src []byte, t NumberType, n int, o EncodeOptions) {
	xs := make([]L, n)
	getLatents(xs, src)
	width := uint(bits.Len(uint(^L(0))))
	mode := encMode{mode: modeClassic}
	switch {
	case o.Dict:
		mode.mode = modeDict
	case !o.Classic:
		mode = chooseMode(xs, t, o.Level)
	}
	toOrdered(t, xs)

	bw.align()
	bw.write(uint64(t), 8)
	bw.write(uint64(n-1), bitsChunkN)
	bw.write(uint64(mode.mode), 4)
	switch mode.mode {
	case modeIntMult, modeFloatMult:
		bw.write64(mode.base, width)
	case modeFloatQuant:
		bw.write(uint64(mode.k), 8)
	case modeDict:
		dict, idx := buildDict(xs)
		bw.write(uint64(len(dict)), bitsDictLen)
		bw.align()
		for _, v := range dict {
			bw.write64(uint64(v), width)
		}
		encodeLatents[uint32, L](bw, idx, nil, o)
		return
	}
	prim, sec := splitLatents(mode, xs, t)
	encodeLatents(bw, prim, sec, o)
}

// buildDict returns the distinct latents of xs, most frequent first (ties
// by value), and each latent's index in that dictionary: dict mode, as
// pco builds it.
func buildDict[L latent](xs []L) ([]L, []uint32) {
	count := map[L]int{}
	for _, x := range xs {
		count[x]++
	}
	dict := make([]L, 0, len(count))
	for x := range count {
		dict = append(dict, x)
	}
	slices.SortFunc(dict, func(a, b L) int {
		if c := count[b] - count[a]; c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	index := make(map[L]uint32, len(dict))
	for i, x := range dict {
		index[x] = uint32(i)
	}
	idx := make([]uint32, len(xs))
	for i, x := range xs {
		idx[i] = index[x]
	}
	return dict, idx
}

// encodeLatents writes the rest of a chunk after its mode: the delta
// encoding, the latent variables' metadata, the page metadata and the
// batches, for the primary latents prim (P: u32 indices in dict mode, else
// the numbers' latent type) and the secondary latents sec (nil when the
// mode has none). prim and sec are delta encoded in place.
func encodeLatents[P, S latent](bw *bitWriter, prim []P, sec []S, o EncodeOptions) {
	n := len(prim)
	pw := uint(bits.Len(uint(^P(0))))
	sw := uint(bits.Len(uint(^S(0))))
	var conv *conv1Config
	if o.Conv1 > 0 && pw <= 32 {
		conv = chooseConv1(prim, o.Conv1) // nil: none, as pco falls back
	}
	order := o.DeltaOrder
	if o.Conv1 > 0 {
		order = 0
	} else if order < 0 {
		order = chooseOrder(prim)
	}
	order = min(order, n) // moments beyond n are never used
	lookback := conv == nil && o.Conv1 == 0 && o.Lookback && n > 16 && lookbackPays(prim, order)
	var lbs []uint32
	winLog := uint(0)
	if lookback {
		winLog = min(max(uint(bits.Len(uint(n-1))), 4), 15)
		lbs = chooseLookbacks(prim, winLog)
	}
	secDelta := sec != nil && o.SecondaryDelta && (lookback || (conv == nil && order > 0)) && secondaryDeltaPays(sec, order, lbs)

	var vars []encWriter
	stateN := 0 // latents of delta state per variable that has delta
	switch {
	case conv != nil:
		state, body := conv1Encode(prim, conv)
		vars = append(vars, newEncVar(body, state, pw, o.Level))
		stateN = len(conv.weights)
	case lookback:
		state, body := lookbackEncode(prim, lbs)
		vars = append(vars, newEncVar(lbs, nil, 32, o.Level), newEncVar(body, state, pw, o.Level))
		stateN = 1
	default:
		moments, body := deltaEncode(prim, order)
		vars = append(vars, newEncVar(body, moments, pw, o.Level))
		stateN = order
	}
	if sec != nil {
		switch {
		case secDelta && lookback:
			state, body := lookbackEncode(sec, lbs)
			vars = append(vars, newEncVar(body, state, sw, o.Level))
		case secDelta:
			moments, body := deltaEncode(sec, order)
			vars = append(vars, newEncVar(body, moments, sw, o.Level))
		default:
			vars = append(vars, newEncVar(sec, nil, sw, o.Level))
		}
	}

	switch {
	case conv != nil:
		bw.write(deltaConv1, 4)
		bw.write(uint64(conv.quant), 5)
		bw.write64(uint64(conv.bias)^1<<63, 64)
		bw.write(uint64(len(conv.weights)-1), 5)
		for _, w := range conv.weights {
			bw.write(uint64(uint32(int32(w))^1<<31), 32)
		}
	case lookback:
		bw.write(deltaLookback, 4)
		bw.write(uint64(winLog-1), 5)
		bw.write(0, 4) // one latent of state
		bw.write(uint64(b2i(secDelta)), 1)
	case order == 0:
		bw.write(deltaNone, 4)
	default:
		bw.write(deltaConsecutive, 4)
		bw.write(uint64(order), 3)
		bw.write(uint64(b2i(secDelta)), 1)
	}
	widths := []uint{pw, sw}
	if lookback {
		widths = []uint{32, pw, sw}
	}
	for i, v := range vars {
		v.writeMeta(bw, widths[i])
	}
	bw.align()
	for i, v := range vars {
		v.writePageMeta(bw, widths[i])
	}
	bw.align()
	for at := 0; at < n; at += batchN {
		rem := n - at
		for i, v := range vars {
			switch {
			case lookback && i == 0:
				v.writeBatch(bw, at, min(max(rem-stateN, 0), batchN))
			case i == len(vars)-1 && sec != nil && !secDelta:
				v.writeBatch(bw, at, min(batchN, rem))
			default:
				v.writeBatch(bw, at, min(batchN, max(rem-stateN, 0)))
			}
		}
	}
	bw.align()
}

// secondaryDeltaPays estimates, on a sample, whether delta encoding the
// secondary latents as the primary ones are (consecutive of the order, or
// by the lookbacks lbs) saves at least half a bit per number. pco's
// encoder never does this; its format and decoder allow it.
func secondaryDeltaPays[S latent](sec []S, order int, lbs []uint32) bool {
	sample := sec[:min(len(sec), 4096)]
	if len(sample) < 16 {
		return false
	}
	var body []S
	if lbs != nil {
		_, body = lookbackEncode(slices.Clone(sample), lbs[:len(sample)-1])
	} else {
		_, body = deltaEncode(slices.Clone(sample), order)
	}
	return sampleBits(body) < sampleBits(sample)-0.5*float64(len(sample))
}

// deltaEncode applies consecutive delta encoding of the given order in
// place: it returns the moments (the page's delta state) and the body, the
// n - order deltas with their sign bit toggled.
func deltaEncode[L latent](xs []L, order int) ([]L, []L) {
	moments := make([]L, order)
	body := xs
	for k := range order {
		moments[k] = body[0]
		for i := len(body) - 1; i >= 1; i-- {
			body[i] -= body[i-1]
		}
		body = body[1:]
	}
	if order > 0 {
		m := mid[L]()
		for i := range body {
			body[i] ^= m
		}
	}
	return moments, body
}

// chooseOrder picks the consecutive delta order 0, 1 or 2 whose deltas
// have the fewest significant bits on a sample of xs.
func chooseOrder[L latent](xs []L) int {
	if len(xs) < 8 {
		return 0
	}
	sample := xs
	if len(sample) > 4096 {
		sample = sample[:4096]
	}
	best, bestCost := 0, math.Inf(1)
	buf := make([]L, len(sample))
	for order := 0; order <= 2; order++ {
		copy(buf, sample)
		_, body := deltaEncode(buf, order)
		bins, ansLog := chooseBins(slices.Clone(body), uint(bits.Len(uint(^L(0)))), 6)
		cost := float64(estimateBits(body, bins, ansLog)) / float64(len(body))
		if cost < bestCost-0.05 {
			best, bestCost = order, cost
		}
	}
	return best
}

func trivialBins[L latent](body []L) []encBin {
	lo, hi := slices.Min(body), slices.Max(body)
	return []encBin{{lower: uint64(lo), upper: uint64(hi), count: len(body), weight: 1, off: uint(bits.Len64(uint64(hi - lo)))}}
}

func trivialBits[L latent](body []L) int {
	return len(body) * int(trivialBins(body)[0].off)
}

// chooseBins splits the range of body into bins: up to 2^min(level, 8)
// equal-count groups of the sorted latents, merged where a dynamic
// programme over their estimated cost (offset bits plus entropy plus
// metadata) says so, then tANS weights summing to 2^ansLog.
func chooseBins[L latent](body []L, width uint, level int) ([]encBin, uint) {
	m := len(body)
	if m == 0 {
		return nil, 0
	}
	// large pages choose bins on an evenly spaced sample, then widen them
	// to cover every value and count exactly
	const maxSample = 1 << 14
	stride := (m + maxSample - 1) / maxSample
	var sorted []L
	if stride > 1 {
		sorted = make([]L, 0, m/stride+1)
		for i := 0; i < m; i += stride {
			sorted = append(sorted, body[i])
		}
	} else {
		sorted = slices.Clone(body)
	}
	slices.Sort(sorted)
	bins := binsOfSorted(sorted, width, level)
	if stride > 1 {
		lo, hi := slices.Min(body), slices.Max(body)
		bins[0].lower = uint64(lo)
		for k := range bins {
			if k+1 < len(bins) {
				bins[k].upper = bins[k+1].lower - 1
			} else {
				bins[k].upper = uint64(hi)
			}
			bins[k].off = uint(bits.Len64(bins[k].upper - bins[k].lower))
			bins[k].count = 0
		}
		for _, x := range body {
			bins[binOf(bins, uint64(x))].count++
		}
		bins = slices.DeleteFunc(bins, func(b encBin) bool { return b.count == 0 })
		for k := range bins { // a deleted bin's range goes to the one before
			if k+1 < len(bins) {
				bins[k].upper = bins[k+1].lower - 1
				bins[k].off = uint(bits.Len64(bins[k].upper - bins[k].lower))
			}
		}
	}
	if len(bins) == 1 {
		bins[0].weight = 1
		return bins, 0
	}
	ansLog := min(uint(bits.Len(uint(len(bins)-1)))+2, maxANSBits, uint(bits.Len(uint(m)))+1)
	ansLog = max(ansLog, uint(bits.Len(uint(len(bins)-1))))
	quantizeWeights(bins, m, uint32(1)<<ansLog)
	return bins, ansLog
}

// binsOfSorted chooses bins for sorted latents: up to 2^min(level, 8)
// equal-count groups, merged where a dynamic programme over their
// estimated cost (offset bits plus entropy plus metadata) says so.
func binsOfSorted[L latent](sorted []L, width uint, level int) []encBin {
	m := len(sorted)
	maxGroups := 1 << min(level, 8)
	groups := make([]encBin, 0, maxGroups)
	for g := range maxGroups {
		s, e := g*m/maxGroups, (g+1)*m/maxGroups
		if s >= e {
			continue
		}
		lo, hi := uint64(sorted[s]), uint64(sorted[e-1])
		if k := len(groups); k > 0 && groups[k-1].upper >= lo {
			groups[k-1].upper = max(groups[k-1].upper, hi)
			groups[k-1].count += e - s
			continue
		}
		groups = append(groups, encBin{lower: lo, upper: hi, count: e - s})
	}
	G := len(groups)
	csum := make([]int, G+1)
	for k, g := range groups {
		csum[k+1] = csum[k] + g.count
	}
	metaBits := float64(maxANSBits/2 + width + offBitsBits(width))
	cost := func(i, j int) float64 { // groups[i..j] as one bin
		c := csum[j+1] - csum[i]
		off := float64(bits.Len64(groups[j].upper - groups[i].lower))
		return float64(c)*(off+math.Log2(float64(m)/float64(c))) + metaBits
	}
	best := make([]float64, G+1)
	from := make([]int, G+1)
	for j := 1; j <= G; j++ {
		best[j] = math.Inf(1)
		for i := j - 1; i >= 0 && j-i <= 64; i-- {
			if c := best[i] + cost(i, j-1); c < best[j] {
				best[j], from[j] = c, i
			}
		}
	}
	var bins []encBin
	for j := G; j > 0; j = from[j] {
		i := from[j]
		b := encBin{lower: groups[i].lower, upper: groups[j-1].upper, count: csum[j] - csum[i]}
		b.off = uint(bits.Len64(b.upper - b.lower))
		bins = append(bins, b)
	}
	slices.Reverse(bins)
	return bins
}

// quantizeWeights gives every bin a weight >= 1 proportional to its count,
// summing to total (total >= len(bins)).
func quantizeWeights(bins []encBin, m int, total uint32) {
	sum := uint32(0)
	for i := range bins {
		w := uint32(math.Round(float64(bins[i].count) * float64(total) / float64(m)))
		bins[i].weight = max(w, 1)
		sum += bins[i].weight
	}
	for sum > total { // take from the heaviest
		k := 0
		for i := range bins {
			if bins[i].weight > bins[k].weight {
				k = i
			}
		}
		bins[k].weight--
		sum--
	}
	for sum < total { // give to the most underweighted
		k, bestR := 0, -1.0
		for i := range bins {
			if r := float64(bins[i].count) / float64(bins[i].weight); r > bestR {
				k, bestR = i, r
			}
		}
		bins[k].weight++
		sum++
	}
}

// binOf returns the index of the last bin whose lower bound is <= x.
func binOf(bins []encBin, x uint64) int {
	lo, hi := 0, len(bins)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if bins[mid].lower <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// estimateBits returns the cost in bits of body's offsets plus an ideal
// entropy code of its bins under their weights.
func estimateBits[L latent](body []L, bins []encBin, ansLog uint) int {
	T := float64(uint32(1) << ansLog)
	counts := make([]int, len(bins))
	if len(bins) == 1 {
		counts[0] = len(body)
	} else {
		for _, x := range body {
			counts[binOf(bins, uint64(x))]++
		}
	}
	total := 0.0
	for k, b := range bins {
		total += float64(counts[k]) * (float64(b.off) + math.Log2(T/float64(b.weight)))
	}
	return int(total)
}

// ansChunk is what the tANS encoder emits for one latent: n bits of value
// v, and the latent's bin.
type ansChunk struct {
	v   uint16
	n   uint8
	bin uint16
}

// ansEncode tANS-encodes the bins of body with 4 interleaved states,
// backwards, so that the decoder reading forwards meets them in order. It
// returns each latent's chunk and the final state indexes, which the page
// metadata holds.
func ansEncode[L latent](body []L, bins []encBin, ansLog uint) ([]ansChunk, [ansInterleave]uint32) {
	T := uint32(1) << ansLog
	chunks := make([]ansChunk, len(body))
	var finals [ansInterleave]uint32
	if len(bins) == 0 {
		return chunks, finals
	}
	// the decoder's table: the states of each bin, in table order
	syms := make([]uint16, T)
	stride := 3 * T / 5
	if stride%2 == 0 {
		stride++
	}
	step := uint32(0)
	for s := range bins {
		for range bins[s].weight {
			syms[(stride*step)&(T-1)] = uint16(s)
			step++
		}
	}
	statesOf := make([][]uint32, len(bins))
	for i, s := range syms {
		statesOf[s] = append(statesOf[s], uint32(i))
	}
	var st [ansInterleave]uint32
	for j := range st {
		st[j] = T // any state in [T, 2T)
	}
	for i := len(body) - 1; i >= 0; i-- {
		b := binOf(bins, uint64(body[i]))
		wt := bins[b].weight
		j := i % ansInterleave
		x := st[j] // the state the decoder reaches after this latent
		nb := uint(bits.Len32(x) - bits.Len32(wt))
		if x>>nb < wt {
			nb--
		}
		chunks[i] = ansChunk{v: uint16(x & (1<<nb - 1)), n: uint8(nb), bin: uint16(b)}
		st[j] = T + statesOf[b][(x>>nb)-wt]
	}
	for j := range st {
		finals[j] = st[j] - T
	}
	return chunks, finals
}

// MaxCompressedSize returns an upper bound on the size of a standalone
// stream of n numbers of type t in pages of at most pageN numbers, as this
// encoder or pcodec's writes them: the numbers at twice their width plus
// four bytes each (two latent variables of up to width+14 bits), and per
// page the largest metadata three latent variables of min(page, 2^14) bins
// can have. Streams larger than this are refused as corrupt.
func MaxCompressedSize(n int, t NumberType, pageN int) int {
	pageN = min(max(pageN, 1), maxChunkN)
	size := int(t.Bits() / 8)
	pages := (n + pageN - 1) / pageN
	binsPerPage := min(min(pageN, n), 1<<maxANSBits)
	perPage := 64 + 3*binsPerPage*11 + 8*maxConsecutive + 3*8
	b := 64.0 + float64(pages)*float64(perPage) + float64(n)*float64(2*size+4)
	if b > float64(math.MaxInt32) && math.MaxInt == math.MaxInt32 {
		return math.MaxInt32
	}
	if b > 1<<62 {
		return int(min(1<<62, int64(math.MaxInt)))
	}
	return int(b)
}
