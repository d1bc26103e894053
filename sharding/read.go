package sharding

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/internal/bufpool"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// Source says where a shard's bytes are: a key of a store (StoreSource), a
// byte range of a key's value (RangeSource: a shard nested in an outer
// shard), or memory (BytesSource). Sources are small values, safe to copy
// and share.
type Source struct {
	r       store.Reader
	storeID string
	key     string
	base    int64 // offset of the shard within the key's value
	size    int64 // length of the shard, or 0: to the end of the value
	inMem   bool
	mem     []byte
	index   []byte // encoded index already fetched, or nil
	ix      *Index // decoded index already known, or nil
}

// StoreSource is the shard stored as the whole value of key in r. storeID
// names r for the IndexCache (a URL, a path: anything that tells stores
// apart); "" keeps this shard's index out of the cache.
func StoreSource(r store.Reader, storeID, key string) Source {
	return Source{r: r, storeID: storeID, key: key}
}

// RangeSource is the shard stored as size bytes at offset base of key's
// value in r (size 0: up to the end of the value). storeID is as for
// StoreSource.
func RangeSource(r store.Reader, storeID, key string, base, size int64) Source {
	return Source{r: r, storeID: storeID, key: key, base: base, size: size}
}

// BytesSource is a shard held in memory. Reads from it do no I/O.
func BytesSource(b []byte) Source {
	if b == nil {
		b = []byte{}
	}
	return Source{inMem: true, mem: b}
}

// String names the source in errors.
func (s Source) String() string {
	if s.inMem {
		return fmt.Sprintf("in-memory shard of %d bytes", len(s.mem))
	}
	if s.base == 0 && s.size == 0 {
		return fmt.Sprintf("%q", s.key)
	}
	return fmt.Sprintf("%q at [%d, +%d)", s.key, s.base, s.size)
}

// ReadOptions tune Layout.Read. The zero value is sensible.
type ReadOptions struct {
	// Coalesce joins the byte ranges of inner chunks into fewer requests;
	// the zero value means store.DefaultMaxGap (64 KiB of unwanted bytes
	// at most between two ranges) and store.DefaultMaxSize (16 MiB per
	// joined request).
	Coalesce store.CoalesceOptions
	// Concurrency is how many goroutines may decode inner chunks of one
	// shard at once; 0 or 1 decodes on the calling goroutine. The
	// pipeline splits its budget between shards and this.
	Concurrency int
	// Cache, if set, keeps decoded indexes of shards read from stores
	// (sources with a non-empty storeID).
	Cache *IndexCache
	// ChunkCache, if set, keeps decoded inner chunks of shards read from
	// stores (StoreSource with a non-empty storeID; not nested shards),
	// keyed cache.Key(storeID, shard key, 0, inner chunk's C-order
	// index). Read serves the inner chunks it finds there without I/O and
	// fetches only the others; it caches the inner chunks it decodes
	// whole. A writer that replaces a shard must Remove its inner chunks'
	// keys (the gozarr pipeline does).
	ChunkCache cache.Cache

	// chunks is set by read for the shard it reads when inner chunks go
	// through ChunkCache: their key prefix and which of them were hits.
	chunks *cachedChunks
}

// cachedChunks names one shard's inner chunks in a ChunkCache and marks
// those already placed from it.
type cachedChunks struct {
	storeID, key string
	hit          []bool // by C-order inner chunk index
	anyHit       bool
}

// chunkCacheable reports whether src's inner chunks may live in
// opt.ChunkCache: a whole stored shard of plain inner chunks.
func (l *Layout) chunkCacheable(src Source, opt ReadOptions) bool {
	return opt.ChunkCache != nil && !src.inMem && src.storeID != "" && src.base == 0 && src.size == 0 && l.nested == nil
}

// readCachedChunks places from opt.ChunkCache the inner chunks of sel it
// holds and returns which, and whether every inner chunk sel needs was a
// hit.
func (l *Layout) readCachedChunks(src Source, sel nd.Selection, dst nd.View, opt ReadOptions) (*cachedChunks, bool) {
	cc := &cachedChunks{storeID: src.storeID, key: src.key, hit: make([]bool, l.n)}
	all := true
	for p := range sel.Chunks(l.chunkShape) {
		lin := 0
		for d, c := range p.Coords {
			lin += c * l.cpsStrides[d]
		}
		v, ok := opt.ChunkCache.Get(cache.Key(cc.storeID, cc.key, 0, lin))
		if !ok || len(v) != l.innerBytes {
			all = false
			continue
		}
		nd.Copy(p.DstView(dst), p.SrcView(nd.Contiguous(v, l.chunkShape, l.itemSize)))
		cc.hit[lin] = true
		cc.anyHit = true
	}
	return cc, all
}

// maxRuns bounds the byte runs one partially read uncompressed inner chunk
// is split into; beyond it the reader fetches the runs' bounding range.
const maxRuns = 1024

// Read decodes the part of one shard that sel names into dst. sel is a
// selection within the shard (one Dim per dimension, steps may be negative;
// a Drop flag is ignored, the dimension counting as size 1) and dst a view
// of shape sel.FullShape() with the array's item size.
//
// It reads the index with exactly one range request (none when the
// IndexCache holds it), then only the inner chunks sel touches, their byte
// ranges coalesced (opt.Coalesce) and fetched with one store.GetRanges
// call. When sel touches every inner chunk of a shard whose index is not
// cached it reads the whole shard with one request instead. Inner chunks
// whose destination is one contiguous run decode straight into dst;
// others decode into pooled scratch and are copied. Uncompressed inner
// chunks (inner chain "bytes" with in-memory byte order) that sel covers
// only in part are read as the byte runs sel needs. Inner shards (nested
// sharding) are read the same way, by range requests into the outer shard:
// whole when sel covers every inner chunk of theirs, else index first.
//
// A store with vectored reads (store.VectorReader: the filesystem on
// Linux) is never asked for the whole shard: after the index, each
// uncompressed inner chunk that sel covers whole is read straight into its
// place in dst with one vectored read, through no buffer, when that place
// is runs of 1.5 KiB or more (vecread.MinRun; shorter runs are faster read with the
// shard's other bytes and copied). Without an opt.ChunkCache only: with
// one, inner chunks are read whole into buffers the cache keeps.
//
// Missing inner chunks are written as the fill value into their part of
// dst; a missing shard (store.ErrNotFound) fills all of dst and is not an
// error. Read is safe for concurrent use with distinct (or disjoint) dst;
// it leaves no goroutine behind and stops early when ctx is cancelled.
func (l *Layout) Read(ctx context.Context, src Source, sel nd.Selection, dst nd.View, opt ReadOptions) error {
	if err := l.checkSelection(sel, dst); err != nil {
		return err
	}
	if sel.NumElements() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.read(ctx, src, sel, dst, opt); err != nil {
		return fmt.Errorf("shard %v: %w", src, err)
	}
	return nil
}

// checkSelection reports ErrSelection when sel or dst do not fit.
func (l *Layout) checkSelection(sel nd.Selection, dst nd.View) error {
	shape := l.shard.Shape
	if len(sel) != len(shape) || len(dst.Shape) != len(shape) {
		return fmt.Errorf("%w: %d-d selection into a %d-d view, shard is %d-d", ErrSelection, len(sel), len(dst.Shape), len(shape))
	}
	if dst.ItemSize != l.itemSize {
		return fmt.Errorf("%w: view of %d-byte items, shard has %d-byte items", ErrSelection, dst.ItemSize, l.itemSize)
	}
	for d, s := range sel {
		if s.Count < 0 || s.Step == 0 || dst.Shape[d] != s.Count || len(dst.Strides) != len(shape) {
			return fmt.Errorf("%w: dimension %d: %+v into a view of shape %v", ErrSelection, d, s, dst.Shape)
		}
		if s.Count == 0 {
			continue
		}
		last := s.Start + (s.Count-1)*s.Step
		if s.Start < 0 || s.Start >= shape[d] || last < 0 || last >= shape[d] {
			return fmt.Errorf("%w: dimension %d: %+v outside 0..%d", ErrSelection, d, s, shape[d]-1)
		}
	}
	return nil
}

// cacheable reports whether src's index may live in opt.Cache.
func cacheable(src Source, opt ReadOptions) bool {
	return opt.Cache != nil && !src.inMem && src.storeID != ""
}

// read is Read without the argument checks and error context.
func (l *Layout) read(ctx context.Context, src Source, sel nd.Selection, dst nd.View, opt ReadOptions) error {
	opt.chunks = nil
	if l.chunkCacheable(src, opt) {
		cc, all := l.readCachedChunks(src, sel, dst, opt)
		if all {
			return nil
		}
		opt.chunks = cc
	}
	ix := src.ix
	var err error
	switch {
	case ix != nil:
	case src.inMem:
		if ix, err = l.memIndex(src.mem); err != nil {
			return err
		}
	case src.index != nil:
		if ix, err = l.DecodeIndex(src.index, sizeOrUnknown(src)); err != nil {
			return err
		}
		if cacheable(src, opt) {
			opt.Cache.Add(src.storeID, src.key, src.base, src.size, ix)
		}
	default:
		if cacheable(src, opt) {
			ix, _ = opt.Cache.Get(src.storeID, src.key, src.base, src.size)
		}
		// A selection that needs every inner chunk reads the whole shard
		// with one request: when the index is not cached, and always from
		// a local store (one read, into one pooled buffer of one size).
		// A store with vectored reads instead reads the index, then the
		// uncompressed inner chunks sel covers whole straight into dst.
		if (ix == nil || store.IsLocal(src.r)) && (l.vecReader(src, dst, opt) == nil || !forward(sel)) && sel.NumChunks(l.chunkShape) == l.n && (opt.chunks == nil || !opt.chunks.anyHit) {
			return l.readWhole(ctx, src, sel, dst, opt)
		}
		if ix == nil {
			if ix, err = l.loadIndex(ctx, src, opt); err != nil {
				return err
			}
			if ix == nil { // no such shard
				nd.Fill(dst, l.fill)
				return nil
			}
		}
	}
	return l.readChunks(ctx, src, ix, sel, dst, opt)
}

// sizeOrUnknown returns the shard's size when the source knows it, else -1.
func sizeOrUnknown(src Source) int64 {
	if src.inMem {
		return int64(len(src.mem))
	}
	if src.size > 0 {
		return src.size
	}
	return -1
}

// memIndex decodes the index of an in-memory shard.
func (l *Layout) memIndex(b []byte) (*Index, error) {
	if len(b) < l.indexSize {
		return nil, fmt.Errorf("%w: shard of %d bytes is shorter than its %d-byte index", ErrCorruptIndex, len(b), l.indexSize)
	}
	if l.codec.loc == IndexStart {
		return l.DecodeIndex(b[:l.indexSize], int64(len(b)))
	}
	return l.DecodeIndex(b[len(b)-l.indexSize:], int64(len(b)))
}

// indexRange returns the store range of src's index.
func (l *Layout) indexRange(src Source) (store.ByteRange, error) {
	n := int64(l.indexSize)
	if src.size > 0 && src.size < n {
		return store.ByteRange{}, fmt.Errorf("%w: shard of %d bytes is shorter than its %d-byte index", ErrCorruptIndex, src.size, n)
	}
	switch {
	case l.codec.loc == IndexStart:
		return store.Range(src.base, n), nil
	case src.size > 0:
		return store.Range(src.base+src.size-n, n), nil
	default:
		return store.Suffix(n), nil
	}
}

// loadIndex fetches and decodes src's index with one request, through the
// cache (and its single-flight) when there is one. It returns nil, nil for a
// missing shard.
func (l *Layout) loadIndex(ctx context.Context, src Source, opt ReadOptions) (*Index, error) {
	fetch := func(ctx context.Context) (*Index, error) {
		br, err := l.indexRange(src)
		if err != nil {
			return nil, err
		}
		b, err := src.r.Get(ctx, src.key, br)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) != l.indexSize {
			return nil, fmt.Errorf("%w: read %d bytes of the %d-byte index (the shard is shorter than its index)", ErrCorruptIndex, len(b), l.indexSize)
		}
		return l.DecodeIndex(b, sizeOrUnknown(src))
	}
	if !cacheable(src, opt) {
		return fetch(ctx)
	}
	return opt.Cache.load(ctx, src.storeID, src.key, src.base, src.size, fetch)
}

// readLocal reads a whole value of a local store into a pooled buffer
// (return it with bufpool.Put): sized by the store's SizeReader when it has
// one, else one byte longer than maxSize, so one read both reads it and
// tells an oversized value. A value over maxSize is ErrCorruptIndex.
func readLocal(ctx context.Context, r store.Reader, into store.IntoReader, key string, maxSize int) ([]byte, error) {
	n := maxSize + 1
	if sz, ok := r.(store.SizeReader); ok {
		size, err := sz.Size(ctx, key)
		if err != nil {
			return nil, err
		}
		if size > int64(maxSize) {
			return nil, fmt.Errorf("%w: shard of %d bytes, larger than any valid one (%d)", ErrCorruptIndex, size, maxSize)
		}
		n = int(size)
	}
	bp := bufpool.Get(n)
	k, err := into.ReadInto(ctx, key, 0, *bp)
	if err == nil && k > maxSize {
		err = fmt.Errorf("%w: shard larger than any valid one (%d bytes)", ErrCorruptIndex, maxSize)
	}
	if err != nil {
		bufpool.Put(bp)
		return nil, err
	}
	return (*bp)[:k], nil
}

// readWhole reads all of src with one request and decodes sel from memory.
func (l *Layout) readWhole(ctx context.Context, src Source, sel nd.Selection, dst nd.View, opt ReadOptions) error {
	br := store.Full()
	switch {
	case src.size > 0:
		br = store.Range(src.base, src.size)
	case src.base > 0:
		br = store.From(src.base)
	}
	var b []byte
	var err error
	if into, ok := src.r.(store.IntoReader); ok && store.IsLocal(src.r) && src.base == 0 && src.size <= 0 {
		// A whole top-level shard in a local store: read it into a pooled
		// buffer one byte longer than any valid shard, held only while its
		// chunks decode (fresh buffers would be garbage that lets the heap,
		// and RSS, grow well past the output). A remote store gets one
		// plain GET of the whole object.
		b, err = readLocal(ctx, src.r, into, src.key, l.MaxEncodedSize())
		if b != nil {
			defer bufpool.Put(&b)
		}
	} else {
		b, err = src.r.Get(ctx, src.key, br)
	}
	if errors.Is(err, store.ErrNotFound) {
		nd.Fill(dst, l.fill)
		return nil
	}
	if err != nil {
		return err
	}
	if src.size > 0 && int64(len(b)) != src.size {
		return fmt.Errorf("%w: read %d bytes of a %d-byte shard", ErrCorruptIndex, len(b), src.size)
	}
	ix, err := l.memIndex(b)
	if err != nil {
		return err
	}
	if cacheable(src, opt) {
		opt.Cache.Add(src.storeID, src.key, src.base, src.size, ix)
	}
	mem := BytesSource(b)
	mem.ix = ix
	return l.readChunks(ctx, mem, ix, sel, dst, opt)
}

// vecReader returns src's store as a store.VectorReader when l's inner
// chunks that a read covers whole are best read straight into their place
// in dst with one vectored read each: uncompressed inner chunks (not inner
// shards) of a shard in a store, read with no chunk cache (which keeps
// whole decoded chunks of its own), whose place in dst is runs long
// enough (vecread.Worth). Otherwise it returns nil.
func (l *Layout) vecReader(src Source, dst nd.View, opt ReadOptions) store.VectorReader {
	if src.inMem || !l.identity || l.nested != nil || opt.ChunkCache != nil {
		return nil
	}
	vec, ok := src.r.(store.VectorReader)
	if !ok {
		return nil
	}
	// Every whole inner chunk's place in dst has dst's strides.
	run := nd.View{Shape: l.chunkShape, Strides: dst.Strides, ItemSize: l.itemSize}.RunLen()
	if !vecread.Worth(run, l.innerBytes) {
		return nil
	}
	return vec
}

// ReadsInPlace reports whether Read, from a shard stored in r (with
// StoreSource or RangeSource) into a view with dst's strides, reads the
// uncompressed inner chunks that a forward selection (steps of 1) covers
// whole straight into dst, one vectored read each, holding no buffer for
// them: then a caller that caps the bytes in flight need count only the
// index and the inner chunks read in part. It looks at dst's strides
// only, and is safe for concurrent use.
func (l *Layout) ReadsInPlace(r store.Reader, dst nd.View, opt ReadOptions) bool {
	return l.vecReader(Source{r: r}, dst, opt) != nil
}

// forward reports whether sel steps by 1 wherever it takes more than one
// index, so that it may cover inner chunks whole.
func forward(sel nd.Selection) bool {
	for _, s := range sel {
		if s.Count > 1 && s.Step != 1 {
			return false
		}
	}
	return true
}

// Kinds of work on one inner chunk once its bytes are in.
const (
	jobWhole  uint8 = iota // decode the whole encoded chunk (or inner shard)
	jobRuns                // assemble byte runs of an uncompressed chunk
	jobNested              // read an inner shard whose index is in span
	jobVec                 // read an uncompressed chunk straight into dst
)

// job is the work on one inner chunk that is stored.
type job struct {
	kind     uint8
	part     nd.ChunkPart
	lin      int   // C-order index of the inner chunk within the shard
	off, n   int64 // the chunk's bytes within the shard
	s0, s1   int   // its spans: spans[s0:s1]
	lo       int64 // jobRuns: first byte of the runs, relative to the chunk
	runLen   int64 // jobRuns: length of every run
	nestedIx *Index
}

// readChunks reads sel from the shard src whose index is ix.
func (l *Layout) readChunks(ctx context.Context, src Source, ix *Index, sel nd.Selection, dst nd.View, opt ReadOptions) error {
	var jobs []job
	var spans []store.Span
	vec := l.vecReader(src, dst, opt)
	for p := range sel.Chunks(l.chunkShape) {
		lin := 0
		for d, c := range p.Coords {
			lin += c * l.cpsStrides[d]
		}
		if opt.chunks != nil && opt.chunks.hit[lin] {
			continue // placed from the chunk cache
		}
		off, n, ok := ix.Entry(lin)
		if !ok {
			nd.Fill(p.DstView(dst), l.fill)
			continue
		}
		j := job{kind: jobWhole, part: p, lin: lin, off: off, n: n, s0: len(spans)}
		whole := l.coversChunk(p)
		if vec != nil && whole {
			if n != int64(l.innerBytes) {
				return fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					ErrCorruptIndex, p.Coords, n, l.innerBytes)
			}
			j.kind = jobVec
			j.s1 = j.s0 // no spans: nothing to fetch beforehand
			jobs = append(jobs, j)
			continue
		}
		switch {
		case src.inMem || whole:
			spans = append(spans, store.Span{Offset: off, Length: n})
		case l.nested != nil:
			if l.nested.coversAll(p) {
				spans = append(spans, store.Span{Offset: off, Length: n})
				break
			}
			j.kind = jobNested
			sub := RangeSource(src.r, src.storeID, src.key, src.base+off, n)
			if cacheable(sub, opt) {
				j.nestedIx, _ = opt.Cache.Get(sub.storeID, sub.key, sub.base, sub.size)
			}
			if j.nestedIx == nil {
				br, err := l.nested.indexRange(sub)
				if err != nil {
					return fmt.Errorf("inner shard %v: %w", p.Coords, err)
				}
				o, k, _ := br.Bounded()
				spans = append(spans, store.Span{Offset: o - src.base, Length: k})
			}
		case l.identity && opt.chunks == nil: // with a chunk cache, read whole chunks to cache them
			if n != int64(l.innerBytes) {
				return fmt.Errorf("%w: inner chunk %v has %d bytes, uncompressed chunks have %d",
					ErrCorruptIndex, p.Coords, n, l.innerBytes)
			}
			j.kind = jobRuns
			spans, j.lo, j.runLen = l.appendRuns(spans, p, off)
		default:
			spans = append(spans, store.Span{Offset: off, Length: n})
		}
		j.s1 = len(spans)
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil
	}
	data, release, err := l.fetch(ctx, src, spans, opt)
	if err != nil {
		return err
	}
	defer release()
	for i, s := range spans {
		if int64(len(data[i])) != s.Length {
			return fmt.Errorf("%w: bytes [%d, %d) lie past the end of the shard", ErrCorruptIndex, s.Offset, s.End())
		}
	}
	run := func(ctx context.Context, j *job) error {
		if err := l.runJob(ctx, src, j, spans, data, dst, opt); err != nil {
			return fmt.Errorf("inner chunk %v: %w", j.part.Coords, err)
		}
		return nil
	}
	if opt.Concurrency <= 1 || len(jobs) == 1 {
		for i := range jobs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := run(ctx, &jobs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Concurrency)
	for i := range jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return run(gctx, &jobs[i]) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// coversChunk reports whether p is its whole inner chunk, in order.
func (l *Layout) coversChunk(p nd.ChunkPart) bool {
	for d, c := range p.Count {
		if c != l.chunkShape[d] || (c > 1 && p.SrcStep[d] != 1) || (c == 1 && p.SrcStart[d] != 0) {
			return false
		}
	}
	return true
}

// coversAll reports whether p, a part of one of l's shards, touches every
// inner chunk of it.
func (l *Layout) coversAll(p nd.ChunkPart) bool {
	sel := make(nd.Selection, len(p.Count))
	for d := range sel {
		sel[d] = nd.Dim{Start: p.SrcStart[d], Count: p.Count[d], Step: p.SrcStep[d]}
		if p.Count[d] == 1 {
			sel[d].Step = 1
		}
	}
	return sel.NumChunks(l.chunkShape) == l.n
}

// appendRuns appends to spans the byte runs of the uncompressed inner
// chunk at off that part p needs, C order, and returns the first run's
// offset relative to the chunk and the run length. Too many runs become
// their one bounding span.
func (l *Layout) appendRuns(spans []store.Span, p nd.ChunkPart, off int64) ([]store.Span, int64, int64) {
	nd_ := len(p.Count)
	strides := cStrides(l.chunkShape, l.itemSize)
	lo := make([]int, nd_) // normalised (ascending) box
	step := make([]int, nd_)
	for d := range nd_ {
		lo[d], step[d] = p.SrcStart[d], p.SrcStep[d]
		if step[d] < 0 {
			lo[d] += (p.Count[d] - 1) * step[d]
			step[d] = -step[d]
		}
		if p.Count[d] == 1 {
			step[d] = 1
		}
	}
	// Trailing dimensions the part covers whole, then one it covers with
	// step 1, form contiguous runs; dimensions [0, outer) are walked.
	outer := nd_
	for d := nd_ - 1; d >= 0; d-- {
		if p.Count[d] == l.chunkShape[d] {
			outer = d
			continue
		}
		if step[d] == 1 {
			outer = d
		}
		break
	}
	runLen := int64(l.itemSize)
	base := int64(0)
	for d := outer; d < nd_; d++ {
		runLen *= int64(p.Count[d])
		base += int64(lo[d] * strides[d])
	}
	nruns := 1
	for d := range outer {
		nruns *= p.Count[d]
	}
	first := base
	for d := range outer {
		first += int64(lo[d] * strides[d])
	}
	if nruns > maxRuns {
		last := first
		for d := range outer {
			last += int64((p.Count[d] - 1) * step[d] * strides[d])
		}
		return append(spans, store.Span{Offset: off + first, Length: last + runLen - first}), first, last + runLen - first
	}
	idx := make([]int, outer)
	for {
		o := base
		for d := range outer {
			o += int64((lo[d] + idx[d]*step[d]) * strides[d])
		}
		spans = append(spans, store.Span{Offset: off + o, Length: runLen})
		d := outer - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < p.Count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			break
		}
	}
	return spans, first, runLen
}

// fetch returns the bytes of spans (offsets relative to the shard start),
// from memory or with one batched store call of coalesced ranges, and a
// function that recycles the buffers they live in once the caller is done
// with them. Results may be short where the shard ends first.
//
// A local store (an IntoReader that states no request limit of its own, as
// remote stores do with store.ConcurrencyLimiter) reads each coalesced
// range into a pooled buffer; a remote one serves them all in one
// GetRanges call, concurrently.
func (l *Layout) fetch(ctx context.Context, src Source, spans []store.Span, opt ReadOptions) ([][]byte, func(), error) {
	out := make([][]byte, len(spans))
	noop := func() {}
	if src.inMem {
		size := int64(len(src.mem))
		for i, s := range spans {
			lo, hi := min(s.Offset, size), min(s.End(), size)
			out[i] = src.mem[lo:hi:hi]
		}
		return out, noop, nil
	}
	if len(spans) == 0 {
		return out, noop, nil
	}
	groups, err := store.Coalesce(spans, opt.Coalesce)
	if err != nil {
		return nil, noop, err
	}
	var data [][]byte
	release := noop
	if into, ok := src.r.(store.IntoReader); ok && store.IsLocal(src.r) {
		data = make([][]byte, len(groups))
		held := make([]*[]byte, 0, len(groups))
		release = func() {
			for _, bp := range held {
				bufpool.Put(bp)
			}
		}
		for i, g := range groups {
			bp := bufpool.Get(int(g.Span.Length))
			held = append(held, bp)
			n, err := into.ReadInto(ctx, src.key, src.base+g.Span.Offset, *bp)
			if err != nil {
				release()
				return nil, noop, err
			}
			data[i] = (*bp)[:n]
		}
	} else {
		ranges := make([]store.ByteRange, len(groups))
		for i, g := range groups {
			ranges[i] = store.Range(src.base+g.Span.Offset, g.Span.Length)
		}
		if data, err = store.GetRanges(ctx, src.r, src.key, ranges); err != nil {
			return nil, noop, err
		}
		if len(data) != len(groups) {
			return nil, noop, fmt.Errorf("sharding: store returned %d ranges for %d requested", len(data), len(groups))
		}
	}
	for i, g := range groups {
		for _, m := range g.Members {
			out[m] = g.Extract(data[i], spans[m])
		}
	}
	return out, release, nil
}

// runJob decodes one inner chunk's share into dst.
func (l *Layout) runJob(ctx context.Context, src Source, j *job, spans []store.Span, data [][]byte, dst nd.View, opt ReadOptions) error {
	p := j.part
	out := p.DstView(dst)
	switch j.kind {
	case jobNested:
		sub := RangeSource(src.r, src.storeID, src.key, src.base+j.off, j.n)
		if j.nestedIx != nil {
			sub.ix = j.nestedIx
		} else {
			sub.index = data[j.s0]
		}
		nopt := opt
		nopt.Concurrency = 1
		return l.nested.read(ctx, sub, partSelection(p), out, nopt)
	case jobVec:
		return l.readVec(ctx, src, j, out)
	case jobRuns:
		bufp := getScratch(int(spans[j.s1-1].End() - j.off - j.lo))
		defer putScratch(bufp)
		buf := *bufp
		for s := j.s0; s < j.s1; s++ {
			copy(buf[spans[s].Offset-j.off-j.lo:], data[s])
		}
		v := nd.View{Data: buf, Offset: -int(j.lo), Shape: l.chunkShape, Strides: cStrides(l.chunkShape, l.itemSize), ItemSize: l.itemSize}
		nd.Copy(out, p.SrcView(v))
		return nil
	}
	enc := data[j.s0]
	if opt.chunks != nil {
		return l.decodeCached(enc, j, out, opt)
	}
	if l.nested != nil {
		mem := BytesSource(enc)
		nopt := opt
		nopt.Concurrency = 1
		return l.nested.read(ctx, mem, partSelection(p), out, nopt)
	}
	if l.identity && len(enc) == l.innerBytes {
		nd.Copy(out, p.SrcView(nd.Contiguous(enc, l.chunkShape, l.itemSize)))
		return nil
	}
	if l.coversChunk(p) {
		if b, ok := out.IsContiguous(); ok {
			// Capped: the bytes past b belong to other chunks.
			return l.inner.Decode(b[:len(b):len(b)], enc)
		}
	}
	bufp := getScratch(l.innerBytes)
	defer putScratch(bufp)
	if err := l.inner.Decode(*bufp, enc); err != nil {
		return err
	}
	nd.Copy(out, p.SrcView(nd.Contiguous(*bufp, l.chunkShape, l.itemSize)))
	return nil
}

// readVec reads the uncompressed inner chunk of j straight into out, its
// place in dst, with one vectored read from the shard's store.
func (l *Layout) readVec(ctx context.Context, src Source, j *job, out nd.View) error {
	vec := src.r.(store.VectorReader) // vecReader made sure
	runs := vecread.GetRuns()
	*runs = out.AppendRuns(*runs)
	_, err := vec.ReadVec(ctx, src.key, src.base+j.off, *runs)
	vecread.PutRuns(runs)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: bytes [%d, %d) lie past the end of the shard", ErrCorruptIndex, j.off, j.off+j.n)
	}
	return err
}

// decodeCached decodes one whole inner chunk into a new buffer, hands it to
// the chunk cache and places its part.
func (l *Layout) decodeCached(enc []byte, j *job, out nd.View, opt ReadOptions) error {
	var v []byte
	if l.identity && len(enc) == l.innerBytes {
		v = append([]byte(nil), enc...) // enc may share a larger fetch buffer
	} else {
		var err error
		if v, err = l.inner.DecodeNew(enc); err != nil {
			return err
		}
	}
	cache.AddElem(opt.ChunkCache, cache.Key(opt.chunks.storeID, opt.chunks.key, 0, j.lin), v, l.itemSize)
	nd.Copy(out, j.part.SrcView(nd.Contiguous(v, l.chunkShape, l.itemSize)))
	return nil
}

// partSelection turns a chunk part into a selection within its chunk.
func partSelection(p nd.ChunkPart) nd.Selection {
	sel := make(nd.Selection, len(p.Count))
	for d := range sel {
		sel[d] = nd.Dim{Start: p.SrcStart[d], Count: p.Count[d], Step: p.SrcStep[d]}
	}
	return sel
}
