package icechunk

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// Snapshot is one snapshot of a repository as a read-only store: the
// zarr.json of every node ("zarr.json", "a/b/zarr.json") and the chunks of
// every array under their keys ("a/b/c/0/1"), so zarr.OpenArray and
// zarr.OpenGroup read it like any store. A chunk without a ref is
// store.ErrNotFound (the fill value); a ref whose data is missing or short
// is ErrCorrupt. It is safe for concurrent use.
type Snapshot struct {
	repo *Repository
	snap *snapshot
}

var (
	_ store.Reader     = (*Snapshot)(nil)
	_ store.Lister     = (*Snapshot)(nil)
	_ store.Identifier = (*Snapshot)(nil)
	_ store.Locator    = (*Snapshot)(nil)
)

// Checkout opens snapshot id as a store.
func (r *Repository) Checkout(ctx context.Context, id ID) (*Snapshot, error) {
	s, err := r.snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Snapshot{repo: r, snap: s}, nil
}

// CheckoutRef opens the snapshot a branch, tag or snapshot id names.
func (r *Repository) CheckoutRef(ctx context.Context, ref string) (*Snapshot, error) {
	id, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return r.Checkout(ctx, id)
}

// ID is the snapshot's id.
func (s *Snapshot) ID() ID { return s.snap.id }

// StoreID implements store.Identifier: a snapshot never changes, so caches
// keyed by it stay true.
func (s *Snapshot) StoreID() string {
	return "icechunk:" + store.IDOf(s.repo.src) + "@" + s.snap.id.String()
}

// Unwrap returns the repository's store, so the pipeline takes its request
// limit.
func (s *Snapshot) Unwrap() store.Reader { return s.repo.src }

// Node describes a group or array of a snapshot.
type Node struct {
	Path     string   // "/" or "/a/b"
	Kind     NodeKind // KindGroup or KindArray
	Shape    []uint64 // arrays: the length of each dimension
	Manifest int      // arrays: how many manifests hold its chunk refs
}

// Nodes lists the snapshot's nodes, sorted by path.
func (s *Snapshot) Nodes() []Node {
	out := make([]Node, len(s.snap.nodes))
	for i, n := range s.snap.nodes {
		out[i] = Node{Path: n.path, Kind: n.kind, Shape: slices.Clone(n.shape), Manifest: len(n.manifests)}
	}
	return out
}

func notFound(op, key string) error {
	return &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
}

// nodePath turns a store prefix ("", "a/b") into a node path ("/", "/a/b").
func nodePath(prefix string) string { return "/" + prefix }

// locate finds the array and chunk coordinates a chunk key names (see
// chunkCoords).
func (s *Snapshot) locate(key string) (*node, []uint32, bool) {
	var found *node
	_, coords, ok := chunkCoords(key, func(path string) (*zarr.ChunkKeyEncoding, int) {
		if found = s.snap.find(path); found == nil || found.kind != KindArray {
			return nil, 0
		}
		return &found.enc, len(found.shape)
	})
	if !ok {
		return nil, nil, false
	}
	return found, coords, ok
}

// chunkCoords finds the array and chunk coordinates a chunk key names: the
// longest prefix of key that is an array (array gives its key encoding
// and rank for a node path, a nil encoding where there is none), then its
// chunk key encoding. It returns the array's node path.
func chunkCoords(key string, array func(path string) (*zarr.ChunkKeyEncoding, int)) (string, []uint32, bool) {
	for i := len(key) - 1; i >= 0; i-- {
		if i > 0 && key[i] != '/' {
			continue
		}
		prefix, rest := "", key
		if i > 0 {
			prefix, rest = key[:i], key[i+1:]
		}
		enc, rank := array(nodePath(prefix))
		if enc == nil {
			continue
		}
		c, ok := enc.ParseKey(rest, rank)
		if !ok {
			return "", nil, false
		}
		coords := make([]uint32, len(c))
		for j, v := range c {
			if uint64(v) >= 1<<32 {
				return "", nil, false
			}
			coords[j] = uint32(v)
		}
		return nodePath(prefix), coords, true
	}
	return "", nil, false
}

// ref finds the chunk ref of n at coords: the one manifest whose extents
// hold coords is fetched (if not cached) and searched.
func (s *Snapshot) ref(ctx context.Context, n *node, coords []uint32) (chunkRef, bool, error) {
	for i := range n.manifests {
		mr := &n.manifests[i]
		if !mr.contains(coords) {
			continue
		}
		m, err := s.repo.manifest(ctx, mr.id)
		if err != nil {
			return chunkRef{}, false, err
		}
		return m.lookup(n.id, coords)
	}
	return chunkRef{}, false, nil
}

// Get implements store.Reader.
func (s *Snapshot) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if key == "zarr.json" || strings.HasSuffix(key, "/zarr.json") {
		n := s.snap.find(nodePath(strings.TrimSuffix(strings.TrimSuffix(key, "zarr.json"), "/")))
		if n == nil {
			return nil, notFound("get", key)
		}
		return sliceRange(n.userData, r), nil
	}
	n, coords, ok := s.locate(key)
	if !ok {
		return nil, notFound("get", key)
	}
	ref, ok, err := s.ref(ctx, n, coords)
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if !ok {
		return nil, notFound("get", key)
	}
	switch ref.kind {
	case refInline:
		return sliceRange(ref.inline, r), nil
	}
	if ref.length > 1<<62 || ref.offset > 1<<62 {
		return nil, &store.KeyError{Op: "get", Key: key, Err: corruptf("chunk ref offset %d length %d", ref.offset, ref.length)}
	}
	start, end, err := r.Resolve(int64(ref.length))
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if ref.kind == refVirtual {
		b, err := s.readVirtual(ctx, ref, start, end)
		if err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: err}
		}
		return b, nil
	}
	ckey := "chunks/" + ref.chunkID.String()
	data, err := s.repo.src.Get(ctx, ckey, store.OffsetLen(int64(ref.offset)+start, end-start))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &store.KeyError{Op: "get", Key: key, Err: corruptf("chunk file %s of the ref is missing", ckey)}
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != end-start {
		return nil, &store.KeyError{Op: "get", Key: key, Err: corruptf("chunk file %s holds %d bytes at %d, the ref wants %d", ckey, len(data), int64(ref.offset)+start, end-start)}
	}
	return data, nil
}

// readVirtual reads [start, end) of a virtual chunk through the
// repository's resolver.
func (s *Snapshot) readVirtual(ctx context.Context, ref chunkRef, start, end int64) ([]byte, error) {
	res, vr, err := s.virtualRef(ctx, ref, start, end)
	if err != nil {
		return nil, err
	}
	b, err := res.Get(ctx, vr)
	if errors.Is(err, store.ErrNotFound) {
		return nil, corruptf("virtual chunk target %s is missing: %v", ref.location, err)
	}
	return b, err
}

// virtualRef is the resolver and the reference that read [start, end) of
// a virtual chunk: its location (vcc:// mapped to its container's URL),
// the range, the recorded ETag or modification time as the condition.
func (s *Snapshot) virtualRef(ctx context.Context, ref chunkRef, start, end int64) (*virtual.Resolver, virtual.Ref, error) {
	res := s.repo.opts.virtual
	if res == nil {
		return nil, virtual.Ref{}, fmt.Errorf("%w (open the repository WithVirtual): %s", ErrVirtual, ref.location)
	}
	if ref.location == "" {
		return nil, virtual.Ref{}, fmt.Errorf("%w: dictionary-compressed virtual locations", ErrUnsupported)
	}
	u, err := s.repo.resolveLocation(ctx, ref.location)
	if err != nil {
		return nil, virtual.Ref{}, err
	}
	vr := virtual.Ref{URL: u, Offset: int64(ref.offset) + start, Length: end - start}
	vr.Checksum.ETag = ref.etag
	if ref.modified != 0 {
		vr.Checksum.LastModified = time.Unix(int64(ref.modified), 0).UTC()
	}
	return res, vr, nil
}

// Locate implements store.Locator, so that the pipeline groups the chunks
// of one read by the object holding them and joins neighbouring ranges
// into one request (virtual chunks of one file): a virtual chunk is its
// range of the target object through the resolver (allow-list and
// condition as for Get), a native one its range of its chunks/ file (a
// missing or short file is ErrCorrupt, as for Get), an inline one (and a
// zarr.json) its bytes. Nothing is read but the manifest.
func (s *Snapshot) Locate(ctx context.Context, key string) (store.Location, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Location{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Location{}, err
	}
	if key == "zarr.json" || strings.HasSuffix(key, "/zarr.json") {
		b, err := s.Get(ctx, key, store.Full())
		return store.Location{Inline: b}, err
	}
	n, coords, ok := s.locate(key)
	if !ok {
		return store.Location{}, notFound("locate", key)
	}
	ref, ok, err := s.ref(ctx, n, coords)
	if err != nil {
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: err}
	}
	if !ok {
		return store.Location{}, notFound("locate", key)
	}
	if ref.kind == refInline {
		return store.Location{Inline: ref.inline}, nil
	}
	if ref.length > 1<<62 || ref.offset > 1<<62 {
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: corruptf("chunk ref offset %d length %d", ref.offset, ref.length)}
	}
	if ref.kind == refVirtual {
		res, vr, err := s.virtualRef(ctx, ref, 0, int64(ref.length))
		if err == nil {
			var loc store.Location
			if loc, err = res.Locate(ctx, vr); err == nil {
				loc.Store = missingCorrupt{loc.Store, "virtual chunk target"}
				return loc, nil
			}
		}
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: err}
	}
	return store.Location{Store: missingCorrupt{s.repo.src, "chunk file"}, Key: "chunks/" + ref.chunkID.String(),
		Range: store.OffsetLen(int64(ref.offset), int64(ref.length))}, nil
}

// missingCorrupt reads from a store where a missing object is a corrupt
// repository (a ref names it), not an absent chunk: ErrCorrupt.
type missingCorrupt struct {
	st   store.Reader
	what string
}

// Get implements store.Reader.
func (m missingCorrupt) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, err := m.st.Get(ctx, key, r)
	if errors.Is(err, store.ErrNotFound) {
		return nil, corruptf("%s %s of the ref is missing: %v", m.what, key, err)
	}
	return b, err
}

// StoreID implements store.Identifier: the store's own.
func (m missingCorrupt) StoreID() string { return store.IDOf(m.st) }

// Capabilities implements store.CapabilityReporter: plain gets (each
// answer checked), with the store's coalescing and request limit.
func (m missingCorrupt) Capabilities() store.Capabilities {
	c := store.CapabilitiesOf(m.st)
	return store.Capabilities{Coalesce: c.Coalesce, MaxConcurrency: c.MaxConcurrency}
}

// Unwrap implements store.Unwrapper.
func (m missingCorrupt) Unwrap() store.Reader { return m.st }

// sliceRange copies the part of b that r selects.
func sliceRange(b []byte, r store.ByteRange) []byte {
	start, end, _ := r.Resolve(int64(len(b)))
	return append(make([]byte, 0, end-start), b[start:end]...)
}

// chunkKeys returns the keys of n's chunk refs, with prefix p ("a/b/").
func (s *Snapshot) chunkKeys(ctx context.Context, n *node, p string) ([]string, error) {
	var keys []string
	coords := make([]int, len(n.shape))
	for i := range n.manifests {
		m, err := s.repo.manifest(ctx, n.manifests[i].id)
		if err != nil {
			return nil, err
		}
		err = m.eachRef(n.id, func(c []uint32, _ chunkRef) error {
			if len(c) != len(coords) {
				return corruptf("chunk ref of %d dimensions in array %s of %d", len(c), n.path, len(coords))
			}
			for j := range coords {
				coords[j] = int(c[j])
			}
			keys = append(keys, p+n.enc.Key(coords))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// List implements store.Lister: every node's zarr.json and every chunk
// with a ref, under prefix. Listing chunks reads the arrays' manifests.
func (s *Snapshot) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return listing.Gathered(ctx, prefix, func() ([]string, error) { return s.keysUnder(ctx, prefix, false) })
}

// ListDir implements store.Lister. It reads no manifest to list a
// directory at or above an array's (its chunks of the default key
// encoding are the one directory "c/", there when the snapshot gives the
// array a manifest); only a directory among an array's chunk keys, or the
// directory of an array whose chunk keys lie in it directly (the "v2"
// encoding, a "." separator, no dimensions), lists that array's refs.
func (s *Snapshot) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if dir, err = store.ListDirArg(ctx, dir); err != nil {
		return nil, nil, err
	}
	all, err := s.keysUnder(ctx, dir, true)
	if err != nil {
		return nil, nil, err
	}
	return listing.Dir(ctx, all, dir)
}

// keysUnder returns the keys under prefix, sorted: every node's zarr.json
// and the chunk keys of its arrays' refs. For one level (a ListDir of dir
// = prefix) it leaves out the chunks of arrays below dir (their zarr.json
// names their directory) and stands "c/" for the chunks of an array at dir
// under the default key encoding, reading no manifest for either.
func (s *Snapshot) keysUnder(ctx context.Context, prefix string, level bool) ([]string, error) {
	var keys []string
	for i := range s.snap.nodes {
		n := &s.snap.nodes[i]
		p := strings.TrimPrefix(n.path, "/")
		if p != "" {
			p += "/"
		}
		// nodes wholly outside the prefix hold no key under it
		if !strings.HasPrefix(p, prefix) && !strings.HasPrefix(prefix, p) {
			continue
		}
		if strings.HasPrefix(p+"zarr.json", prefix) {
			keys = append(keys, p+"zarr.json")
		}
		if n.kind != KindArray || level && len(p) > len(prefix) {
			continue
		}
		if level && p == prefix && n.enc.Name == zarr.KeyEncodingDefault && (n.enc.Separator == "/" || n.enc.Separator == "") && len(n.shape) > 0 {
			if len(n.manifests) > 0 {
				keys = append(keys, p+"c/")
			}
			continue
		}
		ck, err := s.chunkKeys(ctx, n, p)
		if err != nil {
			return nil, err
		}
		for _, k := range ck {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys, nil
}
