package zip

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gozarr/gozarr/store"
)

// Builder is a writable store whose contents become one zip archive when
// it is closed: Set, Delete, Get and List go to a staging store (memory,
// or a directory for hierarchies larger than memory), so values may be
// rewritten and deleted freely, and Close archives what is there once,
// with Write's layout: every name once, metadata first, stored entries.
// This is how gozarr writes .ozx files without the duplicate entries that
// appending to an archive leaves. It is safe for concurrent use; no
// method but Close may be called after Close.
type Builder struct {
	staging store.Store
	finish  func(ctx context.Context, write func(io.Writer) error) error
	opts    []WriteOption

	mu     sync.Mutex
	closed bool
}

var (
	_ store.Store  = (*Builder)(nil)
	_ store.Lister = (*Builder)(nil)
)

// NewBuilder returns a Builder staging values in staging (mem.New() for
// small hierarchies). Close calls finish with a function that writes the
// archive to an io.Writer; finish provides the writer (a file it then
// syncs and renames into place, say) and returns the first error.
func NewBuilder(staging store.Store, finish func(ctx context.Context, write func(io.Writer) error) error, opts ...WriteOption) *Builder {
	return &Builder{staging: staging, finish: finish, opts: opts}
}

func (b *Builder) check(op, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return &store.KeyError{Op: op, Key: key, Err: ErrClosed}
	}
	return nil
}

// Get reads from the staging store.
func (b *Builder) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := b.check("get", key); err != nil {
		return nil, err
	}
	return b.staging.Get(ctx, key, r)
}

// Set writes to the staging store; a later Set of the key replaces it.
func (b *Builder) Set(ctx context.Context, key string, value []byte) error {
	if err := b.check("set", key); err != nil {
		return err
	}
	return b.staging.Set(ctx, key, value)
}

// Delete deletes from the staging store.
func (b *Builder) Delete(ctx context.Context, key string) error {
	if err := b.check("delete", key); err != nil {
		return err
	}
	return b.staging.Delete(ctx, key)
}

// List lists the staging store.
func (b *Builder) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	if err := b.check("list", prefix); err != nil {
		return func(yield func(string, error) bool) { yield("", err) }
	}
	return b.staging.List(ctx, prefix)
}

// ListDir lists the staging store.
func (b *Builder) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if err := b.check("list", dir); err != nil {
		return nil, nil, err
	}
	return b.staging.ListDir(ctx, dir)
}

// Close writes the archive of everything staged through finish. Closing
// again does nothing and returns nil; a failed Close may be retried.
func (b *Builder) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	err := b.finish(ctx, func(w io.Writer) error { return Write(ctx, w, b.staging, b.opts...) })
	if err != nil {
		return fmt.Errorf("zip: writing the archive: %w", err)
	}
	b.closed = true
	return nil
}

// stagingPrefix starts the name of a staging directory of the Builder's
// own, as store/storeurl makes one beside a new archive.
const stagingPrefix = ".gozarr-tmp-zip-"

// Discard abandons the archive (a copy that failed): nothing is written,
// every staged value is deleted and a staging directory of the Builder's
// own (a local store whose root is named .gozarr-tmp-zip-*, as
// store/storeurl makes) is removed. The Builder is closed afterwards;
// discarding a closed Builder does nothing.
func (b *Builder) Discard(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var keys []string
	for k, err := range b.staging.List(ctx, "") {
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := b.staging.Delete(ctx, k); err != nil {
			return err
		}
	}
	if r, ok := b.staging.(interface{ Root() string }); ok && strings.HasPrefix(filepath.Base(r.Root()), stagingPrefix) {
		return os.RemoveAll(r.Root())
	}
	return nil
}
