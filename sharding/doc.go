// Package sharding implements the Zarr v3 sharding_indexed codec: many inner
// chunks stored in one object (a shard) with an index of (offset, nbytes)
// pairs, read with one suffix- or prefix-range request and cached.
//
// Specification: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/
//
// JSON name "sharding_indexed"; configuration example:
//
//	{"chunk_shape": [32, 32],
//	 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}],
//	 "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
//	 "index_location": "end"}
//
// # Pieces
//
//   - Codec is the codec itself (a codecs.ArrayToBytes, registered in init):
//     Encode turns a whole shard into bytes, Decode the reverse.
//   - Layout is a Codec resolved for one shard representation (once per
//     array): the inner and index chains, the number of inner chunks, the
//     size and place of the index. It is the chunk locator: where a shard's
//     index is (IndexRangeIn), what it says (DecodeIndex, IndexOf), which
//     entry an inner chunk has (Linear), and how a shard is built
//     (Builder, EncodeShard, UpdateInner, WriteOrder). Reading shards,
//     with their I/O, concurrency and store policy, is package pipeline's:
//     this package does no I/O and starts no goroutines.
//   - IndexCache keeps decoded indexes, bounded by bytes, LRU.
//
// # Layout of an encoded shard
//
// Gozarr writes shards the way zarr-python 3 does: inner chunks in Morton
// (Z-) order of their coordinates within the shard, dimension 0 in the
// lowest bit, dimensions whose coordinates have run out of bits dropped (so
// the order matches zarr-python's morton_order_iter exactly), stored back to
// back; the index after them ("end") or before them ("start"), offsets
// counted from the start of the shard. Inner chunks equal to the fill value,
// byte for byte, are not stored: their index entry is (2^64-1, 2^64-1).
// Readers accept any order, gaps, and chunks that overlap or share bytes
// (the specification does not forbid it), but every stored chunk must lie
// inside the shard and outside the index.
//
// # Errors
//
// A malformed index (wrong size, an entry past the end of the shard or
// overflowing, a half-empty entry) is ErrCorruptIndex, which wraps
// codecs.ErrCorrupt; an index checksum mismatch is codecs.ErrChecksum; an
// inner chunk that does not decode is the inner chain's error
// (codecs.ErrCorrupt, codecs.ErrChecksum), wrapped with the inner chunk's
// coordinates. A missing shard (store.ErrNotFound) is not an error for a
// reader: it reads as the fill value.
package sharding
