package main

import (
	"context"
	"sync"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// The codec-only encode baseline of write-all: the layout's chunk codecs
// (the inner chunk's, when sharded) encoding every chunk of the array on
// Threads goroutines, with no Zarr logic: the chunks are cut out of the
// array beforehand, and each goroutine encodes into its own reused buffer.
// It is gozarr's codec chain (a thin wrapper over the codec's library:
// klauspost/compress, our Blosc) since that is the encoder a write runs.

// prepareEncode generates the field, cuts it into chunks and prepares
// their codec-only encode on j.Threads goroutines.
func prepareEncode(j job) (workOp, error) {
	meta, err := metadata(j.Layout, j.Geo)
	if err != nil {
		return workOp{}, err
	}
	a, err := zarr.CreateArray(context.Background(), mem.New(), "", meta)
	if err != nil {
		return workOp{}, err
	}
	chain := a.Chain()
	if l := a.Sharding(); l != nil {
		chain = l.Inner()
	}
	unit := j.Geo.unit(j.Layout)
	data := generate(j.Geo.Seed, j.Geo.N)
	whole := nd.Contiguous(data, []int{j.Geo.N, j.Geo.N}, 4)
	var chunks [][]byte
	for r := 0; r < j.Geo.N; r += unit {
		for c := 0; c < j.Geo.N; c += unit {
			b := make([]byte, unit*unit*4)
			nd.Copy(nd.Contiguous(b, []int{unit, unit}, 4), whole.Slice([]int{r, c}, []int{unit, unit}, []int{1, 1}))
			chunks = append(chunks, b)
		}
	}
	threads := max(j.Threads, 1)
	bufs := make([][]byte, threads)
	for t := range bufs {
		bufs[t] = make([]byte, 0, chain.MaxEncodedSize())
	}
	op := func() error {
		var next paddedCounter
		errs := make([]error, threads)
		var wg sync.WaitGroup
		for t := range threads {
			wg.Go(func() {
				for {
					i := next.n.Add(1) - 1
					if i >= int64(len(chunks)) {
						return
					}
					if _, err := chain.Encode(bufs[t][:0], chunks[i]); err != nil {
						errs[t] = err
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	n := int64(len(chunks)) * int64(unit*unit*4)
	return workOp{op: op, out: n, decoded: n}, nil
}
