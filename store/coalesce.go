package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Default coalescing knobs, used where a CoalesceOptions field is zero.
//
// DefaultMaxGap is 64 KiB: reading 64 KiB of unwanted bytes costs a few
// microseconds from a page-cached file and well under a millisecond from an
// object store, both less than one extra request, while staying small
// enough that coalescing never reads much more than was asked for. Remote
// stores, where a request costs tens of milliseconds, may well raise it to
// about 1 MiB.
//
// DefaultMaxSize is 16 MiB: large enough that sequential inner chunks of a
// shard join into few requests, small enough that one request neither holds
// a lot of memory nor serialises work that could run concurrently.
const (
	DefaultMaxGap  int64 = 64 << 10
	DefaultMaxSize int64 = 16 << 20
)

// CoalesceOptions are the two knobs of Coalesce. The zero value means the
// defaults.
type CoalesceOptions struct {
	// MaxGap is the most unwanted bytes read to join two spans into one
	// request. 0 means DefaultMaxGap; a negative value joins only spans
	// that touch or overlap.
	MaxGap int64
	// MaxSize is the largest request Coalesce builds by joining spans; a
	// single span longer than MaxSize is still one request of its own.
	// 0 means DefaultMaxSize; a negative value means no limit.
	MaxSize int64
}

func (o CoalesceOptions) resolved() (gap, size int64) {
	gap, size = o.MaxGap, o.MaxSize
	switch {
	case gap == 0:
		gap = DefaultMaxGap
	case gap < 0:
		gap = 0
	}
	switch {
	case size == 0:
		size = DefaultMaxSize
	case size < 0:
		size = math.MaxInt64
	}
	return gap, size
}

// Span is a bounded byte range [Offset, Offset+Length).
type Span struct{ Offset, Length int64 }

// End returns Offset+Length.
func (s Span) End() int64 { return s.Offset + s.Length }

// Group is one coalesced request: the bytes of Span, which serve the input
// spans whose indexes are listed in Members (sorted by offset). Input span
// spans[m] starts at spans[m].Offset-Span.Offset in the group's bytes; use
// Extract to slice it out.
type Group struct {
	Span    Span
	Members []int
}

// Extract returns the bytes of s (one of g's member spans) within data, the
// bytes read for g. data may be shorter than g.Span.Length when the value
// ended early (ranges are clamped, see the package doc): the result is
// clamped the same way, and may be empty. The result aliases data, with its
// capacity limited to its length; it is never nil.
func (g Group) Extract(data []byte, s Span) []byte {
	if data == nil {
		data = []byte{}
	}
	lo := min(max(s.Offset-g.Span.Offset, 0), int64(len(data)))
	hi := min(max(s.End()-g.Span.Offset, lo), int64(len(data)))
	return data[lo:hi:hi]
}

// Coalesce groups spans, in any order and possibly overlapping or repeated,
// into few requests. Sorted by offset, a span joins the current group when
// the gap before it is at most MaxGap bytes and the grown group would be at
// most MaxSize bytes long (or the span adds no bytes at all); otherwise it
// starts a new group. Every input span is a member of exactly one group.
// Groups are returned in offset order; two groups overlap only where a span
// overlapping the previous group could not join it without exceeding
// MaxSize. A zero-length span is a member like any other (a group of only
// zero-length spans has length 0).
//
// Coalesce reports ErrInvalidRange, naming the span, for a negative offset or
// length or an end that overflows int64. It is a pure function, safe for
// concurrent use.
func Coalesce(spans []Span, opt CoalesceOptions) ([]Group, error) {
	for i, s := range spans {
		if s.Offset < 0 || s.Length < 0 || s.Offset > math.MaxInt64-s.Length {
			return nil, fmt.Errorf("%w: span %d {Offset: %d, Length: %d}", ErrInvalidRange, i, s.Offset, s.Length)
		}
	}
	if len(spans) == 0 {
		return nil, nil
	}
	gap, maxSize := opt.resolved()
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(spans[a].Offset, spans[b].Offset), cmp.Compare(spans[a].End(), spans[b].End()))
	})

	var groups []Group
	first := spans[order[0]]
	start, end := first.Offset, first.End()
	lo := 0 // index into order of the current group's first member
	for k := 1; k < len(order); k++ {
		s := spans[order[k]]
		newEnd := max(end, s.End())
		// s.Offset >= start, so neither subtraction can overflow.
		if s.Offset-end <= gap && (newEnd == end || newEnd-start <= maxSize) {
			end = newEnd
			continue
		}
		groups = append(groups, Group{Span: Span{start, end - start}, Members: order[lo:k:k]})
		start, end, lo = s.Offset, s.End(), k
	}
	groups = append(groups, Group{Span: Span{start, end - start}, Members: order[lo:len(order):len(order)]})
	return groups, nil
}

// GetRangesCoalesced reads several ranges of one key the way a remote store's
// GetRanges may: bounded ranges (Range) are coalesced with opt into as few
// Gets as possible, Full, From and Suffix ranges are read with a Get each.
// Results are in the order of ranges and clamped as the package doc
// describes; results of overlapping ranges may share memory with each other
// (never with the store). It starts no goroutines and stops at the first
// error. A missing key is ErrNotFound.
func GetRangesCoalesced(ctx context.Context, r Reader, key string, ranges []ByteRange, opt CoalesceOptions) ([][]byte, error) {
	for _, br := range ranges {
		if err := br.Validate(); err != nil {
			return nil, &KeyError{Op: "get", Key: key, Err: err}
		}
	}
	out, jobs, err := planRanges(key, ranges, opt, r.Get)
	if err != nil {
		return nil, err
	}
	for _, job := range jobs {
		if err := job(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetFunc reads one range of key with one request (as a backend's Get does
// after validation).
type GetFunc func(ctx context.Context, key string, r ByteRange) ([]byte, error)

// planRanges prepares the reads of ranges of key (already validated):
// bounded ranges are coalesced with opt into one read per group, Full, From
// and Suffix ranges are a read each, in order. Each job fills its results
// in out, which has one slot per range.
func planRanges(key string, ranges []ByteRange, opt CoalesceOptions, get GetFunc) (out [][]byte, jobs []func(context.Context) error, err error) {
	out = make([][]byte, len(ranges))
	var spans []Span
	var idx []int // index in ranges of each span
	for i, r := range ranges {
		if off, n, ok := r.Bounded(); ok {
			spans = append(spans, Span{Offset: off, Length: n})
			idx = append(idx, i)
			continue
		}
		jobs = append(jobs, func(ctx context.Context) error {
			b, err := get(ctx, key, r)
			out[i] = b
			return err
		})
	}
	groups, err := Coalesce(spans, opt)
	if err != nil {
		return nil, nil, &KeyError{Op: "get", Key: key, Err: err}
	}
	for _, g := range groups {
		jobs = append(jobs, func(ctx context.Context) error {
			data, err := get(ctx, key, OffsetLen(g.Span.Offset, g.Span.Length))
			if err != nil {
				return err
			}
			for _, m := range g.Members {
				out[idx[m]] = g.Extract(data, spans[m])
			}
			return nil
		})
	}
	return out, jobs, nil
}

// GetRangesConcurrent implements RangesReader.GetRanges for a remote
// backend: it validates key and ranges (as ValidateRequest), reads the
// bounded ranges with as few gets as Coalesce with opt allows and Full,
// From and Suffix ranges with a get each, runs the gets concurrently, at
// most workers at a time (the backend's request limit: so a call of many
// groups starts no more goroutines than can send; workers < 1: one per get)
// and returns the results in the order of ranges. The first error cancels
// the other gets and is returned. Results of overlapping ranges may share
// memory with each other.
func GetRangesConcurrent(ctx context.Context, key string, ranges []ByteRange, opt CoalesceOptions, workers int, get GetFunc) ([][]byte, error) {
	if err := ValidateRequest("get", key, ranges...); err != nil {
		return nil, err
	}
	out, jobs, err := planRanges(key, ranges, opt, get)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 1 {
		if err := jobs[0](ctx); err != nil {
			return nil, err
		}
		return out, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	if workers > 0 {
		g.SetLimit(workers)
	}
	for _, job := range jobs {
		g.Go(func() error { return job(gctx) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
