package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/sharding"
)

// RectilinearGrid is a "rectilinear" chunk_grid (zarr-extensions'
// chunk-grids/rectilinear, as zarr-python 3.4 and zarrs write it): per
// dimension, the edge lengths of its chunks, so chunks along one
// dimension may differ in length. Chunk keys are those of a regular grid
// (chunk coordinates through the chunk key encoding). The last chunk of a
// dimension may end past the array, as an edge chunk of a regular grid
// does; further chunks past the end are allowed and never touched.
type RectilinearGrid struct {
	// Dims holds one entry per dimension of the array.
	Dims []RectilinearDim
}

// RectilinearDim is the chunk edges of one dimension of a rectilinear
// grid: Regular > 0 for a bare integer (chunks of that length cover the
// dimension), else Runs, the edges in order as runs of equal lengths
// ({Size: e, Count: 1} for an explicit edge e, {Size: v, Count: n} for the
// run-length encoded [v, n]).
type RectilinearDim struct {
	Regular int
	Runs    []nd.Run
}

// maxEdge returns the largest edge the dimension declares.
func (d RectilinearDim) maxEdge() int {
	if d.Regular > 0 {
		return d.Regular
	}
	m := 0
	for _, r := range d.Runs {
		m = max(m, r.Size)
	}
	return m
}

// edges resolves the dimension against its length.
func (d RectilinearDim) edges(extent int) (nd.Edges, error) {
	if d.Regular > 0 {
		return nd.RegularEdges(d.Regular, extent)
	}
	if len(d.Runs) == 0 {
		return nd.Edges{}, fmt.Errorf("%w: no chunk edges", nd.ErrInvalidGrid)
	}
	return nd.NewEdges(d.Runs, extent)
}

// Edges resolves the grid against the array's shape: one nd.Edges per
// dimension. Errors wrap ErrInvalidMetadata and nd.ErrInvalidGrid and name
// the dimension.
func (g *RectilinearGrid) Edges(shape []int) ([]nd.Edges, error) {
	if len(g.Dims) != len(shape) {
		return nil, metaErr("chunk_grid", "chunk_shapes has %d dimensions, shape has %d", len(g.Dims), len(shape))
	}
	out := make([]nd.Edges, len(shape))
	for i, d := range g.Dims {
		e, err := d.edges(shape[i])
		if err != nil {
			return nil, fmt.Errorf("%w: chunk_grid.configuration.chunk_shapes[%d]: %w", ErrInvalidMetadata, i, err)
		}
		out[i] = e
	}
	return out, nil
}

// MaxChunkShape returns the largest edge each dimension declares: a bound
// on the shape of every chunk (ArrayMetadata.ChunkShape of a rectilinear
// array).
func (g *RectilinearGrid) MaxChunkShape() []int {
	s := make([]int, len(g.Dims))
	for i, d := range g.Dims {
		s[i] = d.maxEdge()
	}
	return s
}

// Rectilinear parsing limits: runs per dimension (the document's size
// bounds them anyway: this says so early and clearly).
const maxRunsPerDim = 1 << 20

// parseRectilinear parses the configuration of a rectilinear chunk_grid.
func parseRectilinear(cfg json.RawMessage) (*RectilinearGrid, error) {
	const field = "chunk_grid.configuration"
	if cfg == nil {
		return nil, metaErr("chunk_grid", "rectilinear grid without configuration")
	}
	var c struct {
		Kind        *string           `json:"kind"`
		ChunkShapes []json.RawMessage `json:"chunk_shapes"`
	}
	if err := strictUnmarshal(cfg, &c); err != nil {
		return nil, metaErr(field, "%v", err)
	}
	if c.Kind == nil {
		return nil, metaErr(field, "kind missing (want \"inline\")")
	}
	if *c.Kind != "inline" {
		return nil, fmt.Errorf("%w: %s: rectilinear kind %q (only \"inline\" is defined)", ErrUnsupported, field, clip(*c.Kind))
	}
	if c.ChunkShapes == nil {
		return nil, metaErr(field, "chunk_shapes missing")
	}
	if len(c.ChunkShapes) > MaxRank {
		return nil, metaErr(field, "chunk_shapes has %d dimensions, more than %d", len(c.ChunkShapes), MaxRank)
	}
	g := &RectilinearGrid{Dims: make([]RectilinearDim, len(c.ChunkShapes))}
	for i, raw := range c.ChunkShapes {
		d, err := parseRectDim(raw)
		if err != nil {
			return nil, metaErr(fmt.Sprintf("%s.chunk_shapes[%d]", field, i), "%v", err)
		}
		g.Dims[i] = d
	}
	return g, nil
}

// parseEdge parses a positive integer (an edge length or a repeat count).
func parseEdge(raw json.RawMessage, what string) (int, error) {
	n, err := parseInt(raw)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", what, err)
	}
	if n < 1 {
		return 0, fmt.Errorf("%s %d: must be at least 1", what, n)
	}
	if n > math.MaxInt {
		return 0, fmt.Errorf("%s %d: out of range", what, n)
	}
	return int(n), nil
}

// parseRectDim parses one entry of chunk_shapes: an integer, or an array
// of integers and [edge, count] pairs.
func parseRectDim(raw json.RawMessage) (RectilinearDim, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		n, err := parseEdge(t, "edge length")
		return RectilinearDim{Regular: n}, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(t, &items); err != nil {
		return RectilinearDim{}, fmt.Errorf("not an integer or an array of edges")
	}
	if len(items) == 0 {
		return RectilinearDim{}, fmt.Errorf("no chunk edges")
	}
	if len(items) > maxRunsPerDim {
		return RectilinearDim{}, fmt.Errorf("%d entries, more than %d", len(items), maxRunsPerDim)
	}
	runs := make([]nd.Run, len(items))
	for k, it := range items {
		it = bytes.TrimSpace(it)
		if len(it) > 0 && it[0] == '[' {
			var pair []json.RawMessage
			if err := json.Unmarshal(it, &pair); err != nil || len(pair) != 2 {
				return RectilinearDim{}, fmt.Errorf("entry %d: want an edge or [edge, count]", k)
			}
			size, err := parseEdge(pair[0], "edge length")
			if err != nil {
				return RectilinearDim{}, fmt.Errorf("entry %d: %v", k, err)
			}
			count, err := parseEdge(pair[1], "repeat count")
			if err != nil {
				return RectilinearDim{}, fmt.Errorf("entry %d: %v", k, err)
			}
			runs[k] = nd.Run{Size: size, Count: count}
			continue
		}
		size, err := parseEdge(it, "edge length")
		if err != nil {
			return RectilinearDim{}, fmt.Errorf("entry %d: %v", k, err)
		}
		runs[k] = nd.Run{Size: size, Count: 1}
	}
	return RectilinearDim{Runs: runs}, nil
}

// MarshalJSON writes the grid as its chunk_grid object, as zarr-python
// writes it: a bare integer stays one, equal neighbouring edges are
// written [edge, count], single edges as integers.
func (g *RectilinearGrid) MarshalJSON() ([]byte, error) {
	shapes := make([]any, len(g.Dims))
	for i, d := range g.Dims {
		if d.Regular > 0 {
			shapes[i] = d.Regular
			continue
		}
		var merged []nd.Run
		for _, r := range d.Runs {
			if k := len(merged) - 1; k >= 0 && merged[k].Size == r.Size && merged[k].Count <= math.MaxInt-r.Count {
				merged[k].Count += r.Count
				continue
			}
			merged = append(merged, r)
		}
		items := make([]any, len(merged))
		for k, r := range merged {
			if r.Count == 1 {
				items[k] = r.Size
			} else {
				items[k] = [2]int{r.Size, r.Count}
			}
		}
		shapes[i] = items
	}
	type config struct {
		Kind        string `json:"kind"`
		ChunkShapes []any  `json:"chunk_shapes"`
	}
	return json.Marshal(struct {
		Name          string `json:"name"`
		Configuration config `json:"configuration"`
	}{"rectilinear", config{"inline", shapes}})
}

// validateRectilinear checks a rectilinear grid against the shape and
// ChunkShape (the largest edges).
func (m *ArrayMetadata) validateRectilinear() error {
	if _, err := m.Rectilinear.Edges(m.Shape); err != nil {
		return err
	}
	if want := m.Rectilinear.MaxChunkShape(); !slices.Equal(want, m.ChunkShape) {
		return metaErr("chunk_grid", "ChunkShape %v of a rectilinear grid is not its largest edges %v", m.ChunkShape, want)
	}
	return nil
}

// RectilinearChunks makes the array's chunk grid rectilinear: edges holds,
// per dimension, the lengths of its chunks in order (each at least 1,
// summing to at least the dimension's length). Pass nil as
// NewArrayMetadata's chunks. For a sharded array, RectilinearShards gives
// the shards' edges instead. The grid is written as zarr-python writes it
// (runs of equal edges as [edge, count]); zarr-python reads it with its
// array.rectilinear_chunks setting on.
func RectilinearChunks(edges ...[]int) MetadataOption {
	return func(b *metaBuild) error {
		g := &RectilinearGrid{Dims: make([]RectilinearDim, len(edges))}
		for i, e := range edges {
			if len(e) == 0 {
				return metaErr("chunk_grid", "RectilinearChunks: dimension %d has no edges", i)
			}
			g.Dims[i].Runs = nd.CompressRuns(e)
		}
		b.rect = g
		return nil
	}
}

// RectilinearShards shards the array in a rectilinear grid of shards:
// edges holds, per dimension, the lengths of its shards in order, as
// RectilinearChunks does for chunks; each shard is made of whole chunks of
// NewArrayMetadata's chunks, so every edge must be a multiple of the chunk
// shape, as zarr-python requires.
func RectilinearShards(edges ...[]int) MetadataOption {
	rect := RectilinearChunks(edges...)
	return func(b *metaBuild) error {
		if err := rect(b); err != nil {
			return err
		}
		b.rectShards = true
		return nil
	}
}

// checkInner reports an edge that is no multiple of a shard's inner chunk
// shape (every shard of a rectilinear grid holds whole inner chunks).
func (g *RectilinearGrid) checkInner(inner []int) error {
	if len(inner) != len(g.Dims) {
		return metaErr("codecs", "sharding_indexed chunk_shape has %d dimensions, the grid %d", len(inner), len(g.Dims))
	}
	for i, d := range g.Dims {
		if d.Regular > 0 {
			if d.Regular%inner[i] != 0 {
				return metaErr("codecs", "dimension %d: chunk edge %d is not a multiple of the inner chunk edge %d", i, d.Regular, inner[i])
			}
			continue
		}
		for _, r := range d.Runs {
			if r.Size%inner[i] != 0 {
				return metaErr("codecs", "dimension %d: chunk edge %d is not a multiple of the inner chunk edge %d", i, r.Size, inner[i])
			}
		}
	}
	return nil
}

// rectGrid builds the engine's view of meta's rectilinear grid; chain is
// the chain of the largest chunks, whose codecs every other chunk shape
// is prepared from, and l its shard layout (nil when not sharded).
func rectGrid(meta *ArrayMetadata, chain *codecs.Chain, l *sharding.Layout) (*pipeline.Rectilinear, error) {
	edges, err := meta.Rectilinear.Edges(meta.Shape)
	if err != nil {
		return nil, err
	}
	if l != nil {
		if err := meta.Rectilinear.checkInner(l.ChunkShape()); err != nil {
			return nil, err
		}
	}
	return &pipeline.Rectilinear{Edges: edges, Prepare: prepareShapes(chain, codecs.PrepareOptions{})}, nil
}

// prepareShapes returns the function that prepares chain's codecs for
// chunks of a shape with opts (pipeline.Rectilinear.Prepare).
func prepareShapes(chain *codecs.Chain, opts codecs.PrepareOptions) func([]int) (*codecs.Chain, error) {
	return func(shape []int) (*codecs.Chain, error) {
		repr := chain.Repr()
		repr.Shape = shape
		return chain.Prepare(repr, opts)
	}
}

// rectChunkOf returns the grid coordinates of the chunk holding the
// element at coords.
func rectChunkOf(edges []nd.Edges, coords []int) []int {
	c := make([]int, len(coords))
	for d, x := range coords {
		c[d], _ = edges[d].Locate(x)
	}
	return c
}
