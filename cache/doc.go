// Package cache holds gozarr's chunk caches: caches of decoded chunk bytes
// that the read pipeline consults between fetch and place, and a cache of
// encoded bytes in front of a (remote) store.
//
// # The Cache interface
//
// Cache is one small interface: Get, Add, Remove and Stats, keyed by a
// string that the caller builds from the store's identity, the chunk's
// store key and, for inner chunks of a shard, the shard's byte offset and
// the inner chunk's index (see Key). Values are decoded chunk bytes; a
// cache is bounded by the bytes it holds (value bytes plus the key and
// EntryOverhead per entry) and safe for concurrent use. One cache may be
// shared by many arrays, even of different stores, under one budget:
// their keys differ.
//
// Implementations:
//
//   - LRU: in memory, least recently used out first.
//   - Compressed: in memory, each value byte-shuffled by its element size
//     and compressed with LZ4 (or zstd level 1), decompressed on a hit;
//     bounded by the compressed bytes. Frames of 16 KiB and more live
//     outside the Go heap (anonymous memory on Unix), so the cache's bytes
//     do not raise the garbage collector's heap goal.
//   - Disk: one file in a private temporary directory, removed on Close,
//     carved into 4 KiB-aligned extents (one positioned write per Add, one
//     positioned read per hit); bounded by the bytes stored. Write errors
//     (disk full, failing disk) drop the entry and are counted in Stats:
//     reads through the cache still succeed, from the store.
//   - Tiered: an ordered list of caches (say a small LRU, then Compressed,
//     then Disk); an entry evicted from tier i moves to tier i+1, a hit in
//     a lower tier moves the entry back to tier 0. An entry moving from
//     Compressed to Disk is stored as its compressed frame.
//   - Store: a store.Reader wrapper that keeps the encoded bytes of Get
//     (and GetRanges) results by (key, range) in any Cache, for remote
//     stores; it passes writes and listings through and invalidates on
//     Set and Delete.
//
// # Ownership
//
// One contract holds for every implementation:
//
//   - A value handed to Add belongs to the cache from then on: the caller
//     must not modify it (it may go on reading it).
//   - Get returns bytes the caller must treat as read-only. They stay valid
//     for as long as the caller keeps them, whatever the cache does later:
//     no cache ever writes into a value after Add. (LRU returns the stored
//     slice itself; Compressed and Disk return a fresh slice each time.)
//
// # Single flight
//
// GetOrLoad (and GetOrLoadElem) look a key up and, on a miss, call a load
// function once for all goroutines that miss the same key at the same
// time, adding the result to the cache. The pipeline uses it so that
// concurrent reads of one chunk fetch and decode it once.
//
// # Stats
//
// Stats reports hits, misses, evictions, errors, the entries and bytes held
// and the bound, per tier for Tiered. Counters only grow; Bytes and Entries
// are the current holdings.
package cache
