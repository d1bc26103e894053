package s3

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/store"
)

// getRanges reads ranges of key with as few requests as store.Coalesce
// allows (bounded ranges are coalesced with opt; Full, From and Suffix ranges
// are a request each), runs the requests concurrently (get itself holds the
// store's concurrency slot for each) and returns the results in order. The
// first error cancels the other requests. Results of overlapping ranges may
// share memory with each other.
func getRanges(ctx context.Context, key string, ranges []store.ByteRange, opt store.CoalesceOptions,
	get func(context.Context, string, store.ByteRange) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, len(ranges))
	var spans []store.Span
	var idx []int // index in ranges of each span
	var jobs []func(context.Context) error
	for i, r := range ranges {
		if off, n, ok := r.Bounded(); ok {
			spans = append(spans, store.Span{Offset: off, Length: n})
			idx = append(idx, i)
			continue
		}
		jobs = append(jobs, func(ctx context.Context) error {
			b, err := get(ctx, key, r)
			out[i] = b
			return err
		})
	}
	groups, err := store.Coalesce(spans, opt)
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	for _, g := range groups {
		jobs = append(jobs, func(ctx context.Context) error {
			data, err := get(ctx, key, store.Range(g.Span.Offset, g.Span.Length))
			if err != nil {
				return err
			}
			for _, m := range g.Members {
				out[idx[m]] = g.Extract(data, spans[m])
			}
			return nil
		})
	}
	if len(jobs) == 1 {
		if err := jobs[0](ctx); err != nil {
			return nil, err
		}
		return out, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, job := range jobs {
		g.Go(func() error { return job(gctx) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
