package icechunk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
	"github.com/gozarr/gozarr/zarr"
)

// ErrConflict reports a commit whose branch moved since the session began,
// with changes that touch what this session changed (the error names the
// paths), or a ref update that the repository refuses (a tag that exists
// or was deleted, a branch that moved).
var ErrConflict = errors.New("icechunk: conflict")

// WriteOption configures a Session.
type WriteOption func(*writeOptions)

type writeOptions struct {
	inline int
	split  int
}

// WithInlineThreshold stores chunks of at most n bytes inside the manifest
// (default 512, Icechunk's default); larger ones go to chunks/.
func WithInlineThreshold(n int) WriteOption { return func(o *writeOptions) { o.inline = n } }

// WithManifestSplit writes an array's refs into manifests of about n refs
// each (default 100,000), split along the first dimension of the chunk
// grid so that their extents never overlap.
func WithManifestSplit(n int) WriteOption { return func(o *writeOptions) { o.split = n } }

// Session is a writable view of a branch: a store.Store whose writes are
// kept (chunks written to chunks/ at once, metadata in memory) until
// Commit makes them a snapshot and moves the branch. It is safe for
// concurrent use. Spec 1 and 2 repositories can be written.
type Session struct {
	repo   *Repository
	dst    store.Writer
	branch string
	opts   writeOptions

	mu      sync.Mutex
	base    *Snapshot
	changes map[string]*change // by node path
}

// change is what a session did to one node.
type change struct {
	deleted  bool
	isNew    bool
	id       NodeID
	kind     NodeKind
	userData []byte               // nil: unchanged
	chunks   map[string]*writeRef // by coords key; nil value: deleted
	meta     *nodeMeta            // parsed from userData
}

// nodeMeta is what a session needs of a node's zarr.json.
type nodeMeta struct {
	kind      NodeKind
	shape     []uint64
	numChunks []uint32
	chunks    []uint64 // chunk shape
	enc       zarr.ChunkKeyEncoding
}

var (
	_ store.Store = (*Session)(nil)
)

// Session begins a session on branch (spec 1 and 2 repositories on a
// store that is also a store.Writer and can update conditionally: a
// store.ConditionalWriter, or a store.KeyLocker such as the filesystem).
// Commits are written in the repository's spec version.
func (r *Repository) Session(ctx context.Context, branch string, opts ...WriteOption) (*Session, error) {
	w, ok := r.src.(store.Writer)
	if !ok {
		return nil, fmt.Errorf("%w: the repository's store is read-only", store.ErrReadOnly)
	}
	o := writeOptions{inline: 512, split: 100_000}
	for _, f := range opts {
		f(&o)
	}
	if o.inline < 0 || o.split <= 0 {
		return nil, fmt.Errorf("icechunk: bad write options (inline %d, split %d)", o.inline, o.split)
	}
	id, err := r.branchHead(ctx, branch)
	if err != nil {
		return nil, err
	}
	base, err := r.Checkout(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Session{repo: r, dst: w, branch: branch, opts: o, base: base, changes: map[string]*change{}}, nil
}

// branchHead reads the snapshot branch names now (spec 2: the repo
// object reread).
func (r *Repository) branchHead(ctx context.Context, branch string) (ID, error) {
	if r.spec == 1 {
		return r.readRefV1(ctx, "branch", branch)
	}
	if err := r.Refresh(ctx); err != nil {
		return ID{}, err
	}
	return r.branchID(branch)
}

func (r *Repository) branchID(branch string) (ID, error) {
	info := r.repoInfo()
	i, ok := slices.BinarySearchFunc(info.branches, branch, func(e namedRef, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return ID{}, fmt.Errorf("%w: branch %q", ErrRefNotFound, branch)
	}
	return info.snapshots[info.branches[i].index].ID, nil
}

// Base is the snapshot the session's changes apply to.
func (s *Session) Base() ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base.snap.id
}

func parseNodeMeta(data []byte) (*nodeMeta, error) {
	var m struct {
		Format    int      `json:"zarr_format"`
		NodeType  string   `json:"node_type"`
		Shape     []uint64 `json:"shape"`
		ChunkGrid *struct {
			Name          string `json:"name"`
			Configuration struct {
				ChunkShape []uint64 `json:"chunk_shape"`
			} `json:"configuration"`
		} `json:"chunk_grid"`
		Enc *zarr.ChunkKeyEncoding `json:"chunk_key_encoding"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: zarr.json: %v", ErrUnsupported, err)
	}
	if m.Format != 3 {
		return nil, fmt.Errorf("%w: Icechunk holds Zarr v3 nodes, not zarr_format %d", ErrUnsupported, m.Format)
	}
	nm := &nodeMeta{kind: KindGroup, enc: zarr.DefaultKeyEncoding()}
	if m.NodeType == "group" {
		return nm, nil
	}
	if m.NodeType == "array" && m.ChunkGrid != nil && m.ChunkGrid.Name == "rectilinear" && len(m.Shape) <= maxDims {
		return rectilinearMeta(nm, data, m.Enc)
	}
	if m.NodeType != "array" || m.ChunkGrid == nil || m.ChunkGrid.Name != "regular" || len(m.ChunkGrid.Configuration.ChunkShape) != len(m.Shape) || len(m.Shape) > maxDims {
		return nil, fmt.Errorf("%w: zarr.json of a %q node (a regular or rectilinear chunk grid is needed)", ErrUnsupported, m.NodeType)
	}
	nm.kind, nm.shape, nm.chunks = KindArray, m.Shape, m.ChunkGrid.Configuration.ChunkShape
	nm.numChunks = make([]uint32, len(m.Shape))
	for i, n := range m.Shape {
		c := m.ChunkGrid.Configuration.ChunkShape[i]
		if c == 0 {
			return nil, fmt.Errorf("%w: chunk shape 0", ErrUnsupported)
		}
		k := (n + c - 1) / c
		if k >= 1<<32 {
			return nil, fmt.Errorf("%w: %d chunks along dimension %d", ErrUnsupported, k, i)
		}
		nm.numChunks[i] = uint32(k)
	}
	if m.Enc != nil {
		nm.enc = *m.Enc
	}
	return nm, nil
}

// rectilinearMeta is the node of an array with a rectilinear chunk grid:
// its chunks per dimension from the grid's edges (as the snapshot's v2
// shape records them; the chunk lengths themselves stay in zarr.json),
// and for spec 1, whose snapshot records a chunk length, the one the core
// writes: ceil(length / chunks).
func rectilinearMeta(nm *nodeMeta, data []byte, enc *zarr.ChunkKeyEncoding) (*nodeMeta, error) {
	meta, err := zarr.ParseArrayMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%w: zarr.json: %w", ErrUnsupported, err)
	}
	if meta.Rectilinear == nil {
		return nil, fmt.Errorf("%w: zarr.json: no rectilinear grid", ErrUnsupported)
	}
	grid := meta.GridShape()
	nm.kind = KindArray
	nm.shape = make([]uint64, len(meta.Shape))
	nm.chunks = make([]uint64, len(meta.Shape))
	nm.numChunks = make([]uint32, len(meta.Shape))
	for i, n := range meta.Shape {
		k := grid[i]
		if uint64(k) >= 1<<32 {
			return nil, fmt.Errorf("%w: %d chunks along dimension %d", ErrUnsupported, k, i)
		}
		nm.shape[i], nm.numChunks[i] = uint64(n), uint32(k)
		nm.chunks[i] = uint64(max(meta.ChunkShape[i], 1))
		if k > 0 {
			nm.chunks[i] = (uint64(n) + uint64(k) - 1) / uint64(k)
		}
	}
	if enc != nil {
		nm.enc = *enc
	}
	return nm, nil
}

func coordsKey(c []uint32) string {
	b := make([]byte, 4*len(c))
	for i, x := range c {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x>>24), byte(x>>16), byte(x>>8), byte(x)
	}
	return string(b)
}

// view returns the node at path as the session sees it: its change (nil
// if untouched) and its base node (nil if new or absent).
func (s *Session) view(path string) (*change, *node) {
	c := s.changes[path]
	n := s.base.snap.find(path)
	if c != nil && (c.deleted || c.isNew) {
		n = nil
	}
	return c, n
}

// metaOf returns what the session knows of the node at path.
func (s *Session) metaOf(path string) (*nodeMeta, []byte, bool) {
	c, n := s.view(path)
	if c != nil && c.deleted {
		return nil, nil, false
	}
	if c != nil && c.userData != nil {
		return c.meta, c.userData, true
	}
	if n != nil {
		return &nodeMeta{kind: n.kind, shape: n.shape, enc: n.enc}, n.userData, true
	}
	return nil, nil, false
}

// locate is Snapshot.locate over the session's view: the array's node
// path and the chunk's coordinates.
func (s *Session) locate(key string) (string, []uint32, bool) {
	return chunkCoords(key, func(path string) (*zarr.ChunkKeyEncoding, int) {
		m, _, ok := s.metaOf(path)
		if !ok || m.kind != KindArray {
			return nil, 0
		}
		return &m.enc, len(m.shape)
	})
}

// Get implements store.Reader: the session's writes, else the base.
func (s *Session) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if key == "zarr.json" || strings.HasSuffix(key, "/zarr.json") {
		_, data, ok := s.metaOf(nodePath(strings.TrimSuffix(strings.TrimSuffix(key, "zarr.json"), "/")))
		s.mu.Unlock()
		if !ok {
			return nil, notFound("get", key)
		}
		return sliceRange(data, r), nil
	}
	path, coords, ok := s.locate(key)
	if !ok {
		s.mu.Unlock()
		return nil, notFound("get", key)
	}
	c, n := s.view(path)
	var ref *writeRef
	var touched bool
	if c != nil && c.chunks != nil {
		ref, touched = c.chunks[coordsKey(coords)]
	}
	base := s.base
	s.mu.Unlock()
	if touched && ref == nil {
		return nil, notFound("get", key)
	}
	if ref != nil {
		if ref.kind == refInline {
			return sliceRange(ref.inline, r), nil
		}
		start, end, err := r.Resolve(int64(ref.length))
		if err != nil {
			return nil, err
		}
		return s.repo.src.Get(ctx, "chunks/"+ref.chunkID.String(), store.OffsetLen(int64(ref.offset)+start, end-start))
	}
	if n == nil {
		return nil, notFound("get", key)
	}
	return base.Get(ctx, key, r)
}

// Set implements store.Writer: zarr.json creates or updates a node (its
// parent groups must exist); a chunk key of an array stores the chunk,
// inline when small, else as a new file under chunks/.
func (s *Session) Set(ctx context.Context, key string, value []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if key == "zarr.json" || strings.HasSuffix(key, "/zarr.json") {
		path := nodePath(strings.TrimSuffix(strings.TrimSuffix(key, "zarr.json"), "/"))
		m, err := parseNodeMeta(value)
		if err != nil {
			return &store.KeyError{Op: "set", Key: key, Err: err}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		c, n := s.view(path)
		if c == nil || c.deleted {
			c = &change{}
			if n != nil {
				c.id, c.kind = n.id, n.kind
			} else {
				c.isNew, c.id = true, newNodeID()
			}
			s.changes[path] = c
		}
		if !c.isNew && c.kind != m.kind {
			return &store.KeyError{Op: "set", Key: key, Err: fmt.Errorf("%w: %s is a %s", ErrUnsupported, path, c.kind)}
		}
		c.kind, c.userData, c.meta = m.kind, bytes.Clone(value), m
		return nil
	}
	s.mu.Lock()
	path, coords, ok := s.locate(key)
	s.mu.Unlock()
	if !ok {
		return &store.KeyError{Op: "set", Key: key, Err: fmt.Errorf("%w: not a chunk of an array in the session", store.ErrInvalidKey)}
	}
	ref := &writeRef{coords: coords, chunkRef: chunkRef{length: uint64(len(value))}}
	if len(value) <= s.opts.inline {
		ref.kind, ref.inline = refInline, bytes.Clone(value)
	} else {
		ref.kind, ref.chunkID = refNative, newID()
		if err := s.dst.Set(ctx, "chunks/"+ref.chunkID.String(), value); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch(path).chunks[coordsKey(coords)] = ref
	return nil
}

// touch returns the change record of an existing node, made if needed.
func (s *Session) touch(path string) *change {
	c := s.changes[path]
	if c == nil {
		n := s.base.snap.find(path)
		c = &change{id: n.id, kind: n.kind}
		s.changes[path] = c
	}
	if c.chunks == nil {
		c.chunks = map[string]*writeRef{}
	}
	return c
}

// Delete implements store.Writer: a zarr.json deletes its node and every
// node below it; a chunk key deletes the chunk's ref.
func (s *Session) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "zarr.json" || strings.HasSuffix(key, "/zarr.json") {
		path := nodePath(strings.TrimSuffix(strings.TrimSuffix(key, "zarr.json"), "/"))
		for _, p := range s.pathsUnder(path) {
			c, n := s.view(p)
			switch {
			case n != nil:
				s.changes[p] = &change{deleted: true, id: n.id, kind: n.kind}
			case c != nil:
				delete(s.changes, p)
			}
		}
		return nil
	}
	path, coords, ok := s.locate(key)
	if !ok {
		return nil
	}
	s.touch(path).chunks[coordsKey(coords)] = nil
	return nil
}

// pathsUnder lists the live node paths at or below path.
func (s *Session) pathsUnder(path string) []string {
	under := func(p string) bool {
		return p == path || path == "/" || strings.HasPrefix(p, path+"/")
	}
	var out []string
	for _, n := range s.base.snap.nodes {
		if under(n.path) {
			if c := s.changes[n.path]; c == nil || !c.deleted {
				out = append(out, n.path)
			}
		}
	}
	for p, c := range s.changes {
		if c.isNew && under(p) {
			out = append(out, p)
		}
	}
	return out
}

// List implements store.Lister over the session's view.
func (s *Session) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return listing.Gathered(ctx, prefix, func() ([]string, error) { return s.keysUnder(ctx, prefix) })
}

// keysUnder returns the keys under prefix in the session's view: the
// base snapshot's, less what the session deleted, plus what it wrote.
func (s *Session) keysUnder(ctx context.Context, prefix string) ([]string, error) {
	keys := map[string]bool{}
	s.mu.Lock()
	base := s.base
	var changed []string
	for p, c := range s.changes {
		if c.deleted {
			continue
		}
		changed = append(changed, p)
	}
	s.mu.Unlock()
	for k, err := range base.List(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		keys[k] = true
	}
	s.mu.Lock()
	// drop what the session deleted, add what it wrote
	for k := range keys {
		if k == "zarr.json" || strings.HasSuffix(k, "/zarr.json") {
			if _, _, ok := s.metaOf(nodePath(strings.TrimSuffix(strings.TrimSuffix(k, "zarr.json"), "/"))); !ok {
				delete(keys, k)
			}
			continue
		}
		path, coords, ok := s.locate(k)
		if !ok {
			delete(keys, k)
			continue
		}
		c, n := s.view(path)
		if n == nil {
			delete(keys, k)
		} else if c != nil && c.chunks != nil {
			if r, t := c.chunks[coordsKey(coords)]; t && r == nil {
				delete(keys, k)
			}
		}
	}
	for _, p := range changed {
		c := s.changes[p]
		pre := strings.TrimPrefix(p, "/")
		if pre != "" {
			pre += "/"
		}
		if c.userData != nil {
			keys[pre+"zarr.json"] = true
		}
		if m, _, ok := s.metaOf(p); ok && m.kind == KindArray {
			for _, r := range c.chunks {
				if r != nil {
					keys[pre+m.enc.Key(intCoords(r.coords))] = true
				}
			}
		}
	}
	s.mu.Unlock()
	var out []string
	for k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

func intCoords(c []uint32) []int {
	out := make([]int, len(c))
	for i, x := range c {
		out[i] = int(x)
	}
	return out
}

// ListDir implements store.Lister.
func (s *Session) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if dir, err = store.ListDirArg(ctx, dir); err != nil {
		return nil, nil, err
	}
	var all []string
	for k, err := range s.List(ctx, dir) {
		if err != nil {
			return nil, nil, err
		}
		all = append(all, k)
	}
	return listing.Dir(ctx, all, dir)
}

// versioned is a conditional update of one key: a ConditionalWriter, or a
// key lock around read, compare and write (versions: sha256 of values).
type versioned struct {
	src store.Reader
	dst store.Writer
	cw  store.ConditionalWriter
	kl  store.KeyLocker
}

func (r *Repository) versioned() (*versioned, error) {
	w, ok := r.src.(store.Writer)
	if !ok {
		return nil, fmt.Errorf("%w: the repository's store is read-only", store.ErrReadOnly)
	}
	caps := store.CapabilitiesOf(r.src)
	v := &versioned{src: r.src, dst: w, cw: caps.Conditional, kl: caps.Locker}
	if v.cw == nil && v.kl == nil {
		return nil, fmt.Errorf("%w: the store cannot update the repo object conditionally", ErrUnsupported)
	}
	return v, nil
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func (v *versioned) get(ctx context.Context, key string) ([]byte, string, error) {
	if v.cw != nil {
		return v.cw.GetVersion(ctx, key)
	}
	b, err := v.src.Get(ctx, key, store.Full())
	if err != nil {
		return nil, "", err
	}
	return b, sum(b), nil
}

func (v *versioned) setIf(ctx context.Context, key string, value []byte, version string) error {
	if v.cw != nil {
		return v.cw.SetIfVersion(ctx, key, value, version)
	}
	unlock, err := v.kl.LockKey(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := v.src.Get(ctx, key, store.Full())
	if version == "" && errors.Is(err, store.ErrNotFound) {
		return v.dst.Set(ctx, key, value) // create-only, and key is absent
	}
	if err != nil {
		return err
	}
	if version == "" || sum(cur) != version {
		return &store.KeyError{Op: "set", Key: key, Err: store.ErrConflict}
	}
	return v.dst.Set(ctx, key, value)
}

// updateRepo applies edit (made by mk from the current repo object) with
// a conditional write, retrying when another writer got there first; mk
// may return ErrConflict. A write whose answer is lost is checked by
// rereading: done reports whether the repo object already shows it.
func (r *Repository) updateRepo(ctx context.Context, mk func(ri *repoInfo) (*repoEdit, error), done func(ri *repoInfo) bool) error {
	v, err := r.versioned()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, version, err := v.get(ctx, "repo")
		if err != nil {
			return err
		}
		ri, err := parseRepoInfo(data, r.opts.maxObject)
		if err != nil {
			return fmt.Errorf("repo: %w", err)
		}
		if attempt > 0 && done != nil && done(ri) {
			r.setInfo(ri)
			return nil
		}
		edit, err := mk(ri)
		if err != nil {
			r.setInfo(ri)
			return err
		}
		now := time.Now()
		edit.backup = backupName(now)
		if edit.update.at == 0 {
			edit.update.at = uint64(now.UnixMicro())
		}
		out, err := encodeRepo(ri, edit)
		if err != nil {
			return err
		}
		if err := v.dst.Set(ctx, "overwritten/"+edit.backup, data); err != nil {
			return err
		}
		err = v.setIf(ctx, "repo", out, version)
		if err == nil {
			nri, err := parseRepoInfo(out, r.opts.maxObject)
			if err != nil {
				return err
			}
			r.setInfo(nri)
			return nil
		}
		if !errors.Is(err, store.ErrConflict) && attempt >= 5 {
			return err
		}
		// another writer moved the repo object, or the answer was lost:
		// reread and try again
		if attempt >= 100 {
			return fmt.Errorf("%w: the repo object kept changing (%d attempts)", ErrConflict, attempt)
		}
	}
}

func (r *Repository) setInfo(ri *repoInfo) {
	r.mu.Lock()
	r.info = ri
	r.mu.Unlock()
}
