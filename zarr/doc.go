// Package zarr reads and writes Zarr arrays and groups: v3 (zarr.json) and
// v2 (.zarray, .zgroup, .zattrs) metadata, every core data type, sharding,
// over any store (package store: the filesystem, memory, S3, HTTP, zip).
//
// Open an array and read a selection (NumPy rules, package nd) into a new
// slice of the array's Go type, or into your own:
//
//	st, _ := fs.New("data.zarr")
//	a, err := zarr.OpenArray(ctx, st, "temperature")
//	vals, shape, err := zarr.Read[float32](ctx, a, nd.Range(0, 10), nd.All())
//	err = zarr.ReadInto(ctx, a, buf, nd.Every(2), nd.Index(-1))
//
// Create one with typed builders instead of codec JSON, and write it:
//
//	zs, _ := codecs.NewZstd(3, false)
//	meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32,
//		[]int{256, 256}, zarr.Shards(1024, 1024), zarr.Compress(zs))
//	b, err := zarr.CreateArray(ctx, st, "new", meta)
//	err = zarr.Write(ctx, b, vals, nd.Range(0, 10), nd.All())
//
// Reads and writes run on package pipeline's engine: a selection is planned
// into chunks (and inner chunks of shards, whose indexes are cached), only
// the bytes it needs are fetched, and chunks decode on a worker pool
// straight into the output. Array.Plan exposes that plan. Chunks not stored
// read as the fill value; a chunk a write leaves all fill value is deleted.
//
// Beyond the core types, the data types zarr-python writes are read and
// written through the same calls: fixed-width strings (fixed_length_utf32,
// NumPy "<U"; null_terminated_bytes, "|S": bytes, dtype.Strings converts),
// numpy.datetime64 and numpy.timedelta64 of any unit (Read[int64] counts,
// dtype.NaT; DataType.Time converts) and bfloat16 (dtype.BFloat16).
// Variable-length strings and bytes (v3 "string" with vlen-utf8,
// "variable_length_bytes" with vlen-bytes; v2 "|O" with those filters, as
// xarray, AnnData and VCF Zarr write them) are read and written with
// ReadStrings/WriteStrings and ReadByteStrings/WriteByteStrings, sharded
// too, through the same engine and memory bounds (see strings.go);
// ReadStrings also reads the fixed-width string types.
//
// A group's consolidated metadata (v3 inline "consolidated_metadata", v2
// .zmetadata, as zarr-python and xarray write them) opens its children
// with no further requests; Group.VerifyConsolidated reports a stale one
// and Consolidate writes it. CreateArrayV2 and CreateGroupV2 write Zarr v2.
//
// An *Array is safe for concurrent use; concurrent writes of disjoint
// regions that share a chunk or shard are serialised per chunk within the
// process. Errors wrap sentinels (ErrInvalidMetadata, ErrUnsupported,
// ErrNodeNotFound, and those of packages store, codecs, nd and sharding)
// for errors.Is.
package zarr
