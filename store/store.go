// Package store defines gozarr's key-value storage abstraction: keys are
// slash-separated strings, values are byte strings, and every read names a
// ByteRange so that backends can serve partial reads (shard indexes, inner
// chunks) without fetching whole objects.
//
// Backends live in subpackages: store/fs and store/mem; the remote stores
// store/s3 and store/http, and the modules store/gcs and store/azure, all
// drivers on the shared layer store/objstore; store/zip (a zip archive in
// another store); store/icechunk, store/kerchunk and store/virtual (values
// held in other stores' objects). All of them pass the conformance suite in
// store/storetest. Nothing in this package knows about Zarr.
//
// # Ranges past the end
//
// A range is clamped to the value it reads: bytes past the end of the value
// are simply not returned, so OffsetLen(8, 100) of a 10-byte value yields its last
// 2 bytes and OffsetLen(20, 5) yields an empty, non-nil slice. A Suffix longer than
// the value yields the whole value. Callers that need an exact length (the
// sharding codec, for one) check len(result) and report their own error. A
// missing key is always ErrNotFound, whatever the range.
package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// Sentinel errors. Backends wrap them (see KeyError) so errors.Is works and
// the message names the key.
var (
	// ErrNotFound reports that a key does not exist.
	ErrNotFound = errors.New("key not found")
	// ErrInvalidKey reports a key that is not a valid store key (see ValidateKey).
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidRange reports a malformed ByteRange (negative offset or length).
	ErrInvalidRange = errors.New("invalid byte range")
	// ErrReadOnly reports a write to a store that does not accept writes.
	ErrReadOnly = errors.New("store is read-only")
)

// KeyError records an error and the operation and key that caused it, like
// fs.PathError.
type KeyError struct {
	Op  string // "get", "set", "delete", "list", ...
	Key string
	Err error
}

// Error implements error.
func (e *KeyError) Error() string {
	return e.Op + " " + fmt.Sprintf("%q", e.Key) + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *KeyError) Unwrap() error { return e.Err }

// rangeKind tells the four forms of ByteRange apart.
type rangeKind uint8

const (
	kindFull rangeKind = iota
	kindRange
	kindFrom
	kindSuffix
)

// ByteRange selects part of a value. The zero value is Full. Build ranges only
// with Full, OffsetLen, From and Suffix.
type ByteRange struct {
	kind   rangeKind
	offset int64 // start for OffsetLen/From; unused otherwise
	length int64 // length for OffsetLen, N for Suffix
}

// Full selects the whole value.
func Full() ByteRange { return ByteRange{kind: kindFull} }

// OffsetLen selects length bytes starting at offset: [offset,
// offset+length). It takes a length, where nd.Range takes a stop: the two
// are named apart so that neither reads as the other.
func OffsetLen(offset, length int64) ByteRange {
	return ByteRange{kind: kindRange, offset: offset, length: length}
}

// From selects everything from offset to the end of the value.
func From(offset int64) ByteRange { return ByteRange{kind: kindFrom, offset: offset} }

// Suffix selects the last n bytes of the value (all of it if shorter).
func Suffix(n int64) ByteRange { return ByteRange{kind: kindSuffix, length: n} }

// IsFull reports whether r selects the whole value.
func (r ByteRange) IsFull() bool { return r.kind == kindFull }

// IsSuffix reports whether r is a Suffix range, and its length.
func (r ByteRange) IsSuffix() (n int64, ok bool) { return r.length, r.kind == kindSuffix }

// Bounded reports whether r is a Range, and its offset and length.
func (r ByteRange) Bounded() (offset, length int64, ok bool) {
	return r.offset, r.length, r.kind == kindRange
}

// IsFrom reports whether r is a From range, and its offset.
func (r ByteRange) IsFrom() (offset int64, ok bool) { return r.offset, r.kind == kindFrom }

// Validate reports ErrInvalidRange for a negative offset or length, or a
// range whose end overflows int64.
func (r ByteRange) Validate() error {
	if r.offset < 0 || r.length < 0 {
		return fmt.Errorf("%w: %v", ErrInvalidRange, r)
	}
	if r.kind == kindRange && r.offset > (1<<63-1)-r.length {
		return fmt.Errorf("%w: %v overflows", ErrInvalidRange, r)
	}
	return nil
}

// Resolve returns the half-open interval [start, end) that r selects in a
// value of the given size, clamped to [0, size] as the package doc describes.
// It reports ErrInvalidRange for a range that fails Validate.
func (r ByteRange) Resolve(size int64) (start, end int64, err error) {
	if err := r.Validate(); err != nil {
		return 0, 0, err
	}
	switch r.kind {
	case kindFull:
		return 0, size, nil
	case kindRange:
		start, end = r.offset, r.offset+r.length
	case kindFrom:
		start, end = r.offset, size
	case kindSuffix:
		start, end = size-r.length, size
		if start < 0 {
			start = 0
		}
	}
	start = min(start, size)
	end = min(max(end, start), size)
	return start, end, nil
}

// String formats r the way HTTP Range headers do: "bytes=0-9", "bytes=5-",
// "bytes=-4", or "full".
func (r ByteRange) String() string {
	switch r.kind {
	case kindRange:
		if r.length == 0 {
			return fmt.Sprintf("bytes=%d+0", r.offset)
		}
		return fmt.Sprintf("bytes=%d-%d", r.offset, r.offset+r.length-1)
	case kindFrom:
		return fmt.Sprintf("bytes=%d-", r.offset)
	case kindSuffix:
		return fmt.Sprintf("bytes=-%d", r.length)
	}
	return "full"
}

// Reader reads values, or parts of them. Implementations are safe for
// concurrent use. A missing key yields an error wrapping ErrNotFound.
// The returned slice belongs to the caller.
type Reader interface {
	Get(ctx context.Context, key string, r ByteRange) ([]byte, error)
}

// RangesReader is implemented by stores that serve several ranges of one
// key in one call, natively or concurrently. Results are in the order of
// ranges. Use the package function GetRanges, which falls back to Get.
type RangesReader interface {
	GetRanges(ctx context.Context, key string, ranges []ByteRange) ([][]byte, error)
}

// IsLocal reports whether r is a local store (CapabilitiesOf(r).Local):
// it reads into caller's buffers and its backend states no request limit,
// as remote stores do (ConcurrencyLimiter): the filesystem and memory
// stores.
func IsLocal(r Reader) bool { return CapabilitiesOf(r).Local }

// IntoReader is implemented by stores that can read a bounded range straight
// into a caller's buffer (the filesystem with ReadAt, for instance). ReadInto
// fills dst with the bytes [offset, offset+len(dst)) of key and returns how
// many bytes it read; fewer than len(dst) only when the value ends first.
type IntoReader interface {
	ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error)
}

// VectorReader is implemented by stores that can scatter one read of a
// value into several caller's buffers (the filesystem on Linux, with
// preadv), so a chunk stored as it decodes lands straight in the many runs
// of its place in an output array.
//
// ReadVec reads the bytes [off, off+total) of key's value, where total is
// the sum of len(bufs), into bufs in order: the first len(bufs[0]) bytes
// into bufs[0], and so on. It returns how many bytes it read, like
// io.ReadFull: total and a nil error, or, when the value ends first, fewer
// and an error wrapping io.ErrUnexpectedEOF that says how many bytes were
// there (bufs are filled up to that point). A missing key is ErrNotFound, a
// negative off ErrInvalidRange, a done ctx an error wrapping ctx.Err();
// errors are *KeyError naming the key. Implementations are safe for
// concurrent use (with distinct bufs).
type VectorReader interface {
	ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error)
}

// SizeReader is implemented by stores that can report a value's size
// without reading it.
type SizeReader interface {
	Size(ctx context.Context, key string) (int64, error)
}

// ConcurrencyLimiter is implemented by stores that limit how many requests
// they run at once (S3, HTTP). The pipeline takes that limit as its default
// I/O concurrency, so remote reads keep as many requests in flight as the
// store allows.
type ConcurrencyLimiter interface {
	MaxConcurrency() int
}

// Writer stores and deletes values. Set replaces a value atomically: a
// concurrent reader sees the old value or the new one, never a mix; it does
// not keep value (or write to it) after it returns, so callers may reuse the
// buffer. Deleting a missing key is not an error.
type Writer interface {
	Set(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
}

// Lister lists keys.
type Lister interface {
	// List yields every key that starts with prefix, in lexical order.
	// An empty prefix lists the whole store.
	List(ctx context.Context, prefix string) iter.Seq2[string, error]
	// ListDir lists one level below dir (a prefix ending in "/" or ""):
	// the keys directly in it and the names of its sub-directories
	// (each ending in "/"), both relative to dir, both sorted.
	ListDir(ctx context.Context, dir string) (keys, dirs []string, err error)
}

// Store is a readable, writable, listable store.
type Store interface {
	Reader
	Writer
	Lister
}

// ValidateKey reports ErrInvalidKey for a key that could escape a store's
// root or name nothing: an empty key, a leading or trailing "/", an empty
// segment ("a//b"), a "." or ".." segment, a backslash, a NUL or other
// control character.
func ValidateKey(key string) error {
	if key == "" {
		return &KeyError{Op: "validate", Key: key, Err: fmt.Errorf("%w: empty", ErrInvalidKey)}
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return &KeyError{Op: "validate", Key: key, Err: fmt.Errorf("%w: contains byte %#x", ErrInvalidKey, c)}
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return &KeyError{Op: "validate", Key: key, Err: fmt.Errorf("%w: empty path segment", ErrInvalidKey)}
		case ".", "..":
			return &KeyError{Op: "validate", Key: key, Err: fmt.Errorf("%w: %q segment", ErrInvalidKey, seg)}
		}
	}
	return nil
}

// ValidatePrefix is ValidateKey for listing prefixes: "" is allowed, and so
// is a trailing "/".
func ValidatePrefix(prefix string) error {
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		if prefix == "/" {
			return &KeyError{Op: "validate", Key: prefix, Err: fmt.Errorf("%w: bare /", ErrInvalidKey)}
		}
		return nil
	}
	return ValidateKey(p)
}

// ListDirArg checks the dir argument of a ListDir, as every store's
// ListDir does: dir with ValidatePrefix (its error is returned as is),
// then ctx (a done context is a *KeyError naming dir). It returns dir
// ending in "/" ("" stays "").
func ListDirArg(ctx context.Context, dir string) (string, error) {
	if err := ValidatePrefix(dir); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", &KeyError{Op: "list", Key: dir, Err: err}
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	return dir, nil
}

// GetRanges reads several ranges of one key, through the store's
// RangesReader when it has one (CapabilitiesOf(r).Ranges, so a wrapper
// that forwards its store's capabilities keeps its batched ranges) and
// otherwise with one Get per range, in order. It starts no goroutines:
// concurrency belongs to the caller (see package pipeline) or to the
// backend's RangesReader.
func GetRanges(ctx context.Context, r Reader, key string, ranges []ByteRange) ([][]byte, error) {
	if rr := CapabilitiesOf(r).Ranges; rr != nil {
		return rr.GetRanges(ctx, key, ranges)
	}
	out := make([][]byte, len(ranges))
	for i, br := range ranges {
		b, err := r.Get(ctx, key, br)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
