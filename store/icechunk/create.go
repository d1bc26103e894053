package icechunk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gozarr/gozarr/store"
)

// initialSnapshot is the well-known id of every repository's first
// snapshot ("1CECHNKREP0F1RSTCMT0").
var initialSnapshot = ID{0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34}

// Create makes a new, empty spec 2 repository at the root of dst (its
// first snapshot, empty, on branch main) and opens it. A store that
// already holds a repo object is ErrConflict; on a store.ConditionalWriter
// the repo object is written create-only, so of two concurrent creators one
// gets ErrConflict (elsewhere, such as the filesystem, the last one wins).
// dst must be able to update conditionally for later commits (see Session).
func Create(ctx context.Context, dst store.Store, opts ...Option) (*Repository, error) {
	if _, err := dst.Get(ctx, "repo", store.OffsetLen(0, 0)); err == nil {
		return nil, fmt.Errorf("%w: the store already holds a repository", ErrConflict)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	now := time.Now().UTC()
	md := flexItems(map[string]any{"__icechunk": map[string]any{"is_root": true}})
	const msg = "Repository initialized"
	if err := dst.Set(ctx, "transactions/"+initialSnapshot.String(), encodeTxLog(initialSnapshot, &txLog{})); err != nil {
		return nil, err
	}
	if err := dst.Set(ctx, "snapshots/"+initialSnapshot.String(), encodeSnapshot(initialSnapshot, nil, now, msg, md, nil)); err != nil {
		return nil, err
	}
	b := newFB()
	us := uint64(now.UnixMicro())
	fb := b.finish(func(b *fbBuilder) int {
		f := make([]*fbField, 8)
		f[riSpec] = fU8(2)
		f[riTags] = fTables(0, nil)
		f[riBranches] = fTables(1, func(b *fbBuilder, _ int) int { return b.table([]*fbField{fString("main"), fU32(0)}) })
		f[riDeletedTags] = fStrings(nil)
		f[riSnapshots] = fTables(1, func(b *fbBuilder, _ int) int {
			return b.table([]*fbField{fStruct(initialSnapshot[:], 1), fU32(uint32(0xffffffff)), fU64(us), fString(msg), encodeMetadata(md)})
		})
		f[riStatus] = fRef(func(b *fbBuilder) int { return b.table([]*fbField{fU8(0), fU64(us)}) })
		f[riMetadata] = encodeMetadata(nil)
		f[riLatestUpdates] = fTables(1, func(b *fbBuilder, _ int) int {
			return b.table([]*fbField{fU8(updRepoInitialized), fRef(func(b *fbBuilder) int { return b.table(nil) }), fU64(us)})
		})
		return b.table(f)
	})
	data := encodeFile(2, fileRepoInfo, fb)
	caps := store.CapabilitiesOf(dst)
	if caps.Conditional != nil {
		if err := caps.Conditional.SetIfVersion(ctx, "repo", data, ""); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return nil, fmt.Errorf("%w: the store already holds a repository", ErrConflict)
			}
			return nil, err
		}
	} else if err := dst.Set(ctx, "repo", data); err != nil {
		return nil, err
	}
	return Open(ctx, dst, opts...)
}
