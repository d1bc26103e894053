package zarr

import "errors"

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
	// "must_understand": false), a chunk grid other than "regular", an
	// unknown data type or chunk key encoding, storage transformers.
	ErrUnsupported = errors.New("unsupported zarr feature")
)
