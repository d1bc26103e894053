package loader

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// SamplerKind names an order of the samples in an epoch.
type SamplerKind int

// The samplers. Every order is a pure function of (Config.Seed, epoch,
// rank, world size, position): no state but the position is kept, so a
// State of a few bytes resumes it.
const (
	// Sequential: samples in order (a rank takes its partition units in
	// order).
	Sequential SamplerKind = iota
	// ChunkShuffle: blocks (chunk-aligned runs of samples) in a random
	// order, samples in order within each block.
	ChunkShuffle
	// BlockShuffle: the blocks in a random order, taken Sampler.K at a
	// time as a window whose samples are shuffled together in memory: the
	// scatter-gather shuffle of scDataset and annbatch. Every chunk is
	// read once per epoch; the shuffle is nearly as good as a full one when
	// K blocks are a good share of the data's variety.
	BlockShuffle
	// Permutation: a full shuffle of the rank's samples by a keyed
	// bijection (a Feistel network, cycle-walking to any count): O(1)
	// memory, no index list. Every batch reads its rows from wherever they
	// are: the read amplification is the chunk rows decoded per row used
	// (Stats.Amplification says).
	Permutation
	// Weighted: Sampler.Samples draws with replacement, sample k with
	// probability proportional to Sampler.Weights[k] (within the rank's
	// partition). Reads as Permutation does.
	Weighted
)

// String returns the sampler's name, as the bench and reports print it.
func (k SamplerKind) String() string {
	switch k {
	case Sequential:
		return "sequential"
	case ChunkShuffle:
		return "chunk-shuffle"
	case BlockShuffle:
		return "block-shuffle"
	case Permutation:
		return "permutation"
	case Weighted:
		return "weighted"
	}
	return fmt.Sprintf("SamplerKind(%d)", int(k))
}

// Sampler is the order of an epoch's samples.
type Sampler struct {
	Kind SamplerKind
	// K is how many blocks a read window holds (default 8): the shuffle
	// window of BlockShuffle, and the read size of Sequential and
	// ChunkShuffle.
	K int
	// Weights (Weighted only) has one weight ≥ 0 per sample of the dataset.
	Weights []float64
	// Samples (Weighted only) is how many samples an epoch draws, over all
	// ranks (default: the dataset's sample count).
	Samples int
}

// Last says what happens to the samples that do not fill a last batch and
// to ranks whose partitions hold different numbers of samples.
type Last int

// The ways of ending an epoch.
const (
	// Short: each rank delivers all its samples; its last batch may be
	// short, and ranks may deliver different numbers of batches.
	Short Last = iota
	// DropLast: every rank delivers the same number of full batches, as
	// many as the smallest partition fills; the rest are dropped.
	DropLast
	// Pad: every rank delivers the same number of full batches, as many as
	// the largest partition needs; a rank that runs out starts its own
	// order again from the beginning.
	Pad
)

// mix folds words into a 64-bit key (splitmix64 on each).
func mix(words ...uint64) uint64 {
	h := uint64(0x243f6a8885a308d3)
	for _, w := range words {
		h = splitmix64(h ^ w)
	}
	return h
}

// splitmix64 is Steele, Lea and Flood's 64-bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// feistel is a keyed bijection of [0, n): a balanced Feistel network of 4
// rounds on the smallest even number of bits covering n, cycle-walking
// (applying it again) until the value falls below n. The domain is less
// than 4n, so the walk takes under 4 steps on average.
type feistel struct {
	n    uint64
	half uint // bits per half
	mask uint64
	key  uint64
}

func newFeistel(n int, key uint64) feistel {
	f := feistel{n: uint64(n), key: key}
	b := uint(bits.Len64(uint64(max(n-1, 1))))
	f.half = (b + 1) / 2
	f.mask = 1<<f.half - 1
	return f
}

// at returns the image of i < n.
func (f feistel) at(i int) int {
	x := uint64(i)
	if f.n <= 1 {
		return i
	}
	for {
		l, r := x>>f.half, x&f.mask
		for round := range uint64(4) {
			l, r = r, l^(splitmix64(f.key^round<<56^r)&f.mask)
		}
		x = l<<f.half | r
		if x < f.n {
			return int(x)
		}
	}
}

// epochPlan is one rank's order of one epoch, everything a position needs
// to find its sample. Its memory grows with the rank's blocks, never with
// its samples (but for Weighted, whose weights are per sample).
type epochPlan struct {
	epoch  int
	count  int // the rank's samples
	length int // positions delivered (count, trimmed or padded)
	// Window samplers: the blocks in read order, K per group, and where
	// each group starts in the rank's order.
	blocks     []int
	groupStart []int // len groups+1
	// Random samplers: the rank's blocks in natural order and where each
	// starts among the rank's samples.
	natBlocks []int
	natStart  []int // len natBlocks+1
	perm      feistel
	cum       []float64 // Weighted: cumulative weight of the rank's samples
}

// planEpoch works out rank's order of epoch e.
func (l *Loader) planEpoch(e int) *epochPlan {
	g, c := l.geo, &l.cfg
	p := &epochPlan{epoch: e}
	nu := g.numUnits()
	// Partition units go to ranks round robin, in an order shuffled per
	// epoch (but for Sequential): unitRank[u] is the rank of unit u.
	unitRank := make([]int, nu)
	up := newFeistel(nu, mix(c.Seed, uint64(e), 1))
	for i := range nu {
		u := i
		if c.Sampler.Kind != Sequential {
			u = up.at(i)
		}
		unitRank[u] = i % c.World
	}
	counts := make([]int, c.World)
	nb := g.numBlocks()
	for b := range nb {
		lo, hi := g.blockSamples(b)
		r := unitRank[g.blockUnit(b)]
		counts[r] += hi - lo
		if r == c.Rank && hi > lo {
			p.natBlocks = append(p.natBlocks, b)
		}
	}
	p.count = counts[c.Rank]
	lo, hi := counts[0], counts[0]
	for _, n := range counts {
		lo, hi = min(lo, n), max(hi, n)
	}
	bs := c.BatchSize
	switch c.Last {
	case Short:
		p.length = p.count
	case DropLast:
		p.length = lo / bs * bs
	case Pad:
		p.length = (hi + bs - 1) / bs * bs
		if p.count == 0 {
			p.length = 0
		}
	}
	key := mix(c.Seed, uint64(e), uint64(c.Rank), uint64(c.World))
	switch c.Sampler.Kind {
	case Sequential, ChunkShuffle, BlockShuffle:
		p.blocks = p.natBlocks
		if c.Sampler.Kind != Sequential {
			bp := newFeistel(len(p.natBlocks), mix(key, 2))
			p.blocks = make([]int, len(p.natBlocks))
			for i := range p.blocks {
				p.blocks[i] = p.natBlocks[bp.at(i)]
			}
		}
		k := l.k()
		p.groupStart = []int{0}
		for i := 0; i < len(p.blocks); i += k {
			n := 0
			for _, b := range p.blocks[i:min(i+k, len(p.blocks))] {
				lo, hi := g.blockSamples(b)
				n += hi - lo
			}
			p.groupStart = append(p.groupStart, p.groupStart[len(p.groupStart)-1]+n)
		}
	case Permutation, Weighted:
		p.natStart = make([]int, 0, len(p.natBlocks)+1)
		p.natStart = append(p.natStart, 0)
		for _, b := range p.natBlocks {
			lo, hi := g.blockSamples(b)
			p.natStart = append(p.natStart, p.natStart[len(p.natStart)-1]+hi-lo)
		}
		p.perm = newFeistel(p.count, mix(key, 3))
		if c.Sampler.Kind == Weighted {
			p.cum = make([]float64, 0, p.count)
			sum := 0.0
			for _, b := range p.natBlocks {
				lo, hi := g.blockSamples(b)
				for k := lo; k < hi; k++ {
					sum += c.Sampler.Weights[k]
					p.cum = append(p.cum, sum)
				}
			}
			total := c.Sampler.Samples
			if total <= 0 {
				total = g.n
			}
			// Draws are split among ranks as evenly as they go; DropLast
			// and Pad round to whole batches as for the other samplers.
			n := total / c.World
			if c.Rank < total%c.World {
				n++
			}
			lo, hi := total/c.World, (total+c.World-1)/c.World
			switch {
			case sum <= 0 || n == 0:
				p.count, p.length = 0, 0
			case c.Last == Short:
				p.count, p.length = n, n
			case c.Last == DropLast:
				p.count, p.length = n, lo/bs*bs
			default:
				p.count, p.length = n, (hi+bs-1)/bs*bs
			}
		}
	}
	return p
}

// numGroups returns the read windows of a window sampler's epoch.
func (p *epochPlan) numGroups() int { return len(p.groupStart) - 1 }

// logical maps a delivered position to one of the rank's order (Pad starts
// the order again).
func (p *epochPlan) logical(pos int) int {
	if pos >= p.count {
		return pos % p.count
	}
	return pos
}

// groupOf returns the read window of logical position q (window samplers).
func (p *epochPlan) groupOf(q int) int {
	return sort.SearchInts(p.groupStart, q+1) - 1
}

// natSample maps j, an index into the rank's samples in natural order, to
// the dataset sample.
func (l *Loader) natSample(p *epochPlan, j int) int {
	i := sort.SearchInts(p.natStart, j+1) - 1
	lo, _ := l.geo.blockSamples(p.natBlocks[i])
	return lo + j - p.natStart[i]
}

// sampleAt returns the dataset sample at logical position q of the epoch.
func (l *Loader) sampleAt(p *epochPlan, q int) int {
	c := &l.cfg
	switch c.Sampler.Kind {
	case Permutation:
		return l.natSample(p, p.perm.at(q))
	case Weighted:
		u := float64(mix(c.Seed, uint64(p.epoch), uint64(c.Rank), uint64(c.World), 4, uint64(q))>>11) / (1 << 53)
		x := u * p.cum[len(p.cum)-1]
		j := sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > x })
		j = min(j, len(p.cum)-1)
		for j > 0 && p.cum[j] == p.cum[j-1] { // a zero weight is never drawn
			j--
		}
		return l.natSample(p, j)
	}
	gi := p.groupOf(q)
	i := q - p.groupStart[gi]
	if c.Sampler.Kind == BlockShuffle {
		m := p.groupStart[gi+1] - p.groupStart[gi]
		i = newFeistel(m, mix(c.Seed, uint64(p.epoch), uint64(c.Rank), uint64(c.World), 5, uint64(gi))).at(i)
	}
	k := l.k()
	for _, b := range p.blocks[gi*k : min(gi*k+k, len(p.blocks))] {
		lo, hi := l.geo.blockSamples(b)
		if i < hi-lo {
			return lo + i
		}
		i -= hi - lo
	}
	panic("loader: position past its window") // unreachable: groupStart sums the blocks
}

// checkWeights validates a Weighted sampler against n samples.
func checkWeights(s Sampler, n int) error {
	if len(s.Weights) != n {
		return fmt.Errorf("%w: %d weights for %d samples", ErrInvalidConfig, len(s.Weights), n)
	}
	for i, w := range s.Weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("%w: weight %d is %v", ErrInvalidConfig, i, w)
		}
	}
	return nil
}
