package icechunk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/virtual"
)

// Option configures Open.
type Option func(*options)

type options struct {
	spec       uint8 // Create's spec version
	cacheBytes int64
	maxObject  int64
	virtual    *virtual.Resolver
	containers map[string]string // vcc:// names (WithContainers)

	newContainers []Container // Create's configuration (WithConfigContainers)
}

// WithVirtual resolves virtual chunk references through res (its allowed
// prefixes decide which URLs may be read; a recorded ETag or modification
// time is sent as a condition on the read, so a changed target is an error
// wrapping virtual.ErrChanged, never stale bytes). Without it virtual refs
// are ErrVirtual.
func WithVirtual(res *virtual.Resolver) Option { return func(o *options) { o.virtual = res } }

// WithSpecVersion makes Create write a repository of spec version n: 2
// (the default; Icechunk 2.x) or 1 (the refs/ layout of Icechunk 1.x, which
// Icechunk 1.x clients can read too). Open takes the version it finds.
func WithSpecVersion(n int) Option { return func(o *options) { o.spec = uint8(min(max(n, 0), 255)) } }

// WithCacheBytes bounds the bytes of parsed snapshots and manifests a
// Repository holds (default 256 MiB). An object larger than the budget is
// parsed for the read that needs it and not kept. n must be positive.
func WithCacheBytes(n int64) Option { return func(o *options) { o.cacheBytes = n } }

// WithMaxObjectBytes bounds the decompressed size of one repository file
// (snapshot, manifest, repo info; default 1 GiB): larger ones are ErrTooLarge.
func WithMaxObjectBytes(n int64) Option { return func(o *options) { o.maxObject = n } }

// Repository is an Icechunk repository opened over a store. It is safe for
// concurrent use.
type Repository struct {
	src   store.Reader
	spec  uint8
	opts  options
	cache *objCache

	mu   sync.Mutex
	info *repoInfo // spec 2: the repo object as last read

	vccMu   sync.Mutex
	vccDone bool
	vcc     map[string]string // the configuration's named containers
	vccErr  error
}

// Open opens the Icechunk repository at the root of src: spec 2 when src
// holds a "repo" object, spec 1 when it holds refs/branch.main/ref.json.
// Anything else is ErrNotRepository.
func Open(ctx context.Context, src store.Reader, opts ...Option) (*Repository, error) {
	o := options{cacheBytes: 256 << 20, maxObject: 1 << 30}
	for _, f := range opts {
		f(&o)
	}
	if o.cacheBytes <= 0 || o.maxObject <= 0 {
		return nil, fmt.Errorf("icechunk: cache and object limits must be positive (%d, %d)", o.cacheBytes, o.maxObject)
	}
	r := &Repository{src: src, opts: o, cache: newObjCache(o.cacheBytes)}
	info, err := r.readInfo(ctx)
	switch {
	case err == nil:
		r.spec, r.info = 2, info
		return r, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	if _, err := src.Get(ctx, "refs/branch.main/ref.json", store.Full()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: no repo object and no refs/branch.main", ErrNotRepository)
		}
		return nil, err
	}
	r.spec = 1
	return r, nil
}

// SpecVersion is the repository's spec version, 1 or 2.
func (r *Repository) SpecVersion() int { return int(r.spec) }

// CacheStats reports what the repository's cache holds.
func (r *Repository) CacheStats() CacheStats { return r.cache.stats() }

// Refresh rereads the refs (the repo object, in spec 2), so that branches
// moved by other writers since Open are seen.
func (r *Repository) Refresh(ctx context.Context) error {
	if r.spec != 2 {
		return nil // spec 1 refs are read on every lookup
	}
	info, err := r.readInfo(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.info = info
	r.mu.Unlock()
	return nil
}

func (r *Repository) repoInfo() *repoInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

func (r *Repository) readInfo(ctx context.Context) (*repoInfo, error) {
	data, err := r.src.Get(ctx, "repo", store.Full())
	if err != nil {
		return nil, err
	}
	info, err := parseRepoInfo(data, r.opts.maxObject)
	if err != nil {
		return nil, fmt.Errorf("repo: %w", err)
	}
	return info, nil
}

// SnapshotInfo describes one snapshot: its id, its parent's (none for the
// first snapshot), when it was committed, its message and metadata.
type SnapshotInfo struct {
	ID        ID
	Parent    ID
	HasParent bool
	Time      time.Time
	Message   string
	Metadata  map[string]any
}

// Branches returns the branch names, sorted, and the snapshot each names.
func (r *Repository) Branches(ctx context.Context) (map[string]ID, error) {
	return r.refs(ctx, "branch")
}

// Tags returns the tag names (deleted tags excluded) and their snapshots.
func (r *Repository) Tags(ctx context.Context) (map[string]ID, error) {
	return r.refs(ctx, "tag")
}

func (r *Repository) refs(ctx context.Context, kind string) (map[string]ID, error) {
	if r.spec == 2 {
		info := r.repoInfo()
		src := info.branches
		if kind == "tag" {
			src = info.tags
		}
		out := make(map[string]ID, len(src))
		for _, ref := range src {
			out[ref.name] = info.snapshots[ref.index].ID
		}
		return out, nil
	}
	l, ok := r.src.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("%w: listing spec 1 refs needs a store.Lister", ErrUnsupported)
	}
	_, dirs, err := l.ListDir(ctx, "refs/")
	if err != nil {
		return nil, err
	}
	out := map[string]ID{}
	for _, d := range dirs {
		name, ok := strings.CutPrefix(strings.TrimSuffix(d, "/"), kind+".")
		if !ok {
			continue
		}
		id, err := r.readRefV1(ctx, kind, name)
		if errors.Is(err, ErrRefNotFound) {
			continue // a deleted tag, or a ref being deleted
		}
		if err != nil {
			return nil, err
		}
		out[name] = id
	}
	return out, nil
}

// readRefV1 reads refs/KIND.NAME/ref.json; a tag with a tombstone is gone.
func (r *Repository) readRefV1(ctx context.Context, kind, name string) (ID, error) {
	if !validRefName(name) {
		return ID{}, fmt.Errorf("%w: bad ref name %q", ErrRefNotFound, name)
	}
	key := refKeyV1(kind, name)
	if kind == "tag" {
		if _, err := r.src.Get(ctx, key+".deleted", store.OffsetLen(0, 0)); err == nil {
			return ID{}, fmt.Errorf("%w: tag %q was deleted", ErrRefNotFound, name)
		} else if !errors.Is(err, store.ErrNotFound) {
			return ID{}, err
		}
	}
	data, err := r.src.Get(ctx, key, store.OffsetLen(0, 4096))
	if errors.Is(err, store.ErrNotFound) {
		return ID{}, fmt.Errorf("%w: %s %q", ErrRefNotFound, kind, name)
	}
	if err != nil {
		return ID{}, err
	}
	return parseRefJSON(key, data)
}

func validRefName(name string) bool {
	return name != "" && len(name) <= 255 && !strings.ContainsAny(name, "/\\\x00") && name != "." && name != ".."
}

// Resolve returns the snapshot a ref names: a branch, else a tag, else a
// snapshot id (20 Crockford base-32 characters). Unknown refs are
// ErrRefNotFound.
func (r *Repository) Resolve(ctx context.Context, ref string) (ID, error) {
	if r.spec == 2 {
		info := r.repoInfo()
		for _, list := range [][]namedRef{info.branches, info.tags} {
			if i, ok := slices.BinarySearchFunc(list, ref, func(e namedRef, n string) int { return strings.Compare(e.name, n) }); ok {
				return info.snapshots[list[i].index].ID, nil
			}
		}
		if id, err := ParseID(ref); err == nil {
			if _, ok := info.find(id); ok {
				return id, nil
			}
		}
		return ID{}, fmt.Errorf("%w: %q", ErrRefNotFound, ref)
	}
	for _, kind := range []string{"branch", "tag"} {
		id, err := r.readRefV1(ctx, kind, ref)
		if err == nil || !errors.Is(err, ErrRefNotFound) {
			return id, err
		}
	}
	if id, err := ParseID(ref); err == nil {
		if _, err := r.snapshot(ctx, id); err == nil {
			return id, nil
		} else if !errors.Is(err, ErrRefNotFound) {
			return ID{}, err
		}
	}
	return ID{}, fmt.Errorf("%w: %q", ErrRefNotFound, ref)
}

// Ancestry returns the snapshot id and its ancestors, newest first.
func (r *Repository) Ancestry(ctx context.Context, id ID) ([]SnapshotInfo, error) {
	var out []SnapshotInfo
	seen := map[ID]bool{}
	for {
		if seen[id] {
			return nil, corruptf("snapshot %v is its own ancestor", id)
		}
		seen[id] = true
		si, err := r.Info(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, si)
		if !si.HasParent {
			return out, nil
		}
		id = si.Parent
	}
}

// Info describes one snapshot.
func (r *Repository) Info(ctx context.Context, id ID) (SnapshotInfo, error) {
	if r.spec == 2 {
		info := r.repoInfo()
		i, ok := info.find(id)
		if !ok {
			return SnapshotInfo{}, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
		}
		si := info.snapshots[i]
		v, err := info.metadataOf(i)
		if err != nil {
			return SnapshotInfo{}, fmt.Errorf("repo: snapshot %v: %w", id, err)
		}
		md, err := metadataMap(v, 2)
		if err != nil {
			return SnapshotInfo{}, fmt.Errorf("repo: snapshot %v: %w", id, err)
		}
		si.Metadata = md
		return si, nil
	}
	s, err := r.snapshot(ctx, id)
	if err != nil {
		return SnapshotInfo{}, err
	}
	si := SnapshotInfo{ID: id, Time: microsTime(s.flushedAt), Message: s.message}
	if s.parent != nil {
		si.Parent, si.HasParent = *s.parent, true
	}
	if si.Metadata, err = metadataMap(s.metadata, s.spec); err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %v: %w", id, err)
	}
	return si, nil
}

// AsOf returns the newest snapshot in ref's ancestry committed at or before t.
func (r *Repository) AsOf(ctx context.Context, ref string, t time.Time) (ID, error) {
	id, err := r.Resolve(ctx, ref)
	if err != nil {
		return ID{}, err
	}
	anc, err := r.Ancestry(ctx, id)
	if err != nil {
		return ID{}, err
	}
	for _, si := range anc {
		if !si.Time.After(t) {
			return si.ID, nil
		}
	}
	return ID{}, fmt.Errorf("%w: no snapshot of %q at or before %v", ErrRefNotFound, ref, t)
}

// snapshot returns the parsed snapshot id, from the cache or the store.
func (r *Repository) snapshot(ctx context.Context, id ID) (*snapshot, error) {
	v, err := r.cache.get(ctx, "s"+string(id[:]), func(ctx context.Context) (any, int64, int64, error) {
		key := "snapshots/" + id.String()
		data, err := r.src.Get(ctx, key, store.Full())
		if errors.Is(err, store.ErrNotFound) {
			return nil, 0, 0, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
		}
		if err != nil {
			return nil, 0, 0, err
		}
		s, err := parseSnapshot(id, data, r.opts.maxObject)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		return s, int64(len(s.buf)) + int64(len(s.nodes))*256, 0, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*snapshot), nil
}

// manifest returns the parsed manifest id.
func (r *Repository) manifest(ctx context.Context, id ID) (*manifest, error) {
	v, err := r.cache.get(ctx, "m"+string(id[:]), func(ctx context.Context) (any, int64, int64, error) {
		key := "manifests/" + id.String()
		data, err := r.src.Get(ctx, key, store.Full())
		if errors.Is(err, store.ErrNotFound) {
			return nil, 0, 0, corruptf("%s: manifest of the snapshot is missing", key)
		}
		if err != nil {
			return nil, 0, 0, err
		}
		m, err := parseManifest(id, data, r.opts.maxObject)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		return m, m.size(), m.refs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*manifest), nil
}
