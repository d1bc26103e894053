package pipeline

import (
	"context"
	"fmt"
	"math/bits"
	"reflect"
	"runtime/debug"
	"unsafe"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/sharding"
)

// This file is the mapped read of whole shards: a local store that maps
// values (store.Mapper: the filesystem) hands the engine a shard's file
// pages, which the decode workers decode from without the copy a read
// into a buffer makes (a shard of barely compressed 16 KiB chunks spends
// as long being copied in as being decoded). A file truncated in place
// under the mapping makes reading its lost pages a memory fault (SIGBUS):
// every read of mapped bytes here runs with debug.SetPanicOnFault and
// turns the fault into an error wrapping codecs.ErrCorrupt. That holds
// only for Go code on the reading goroutine, so shards are mapped only
// for inner chains of the codecs package's own codecs (no cgo, no
// goroutines of their own: codecs/zstdc, Blosc and codecs registered by
// others read a copy), the index is copied out before it is decoded,
// and nested shards, the chunk cache, inline reads and 32-bit systems
// (whose address space large shards would fill) keep the copy, as does a
// shard whose mapping fails.

// corePkg is the package path of the codecs package's own codecs.
var corePkg = reflect.TypeFor[codecs.Zstd]().PkgPath()

// mapsWhole reports whether readWhole maps ref rather than reading it.
func (f *fetcher) mapsWhole(ref shardRef) bool {
	e := f.e
	return e.caps.Mapper != nil && bits.UintSize == 64 && !e.inline && e.g.Cache == nil && ref.base == 0 && ref.size == 0 &&
		ref.l.Nested() == nil && ownCodecs(ref.l.Inner())
}

// ownCodecs reports whether every codec of c is one of the codecs
// package's own.
func ownCodecs(c *codecs.Chain) bool {
	for _, x := range c.Codecs() {
		t := reflect.TypeOf(x)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.PkgPath() != corePkg {
			return false
		}
	}
	return true
}

// mapWhole maps the whole shard ref, which h then unmaps once the last of
// its units is placed, and returns its bytes and its index (decoded from
// a copy). On error nothing stays mapped.
func (f *fetcher) mapWhole(ctx context.Context, h *hold, ref shardRef) (_ []byte, _ *sharding.Index, err error) {
	l := ref.l
	b, unmap, err := f.e.caps.Mapper.Map(ctx, ref.key)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			unmap()
		}
	}()
	if len(b) > l.MaxEncodedSize() {
		return nil, nil, fmt.Errorf("%w: shard of %d bytes, larger than any valid one (%d)", sharding.ErrCorruptIndex, len(b), l.MaxEncodedSize())
	}
	n := l.IndexSize()
	if len(b) < n {
		_, err := l.IndexOf(b) // the error it gives a short shard
		return nil, nil, err
	}
	idx := make([]byte, n)
	src := b[len(b)-n:]
	if l.Codec().IndexLocation() == sharding.IndexStart {
		src = b[:n]
	}
	if err := copyMapped(idx, src); err != nil {
		return nil, nil, err
	}
	ix, err := l.DecodeIndex(idx, int64(len(b)))
	if err != nil {
		return nil, nil, err
	}
	h.unmap = unmap // a hold holds one shard: readWhole maps it once
	return b, ix, nil
}

// copyMapped copies mapped bytes, a memory fault being an error.
func copyMapped(dst, src []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(&err, src)
	copy(dst, src)
	return nil
}

// decodeMapped is decodeInto for a unit whose bytes are mapped pages, a
// memory fault being an error.
func (w *worker) decodeMapped(u *unit) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(&err, u.data)
	return w.decodeInto(u.chain, u.shape, u.data, u.part, u.dst)
}

// recoverFault, deferred, turns a memory fault in the mapped bytes b into
// *err; other panics, a fault elsewhere (a nil pointer) among them, go on.
func recoverFault(err *error, b []byte) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok && len(b) > 0 {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if a := f.Addr(); a >= lo && a-lo < uintptr(len(b)) {
			*err = fmt.Errorf("%w: a memory fault at %#x reading the shard's mapped file (changed or truncated while it was read)", codecs.ErrCorrupt, a)
			return
		}
	}
	panic(r)
}
