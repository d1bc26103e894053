package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gozarr/gozarr/store"
)

// Doer sends HTTP requests: an *http.Client, or an SDK's HTTP client
// (aws.HTTPClient has this method set).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// WatchIdle returns a Doer sending through next that bounds the pauses of
// every answer's body: when the body delivers nothing for idle, the
// request's context is cancelled and the pending read fails with an error
// wrapping store.ErrStalled (which drivers classify KindTransient). The
// watch ends when the body is closed. With idle <= 0 it returns next.
func WatchIdle(next Doer, idle time.Duration) Doer {
	if idle <= 0 {
		return next
	}
	return idleDoer{next, idle}
}

type idleDoer struct {
	next Doer
	idle time.Duration
}

func (c idleDoer) Do(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := c.next.Do(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	b := &idleBody{body: resp.Body, ctx: ctx, cancel: cancel, idle: c.idle}
	b.timer = time.AfterFunc(c.idle, func() {
		cancel(fmt.Errorf("%w: no data for %v", store.ErrStalled, c.idle))
	})
	resp.Body = b
	return resp, nil
}

// idleBody is an answer's body under a watch: every read that delivers
// bytes restarts the timer; a read failing because the timer fired
// reports store.ErrStalled.
type idleBody struct {
	body   io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	timer  *time.Timer
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && !errors.Is(err, store.ErrStalled) {
		if cause := context.Cause(b.ctx); cause != nil && errors.Is(cause, store.ErrStalled) {
			err = fmt.Errorf("%w (%w)", cause, err)
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	err := b.body.Close()
	b.timer.Stop()
	b.cancel(nil)
	return err
}

// ConfigureTransport sets t's timeouts (resolved, see store.Timeouts) to
// connect (dialling and TLS handshake) and for an answer's headers, and
// keeps as many idle connections per host as conns requests may be in
// flight, so that connections are reused.
func ConfigureTransport(t *http.Transport, to store.Timeouts, conns int) {
	t.MaxIdleConnsPerHost = conns
	t.MaxIdleConns = max(t.MaxIdleConns, 2*conns)
	t.DialContext = (&net.Dialer{Timeout: to.Connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = to.Connect
	t.ResponseHeaderTimeout = to.Header
}

// HTTPRange returns the Range header of Driver.Read's arguments: "" for
// the whole object (off 0, n < 0), "bytes=off-(off+n-1)", "bytes=off-" or,
// for off < 0, the suffix "bytes=-(-off)".
func HTTPRange(off, n int64) string {
	switch {
	case off < 0:
		return "bytes=-" + strconv.FormatInt(-off, 10)
	case n >= 0:
		return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)
	case off > 0:
		return "bytes=" + strconv.FormatInt(off, 10) + "-"
	}
	return ""
}
