// Package vecread holds what the pipeline and the sharding reader share
// about vectored reads (store.VectorReader) straight into an output: when
// they pay, and the recycled lists of output runs they fill.
package vecread

import "sync"

// MinRun is the shortest run, in bytes, of a chunk's place in the output
// for which the chunk is read there with one vectored read; chunks whose
// place is cut into shorter runs are read into a buffer and copied, which
// moves short runs faster than the kernel moves one iovec each. Measured
// on Linux (2 cores, page cache warm, chunks into an 8192-wide float32
// array): against a read into a buffer and a copy, a vectored read is 3.5
// times slower with 256-byte runs, as fast with 1 KiB runs, 20% faster
// with 2 KiB runs and 30-50% faster with 4 to 8 KiB runs. Tests lower it
// to reach the vectored path with small chunks.
var MinRun = 1536

// Worth reports whether a chunk of chunkBytes whose place in the output is
// runs of runLen bytes is best read there with one vectored read: runs of
// at least MinRun, or one run holding the whole chunk.
func Worth(runLen, chunkBytes int) bool { return runLen >= MinRun || runLen >= chunkBytes }

var pool = sync.Pool{New: func() any { return new([][]byte) }}

// GetRuns returns an empty list of runs to fill, from a pool.
func GetRuns() *[][]byte {
	rp := pool.Get().(*[][]byte)
	*rp = (*rp)[:0]
	return rp
}

// PutRuns returns a list from GetRuns (with the runs last appended to it
// in *rp), dropping its references to the output first.
func PutRuns(rp *[][]byte) {
	clear((*rp)[:cap(*rp)])
	*rp = (*rp)[:0]
	pool.Put(rp)
}
