package pipeline

import (
	"runtime"
	"slices"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Default option values.
const (
	// DefaultMaxBytesInFlight caps encoded plus scratch bytes held by one
	// read or write beyond its output: 256 MiB.
	DefaultMaxBytesInFlight = 256 << 20
)

// Options tune one read or write. The zero value means every default.
type Options struct {
	// IOConcurrency is how many chunk or shard fetches run at once.
	// Default: the store's own request limit when it states one
	// (store.ConcurrencyLimiter: 64 for S3 by default), else 4 × GOMAXPROCS
	// and at least 8, enough to keep a local disk busy. Shards of a local
	// store (store.IsLocal), which are read and decoded by one goroutine
	// each, run DecodeConcurrency at a time instead: more would only
	// interleave their buffers in the CPU caches.
	IOConcurrency int
	// DecodeConcurrency is how many goroutines decode and encode chunks.
	// Default: GOMAXPROCS. 1 makes the whole read sequential in decoding.
	DecodeConcurrency int
	// MaxBytesInFlight caps the encoded bytes plus scratch buffers held at
	// once. Default DefaultMaxBytesInFlight. A single chunk larger than
	// the cap is still read, alone. Ignored when Budget is set.
	MaxBytesInFlight int64
	// Budget, if set, is the cap instead, shared with every other read and
	// write that runs with it (MaxBytesInFlight is then its Max). nil:
	// each read or write has a cap of its own, of MaxBytesInFlight.
	Budget *Budget
	// Coalesce tunes how nearby byte ranges of one shard are merged into
	// one request. The zero value means store's documented defaults.
	Coalesce store.CoalesceOptions
	// WriteEmptyChunks stores chunks that are all fill value instead of
	// deleting them (zarr-python's write_empty_chunks). Default false.
	WriteEmptyChunks bool
	// ConflictRetries is how many times a conditional read-modify-write
	// (store.ConditionalWriter: another process replaced the chunk or
	// shard since it was read) re-reads and retries before the write
	// fails with an error wrapping store.ErrConflict. Default
	// DefaultConflictRetries; negative: never retry.
	ConflictRetries int
}

// DefaultConflictRetries is the ConflictRetries default.
const DefaultConflictRetries = 16

// withCaps returns o with defaults, taking the I/O concurrency from a
// store whose backend states its own request limit (through any wrapper:
// store.CapabilitiesOf) when o does not set one.
func (o Options) withCaps(c store.Capabilities) Options {
	if c.MaxConcurrency > 0 && o.IOConcurrency <= 0 {
		o.IOConcurrency = c.MaxConcurrency
	}
	return o.WithDefaults()
}

// forStore is withCaps for store r.
func (o Options) forStore(r store.Reader) Options { return o.withCaps(store.CapabilitiesOf(r)) }

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.DecodeConcurrency <= 0 {
		o.DecodeConcurrency = runtime.GOMAXPROCS(0)
	}
	if o.IOConcurrency <= 0 {
		o.IOConcurrency = max(8, 4*runtime.GOMAXPROCS(0))
	}
	if o.Budget != nil {
		o.MaxBytesInFlight = o.Budget.Max()
	}
	if o.MaxBytesInFlight <= 0 {
		o.MaxBytesInFlight = DefaultMaxBytesInFlight
	}
	if o.ConflictRetries == 0 {
		o.ConflictRetries = DefaultConflictRetries
	}
	return o
}

// Grid is what the pipeline knows of an array: its shape, its regular chunk
// grid, how chunk coordinates become store keys, and how chunks are encoded.
// A Grid is immutable once built and safe for concurrent use.
type Grid struct {
	Shape      []int
	ChunkShape []int
	// Key returns the store key of the chunk at the given grid coordinates.
	Key func(coords []int) string
	// AppendKey, if set, appends Key(coords) to dst and returns the
	// extended slice without allocating when dst has room: small reads
	// build their cache keys with it in reused buffers. nil: Key is used.
	AppendKey func(dst []byte, coords []int) []byte
	// Chain encodes and decodes one whole chunk (or shard).
	Chain *codecs.Chain
	// Shard is set when the chain is sharding_indexed alone (no other
	// codec around it), enabling partial shard reads.
	Shard *sharding.Layout
	// IndexCache, if set, keeps decoded shard indexes between reads;
	// writes through the pipeline drop those of the shards they replace.
	IndexCache *sharding.IndexCache
	// StoreID tells stores apart in shared caches.
	StoreID string
	// Rect, if set, makes the grid rectilinear (chunks of varying edge
	// lengths): ChunkShape is then the largest chunk shape and Chain its
	// chain; see Rectilinear.
	Rect *Rectilinear
	// Cache, if set, keeps decoded chunks (inner chunks, for a sharded
	// array) between reads, keyed cache.Key(StoreID, chunk key, 0, -1)
	// (inner chunks: the inner chunk's index instead of -1); see
	// cacheKey. Writes remove the chunks they replace. nil: no cache.
	Cache cache.Cache
}

// appendKey appends the store key of the chunk at coords to dst.
func (g *Grid) appendKey(dst []byte, coords []int) []byte {
	if g.AppendKey != nil {
		return g.AppendKey(dst, coords)
	}
	return append(dst, g.Key(coords)...)
}

// cacheKey is the Cache key of the whole chunk at store key key.
func (g *Grid) cacheKey(key string) string { return cache.Key(g.StoreID, key, 0, -1) }

// forget drops what g's caches hold of the chunk (shard) stored at key,
// after a write replaced or deleted it: its decoded chunks (every inner
// chunk, for a sharded array) in g.Cache, and its shard indexes (through
// nested shards) in g.IndexCache. The pipeline is the one owner of this
// invalidation: every write goes through it.
func (g *Grid) forget(key string) {
	if g.IndexCache != nil && g.Shard != nil {
		g.IndexCache.Invalidate(g.StoreID, key)
	}
	if g.Cache == nil {
		return
	}
	if g.Shard != nil {
		for lin := range g.Shard.NumChunks() {
			g.Cache.Remove(cache.Key(g.StoreID, key, 0, lin))
		}
		return
	}
	g.Cache.Remove(g.cacheKey(key))
}

// DecodeUnit returns the shape of g's read units, what a read decodes
// whole: its chunks, or the innermost chunks of its shards through every
// level of nesting.
func (g *Grid) DecodeUnit() []int { return slices.Clone(g.unitShape()) }

// UnitLevels returns the chunk shapes of g from the outermost down: its
// chunk (shard) shape, then the inner chunk shape of each level of
// sharding; the last is DecodeUnit.
func (g *Grid) UnitLevels() [][]int {
	levels := [][]int{slices.Clone(g.ChunkShape)}
	for l := g.Shard; l != nil; l = l.Nested() {
		levels = append(levels, slices.Clone(l.ChunkShape()))
	}
	return levels
}

// itemSize returns the element size of the array.
func (g *Grid) itemSize() int { return g.Chain.Repr().DType.Size() }

// fill returns one element of the fill value.
func (g *Grid) fill() []byte { return g.Chain.Repr().Fill }

// chunkBytes returns the decoded size of one chunk.
func (g *Grid) chunkBytes() int { return g.Chain.Repr().NumBytes() }
