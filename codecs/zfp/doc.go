// Package zfp implements ZFP compression (https://github.com/LLNL/zfp) of
// 1- to 4-dimensional arrays of float32, float64, int32 and int64 in pure
// Go, and the Zarr codec "numcodecs.zfpy" built on it: the stream numcodecs'
// ZFPY codec writes (zfpy.compress_numpy with a full header), under the v3
// name zarr-python 3 gives it and, through zarr.ArrayMetadataV2.ToV3, as
// the Zarr v2 compressor "zfpy".
//
// ZFP splits an array into blocks of 4^d values, converts each block to a
// common exponent, decorrelates it with a lifting transform and codes its
// bit planes, most significant first, until the mode's budget runs out:
// fixed rate (bits per value), fixed precision (bit planes), fixed
// accuracy (an absolute error tolerance) or, for the reversible mode,
// until the block is exact. Compress and Decompress produce bit for bit
// what the C library 1.0.1 produces (checked against Debian's python3-zfpy
// on every type, dimensionality and mode, codecs/testdata/zfp); the one
// build-dependent detail, the padding at the end of a stream, follows
// Debian's 8-bit stream words (pip's zfpy pads to 8 bytes; both decode).
//
// The format was learnt from zfp's documentation (docs/source/algorithm.rst,
// modes.rst) and its C sources; the code here is written from that
// description.
//
// Decoders never read past their input, never allocate in proportion to a
// header's claims, and report malformed or truncated streams as
// ErrCorrupt; everything in the package is safe for concurrent use.
package zfp
