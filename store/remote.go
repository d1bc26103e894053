package store

// Helpers for backends that read over HTTP range requests (store/http,
// store/s3): request planning, answer checks and concurrent GetRanges. They
// know nothing of a particular protocol client.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrBadContentRange reports a 206 answer whose Content-Range header is
// malformed or does not describe the range asked for.
var ErrBadContentRange = errors.New("bad Content-Range")

// ValidateRequest checks the arguments of a read: key with ValidateKey (its
// error is returned as is), then each range with ByteRange.Validate, whose
// error is wrapped in a *KeyError naming op and key.
func ValidateRequest(op, key string, ranges ...ByteRange) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	for _, r := range ranges {
		if err := r.Validate(); err != nil {
			return &KeyError{Op: op, Key: key, Err: err}
		}
	}
	return nil
}

// RequestRange returns the range a remote backend should ask for to read r.
// empty reports a range that selects nothing whatever the value
// (OffsetLen(off, 0) or Suffix(0)): the backend sends no read but checks that
// the key exists (a HEAD), since a missing key must still be ErrNotFound.
// From(0) becomes Full, which needs no Range header.
func RequestRange(r ByteRange) (req ByteRange, empty bool) {
	_, n, bounded := r.Bounded()
	sn, suffix := r.IsSuffix()
	if (bounded && n == 0) || (suffix && sn == 0) {
		return r, true
	}
	if off, ok := r.IsFrom(); ok && off == 0 {
		return Full(), false
	}
	return r, false
}

// SliceWhole returns the part of the whole value b that r selects, clamped
// as the package doc describes, for a server that ignored the Range header
// and answered with everything. The result shares b's memory and has no
// spare capacity. It reports ErrInvalidRange for a range that fails
// Validate.
func SliceWhole(b []byte, r ByteRange) ([]byte, error) {
	start, end, err := r.Resolve(int64(len(b)))
	if err != nil {
		return nil, err
	}
	return b[start:end:end], nil
}

// maxSizedBody is the largest announced body length ReadBody trusts to
// allocate up front.
const maxSizedBody = 64 << 20

// ReadBody reads all of body, whose announced length is size (negative when
// unknown). A known size up to 64 MiB sizes the buffer exactly and a shorter
// body is io.ErrUnexpectedEOF; larger or unknown sizes grow the buffer as
// the bytes arrive, so a lying server cannot make the reader allocate
// without sending. An empty body is an empty, non-nil slice.
func ReadBody(body io.Reader, size int64) ([]byte, error) {
	if size >= 0 && size <= maxSizedBody {
		b := make([]byte, size)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(body)
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// CheckContentRange verifies that a 206 answer holding n bytes, with the
// Content-Range header cr, covers what r asks for: cr must read
// "bytes first-last/total" (or "bytes first-last/*"), hold last-first+1 = n
// bytes, start where r starts in a value of total bytes, and hold no more
// than r asks for. An empty answer is not checked (servers format empty
// ranges differently). Errors wrap ErrBadContentRange.
func CheckContentRange(cr string, r ByteRange, n int) error {
	if n == 0 {
		return nil
	}
	spec, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return fmt.Errorf("%w: 206 answer with Content-Range %q", ErrBadContentRange, cr)
	}
	rng, totalStr, ok := strings.Cut(spec, "/")
	firstStr, lastStr, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return fmt.Errorf("%w: malformed %q", ErrBadContentRange, cr)
	}
	first, err1 := strconv.ParseInt(firstStr, 10, 64)
	last, err2 := strconv.ParseInt(lastStr, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return fmt.Errorf("%w: malformed %q", ErrBadContentRange, cr)
	}
	if last-first+1 != int64(n) {
		return fmt.Errorf("%w: %q but %d bytes received", ErrBadContentRange, cr, n)
	}
	if o, l, ok := r.Bounded(); ok && (first != o || int64(n) > l) {
		return fmt.Errorf("%w: %q does not match %v", ErrBadContentRange, cr, r)
	}
	if l, ok := r.IsSuffix(); ok && int64(n) > l {
		return fmt.Errorf("%w: %q does not match %v", ErrBadContentRange, cr, r)
	}
	if total, err := strconv.ParseInt(totalStr, 10, 64); err == nil {
		if last >= total {
			return fmt.Errorf("%w: malformed %q", ErrBadContentRange, cr)
		}
		if start, _, _ := r.Resolve(total); start != first {
			return fmt.Errorf("%w: %q does not match %v", ErrBadContentRange, cr, r)
		}
	}
	return nil
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
// From and Suffix ranges with a get each, runs the gets concurrently (get
// itself holds the backend's concurrency slot) and returns the results in
// the order of ranges. The first error cancels the other gets and is
// returned. Results of overlapping ranges may share memory with each other.
func GetRangesConcurrent(ctx context.Context, key string, ranges []ByteRange, opt CoalesceOptions, get GetFunc) ([][]byte, error) {
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
	for _, job := range jobs {
		g.Go(func() error { return job(gctx) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadBodyUpTo is ReadBody reading no more than limit bytes of body (all
// of it when limit is negative), for answers whose useful part is known:
// a 206 answer holds at most the length of the range asked for, and of a
// 200 answer to a bounded range only the bytes up to the range's end are
// needed. more reports that the body holds more than limit bytes, found
// from size (then nothing past limit is read) or by reading one byte past
// limit; b then holds the first limit bytes. So a server answering a
// 10-byte range with a 512 MiB body costs 11 bytes of reading, not 512 MiB.
func ReadBodyUpTo(body io.Reader, size, limit int64) (b []byte, more bool, err error) {
	switch {
	case limit < 0:
		b, err = ReadBody(body, size)
		return b, false, err
	case size > limit:
		b, err = ReadBody(io.LimitReader(body, limit), limit)
		return b, true, err
	case size >= 0:
		b, err = ReadBody(body, size)
		return b, false, err
	}
	b, err = ReadBody(io.LimitReader(body, limit+1), -1)
	if int64(len(b)) > limit {
		return b[:limit:limit], true, err
	}
	return b, false, err
}

// AnswerLimit returns how many bytes of an answer to a request for r are
// useful: for a 206 answer (partial true) the length r asks for, for a 200
// answer (the whole value) the bytes up to r's end; -1 when r has no end
// (Full, From, and a Suffix of a whole value).
func AnswerLimit(r ByteRange, partial bool) int64 {
	if off, n, ok := r.Bounded(); ok {
		if partial {
			return n
		}
		return off + n
	}
	if n, ok := r.IsSuffix(); ok && partial {
		return n
	}
	return -1
}

// ErrStalled reports an answer whose body stopped arriving for longer than
// the idle timeout (Timeouts.Idle). Remote stores retry it like a broken
// connection.
var ErrStalled = errors.New("answer stalled")

// Timeouts bound how long a remote store (store/http, store/s3) waits on
// its server, so that one that accepts connections and never answers, or
// stops sending in the middle of a body, fails the request (which is then
// retried like a broken connection) instead of hanging the read. A context
// still bounds each call as a whole. A zero field takes its value from
// DefaultTimeouts; a negative one means no limit.
type Timeouts struct {
	// Connect bounds opening a connection, TLS handshake included.
	Connect time.Duration
	// Header bounds the wait for an answer's status and headers once the
	// request is sent.
	Header time.Duration
	// Idle bounds each pause in the arrival of an answer's body.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts remote stores use by default: 10 s to
// connect, 30 s for an answer's headers, 30 s without a byte of its body.
var DefaultTimeouts = Timeouts{Connect: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second}

// Resolve returns t with zero fields replaced by DefaultTimeouts' and
// negative ones by 0, which net/http reads as "no limit".
func (t Timeouts) Resolve() Timeouts {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Timeouts{
		Connect: pick(t.Connect, DefaultTimeouts.Connect),
		Header:  pick(t.Header, DefaultTimeouts.Header),
		Idle:    pick(t.Idle, DefaultTimeouts.Idle),
	}
}

// IdleWatch bounds the pauses of one answer's body: the request runs under
// the watch's Context, and when the body wrapped by Body delivers nothing
// for the idle timeout, the watch cancels that context, which makes the
// pending read fail with an error wrapping ErrStalled. Use one watch per
// request, and Stop it when done with the body.
type IdleWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	timer  *time.Timer
}

// NewIdleWatch returns a watch of pauses longer than idle (none when idle
// is 0 or less) over a request made with ctx.
func NewIdleWatch(ctx context.Context, idle time.Duration) *IdleWatch {
	w := &IdleWatch{idle: idle}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	return w
}

// Context returns the context to make the request with.
func (w *IdleWatch) Context() context.Context { return w.ctx }

// Body starts the watch and returns body wrapped so that every read that
// delivers bytes restarts it, and a read that fails because the watch
// fired reports ErrStalled (see Err).
func (w *IdleWatch) Body(body io.Reader) io.Reader {
	if w.idle <= 0 {
		return body
	}
	w.timer = time.AfterFunc(w.idle, func() {
		w.cancel(fmt.Errorf("%w: no data for %v", ErrStalled, w.idle))
	})
	return idleReader{body, w}
}

// Err returns err, or when the watch fired, an error wrapping ErrStalled
// (and err).
func (w *IdleWatch) Err(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrStalled) {
		return err
	}
	if cause := context.Cause(w.ctx); cause != nil && errors.Is(cause, ErrStalled) {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}

// Stop ends the watch and releases its context.
func (w *IdleWatch) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel(nil)
}

type idleReader struct {
	r io.Reader
	w *IdleWatch
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.timer.Reset(r.w.idle)
	}
	if err != nil && err != io.EOF {
		err = r.w.Err(err)
	}
	return n, err
}
