package loader

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// Errors of the package; every error it returns for these causes wraps one.
var (
	// ErrInvalidConfig: a Dataset or Config that cannot describe a loader.
	ErrInvalidConfig = errors.New("loader: invalid configuration")
	// ErrStateMismatch: a State taken from a loader of another dataset,
	// sampler, seed, batch size or rank.
	ErrStateMismatch = errors.New("loader: state is not of this loader")
	// ErrClosed: the loader was closed.
	ErrClosed = errors.New("loader: closed")
	// ErrBatchesHeld: Next was called while the consumer holds every batch
	// buffer the loader has (Release returns them).
	ErrBatchesHeld = errors.New("loader: every batch buffer is held by the consumer")
)

// Field is one array of a Dataset: its rows along axis 0 (the sample axis)
// are the dataset's samples, or windows of rows around them.
type Field struct {
	// Name names the field in errors and reports.
	Name string
	// Array is the array read. Its axis 0 is the sample axis; its decode
	// concurrency and bytes in flight per read are its own options
	// (zarr.WithConcurrency, zarr.WithPipeline).
	Array *zarr.Array
	// Offsets, when set, make each sample a window of rows: sample k
	// takes rows row(k)+Offsets[0], row(k)+Offsets[1], … in that order
	// (e.g. -1, 0, 1 for t-1, t, t+1), and the field's sample shape gains
	// a leading dimension of len(Offsets). nil: the sample is row(k)
	// alone, with no extra dimension. A window sampler reads each block
	// with the rows its samples' windows reach beyond it, so windows
	// wider than the gap between blocks decode a neighbouring chunk row
	// too (Stats.Amplification counts it); a chunk cache on the array
	// (zarr.WithCache) turns those into hits.
	Offsets []int
	// Rest selects within each row (the dimensions after axis 0), as the
	// items of zarr.Array.ReadBytesInto: nd.Range for a box of a patch,
	// nd.Index to pick a variable and drop its dimension. nil: whole rows.
	Rest []nd.Item
}

// Dataset is one or more arrays aligned on axis 0: sample k is row
// Start + k·Stride of every field (with each field's window offsets around
// it). Samples whose window would leave any field's rows are not part of
// the dataset: NumSamples counts those that fit, and sample 0 is the first
// of them.
type Dataset struct {
	Fields []Field
	// Start is the row of the first candidate sample (default 0).
	Start int
	// Stride is the number of rows between consecutive samples (default 1).
	Stride int
}

// fieldGeo is a field resolved against its array.
type fieldGeo struct {
	Field
	offsets     []int // never empty
	minOff      int
	maxOff      int
	consecutive bool  // offsets are o, o+1, o+2, …
	rowShape    []int // the output shape of one row of Rest
	rowBytes    int
	sampleBytes int
	unitShape   []int // the decode unit: inner chunk, or chunk
	unitBytes   int64
}

// geometry is a Dataset resolved: the sample space and its chunk grid
// along the sample axis.
type geometry struct {
	fields []fieldGeo
	start  int // row of sample 0 (the first that fits)
	stride int
	n      int // samples
	block  int // rows per block (the shuffling unit)
	part   int // rows per partition unit (what ranks split)
}

// row returns the row of sample k.
func (g *geometry) row(k int) int { return g.start + k*g.stride }

// firstAtOrAfter returns the first sample whose row is ≥ r (n when none).
func (g *geometry) firstAtOrAfter(r int) int {
	if r <= g.start {
		return 0
	}
	k := (r - g.start + g.stride - 1) / g.stride
	return min(k, g.n)
}

// numBlocks returns how many blocks hold samples; blocks are indexed from
// the block of sample 0.
func (g *geometry) numBlocks() int {
	if g.n == 0 {
		return 0
	}
	return g.row(g.n-1)/g.block - g.row(0)/g.block + 1
}

// blockSamples returns the samples [lo, hi) of block b.
func (g *geometry) blockSamples(b int) (lo, hi int) {
	first := g.row(0)/g.block + b
	return g.firstAtOrAfter(first * g.block), g.firstAtOrAfter((first + 1) * g.block)
}

// blockUnit returns the partition unit of block b (the one holding its
// first row), indexed from that of block 0.
func (g *geometry) blockUnit(b int) int {
	first := g.row(0) / g.block
	return (first+b)*g.block/g.part - first*g.block/g.part
}

// numUnits returns the number of partition units.
func (g *geometry) numUnits() int {
	if g.n == 0 {
		return 0
	}
	return g.blockUnit(g.numBlocks()-1) + 1
}

// resolve checks ds and works out its geometry. blockRows overrides the
// block size (0: the decode unit of field 0 along axis 0).
func resolve(ds Dataset, blockRows int) (*geometry, error) {
	if len(ds.Fields) == 0 {
		return nil, fmt.Errorf("%w: a dataset needs at least one field", ErrInvalidConfig)
	}
	g := &geometry{stride: max(ds.Stride, 1)}
	if ds.Stride < 0 || ds.Start < 0 {
		return nil, fmt.Errorf("%w: negative Start or Stride", ErrInvalidConfig)
	}
	lo, hi := ds.Start, -1 // rows a sample's row may take: [lo, hi)
	for i, f := range ds.Fields {
		if f.Array == nil {
			return nil, fmt.Errorf("%w: field %d (%q) has no array", ErrInvalidConfig, i, f.Name)
		}
		shape := f.Array.Shape()
		if len(shape) == 0 {
			return nil, fmt.Errorf("%w: field %q: a 0-d array has no sample axis", ErrInvalidConfig, f.Name)
		}
		fg := fieldGeo{Field: f, offsets: f.Offsets}
		if len(fg.offsets) == 0 {
			fg.offsets = []int{0}
		}
		fg.minOff, fg.maxOff = slices.Min(fg.offsets), slices.Max(fg.offsets)
		fg.consecutive = true
		for j := 1; j < len(fg.offsets); j++ {
			fg.consecutive = fg.consecutive && fg.offsets[j] == fg.offsets[j-1]+1
		}
		if len(f.Rest) > len(shape)-1 {
			return nil, fmt.Errorf("%w: field %q: %d items in Rest for %d dimensions after the sample axis", ErrInvalidConfig, f.Name, len(f.Rest), len(shape)-1)
		}
		sel, err := f.Array.Selection(append([]nd.Item{nd.Range(0, min(1, shape[0]))}, f.Rest...)...)
		if err != nil {
			return nil, fmt.Errorf("%w: field %q: %w", ErrInvalidConfig, f.Name, err)
		}
		for _, d := range sel[1:] {
			if d.Index != nil {
				return nil, fmt.Errorf("%w: field %q: Rest takes ranges and indices, not index arrays", ErrInvalidConfig, f.Name)
			}
		}
		fg.rowShape = sel.Shape()[1:]
		item := f.Array.Metadata().DataType.Size()
		fg.rowBytes = nd.NumElements(fg.rowShape) * item
		fg.sampleBytes = fg.rowBytes * len(fg.offsets)
		_, fg.unitShape = f.Array.Units()
		fg.unitBytes = int64(nd.NumElements(fg.unitShape)) * int64(item)
		lo = max(lo, -fg.minOff)
		if h := shape[0] - fg.maxOff; hi < 0 || h < hi {
			hi = h
		}
		g.fields = append(g.fields, fg)
		if i == 0 {
			g.part = f.Array.Metadata().ChunkShape[0]
			g.block = fg.unitShape[0]
		}
	}
	// Blocks are whole decode units of every field where their least common
	// multiple stays within a partition unit; else field 0's.
	m := g.block
	for _, f := range g.fields[1:] {
		m = lcm(m, f.unitShape[0])
	}
	if m <= g.part {
		g.block = m
	}
	if blockRows > 0 {
		g.block = blockRows
	}
	g.part = max(g.part, g.block)
	// The first sample whose row is ≥ lo, on the grid Start + k·Stride.
	k0 := 0
	if lo > ds.Start {
		k0 = (lo - ds.Start + g.stride - 1) / g.stride
	}
	g.start = ds.Start + k0*g.stride
	if hi > g.start {
		g.n = (hi - g.start + g.stride - 1) / g.stride
	}
	return g, nil
}

// fingerprint folds the geometry into a key, so a State can name the
// dataset it was taken from.
func (g *geometry) fingerprint() uint64 {
	h := mix(uint64(g.start), uint64(g.stride), uint64(g.n), uint64(g.block), uint64(g.part))
	for _, f := range g.fields {
		h = mix(h, uint64(f.sampleBytes), uint64(len(f.offsets)))
		for _, o := range f.offsets {
			h = mix(h, uint64(o))
		}
	}
	return h
}

// lcmCap is where lcm stops: beyond it the multiple is too large to
// matter (and it fits int on 32-bit platforms).
const lcmCap = 1 << 30

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	if x == 0 || a/x > lcmCap/max(b, 1) {
		return lcmCap // too large to matter
	}
	return a / x * b
}
