package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// listConcurrency is how many store requests ls, tree and info --size
// have in flight at once: listing a hierarchy on an object store is
// latency-bound, one request per node and per chunk size.
const listConcurrency = 64

// nodeInfo describes one node of a hierarchy, as ls, tree and info --json
// print it.
type nodeInfo struct {
	Path       string `json:"path"` // node path in the store, "" for the root
	NodeType   string `json:"node_type"`
	ZarrFormat int    `json:"zarr_format"`
	// Arrays only.
	Shape           []int           `json:"shape,omitempty"`
	DataType        string          `json:"data_type,omitempty"`
	FillValue       json.RawMessage `json:"fill_value,omitempty"`
	ChunkShape      []int           `json:"chunk_shape,omitempty"`       // the write unit: chunk, or shard
	InnerChunkShape []int           `json:"inner_chunk_shape,omitempty"` // sharded arrays
	Codecs          string          `json:"codecs,omitempty"`            // as "bytes → zstd{...}"
	// The rest of what info prints, for --json: the shard shape (sharded:
	// chunk_shape's value, named), the codec chain as its JSON, the chunk
	// key encoding, the dimension names and a shard index's place.
	ShardShape       []int           `json:"shard_shape,omitempty"`
	CodecsJSON       json.RawMessage `json:"codecs_json,omitempty"`
	ChunkKeyEncoding json.RawMessage `json:"chunk_key_encoding,omitempty"`
	DimensionNames   []*string       `json:"dimension_names,omitempty"`
	IndexLocation    string          `json:"index_location,omitempty"`
	// ChunkGrid is a rectilinear grid's chunk_grid object (chunk_shape is
	// then its largest chunk shape).
	ChunkGrid  json.RawMessage `json:"chunk_grid,omitempty"`
	Attributes map[string]any  `json:"attributes,omitempty"`
	Storage    *storageInfo    `json:"storage,omitempty"`
	Children   []*nodeInfo     `json:"children,omitempty"`

	array *zarr.Array
}

// storageInfo is what an array holds in its store: --size.
type storageInfo struct {
	StoredBytes  int64   `json:"stored_bytes"`                // sum of the stored chunk (shard) sizes
	DecodedBytes int64   `json:"decoded_bytes"`               // the whole array in memory
	Ratio        float64 `json:"compression_ratio,omitempty"` // decoded size of the stored chunks / StoredBytes
	StoredUnits  int64   `json:"stored_chunks"`               // chunks (shards) present
	Units        int64   `json:"chunks"`                      // chunks (shards) of the grid
	Initialized  float64 `json:"initialized"`                 // StoredUnits / Units
	unit         string  // what a unit is, as the text says it: "chunks", or "shards"
}

// walker lists a hierarchy concurrently: every request goes through sem.
type walker struct {
	st    store.Reader
	sem   chan struct{}
	size  bool
	attrs bool
	// warn, when set, gets warnings about consolidated metadata (stale,
	// or with a bad entry), naming nodes below target, the TARGET typed
	// for the node at root.
	warn         io.Writer
	target, root string
	warnMu       sync.Mutex
	// remoteChecks counts the staleness checks made on a remote store
	// (one listing each), at most remoteStaleChecks.
	remoteChecks atomic.Int32
}

// remoteStaleChecks bounds the consolidated groups whose staleness a
// command checks on a remote store: one listing request each, where
// reading the consolidated metadata is meant to save listing.
const remoteStaleChecks = 8

// warnTo makes w write its warnings to warn, naming the node at root as
// target.
func (w *walker) warnTo(warn io.Writer, target, root string) *walker {
	w.warn, w.target, w.root = warn, target, root
	return w
}

// display names the node at p as the user would: from the TARGET typed.
func (w *walker) display(p string) string {
	if p == w.root {
		return w.target
	}
	rel := strings.TrimPrefix(p, w.root)
	return strings.TrimSuffix(w.target, "/") + "/" + strings.TrimPrefix(rel, "/")
}

// warnf writes one warning line, if w has somewhere to write it.
func (w *walker) warnf(format string, args ...any) {
	if w.warn == nil {
		return
	}
	w.warnMu.Lock()
	defer w.warnMu.Unlock()
	fmt.Fprintf(w.warn, "zarrcat: warning: "+format+"\n", args...)
}

func newWalker(st store.Reader, size, attrs bool) *walker {
	return &walker{st: st, sem: make(chan struct{}, listConcurrency), size: size, attrs: attrs}
}

// acquire takes a request slot, or fails when ctx ends.
func (w *walker) acquire(ctx context.Context) error {
	select {
	case w.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *walker) release() { <-w.sem }

// open describes the node at p (nil, nil when there is none: a chunk
// directory or a plain folder), and its children down to depth more
// levels (negative: all).
func (w *walker) open(ctx context.Context, p string, depth int) (*nodeInfo, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	a, err := zarr.OpenArray(ctx, w.st, p, withLimits(ctx, zarr.WithMaxChunkBytes(math.MaxInt64))...)
	var g *zarr.Group
	if errors.Is(err, zarr.ErrNodeType) {
		g, err = zarr.OpenGroup(ctx, w.st, p, withLimits(ctx)...)
	}
	w.release()
	switch {
	case errors.Is(err, zarr.ErrNodeNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case a != nil:
		return w.describe(ctx, a, p)
	}
	return w.group(ctx, g, p, depth)
}

// describe describes an opened array at p, with its storage when asked.
func (w *walker) describe(ctx context.Context, a *zarr.Array, p string) (*nodeInfo, error) {
	n := describeArray(a, w.attrs)
	n.Path = p
	if w.size {
		var err error
		if n.Storage, err = w.storage(ctx, a); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// group describes an opened group at p and its children down to depth
// more levels: from its consolidated metadata when it has some (no
// request at all), else by listing the store.
func (w *walker) group(ctx context.Context, g *zarr.Group, p string, depth int) (*nodeInfo, error) {
	n := &nodeInfo{Path: p, NodeType: "group", ZarrFormat: g.ZarrFormat()}
	if w.attrs {
		n.Attributes = g.Attributes()
	}
	if depth == 0 {
		return n, nil
	}
	var err error
	if ok, _ := g.Consolidated(); ok {
		if n.Children, err = w.consolidatedChildren(ctx, g, depth-1); err == nil {
			w.checkStale(ctx, g, p)
		}
	} else {
		n.Children, err = w.children(ctx, p, depth-1)
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// consolidatedChildren describes a consolidated group's children from its
// consolidated metadata; only --size asks the store for anything.
func (w *walker) consolidatedChildren(ctx context.Context, g *zarr.Group, depth int) ([]*nodeInfo, error) {
	cs, err := g.Children(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*nodeInfo, len(cs))
	eg, gctx := errgroup.WithContext(ctx)
	for i, c := range cs {
		eg.Go(func() error {
			var err error
			if c.Type == zarr.NodeArray {
				var a *zarr.Array
				if a, err = g.OpenArray(gctx, c.Name, withLimits(ctx, zarr.WithMaxChunkBytes(math.MaxInt64))...); err == nil {
					out[i], err = w.describe(gctx, a, c.Path)
					return err
				}
			} else {
				var sub *zarr.Group
				if sub, err = g.OpenGroup(gctx, c.Name, withLimits(ctx)...); err == nil {
					out[i], err = w.group(gctx, sub, c.Path, depth)
					return err
				}
			}
			if gctx.Err() != nil {
				return err
			}
			// The consolidated copy of the node's metadata is bad: the
			// node's own metadata, with a warning, so one bad entry does
			// not hide the rest of the hierarchy.
			n, oerr := w.open(gctx, c.Path, depth)
			if oerr != nil || n == nil {
				return fmt.Errorf("%s: the consolidated metadata's entry for it: %w (and its own metadata: %v)", w.display(c.Path), err, cmp.Or[error](oerr, zarr.ErrNodeNotFound))
			}
			w.warnf("%s: the consolidated metadata's entry for it is bad (%v); shown from its own metadata ('zarrcat consolidate %s' rewrites the consolidated copy)", w.display(c.Path), err, w.target)
			out[i] = n
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkStale warns when the store holds nodes directly in the
// consolidated group g at p that its consolidated metadata does not list
// (written after it was consolidated): they are not shown. On a remote
// store each check is one listing request, for the first
// remoteStaleChecks groups of the command (then one note says the rest
// went unchecked); a store that cannot list (HTTP) is not checked.
func (w *walker) checkStale(ctx context.Context, g *zarr.Group, p string) {
	if w.warn == nil {
		return
	}
	if _, ok := w.st.(store.Lister); !ok {
		return
	}
	if !store.IsLocal(w.st) {
		switch n := w.remoteChecks.Add(1); {
		case n == remoteStaleChecks+1:
			w.warnf("%s: the consolidated metadata of its groups was checked against a listing for %d groups only ('zarrcat consolidate --check %s' checks them all)", w.target, remoteStaleChecks, w.target)
			return
		case n > remoteStaleChecks:
			return
		}
		if err := w.acquire(ctx); err != nil {
			return
		}
		defer w.release()
	}
	missing, gone := unlisted(ctx, w.st, g, p)
	if len(missing) > 0 {
		w.warnf("%s: its consolidated metadata does not list %s, written since: not shown ('zarrcat consolidate %s' updates it)", w.display(p), strings.Join(missing, ", "), w.target)
	}
	if len(gone) > 0 {
		w.warnf("%s: its consolidated metadata lists %s, no longer stored: shown from the consolidated copy ('zarrcat consolidate %s' updates it)", w.display(p), strings.Join(gone, ", "), w.target)
	}
}

// unlisted returns the names of the Zarr nodes directly inside the
// consolidated group g at p that its consolidated metadata does not list,
// and of those it lists that are no longer stored (nil when st cannot
// list).
func unlisted(ctx context.Context, st store.Reader, g *zarr.Group, p string) (missing, gone []string) {
	l, ok := st.(store.Lister)
	if !ok {
		return nil, nil
	}
	cs, err := g.Children(ctx)
	if err != nil {
		return nil, nil
	}
	listed := map[string]bool{}
	for _, c := range cs {
		listed[c.Name] = true
	}
	dir := ""
	if p != "" {
		dir = p + "/"
	}
	_, dirs, err := l.ListDir(ctx, dir)
	if err != nil {
		return nil, nil
	}
	stored := map[string]bool{}
	for _, d := range dirs {
		name := strings.TrimSuffix(d, "/")
		stored[name] = true
		if listed[name] {
			continue
		}
		if _, err := zarr.NodeTypeAt(ctx, st, dir+name); err == nil {
			missing = append(missing, strconv.Quote(name))
		}
	}
	for _, c := range cs {
		if !stored[c.Name] {
			gone = append(gone, strconv.Quote(c.Name))
		}
	}
	return missing, gone
}

// children describes the nodes directly inside the group at p, all at
// once, sorted by name.
func (w *walker) children(ctx context.Context, p string, depth int) ([]*nodeInfo, error) {
	l, ok := w.st.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("%s: the store cannot list (plain HTTP), so the group's children are unknown without consolidated metadata: run 'zarrcat consolidate' on the group where it is written, and serve the new zarr.json (or .zmetadata)", w.display(p))
	}
	dir := ""
	if p != "" {
		dir = p + "/"
	}
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	_, dirs, err := l.ListDir(ctx, dir)
	w.release()
	if err != nil {
		return nil, err
	}
	out := make([]*nodeInfo, len(dirs))
	g, gctx := errgroup.WithContext(ctx)
	for i, d := range dirs {
		g.Go(func() error {
			n, err := w.open(gctx, dir+strings.TrimSuffix(d, "/"), depth)
			out[i] = n
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out = slices.DeleteFunc(out, func(n *nodeInfo) bool { return n == nil })
	slices.SortFunc(out, func(a, b *nodeInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// probeUnits is the largest grid whose chunk keys storage asks for one by
// one (a size request each, all at once) instead of listing the array:
// a listing is a request in turn per page and, on some servers, a walk of
// more than the array.
const probeUnits = 64

// storage adds up the sizes of an array's stored chunks (shards): for a
// grid of at most probeUnits, by asking each key's size (a missing key is
// a chunk not stored); else by listing the array's keys first.
func (w *walker) storage(ctx context.Context, a *zarr.Array) (*storageInfo, error) {
	m := a.Metadata()
	s := &storageInfo{Units: int64(count(m.GridShape())), DecodedBytes: int64(count(m.Shape)) * int64(m.DataType.Size())}
	if a.Sharding() != nil {
		s.unit = "shards"
	}
	var keys []string
	probe := s.Units <= probeUnits
	if probe {
		plan, err := a.Plan()
		if err != nil {
			return nil, err
		}
		for u := range plan.WriteUnits() {
			keys = append(keys, u.Key)
		}
	} else {
		l, ok := w.st.(store.Lister)
		if !ok {
			return nil, fmt.Errorf("array %q: the store cannot list, so its stored size is unknown", a.Path())
		}
		prefix := ""
		if a.Path() != "" {
			prefix = a.Path() + "/"
		}
		if err := w.acquire(ctx); err != nil {
			return nil, err
		}
		for k, err := range l.List(ctx, prefix) {
			if err != nil {
				w.release()
				return nil, err
			}
			if _, ok := m.ChunkKeyEncoding.ParseKey(strings.TrimPrefix(k, prefix), len(m.Shape)); ok {
				keys = append(keys, k)
			}
		}
		w.release()
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, k := range keys {
		g.Go(func() error {
			if err := w.acquire(gctx); err != nil {
				return err
			}
			defer w.release()
			n, err := valueSize(gctx, w.st, k)
			if probe && errors.Is(err, store.ErrNotFound) {
				return nil
			}
			mu.Lock()
			s.StoredBytes += n
			s.StoredUnits++
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if s.StoredBytes > 0 {
		// What the stored chunks decode to (whole chunks, edges included).
		s.Ratio = float64(s.StoredUnits) * float64(count(m.ChunkShape)) * float64(m.DataType.Size()) / float64(s.StoredBytes)
	}
	if s.Units > 0 {
		s.Initialized = float64(s.StoredUnits) / float64(s.Units)
	}
	return s, nil
}

// valueSize returns the size of the value at key: Size where the store
// has it, else the length of the whole value.
func valueSize(ctx context.Context, st store.Reader, key string) (int64, error) {
	if sr, ok := st.(store.SizeReader); ok {
		return sr.Size(ctx, key)
	}
	b, err := st.Get(ctx, key, store.Full())
	return int64(len(b)), err
}

// describeArray fills a nodeInfo from an array's metadata.
func describeArray(a *zarr.Array, attrs bool) *nodeInfo {
	m := a.Metadata()
	n := &nodeInfo{Path: a.Path(), NodeType: "array", ZarrFormat: a.ZarrFormat(), Shape: orEmptyInts(m.Shape),
		DataType: m.DataType.String(), ChunkShape: orEmptyInts(m.ChunkShape), Codecs: specsString(m.Codecs)}
	if fill, err := dtype.FormatFill(m.DataType, m.FillValue); err == nil {
		n.FillValue = fill
	}
	if l := a.Sharding(); l != nil {
		n.InnerChunkShape = l.ChunkShape()
		n.Codecs = "sharding_indexed[" + specsString(l.Codec().InnerSpecs()) + "]"
		n.ShardShape = orEmptyInts(m.ChunkShape)
		n.IndexLocation = fmt.Sprint(l.Codec().IndexLocation())
	}
	n.CodecsJSON, _ = json.Marshal(m.Codecs)
	if m.Rectilinear != nil {
		n.ChunkGrid, _ = json.Marshal(m.Rectilinear)
	}
	n.ChunkKeyEncoding, _ = json.Marshal(m.ChunkKeyEncoding)
	n.DimensionNames = m.DimensionNames
	if attrs {
		n.Attributes = a.Attributes()
	}
	return n
}

// orEmptyInts returns s, or an empty non-nil slice for a 0-d shape.
func orEmptyInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// cmdTree prints a hierarchy: ls one node per line with its path, tree
// indented.
func cmdTree(ctx context.Context, cmd string, args []string, w, stderr io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"depth": true, "size": false, "json": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: %s takes one TARGET", errUsage, cmd)
	}
	depth := -1
	if v, ok := flags["depth"]; ok {
		if depth, err = strconv.Atoi(v); err != nil || depth < 0 {
			return fmt.Errorf("%w: --depth must be a non-negative integer, not %q", errUsage, v)
		}
	}
	_, size := flags["size"]
	st, nodePath, err := openTarget(ctx, pos[0])
	if err != nil {
		return err
	}
	n, err := newWalker(st, size, false).warnTo(stderr, pos[0], nodePath).open(ctx, nodePath, depth)
	if err == nil && n == nil {
		err = zarr.ErrNodeNotFound
	}
	if err != nil {
		return targetErr(ctx, st, pos[0], nodePath, err)
	}
	if _, ok := flags["json"]; ok {
		return writeJSON(w, n)
	}
	if cmd == "ls" {
		printList(w, n)
	} else {
		fmt.Fprintln(w, treeLine(pos[0], n))
		printTree(w, n, "")
	}
	return nil
}

// printList writes one line per node: its path from the target, then
// what treeLine says.
func printList(w io.Writer, n *nodeInfo) {
	fmt.Fprintln(w, treeLine("/"+n.Path, n))
	for _, c := range n.Children {
		printList(w, c)
	}
}

// printTree writes n's children below it, indented with box drawing.
func printTree(w io.Writer, n *nodeInfo, indent string) {
	for i, c := range n.Children {
		branch, next := "├── ", "│   "
		if i == len(n.Children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, indent+branch+treeLine(c.Path[strings.LastIndexByte(c.Path, '/')+1:], c))
		printTree(w, c, indent+next)
	}
}

// treeLine describes a node on one line: name, type, and for an array its
// data type, shape, chunks, codecs and storage.
func treeLine(name string, n *nodeInfo) string {
	if n.NodeType == "group" {
		return fmt.Sprintf("%s (group, v%d)", name, n.ZarrFormat)
	}
	s := fmt.Sprintf("%s (array, v%d) %s %s chunks %s", name, n.ZarrFormat, n.DataType, dims(n.Shape), dims(n.ChunkShape))
	if n.InnerChunkShape != nil {
		s = fmt.Sprintf("%s (array, v%d) %s %s shards %s of %s", name, n.ZarrFormat, n.DataType, dims(n.Shape), dims(n.ChunkShape), dims(n.InnerChunkShape))
	}
	s += " " + n.Codecs
	if st := n.Storage; st != nil {
		s += " | " + storageLine(st)
	}
	return s
}

// storageLine formats storage statistics: stored bytes, ratio, chunks.
func storageLine(s *storageInfo) string {
	ratio := "-"
	if s.Ratio > 0 {
		ratio = fmt.Sprintf("%.2f×", s.Ratio)
	}
	return fmt.Sprintf("stored %s, ratio %s, %d/%d %s (%.1f%%)", humanBytes(s.StoredBytes), ratio, s.StoredUnits, s.Units, cmp.Or(s.unit, "chunks"), 100*s.Initialized)
}

// humanBytes formats a byte count with a binary unit.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n), 0
	for v >= 1024 && unit < 5 {
		v /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %ciB", v, " KMGTP"[unit])
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
