package zarr

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// Metadata document names.
const (
	// MetadataKey is the name of a v3 node's metadata document.
	MetadataKey = "zarr.json"
	// V2ArrayKey, V2GroupKey and V2AttrsKey name the v2 documents.
	V2ArrayKey = ".zarray"
	V2GroupKey = ".zgroup"
	V2AttrsKey = ".zattrs"
)

// Further sentinel errors of the Array and Group API.
var (
	// ErrNodeNotFound reports that no array or group exists at a path.
	ErrNodeNotFound = errors.New("zarr node not found")
	// ErrNodeType reports an array where a group was expected or the
	// other way round.
	ErrNodeType = errors.New("wrong zarr node type")
	// ErrTypeMismatch reports a typed read or write whose Go element type
	// does not match the array's data type.
	ErrTypeMismatch = errors.New("element type does not match the array's data type")
)

// Option configures an opened or created array.
type Option func(*options)

type options struct {
	pipe       pipeline.Options
	indexCache *sharding.IndexCache
	storeID    string
	chunkCache cache.Cache
	// Size limits (limits.go); 0 means the default.
	maxMeta, maxChunk, maxRead int64
	maxVLen                    int64 // WithMaxVLenChunkBytes (strings.go)
	overwrite                  bool  // Overwrite (create.go)
	// Metadata lookup (consolidated.go): the only format to look for (0:
	// v3, then v2), whether to ignore and whether to verify consolidated
	// metadata.
	zarrFormat         int
	noCons, verifyCons bool
}

// WithPipeline sets the concurrency, in-flight memory and coalescing
// options of every read and write on the array. The zero value of each
// field keeps pipeline's documented default.
func WithPipeline(o pipeline.Options) Option {
	return func(c *options) {
		if o.Budget == nil {
			o.Budget = c.pipe.Budget // WithBudget's, given before
		}
		c.pipe = o
	}
}

// WithBudget makes the array's reads and writes hold their bytes in
// flight against b, shared with everything else that uses b, instead of
// a cap of their own (pipeline.Options.Budget).
func WithBudget(b *pipeline.Budget) Option { return func(c *options) { c.pipe.Budget = b } }

// WithBudget returns a copy of a (sharing its metadata, store, codecs and
// caches) whose reads and writes hold their bytes in flight against b: a
// scheduler running many reads of arrays it did not open (a loader, a
// copy) keeps them all within one budget.
func (a *Array) WithBudget(b *pipeline.Budget) *Array {
	c := *a
	c.opts.pipe.Budget = b
	return &c
}

// WithConcurrency sets the I/O and decode concurrency (0 keeps a default:
// see pipeline.Options).
func WithConcurrency(io, decode int) Option {
	return func(c *options) { c.pipe.IOConcurrency, c.pipe.DecodeConcurrency = io, decode }
}

// WithIndexCache shares a shard-index cache, for instance between the
// arrays of a group. By default each sharded array has its own cache of
// DefaultIndexCacheBytes.
func WithIndexCache(c *sharding.IndexCache) Option { return func(o *options) { o.indexCache = c } }

// WithStoreID names the store in shared caches; arrays of
// different stores sharing one cache must have different IDs. Default:
// store.IDOf(the store), its StoreID (the remote stores' scheme, bucket
// and prefix, so two Store values over one bucket share entries), else its
// address.
func WithStoreID(id string) Option { return func(o *options) { o.storeID = id } }

// WithCache keeps the array's decoded chunks (inner chunks, for a sharded
// array) in c between reads; writes through the array remove the chunks
// they replace. Default: no cache. One cache may be shared by many arrays,
// of one store or several, under one byte budget: keys hold the store ID
// (WithStoreID) and the chunk's key, which includes the array's path. To
// share a cache between the arrays of a group, pass the same WithCache to
// each Group.OpenArray:
//
//	c := cache.NewLRU(512 << 20)
//	a, err := g.OpenArray(ctx, "temperature", zarr.WithCache(c))
//	b, err := g.OpenArray(ctx, "pressure", zarr.WithCache(c))
//
// Writes that bypass the array (another process, another Array value over
// the same store without the same cache) are not seen by the cache.
func WithCache(c cache.Cache) Option { return func(o *options) { o.chunkCache = c } }

// DefaultIndexCacheBytes is the size of an array's own shard-index cache:
// sharding.DefaultIndexCacheBytes (16 MiB), the one default.
const DefaultIndexCacheBytes = sharding.DefaultIndexCacheBytes

// Array is an open Zarr array (v3, or v2 seen through its v3 equivalent).
// It is safe for concurrent use; reads and writes of overlapping regions
// from several goroutines are not ordered against each other.
type Array struct {
	st     store.Reader
	path   string
	meta   *ArrayMetadata
	format int
	grid   *pipeline.Grid
	opts   options
}

// nodeKey joins a node path and a document or chunk name into a store key.
func nodeKey(nodePath, name string) string {
	if nodePath == "" {
		return name
	}
	return nodePath + "/" + name
}

// cleanPath validates a node path: "" or "/" is the root.
func cleanPath(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	if err := store.ValidateKey(p); err != nil {
		return "", err
	}
	return p, nil
}

// OpenArray opens the array at path in s (v3 zarr.json first, then v2
// .zarray). A missing array is ErrNodeNotFound; a group there is ErrNodeType.
func OpenArray(ctx context.Context, s store.Reader, nodePath string, opts ...Option) (*Array, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	d, err := readNode(ctx, s, p, NodeArray, o)
	if err != nil {
		return nil, err
	}
	return openArrayDocs(s, p, d, opts)
}

// openArrayDocs opens the array at p from its metadata documents (read
// from the store, or taken from consolidated metadata).
func openArrayDocs(s store.Reader, p string, d nodeDocs, opts []Option) (*Array, error) {
	if d.v3 != nil {
		meta, err := ParseArrayMetadata(d.v3)
		if err != nil {
			return nil, fmt.Errorf("open %q: %w", p, err)
		}
		return newArray(s, p, meta, 3, opts)
	}
	v2, err := ParseArrayMetadataV2(d.v2, d.v2attrs)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	meta, err := v2.ToV3()
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	return newArray(s, p, meta, 2, opts)
}

// CreateArray writes meta as a new v3 array at path and returns it
// opened, as zarr-python's create_array does: missing parent groups (the
// root included) are written too; a path inside an array is ErrNodeType;
// a node already at path is ErrNodeExists unless Overwrite is given, which
// deletes it and everything stored under it first. The metadata and its
// codecs' encode settings (compression levels) are checked before anything
// is written.
func CreateArray(ctx context.Context, s store.Store, nodePath string, meta *ArrayMetadata, opts ...Option) (*Array, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, metaErr("array", "nil metadata")
	}
	if err := meta.Validate(); err != nil {
		return nil, err
	}
	a, err := newArray(s, p, meta, 3, opts)
	if err != nil {
		return nil, err
	}
	if err := a.checkEncode(); err != nil {
		return nil, fmt.Errorf("create %q: %w", p, err)
	}
	doc, err := meta.Marshal()
	if err != nil {
		return nil, err
	}
	if err := prepareCreate(ctx, s, p, 3, a.opts); err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, MetadataKey), doc); err != nil {
		return nil, err
	}
	return a, nil
}

// checkEncode reports an encode setting of the array's codecs that a write
// would fail on (a compression level out of range), inner and index chains
// of shards (nested too) included.
func (a *Array) checkEncode() error {
	if err := a.grid.Chain.CheckEncode(); err != nil {
		return err
	}
	for l := a.grid.Shard; l != nil; l = l.Nested() {
		if err := l.Inner().CheckEncode(); err != nil {
			return fmt.Errorf("sharding_indexed inner chunks: %w", err)
		}
	}
	return nil
}

// newArray resolves the codec chain and builds the pipeline grid.
func newArray(s store.Reader, p string, meta *ArrayMetadata, format int, opts []Option) (*Array, error) {
	a := &Array{st: s, path: p, meta: meta, format: format}
	for _, o := range opts {
		o(&a.opts)
	}
	chain, err := codecs.NewChain(meta.Codecs, meta.ChunkRepr())
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	enc := meta.ChunkKeyEncoding
	g := &pipeline.Grid{
		Shape:      slices.Clone(meta.Shape),
		ChunkShape: slices.Clone(meta.ChunkShape),
		Chain:      chain,
		Key: func(coords []int) string {
			if format == 2 && len(coords) == 0 {
				return nodeKey(p, "0")
			}
			return nodeKey(p, enc.Key(coords))
		},
		AppendKey: func(dst []byte, coords []int) []byte {
			if p != "" {
				dst = append(append(dst, p...), '/')
			}
			if format == 2 && len(coords) == 0 {
				return append(dst, '0')
			}
			return enc.AppendKey(dst, coords)
		},
		StoreID: a.opts.storeID,
		Cache:   a.opts.chunkCache,
	}
	if g.StoreID == "" {
		g.StoreID = store.IDOf(s)
	}
	l, err := sharding.LayoutOf(chain)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	if l != nil {
		g.Shard = l
		g.IndexCache = a.opts.indexCache
		if g.IndexCache == nil {
			g.IndexCache = sharding.NewIndexCache(DefaultIndexCacheBytes)
		}
	}
	if meta.Rectilinear != nil {
		if g.Rect, err = rectGrid(meta, chain, l); err != nil {
			return nil, fmt.Errorf("open %q: %w", p, err)
		}
	}
	// The unit a read decodes whole (a chunk, or a shard's inner chunk) is
	// allocated as one buffer: refuse absurd ones before any data is read.
	unit := chain.Repr().NumBytes()
	if g.Shard != nil {
		unit = g.Shard.Inner().Repr().NumBytes()
	}
	if err := a.opts.checkChunkBytes(p, unit); err != nil {
		return nil, err
	}
	a.grid = g
	return a, nil
}

// MaxDecodedChunkBytes is the default per-chunk decode limit: the largest
// decoded chunk (for a sharded array, inner chunk) OpenArray accepts unless
// WithMaxChunkBytes says otherwise. Reads decode such a unit into one
// buffer, even to return a few of its elements. 4 GiB.
const MaxDecodedChunkBytes int64 = 4 << 30

// Path returns the array's node path in its store ("" for the root).
func (a *Array) Path() string { return a.path }

// ZarrFormat returns 3, or 2 for an array read from v2 metadata.
func (a *Array) ZarrFormat() int { return a.format }

// Metadata returns the array's (v3) metadata. Treat it as read-only.
func (a *Array) Metadata() *ArrayMetadata { return a.meta }

// Shape returns the array's shape.
func (a *Array) Shape() []int { return slices.Clone(a.meta.Shape) }

// Chunks returns the array's chunk shape, as zarr-python's Array.chunks:
// the chunks a read fetches and decodes, which for a sharded array are the
// chunks inside each shard (the sharding codec's chunk_shape; in nested
// shards, the outer shard's); for a rectilinear grid, the largest chunk
// shape (the edges are in Metadata().Rectilinear). Units gives the
// innermost decode unit through every level of nesting.
func (a *Array) Chunks() []int {
	if a.grid.Shard != nil {
		return slices.Clone(a.grid.Shard.ChunkShape())
	}
	return slices.Clone(a.meta.ChunkShape)
}

// Shards returns the array's shard shape, as zarr-python's Array.shards:
// the chunk grid's shape, each shard one store object holding whole
// Chunks; nil for an array that is not sharded. For a rectilinear grid of
// shards, the largest shard shape.
func (a *Array) Shards() []int {
	if a.grid.Shard == nil {
		return nil
	}
	return slices.Clone(a.meta.ChunkShape)
}

// Chain returns the array's resolved codec chain.
func (a *Array) Chain() *codecs.Chain { return a.grid.Chain }

// Sharding returns the resolved shard layout, or nil if the array is not
// sharded (its codecs are not sharding_indexed alone).
func (a *Array) Sharding() *sharding.Layout { return a.grid.Shard }

// Units returns the array's write unit shape, what one atomic store write
// replaces (its chunk, or its shard), and its decode unit shape, what a
// read fetches and decodes whole (its chunk, or the innermost chunk of its
// shards through every level of nesting). Callers that schedule reads or
// writes of their own (loaders, copies, iterations) align to these.
func (a *Array) Units() (write, decode []int) {
	return slices.Clone(a.meta.ChunkShape), a.grid.DecodeUnit()
}

// ChunkKey returns the store key of the chunk at grid coordinates coords.
func (a *Array) ChunkKey(coords []int) string { return a.grid.Key(coords) }

// Selection normalises a selection against the array's shape. No items
// select the whole array.
func (a *Array) Selection(items ...nd.Item) (nd.Selection, error) {
	return nd.Normalize(items, a.meta.Shape)
}

// ReadBytesInto reads the selected elements into out in C order, in memory
// representation (little-endian). out must hold exactly the selection's
// size; SelectionShape tells its shape. Chunks not stored read as the fill
// value. ReadBytes and ReadBytesInto pair as Read and ReadInto do: a new
// buffer, or yours.
func (a *Array) ReadBytesInto(ctx context.Context, out []byte, items ...nd.Item) error {
	if coords, ok := a.elementCoords(items); ok {
		// One element: the fast path, which builds no selection.
		if err := pipeline.ReadElement(ctx, a.st, a.grid, coords[:len(items)], out, a.opts.pipe); err != nil {
			return fmt.Errorf("read %q: %w", a.path, err)
		}
		return nil
	}
	if a.readCachedBox(ctx, out, items) { // a tile the chunk cache holds
		return nil
	}
	if _, n, ok, err := a.zeroDimAxes(items); err != nil {
		return err
	} else if ok {
		if len(out) != n*a.meta.DataType.Size() {
			return fmt.Errorf("%w: %d bytes to read into, the selection of %q needs %d", nd.ErrInvalidSelection, len(out), a.path, n*a.meta.DataType.Size())
		}
		if n == 0 {
			return nil
		}
		return a.ReadSelection(ctx, out, nd.Selection{})
	}
	if pts, _, ok, err := a.pointwise(items); err != nil {
		return err
	} else if ok { // index arrays NumPy broadcasts: pointwise
		if len(out) != pts.Len()*a.meta.DataType.Size() {
			return fmt.Errorf("%w: %d bytes to read into, the pointwise selection of %q needs %d", nd.ErrInvalidSelection, len(out), a.path, pts.Len()*a.meta.DataType.Size())
		}
		return a.ReadPointsSelection(ctx, out, pts)
	}
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	return a.ReadSelection(ctx, out, sel)
}

// elementCoords returns the coordinates items select when they are one
// in-bounds integer per dimension (negative ones counted from the end) of
// an array of rank at most 8, and whether they are.
func (a *Array) elementCoords(items []nd.Item) (coords [8]int, ok bool) {
	shape := a.meta.Shape
	if len(items) == 0 || len(items) != len(shape) || len(items) > len(coords) {
		return coords, false
	}
	for d, it := range items {
		i, isIndex := it.IsIndex()
		if !isIndex {
			return coords, false
		}
		if i < 0 {
			i += shape[d]
		}
		if i < 0 || i >= shape[d] {
			return coords, false // Normalize reports it
		}
		coords[d] = i
	}
	return coords, true
}

// ReadSelection is ReadBytesInto with an already normalised selection.
// Like every read and write that takes a buffer, it takes the buffer
// before what selects its elements.
func (a *Array) ReadSelection(ctx context.Context, out []byte, sel nd.Selection) error {
	if _, err := a.selectionBytes(sel); err != nil {
		return fmt.Errorf("read %w", err)
	}
	if err := pipeline.Read(ctx, a.st, a.grid, sel, out, a.opts.pipe); err != nil {
		return fmt.Errorf("read %q: %w", a.path, err)
	}
	return nil
}

// ReadBytes reads the selected elements into a new buffer and returns it
// with the selection's shape. A selection larger than WithMaxReadBytes, or
// than the platform can allocate, is an error wrapping ErrTooLarge, and
// nothing is allocated.
func (a *Array) ReadBytes(ctx context.Context, items ...nd.Item) ([]byte, []int, error) {
	if shape, n, ok, err := a.zeroDimAxes(items); err != nil {
		return nil, nil, err
	} else if ok {
		b, _, err := a.ReadBytes(ctx)
		if err != nil {
			return nil, nil, err
		}
		return b[:n*len(b)], shape, nil
	}
	if pts, shape, ok, err := a.pointwise(items); err != nil {
		return nil, nil, err
	} else if ok { // index arrays NumPy broadcasts: pointwise
		b, _, err := a.readPoints(ctx, pts)
		return b, shape, err
	}
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	n, err := a.allocBytes(sel)
	if err != nil {
		return nil, nil, err
	}
	shape := sel.Shape()
	out := make([]byte, n)
	if err := a.ReadSelection(ctx, out, sel); err != nil {
		return nil, nil, err
	}
	return out, shape, nil
}

// WriteBytes writes data (C order, the selection's shape, memory
// representation) into the selected elements. Index arrays that NumPy
// broadcasts (see nd.Broadcast) select pointwise, as for ReadBytes: data
// then has the broadcast result's shape, and where a point repeats its
// last value wins, as in NumPy. The array's store must be a store.Writer.
func (a *Array) WriteBytes(ctx context.Context, data []byte, items ...nd.Item) error {
	if shape, n, ok, err := a.zeroDimAxes(items); err != nil {
		return err
	} else if ok {
		if len(data) != n*a.meta.DataType.Size() {
			return fmt.Errorf("write %q: %w: %d bytes for the selection of shape %v, which needs %d", a.path, nd.ErrInvalidSelection, len(data), shape, n*a.meta.DataType.Size())
		}
		if n == 0 {
			return nil
		}
		return a.WriteSelection(ctx, data, nd.Selection{})
	}
	if pts, shape, ok, err := a.pointwise(items); err != nil {
		return err
	} else if ok { // index arrays NumPy broadcasts: pointwise, the last write wins
		if len(data) != pts.Len()*a.meta.DataType.Size() {
			return fmt.Errorf("write %q: %w: %d bytes for the pointwise selection of shape %v, which needs %d", a.path, nd.ErrInvalidSelection, len(data), shape, pts.Len()*a.meta.DataType.Size())
		}
		return a.WritePointsSelection(ctx, data, pts)
	}
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	return a.WriteSelection(ctx, data, sel)
}

// WriteSelection is WriteBytes with an already normalised selection.
func (a *Array) WriteSelection(ctx context.Context, data []byte, sel nd.Selection) error {
	rw, ok := a.st.(pipeline.ReadWriter)
	if !ok {
		return fmt.Errorf("write %q: %w", a.path, store.ErrReadOnly)
	}
	if _, err := a.selectionBytes(sel); err != nil {
		return fmt.Errorf("write %w", err)
	}
	if err := pipeline.Write(ctx, rw, a.grid, sel, data, a.opts.pipe); err != nil {
		return fmt.Errorf("write %q: %w", a.path, err)
	}
	return nil
}

// Attributes returns the array's user attributes (numbers as json.Number).
func (a *Array) Attributes() map[string]any { return a.meta.Attributes }

// Name returns the last element of the array's path ("/" for the root).
func (a *Array) Name() string {
	if a.path == "" {
		return "/"
	}
	return path.Base(a.path)
}
