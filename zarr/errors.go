package zarr

import (
	"errors"
	"fmt"
)

// Sentinel errors of package zarr. Errors returned by the package wrap one of
// these (test with errors.Is) and name the field or key concerned.
var (
	// ErrInvalidMetadata reports a metadata document that is malformed or
	// breaks the Zarr specification: bad JSON, a missing or mistyped
	// field, a wrong zarr_format or node_type, inconsistent lengths, a
	// fill value that does not fit the data type, absurd sizes.
	ErrInvalidMetadata = errors.New("invalid zarr metadata")
	// ErrUnsupported reports well-formed metadata that uses a feature gozarr
	// does not implement: an unknown extension field (without
	// "must_understand": false), a chunk grid other than "regular" and
	// "rectilinear", an unknown data type or chunk key encoding, storage
	// transformers.
	ErrUnsupported = errors.New("unsupported zarr feature")
	// ErrTooLarge reports a size over one of gozarr's limits: a metadata
	// document over WithMaxMetadataBytes, a chunk decoding to more than
	// WithMaxChunkBytes (ErrChunkTooLarge), a read whose result is more
	// than WithMaxReadBytes or than the platform can allocate, a read or
	// write whose byte size does not fit an int. The message names the
	// limit and the option that raises it.
	ErrTooLarge = errors.New("over a size limit")
	// ErrChunkTooLarge reports an array whose chunks (inner chunks, for a
	// sharded array) decode to more than the per-chunk limit
	// (WithMaxChunkBytes). It wraps ErrTooLarge; the open error that
	// carries it also wraps ErrUnsupported.
	ErrChunkTooLarge = fmt.Errorf("decoded chunk %w", ErrTooLarge)
)
