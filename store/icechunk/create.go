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

// Create makes a new, empty repository at the root of dst (its first
// snapshot, empty, on branch main) and opens it: spec version 2 unless
// WithSpecVersion(1) says otherwise. A store that already holds a
// repository is ErrConflict; on a store.ConditionalWriter (and, for spec
// 1, a store.KeyLocker) the repo object or main's ref file is written
// create-only, so of two concurrent creators one gets ErrConflict
// (elsewhere, such as spec 2 on the filesystem, the last one wins). dst
// must be able to update conditionally for later commits (see Session).
func Create(ctx context.Context, dst store.Store, opts ...Option) (*Repository, error) {
	o := options{spec: 2}
	for _, f := range opts {
		f(&o)
	}
	if o.spec != 1 && o.spec != 2 {
		return nil, fmt.Errorf("%w: spec version %d", ErrUnsupported, o.spec)
	}
	if err := checkContainers(o.newContainers); err != nil {
		return nil, err
	}
	var config []byte // the configuration, when there is one to record
	if len(o.newContainers) > 0 {
		if o.spec == 2 {
			config = encodeFlex(configValue(o.newContainers))
		} else {
			var err error
			if config, err = encodeConfigYAML(o.newContainers); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range []string{"repo", refKeyV1("branch", "main")} {
		if _, err := dst.Get(ctx, k, store.OffsetLen(0, 0)); err == nil {
			return nil, fmt.Errorf("%w: the store already holds a repository", ErrConflict)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	now := time.Now().UTC()
	md := metaItems(o.spec, map[string]any{"__icechunk": map[string]any{"is_root": true}})
	const msg = "Repository initialized"
	if o.spec == 2 {
		// (a spec 1 repository has no transaction log for its first snapshot)
		if err := dst.Set(ctx, "transactions/"+initialSnapshot.String(), encodeTxLog(o.spec, initialSnapshot, &txLog{})); err != nil {
			return nil, err
		}
	} else if config != nil {
		if err := dst.Set(ctx, "config.yaml", config); err != nil {
			return nil, err
		}
	}
	if err := dst.Set(ctx, "snapshots/"+initialSnapshot.String(), encodeSnapshot(o.spec, initialSnapshot, nil, nil, now, msg, md, nil)); err != nil {
		return nil, err
	}
	key, data := refKeyV1("branch", "main"), refJSON(initialSnapshot)
	if o.spec == 2 {
		key, data = "repo", encodeInitialRepo(now, msg, md, config)
	}
	caps := store.CapabilitiesOf(dst)
	v := &versioned{src: dst, dst: dst, cw: caps.Conditional, kl: caps.Locker}
	var err error
	if v.cw != nil || o.spec == 1 && v.kl != nil {
		err = v.setIf(ctx, key, data, "")
	} else {
		err = dst.Set(ctx, key, data)
	}
	if errors.Is(err, store.ErrConflict) {
		return nil, fmt.Errorf("%w: the store already holds a repository", ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	return Open(ctx, dst, opts...)
}

// encodeInitialRepo writes the repo object of a new spec 2 repository,
// with config (FlexBuffers) as its configuration when not nil.
func encodeInitialRepo(now time.Time, msg string, md []metaItem, config []byte) []byte {
	b := newFB()
	us := uint64(now.UnixMicro())
	fb := b.finish(func(b *fbBuilder) int {
		f := make([]*fbField, riConfig+1)
		if config != nil {
			f[riConfig] = fBytes(config)
		}
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
	return encodeFile(2, fileRepoInfo, fb)
}
