// Package pipeline owns all concurrency of gozarr's reads and writes: a
// selection is planned into chunk requests, chunks are fetched concurrently
// with bounded bytes in flight, decoded on a worker pool and placed straight
// into the caller's output.
package pipeline
