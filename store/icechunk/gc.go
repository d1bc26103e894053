package icechunk

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
)

// GCOptions says which unreferenced chunk objects CollectChunks deletes.
type GCOptions struct {
	// Before: only objects last modified before it are deleted, so that
	// the chunks of sessions still writing (not yet committed) survive;
	// the store tells modification times through a ReadCondition method
	// (S3, GCS, Azure, HTTP stores). Objects whose time the store cannot
	// tell are kept.
	Before time.Time
	// AnyAge deletes unreferenced chunks whatever their age (Before is
	// ignored): for when no session can be writing.
	AnyAge bool
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
}

// GCResult is what CollectChunks found and did.
type GCResult struct {
	Referenced   int      // chunk objects some reachable snapshot references
	Unreferenced []string // keys (chunks/ID) no reachable snapshot references
	Deleted      int      // of those, deleted
	Kept         int      // of those, kept (too new, or of unknown age)
}

// modTimer is a store that tells a value's modification time
// (objstore's ReadCondition: one HEAD).
type modTimer interface {
	ReadCondition(ctx context.Context, key string) (store.ReadCondition, error)
}

// CollectChunks deletes the chunk objects (chunks/) that no snapshot
// reachable from a branch or tag references: what failed or abandoned
// writers left (a zarrbeam attempt that was retried, a session never
// committed, a deleted branch's own commits). Reachable snapshots are the
// ancestries of every branch and tag; their manifests are read in full.
// Only chunk objects are collected (snapshots, manifests, transaction
// logs stay). The repository's store must list keys, and delete them
// unless opts.DryRun. A chunk a session writes while this runs, and then
// commits, is deleted too unless opts.Before excludes it: choose Before
// earlier than any session in flight began.
func (r *Repository) CollectChunks(ctx context.Context, opts GCOptions) (GCResult, error) {
	var res GCResult
	lister, ok := r.src.(store.Lister)
	if !ok {
		return res, fmt.Errorf("%w: collecting chunks needs a store.Lister", ErrUnsupported)
	}
	var deleter store.Writer
	if !opts.DryRun {
		if deleter, ok = r.src.(store.Writer); !ok {
			return res, fmt.Errorf("%w: collecting chunks needs a writable store", ErrUnsupported)
		}
	}
	if err := r.Refresh(ctx); err != nil {
		return res, err
	}
	refs := map[ID]bool{}
	seen := map[ID]bool{}
	for _, kind := range []string{"branch", "tag"} {
		roots, err := r.refs(ctx, kind)
		if err != nil {
			return res, err
		}
		for _, id := range roots {
			anc, err := r.Ancestry(ctx, id)
			if err != nil {
				return res, err
			}
			for _, si := range anc {
				if seen[si.ID] {
					continue
				}
				seen[si.ID] = true
				if err := r.markChunks(ctx, si.ID, refs); err != nil {
					return res, err
				}
			}
		}
	}
	// (listed after the marking: a chunk committed meanwhile is either
	// marked or newer than opts.Before)
	for key, err := range lister.List(ctx, "chunks/") {
		if err != nil {
			return res, err
		}
		id, err := ParseID(strings.TrimPrefix(key, "chunks/"))
		if err == nil && refs[id] {
			res.Referenced++
			continue
		}
		res.Unreferenced = append(res.Unreferenced, key)
	}
	if opts.DryRun {
		return res, nil
	}
	mt, _ := r.src.(modTimer)
	for _, key := range res.Unreferenced {
		if !opts.AnyAge {
			if mt == nil {
				res.Kept++
				continue
			}
			c, err := mt.ReadCondition(ctx, key)
			if err != nil {
				return res, err
			}
			if c.LastModified.IsZero() || !c.LastModified.Before(opts.Before) {
				res.Kept++
				continue
			}
		}
		if err := deleter.Delete(ctx, key); err != nil {
			return res, err
		}
		res.Deleted++
	}
	return res, nil
}

// markChunks adds the chunk ids snapshot id's native refs name to refs.
func (r *Repository) markChunks(ctx context.Context, id ID, refs map[ID]bool) error {
	snap, err := r.snapshot(ctx, id)
	if err != nil {
		return err
	}
	for i := range snap.nodes {
		n := &snap.nodes[i]
		for _, mr := range n.manifests {
			m, err := r.manifest(ctx, mr.id)
			if err != nil {
				return err
			}
			if err := m.eachRef(n.id, func(_ []uint32, cr chunkRef) error {
				if cr.kind == refNative {
					refs[cr.chunkID] = true
				}
				return ctx.Err()
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
