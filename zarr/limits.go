package zarr

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/gozarr/gozarr/nd"
)

// Size limits. Metadata documents, decoded chunks and the buffers
// ReadBytes and Read allocate are bounded, so that a hostile document
// gets a clear ErrTooLarge instead of an allocation the machine cannot
// serve. Each limit is an Option of OpenArray (and OpenGroup, for metadata).

// DefaultMaxMetadataBytes is the largest metadata document (zarr.json,
// .zarray, .zgroup, .zattrs) read by default: 16 MiB. A document is read
// by range, at most the limit plus one byte, so a larger one costs no more
// than that to refuse. WithMaxMetadataBytes changes it.
const DefaultMaxMetadataBytes = 16 << 20

// WithMaxMetadataBytes sets the largest metadata document OpenArray,
// OpenGroup and NodeTypeAt read (n <= 0 keeps DefaultMaxMetadataBytes). A
// larger document is an error wrapping ErrTooLarge that names its key and
// the limit. A group opened with this option passes it on to the nodes
// opened through it (Group.OpenArray, Group.OpenGroup, Group.Children).
func WithMaxMetadataBytes(n int64) Option { return func(o *options) { o.maxMeta = n } }

// WithMaxChunkBytes sets the per-chunk decode limit: OpenArray refuses an
// array whose chunks (for a sharded array, inner chunks) decode to more
// than n bytes, with an error wrapping ErrChunkTooLarge, ErrTooLarge and
// ErrUnsupported. A read decodes such a unit whole even to return a few
// of its elements, so the limit bounds the memory and time one chunk can
// cost. n <= 0 keeps the default, MaxDecodedChunkBytes (4 GiB).
func WithMaxChunkBytes(n int64) Option { return func(o *options) { o.maxChunk = n } }

// WithMaxReadBytes caps the buffer ReadBytes and Read allocate for one
// selection: a larger selection is an error wrapping ErrTooLarge, before
// any allocation. n <= 0 (the default) leaves only the platform's own
// ceiling (maxAlloc: 2^48 bytes on 64-bit platforms, the largest int on
// 32-bit ones), so set a limit when shapes come from untrusted documents.
// ReadBytesInto and ReadInto, which read into the caller's buffer, are not
// affected.
func WithMaxReadBytes(n int64) Option { return func(o *options) { o.maxRead = n } }

// maxAlloc is the largest buffer gozarr asks the Go runtime for: its own
// ceiling on 64-bit platforms (2^48 bytes; larger requests panic in
// makeslice), the largest int on 32-bit ones.
const maxAlloc = min(math.MaxInt, 1<<48)

// collect applies opts to a fresh options value.
func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// metaLimit returns the metadata document limit in force.
func (o *options) metaLimit() int64 {
	if o.maxMeta <= 0 {
		return DefaultMaxMetadataBytes
	}
	return min(o.maxMeta, math.MaxInt64-1)
}

// chunkLimit returns the per-chunk decode limit in force.
func (o *options) chunkLimit() int64 {
	if o.maxChunk <= 0 {
		return MaxDecodedChunkBytes
	}
	return o.maxChunk
}

// checkChunkBytes refuses chunks decoding to more than the chunk limit.
func (o *options) checkChunkBytes(p string, unit int) error {
	if limit := o.chunkLimit(); int64(unit) > limit {
		return fmt.Errorf("open %q: %w (%w): a chunk decodes to %d bytes, more than the per-chunk limit of %d bytes (raise it with zarr.WithMaxChunkBytes)",
			p, ErrChunkTooLarge, ErrUnsupported, unit, limit)
	}
	return nil
}

// selectionBytes returns the byte size of sel's result with item-byte
// elements, or an error wrapping ErrTooLarge when it does not fit an int.
func (a *Array) selectionBytes(sel nd.Selection) (int, error) {
	n := uint64(a.meta.DataType.Size())
	for _, d := range sel {
		hi, lo := bits.Mul64(n, uint64(max(d.Len(), 0)))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("%q: %w: selection %v is more than %d bytes", a.path, ErrTooLarge, sel, math.MaxInt)
		}
		n = lo
	}
	return int(n), nil
}

// allocBytes returns the size of the buffer a read of sel needs, after
// checking it against WithMaxReadBytes and the platform's ceiling.
func (a *Array) allocBytes(sel nd.Selection) (int, error) {
	n, err := a.selectionBytes(sel)
	if err != nil {
		return 0, fmt.Errorf("read %w", err)
	}
	if limit := a.opts.maxRead; limit > 0 && int64(n) > limit {
		return 0, fmt.Errorf("read %q: %w: selection %v is %d bytes, more than the read limit of %d bytes (raise it with zarr.WithMaxReadBytes)", a.path, ErrTooLarge, sel, n, limit)
	}
	if n > maxAlloc {
		return 0, fmt.Errorf("read %q: %w: selection %v is %d bytes, more than this platform can allocate (%d)", a.path, ErrTooLarge, sel, n, int64(maxAlloc))
	}
	return n, nil
}
