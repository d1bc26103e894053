// Package hdf5 reads the structure of HDF5 and NetCDF-4 files in pure Go:
// the groups, and for every dataset its data type, shape, chunk shape, fill
// value, filter pipeline, attributes and dimension scales, and where each
// chunk lies in the file (address, size, filter mask). It reads no data
// itself: it is what makes virtual references (see References, which
// writes kerchunk JSON version 1), so that Zarr readers fetch the chunks by
// range and decode them with Zarr codecs.
//
// The format is learnt from the HDF5 File Format Specification (version
// 3.0): superblock versions 0 to 3, object header versions 1 and 2 with
// continuation blocks, old-style groups (symbol table: version 1 B-tree
// group nodes and a local heap) and new-style groups (link messages,
// compact or dense in a fractal heap indexed by a version 2 B-tree),
// compact and dense attributes, data layout messages version 3
// (contiguous, compact, chunked with a version 1 B-tree) and versions 4
// and 5 (HDF5 2.x writes 5 for filtered datasets; single chunk, implicit,
// fixed array, extensible array, version 2 B-tree chunk indexes). Layout
// messages of versions 1 and 2 (HDF5 1.6 and older) are refused. Data types: fixed-point and floating-point
// numbers of either byte order, fixed-length strings, enumerations (read
// as their base integer type), references, and variable-length strings
// and sequences in attributes; compound, array, opaque and bitfield
// datasets are refused with ErrUnsupported.
//
// Files are untrusted input. Every address, size and count is checked
// against the end of the file and the limits of Options before it is used;
// the object graph (continuation blocks, B-tree nodes, heap blocks, group
// links) is walked with cycle detection and bounded depth; the metadata a
// File reads is bounded (WithMaxMetadataBytes) and so is the number of
// chunks of a dataset (WithMaxChunks). Errors wrap ErrFormat (a structure
// is malformed), ErrUnsupported (a valid feature this package does not
// read), ErrLimit (a limit was reached) or the store's errors.
//
// A File reads through a store.Reader with a small page cache, so it works
// over any gozarr store (local files, S3, HTTP); it is safe for concurrent
// use.
package hdf5

import "errors"

// Sentinel errors; every error of the package wraps one of them (or an
// error of the underlying store, or the context's).
var (
	// ErrFormat reports a malformed file: a bad signature, checksum,
	// version, or an address, size or count out of bounds.
	ErrFormat = errors.New("hdf5: malformed file")
	// ErrUnsupported reports a valid HDF5 feature this package does not
	// read (a compound dataset, a virtual layout, an external file).
	ErrUnsupported = errors.New("hdf5: unsupported feature")
	// ErrLimit reports that reading the file would exceed a limit of
	// Options (metadata bytes, chunks per dataset, objects, depth).
	ErrLimit = errors.New("hdf5: limit exceeded")
	// ErrNotFound reports a path that names no object of the file.
	ErrNotFound = errors.New("hdf5: no such object")
)
