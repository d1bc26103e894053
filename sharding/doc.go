// Package sharding implements the Zarr v3 sharding_indexed codec: many inner
// chunks stored in one object (a shard) with an index of (offset, nbytes)
// pairs, read with one suffix- or prefix-range request and cached.
package sharding
