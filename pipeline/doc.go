// Package pipeline is gozarr's one read and write engine; it owns all
// concurrency of reads and writes.
//
// A read is one straight path, whatever the layout, and its input is a
// Plan (ExecuteRead; Read plans its selection and runs it):
//
//	plan    a selection resolved against the chunk grid (Plan): write units
//	        (chunks, or shards) and, within shards, read units (inner
//	        chunks, recursively through nested shards); planning costs grow
//	        with the chunks touched, never with the grid
//	produce the plan's write units, in order, to a pool of fetchers; the
//	        first error any stage meets ends the iteration
//	locate  fetchers resolve shard indexes (the grid's IndexCache,
//	        single-flight, one range request per cold shard)
//	fetch   the read units' bytes, grouped per key and coalesced once,
//	        with the store's own knobs (store.Capabilities.Coalesce) unless
//	        Options.Coalesce says otherwise; I/O concurrency is the store's
//	        request limit (remote) or the decode concurrency (local shards);
//	        local stores read a shard a selection needs whole with one read,
//	        and uncompressed units covered whole go straight into the output
//	        (vectored reads), through no buffer
//	walk    each fetcher lists its write unit's read units with the
//	        plan's one walker (Plan.ReadUnits lists them with it too),
//	        through nested shards, each unit once
//	decode  one pool of DecodeConcurrency workers for every unit of every
//	        shard, codecs resolved once per array and chunk shape; the
//	        workers are the only writers of the output: a missing unit's
//	        fill and a chunk-cache hit are units like any other
//	place   one place function: decode straight into the output when the
//	        unit's place is one contiguous run, else into the worker's
//	        scratch and a strided copy; the fill value only where a unit is
//	        missing
//
// Selections that are not boxes go the same path. An orthogonal
// selection (index arrays, masks) lists its indices per dimension,
// sorted and deduplicated (nd.Dim.Index), and the chunk grid splits the
// lists like ranges; a coordinate selection is grouped by read unit in
// the hierarchy's order (ReadPoints: a counting or radix sort of each
// point's unit index, repeats kept) or sorted by one hierarchical key and
// deduplicated (WritePoints: grid chunk, inner chunk at every level,
// position), so every chunk, shard and inner chunk holds one run of its
// points (nd.ChunkPart.Points). Either way each touched unit is fetched
// and decoded once and its elements gathered into place (or scattered,
// for writes); a request out of order or with repeats is read compact and
// put back in the order asked at the end (writes: the last value of a
// repeated index wins).
//
// Package sharding is the chunk locator (index format, locating inner
// chunks, shard assembly); it does no I/O and starts no goroutines. A
// chunk cache (Grid.Cache) sits between fetch and decode for any read
// unit, sharded or not. Store capabilities are asked once per read with
// store.CapabilitiesOf, which wrappers (caches) keep.
//
// A write is the same plan reversed: write units are assembled
// (read-modify-write only where a selection covers them in part, one
// writer per key at a time within the process), inner chunks of a shard
// are encoded on the worker pool and appended in write order, and each
// write unit is stored with one atomic Set (or deleted when it ends all
// fill value).
//
// Bytes held by a read or write beyond its output are capped
// (Options.MaxBytesInFlight); a single unit larger than the cap still
// runs, alone.
package pipeline
