package main

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/zarr"
)

// moments are the running statistics of a set of values: count, NaNs,
// elements equal to the fill value, min and max (NaNs left out), mean and
// the sum of squared deviations from it (Chan et al.'s parallel form).
type moments struct {
	n, nan, fill int64
	min, max     float64
	mean, m2     float64
	// sum and comp are the values' sum with Neumaier's compensation: the
	// mean reported is (sum+comp)/n, exact where huge values of both signs
	// cancel (Chan's running mean would lose what is small beside them).
	sum, comp float64
}

// add2 adds v to the compensated sum (s, c).
func add2(s, c, v float64) (float64, float64) {
	t := s + v
	if math.Abs(s) >= math.Abs(v) {
		c += (s - t) + v
	} else {
		c += (v - t) + s
	}
	return t, c
}

// total returns the mean from the compensated sum.
func (m *moments) total() float64 { return (m.sum + m.comp) / float64(m.n) }

// merge folds o into m.
func (m *moments) merge(o moments) {
	m.nan += o.nan
	m.fill += o.fill
	if o.n == 0 {
		return
	}
	if m.n == 0 {
		nan, fill := m.nan, m.fill
		*m = o
		m.nan, m.fill = nan, fill
		return
	}
	m.sum, m.comp = add2(m.sum, m.comp, o.sum)
	m.comp += o.comp
	n := m.n + o.n
	d := o.mean - m.mean
	m.mean += d * float64(o.n) / float64(n)
	m.m2 += o.m2 + d*d*float64(m.n)*float64(o.n)/float64(n)
	m.n = n
	m.min = math.Min(m.min, o.min)
	m.max = math.Max(m.max, o.max)
}

// number is the element types stats reads directly.
type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// accumulate returns the moments of vals, counting those equal to fill,
// NaNs left out, in sub-chunks of accumBlock values merged by Chan's
// formula: one pass per sub-chunk summing deviations from its first value
// and their squares (accurate for values of one neighbourhood, as a
// sub-chunk's are), with the extremes. Values of magnitude 2^40 or more,
// and NaNs, take a slower path: they are summed apart, compensated, so
// that huge values of both signs cancel exactly.
func accumulate[T number](vals []T, fill T, hist *histogram, bins []int64) moments {
	var m moments
	for len(vals) > 0 {
		k := min(len(vals), accumBlock)
		m.merge(accumulateBlock(vals[:k], fill, hist, bins))
		vals = vals[k:]
	}
	return m
}

// accumBlock is how many values accumulate takes per sub-chunk.
const accumBlock = 4096

// bigValue is where accumulate sums values apart.
const bigValue = 1 << 40

func accumulateBlock[T number](vals []T, fill T, hist *histogram, bins []int64) moments {
	if m, ok := accumulateFast(vals, fill); ok {
		if hist != nil {
			for _, v := range vals {
				bins[hist.bin(float64(v))]++
			}
		}
		return m
	}
	return accumulateSlow(vals, fill, hist, bins)
}

// accumulateFast is accumulateBlock for a sub-chunk without NaNs and huge
// values, the common case. ok is false when the sub-chunk holds either
// (its sums come out NaN, or its extremes reach bigValue):
// accumulateSlow takes it then. Floats go through fastFloat32 and
// fastFloat64 (vector loops where the platform has them), other types
// through accumulateFastGo.
func accumulateFast[T number](vals []T, fill T) (moments, bool) {
	switch v := any(vals).(type) {
	case []float32:
		return fastFloat32(v, any(fill).(float32))
	case []float64:
		return fastFloat64(v, any(fill).(float64))
	}
	return accumulateFastGo(vals, fill)
}

// accumulateFastGo is accumulateFast in Go: the fewest operations per
// value, in two lanes.
func accumulateFastGo[T number](vals []T, fill T) (m moments, ok bool) {
	if len(vals) == 0 {
		return m, true
	}
	shift := float64(vals[0])
	var s0, s1, q0, q1 float64
	var fills int64
	lo, hi := math.Inf(1), math.Inf(-1)
	i := 0
	for ; i+2 <= len(vals); i += 2 {
		a, b := vals[i], vals[i+1]
		if a == fill {
			fills++
		}
		if b == fill {
			fills++
		}
		x, y := float64(a), float64(b)
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
		if y < lo {
			lo = y
		}
		if y > hi {
			hi = y
		}
		dx, dy := x-shift, y-shift
		s0 += dx
		s1 += dy
		q0 += dx * dx
		q1 += dy * dy
	}
	if i < len(vals) {
		v := vals[i]
		if v == fill {
			fills++
		}
		x := float64(v)
		lo, hi = min(lo, x), max(hi, x)
		d := x - shift
		s0 += d
		q0 += d * d
	}
	s, q := s0+s1, q0+q1
	if s != s || q != q || lo <= -bigValue || hi >= bigValue {
		return m, false
	}
	n := float64(len(vals))
	m.n, m.fill = int64(len(vals)), fills
	m.min, m.max = lo, hi
	m.sum = n*shift + s
	m.mean, m.m2 = shift+s/n, max(0, q-s*s/n)
	return m, true
}

// accumulateSlow is accumulateBlock for a sub-chunk with NaNs or huge
// values.
func accumulateSlow[T number](vals []T, fill T, hist *histogram, bins []int64) moments {
	var m moments
	shift := math.NaN()
	for _, v := range vals {
		if x := float64(v); x == x && x < bigValue && x > -bigValue {
			shift = x
			break
		}
	}
	var s, q, big, comp float64
	var n, fills, nan int64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v == fill {
			fills++
		}
		x := float64(v)
		if !(x < bigValue && x > -bigValue) { // NaN, or huge
			if x != x {
				nan++
				continue
			}
			big, comp = add2(big, comp, x)
		} else {
			d := x - shift
			s += d
			q += d * d
			n++
		}
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if float64(fill) != float64(fill) { // a NaN fill: NaNs are fill
		fills = nan
	}
	m.fill, m.nan = fills, nan
	m.n = int64(len(vals)) - nan
	if m.n == 0 {
		return m
	}
	m.min, m.max = lo, hi
	if n > 0 {
		m.sum, m.comp = add2(big, comp, float64(n)*shift+s)
		m.mean, m.m2 = shift+s/float64(n), max(0, q-s*s/float64(n))
	} else {
		m.sum, m.comp = big, comp
	}
	if bigs := m.n - n; bigs > 0 {
		// Fold the huge values into mean and m2 one by one (rare).
		small := moments{n: n, mean: m.mean, m2: m.m2, min: lo, max: hi}
		for _, v := range vals {
			if x := float64(v); x == x && !(x < bigValue && x > -bigValue) {
				small.merge(moments{n: 1, mean: x, min: x, max: x})
			}
		}
		m.mean, m.m2 = small.mean, small.m2
	}
	if hist != nil {
		for _, v := range vals {
			if x := float64(v); x == x {
				bins[hist.bin(x)]++
			}
		}
	}
	return m
}

// histogram has len(counts) equal bins over [lo, hi]; hi falls in the last.
type histogram struct {
	lo, hi float64
	counts []int64
}

// bin returns the bin of x, which is within [lo, hi].
func (h *histogram) bin(x float64) int {
	n := len(h.counts)
	if h.hi <= h.lo {
		return 0
	}
	i := int((x - h.lo) / (h.hi - h.lo) * float64(n))
	return min(max(i, 0), n-1)
}

// littleEndian: the host's byte order is the memory representation's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asSlice views b (elements of T's size, in memory representation:
// little-endian) as a []T; it copies b when the host is big-endian (the
// bytes of each element swapped) or b is not aligned for T.
func asSlice[T number](b []byte) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b) < size {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	c := make([]T, len(b)/size)
	cb := unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c)*size)
	for i := 0; i < len(cb); i += size {
		for j := range size {
			if littleEndian {
				cb[i+j] = b[i+j]
			} else {
				cb[i+j] = b[i+size-1-j]
			}
		}
	}
	return c
}

// widen decodes the elements of b (data type dt: float16, bfloat16, the
// narrow types) into a wider Go type T that holds each exactly.
func widen[T int8 | float32](dt dtype.DataType, b []byte) []T {
	n := dt.Size()
	out := make([]T, len(b)/n)
	for i := range out {
		v, _ := dtype.NumberOf(dt, b[i*n:(i+1)*n])
		if x, ok := v.Int(); ok {
			out[i] = T(x)
		} else {
			out[i] = T(v.Float64())
		}
	}
	return out
}

// momentsOf returns the moments of the elements in b of data type dt
// (fill: the fill value's bytes), adding to bins when hist is set.
func momentsOf(dt dtype.DataType, b, fill []byte, hist *histogram, bins []int64) (moments, error) {
	switch dt.Kind() {
	case dtype.Bool:
		return accumulate(asSlice[uint8](b), fill[0], hist, bins), nil
	case dtype.Int:
		switch dt.Size() {
		case 1:
			return accumulate(asSlice[int8](b), asSlice[int8](fill)[0], hist, bins), nil
		case 2:
			return accumulate(asSlice[int16](b), asSlice[int16](fill)[0], hist, bins), nil
		case 4:
			return accumulate(asSlice[int32](b), asSlice[int32](fill)[0], hist, bins), nil
		case 8:
			return accumulate(asSlice[int64](b), asSlice[int64](fill)[0], hist, bins), nil
		}
	case dtype.Uint:
		switch dt.Size() {
		case 1:
			return accumulate(asSlice[uint8](b), fill[0], hist, bins), nil
		case 2:
			return accumulate(asSlice[uint16](b), asSlice[uint16](fill)[0], hist, bins), nil
		case 4:
			return accumulate(asSlice[uint32](b), asSlice[uint32](fill)[0], hist, bins), nil
		case 8:
			return accumulate(asSlice[uint64](b), asSlice[uint64](fill)[0], hist, bins), nil
		}
	case dtype.Float:
		switch dt.Size() {
		case 2:
			return accumulate(widen[float32](dt, b), widen[float32](dt, fill)[0], hist, bins), nil
		case 4:
			return accumulate(asSlice[float32](b), asSlice[float32](fill)[0], hist, bins), nil
		case 8:
			return accumulate(asSlice[float64](b), asSlice[float64](fill)[0], hist, bins), nil
		}
	case dtype.BFloat, dtype.NarrowFloat: // every value exactly a float32
		return accumulate(widen[float32](dt, b), widen[float32](dt, fill)[0], hist, bins), nil
	case dtype.NarrowInt, dtype.NarrowUint: // int2..uint4 fit int8
		return accumulate(widen[int8](dt, b), widen[int8](dt, fill)[0], hist, bins), nil
	}
	return moments{}, fmt.Errorf("%w: stats of %s values: only booleans, integers and real floats are supported", zarr.ErrUnsupported, dt)
}

// statsReport is what stats prints.
type statsReport struct {
	Target    string   `json:"target"`
	Selection string   `json:"selection,omitempty"`
	DataType  string   `json:"data_type"`
	Shape     []int    `json:"shape"`
	Count     int64    `json:"count"` // elements, NaNs included
	NaN       int64    `json:"nan"`
	Fill      int64    `json:"fill"` // elements equal to the fill value
	Min       *float64 `json:"min"`  // null when every element is NaN
	Max       *float64 `json:"max"`
	// MinExact and MaxExact are a 64-bit integer array's extremes in full
	// when float64 (min, max) cannot hold them (beyond ±2^53).
	MinExact  string     `json:"min_exact,omitempty"`
	MaxExact  string     `json:"max_exact,omitempty"`
	Mean      *float64   `json:"mean"`
	Std       *float64   `json:"std"` // population standard deviation (NumPy's ddof=0)
	Histogram []histBin  `json:"histogram,omitempty"`
	hist      *histogram `json:"-"`
}

// histBin is one histogram bin, [Lo, Hi) (the last one closed).
type histBin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int64   `json:"count"`
}

// cmdStats prints count, NaN and fill counts, min, max, mean and standard
// deviation of a selection, and optionally a histogram, reading it in
// blocks (bounded memory) and computing on every core.
func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false, "hist": true, "max-chunk-bytes": true, "budget": true, "q": false})
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: stats takes TARGET and an optional SELECTION%s", errUsage, quoteHint(pos))
	}
	nbins := 0
	if v, ok := flags["hist"]; ok {
		if nbins, err = strconv.Atoi(v); err != nil || nbins < 1 || nbins > 1<<20 {
			return fmt.Errorf("%w: --hist must be a number of bins from 1 to 1048576, not %q", errUsage, v)
		}
	}
	budget, err := budgetFlag(flags)
	if err != nil {
		return err
	}
	a, sel, local, err := openSelectionWith(ctx, pos, flags, func(bool) pipeline.Options {
		return pipeline.Options{MaxBytesInFlight: blockBytes(budget)}
	})
	if err != nil {
		return err
	}
	defer func() { err = readErr(pos[0], a.Path(), err) }() // the array as typed
	_, workers := fusedPlan(a, budget)
	fused := local && !listed(sel) && workers > 0
	if fused {
		// Again, for fusedMoments' workers: each reads on its own goroutine,
		// all within one budget.
		shared := pipeline.NewBudget(blockBytes(budget))
		a, sel, _, err = openSelectionWith(ctx, pos, flags, func(bool) pipeline.Options {
			return pipeline.Options{DecodeConcurrency: 1, IOConcurrency: 1, Budget: shared}
		})
		if err != nil {
			return err
		}
	}
	if _, err := momentsOf(a.Metadata().DataType, nil, a.Metadata().FillValue, nil, nil); err != nil {
		// A limit of stats, not of the array ("unsupported zarr feature"
		// read as one the array uses): said without the sentinel's text.
		return &targetError{msg: pos[0] + ": " + strings.TrimPrefix(err.Error(), zarr.ErrUnsupported.Error()+": "), err: err}
	}
	prog := newProgress(stderr, flags, "stats")
	size := int64(sel.NumElements()) * int64(a.Metadata().DataType.Size())
	if nbins > 0 {
		size *= 2 // a second pass fills the histogram
	}
	prog.setTotal(size)
	m, err := selectionMoments(ctx, a, sel, budget, nil, prog, fused)
	if err != nil {
		prog.finish(err)
		return err
	}
	r := &statsReport{Target: pos[0], DataType: a.Metadata().DataType.String(), Shape: orEmptyInts(sel.Shape()), Count: m.n + m.nan, NaN: m.nan, Fill: m.fill}
	if len(pos) == 2 {
		r.Selection = pos[1]
	}
	if m.n > 0 {
		std, mean := math.Sqrt(m.m2/float64(m.n)), m.total()
		r.Min, r.Max, r.Mean, r.Std = &m.min, &m.max, &mean, &std
		if err := exactExtremes(ctx, a, sel, budget, r); err != nil {
			prog.finish(err)
			return err
		}
		if nbins > 0 {
			h := &histogram{lo: m.min, hi: m.max, counts: make([]int64, nbins)}
			if _, err := selectionMoments(ctx, a, sel, budget, h, prog, fused); err != nil {
				prog.finish(err)
				return err
			}
			for i, c := range h.counts {
				w := (h.hi - h.lo) / float64(nbins)
				r.Histogram = append(r.Histogram, histBin{Lo: h.lo + float64(i)*w, Hi: h.lo + float64(i+1)*w, Count: c})
			}
		}
	}
	prog.finish(nil)
	if _, ok := flags["json"]; ok {
		return writeJSON(stdout, r)
	}
	printStats(stdout, r)
	return nil
}

// printStats writes a report one "name: value" per line.
func printStats(w io.Writer, r *statsReport) {
	line := func(k string, v any) { fmt.Fprintf(w, "%-10s %v\n", k+":", v) }
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	line("target", r.Target)
	if r.Selection != "" {
		line("selection", r.Selection)
	}
	line("data_type", r.DataType)
	line("shape", dims(r.Shape))
	line("count", r.Count)
	line("nan", r.NaN)
	line("fill", r.Fill)
	ext := opt
	if r.DataType == "float32" {
		// A float32 array's extremes are float32 values: their shortest
		// float32 digits, as get prints them (-99.998405, not
		// -99.99840545654297).
		ext = func(p *float64) string {
			if p == nil {
				return "-"
			}
			return strconv.FormatFloat(*p, 'g', -1, 32)
		}
	}
	line("min", cmp.Or(r.MinExact, ext(r.Min)))
	line("max", cmp.Or(r.MaxExact, ext(r.Max)))
	line("mean", opt(r.Mean))
	line("std", opt(r.Std))
	for i, b := range r.Histogram {
		end := ")" // [lo, hi), the last bin [lo, hi]: it holds the maximum
		if i == len(r.Histogram)-1 {
			end = "]"
		}
		fmt.Fprintf(w, "  [%12.6g, %12.6g%s %d\n", b.Lo, b.Hi, end, b.Count)
	}
}

// selectionMoments returns the moments of sel, filling hist's counts when
// hist is set: by fusedMoments when fused (a local store, its array opened
// for it) and fusedPlan finds boxes within budget, else streamed in
// blocks, each block cut into one part per core.
func selectionMoments(ctx context.Context, a *zarr.Array, sel nd.Selection, budget int64, hist *histogram, prog *progress, fused bool) (moments, error) {
	if target, workers := fusedPlan(a, budget); fused && workers > 0 {
		return fusedMoments(ctx, a, sel, target, workers, hist, prog)
	}
	return streamedMoments(ctx, a, sel, budget, hist, prog)
}

// fusedPlan returns the box size fusedMoments reads and how many workers
// fit within budget (each holds a box, and the engine a read unit decoded
// and encoded): boxes of fusedBoxBytes, or of a sixty-fourth of budget if
// less, or of one read unit where that is larger and within a sixteenth of
// budget (so that no unit is decoded for two boxes). No workers: the read
// units are too large, and stats streams in blocks instead.
func fusedPlan(a *zarr.Array, budget int64) (target int64, workers int) {
	unit := int64(a.Metadata().DataType.Size())
	for _, u := range readUnits(a) {
		unit *= int64(max(u, 1))
		if unit > budget {
			return 0, 0
		}
	}
	target = min(fusedBoxBytes, max(budget/64, 1))
	if unit > target {
		if unit > budget/16 {
			return 0, 0
		}
		target = unit
	}
	return target, int(min(int64(runtime.GOMAXPROCS(0)), max(1, budget/(8*target))))
}

// fusedBoxBytes is the output size fusedMoments aims at per box: a few
// inner chunks, which the CPU caches still hold when the box is reduced.
const fusedBoxBytes = 2 << 20

// fusedMoments is selectionMoments with the reduction fused into the
// reads: workers each read one box of chunkBoxes (of target bytes) at a time
// (the engine decoding on the worker's goroutine, whole chunks straight
// into the worker's buffer, without the strided copy a C-order block
// needs) and reduce it at once, while its values are in the CPU's caches.
// The boxes' moments are merged in the boxes' order, whichever worker
// finished first, so the result depends on neither scheduling nor the
// number of workers; at most 4 boxes per worker are ahead of the merge.
func fusedMoments(ctx context.Context, a *zarr.Array, sel nd.Selection, target int64, workers int, hist *histogram, prog *progress) (moments, error) {
	meta := a.Metadata()
	dt, fill := meta.DataType, meta.FillValue
	item := dt.Size()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		m   moments
		err error
	}
	type job struct {
		sel nd.Selection
		res chan result
	}
	jobs := make(chan job)
	order := make(chan chan result, 4*workers)
	bins := make([][]int64, workers)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		defer close(order)
		for box := range chunkBoxes(a, sel, target) {
			j := job{box, make(chan result, 1)}
			select {
			case order <- j.res:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	})
	for w := range workers {
		if hist != nil {
			bins[w] = make([]int64, len(hist.counts))
		}
		wg.Go(func() {
			var buf []byte
			for j := range jobs {
				size := j.sel.NumElements() * item
				if cap(buf) < size {
					buf = make([]byte, size)
				}
				var r result
				if r.err = a.ReadSelection(ctx, buf[:size], j.sel); r.err == nil {
					r.m, r.err = momentsOf(dt, buf[:size], fill, hist, bins[w])
					prog.add(int64(size))
				}
				j.res <- r
			}
		})
	}
	var total moments
	var err error
	for res := range order {
		if err != nil {
			continue // a job not sent never answers
		}
		select {
		case r := <-res:
			if err = r.err; err == nil {
				total.merge(r.m)
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			cancel()
		}
	}
	wg.Wait()
	if err == nil {
		err = ctx.Err() // the caller's: boxes may have been left out
	}
	for _, b := range bins {
		for i, c := range b {
			hist.counts[i] += c
		}
	}
	return total, err
}

// streamedMoments is selectionMoments over stream: the blocks in order,
// each cut into one part per core.
func streamedMoments(ctx context.Context, a *zarr.Array, sel nd.Selection, budget int64, hist *histogram, prog *progress) (moments, error) {
	meta := a.Metadata()
	dt, fill := meta.DataType, meta.FillValue
	item := dt.Size()
	workers := runtime.GOMAXPROCS(0)
	var total moments
	err := stream(ctx, a, sel, blockBytes(budget), func(b streamBlock) error {
		prog.add(int64(len(b.Data)))
		n := len(b.Data) / item
		parts := min(workers, max(1, n/4096))
		res := make([]moments, parts)
		bins := make([][]int64, parts)
		errs := make([]error, parts)
		var wg sync.WaitGroup
		for p := range parts {
			lo, hi := n*p/parts, n*(p+1)/parts
			if hist != nil {
				bins[p] = make([]int64, len(hist.counts))
			}
			wg.Go(func() { res[p], errs[p] = momentsOf(dt, b.Data[lo*item:hi*item], fill, hist, bins[p]) })
		}
		wg.Wait()
		for p := range parts {
			if errs[p] != nil {
				return errs[p]
			}
			total.merge(res[p])
			for i, c := range bins[p] {
				hist.counts[i] += c
			}
		}
		return nil
	})
	return total, err
}

// exactExtremes sets r.MinExact and r.MaxExact for an int64 or uint64
// array whose extremes float64 rounds (beyond ±2^53): a second pass over
// the selection finds them exactly.
func exactExtremes(ctx context.Context, a *zarr.Array, sel nd.Selection, budget int64, r *statsReport) error {
	dt := a.Metadata().DataType
	if dt.Size() != 8 || dt.Kind() != dtype.Int && dt.Kind() != dtype.Uint {
		return nil
	}
	const exact = 1 << 53
	if math.Abs(*r.Min) < exact && math.Abs(*r.Max) < exact {
		return nil
	}
	signed := dt.Kind() == dtype.Int
	var lo, hi uint64 // bit patterns, compared as the type's values
	first := true
	less := func(x, y uint64) bool {
		if signed {
			return int64(x) < int64(y)
		}
		return x < y
	}
	err := stream(ctx, a, sel, blockBytes(budget), func(b streamBlock) error {
		for i := 0; i+8 <= len(b.Data); i += 8 {
			v := binary.LittleEndian.Uint64(b.Data[i:])
			if first {
				lo, hi, first = v, v, false
				continue
			}
			if less(v, lo) {
				lo = v
			}
			if less(hi, v) {
				hi = v
			}
		}
		return nil
	})
	if err != nil || first {
		return err
	}
	if signed {
		r.MinExact, r.MaxExact = strconv.FormatInt(int64(lo), 10), strconv.FormatInt(int64(hi), 10)
	} else {
		r.MinExact, r.MaxExact = strconv.FormatUint(lo, 10), strconv.FormatUint(hi, 10)
	}
	return nil
}
