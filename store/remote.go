package store

// What remote backends (store/objstore and the stores on it) share with
// their callers: request validation, the sentinels of bad and stalled
// answers, and timeouts.

import (
	"errors"
	"time"
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

// ErrStalled reports an answer whose body stopped arriving for longer than
// the idle timeout (Timeouts.Idle). Remote stores retry it like a broken
// connection.
var ErrStalled = errors.New("answer stalled")

// Timeouts bound how long a remote store (store/http, store/s3) waits on
// its server, so that one that accepts connections and never answers, or
// stops sending in the middle of a body, fails the request (which is then
// retried like a broken connection) instead of hanging the read. A context
// still bounds each call as a whole. A zero field takes its value from
// DefaultTimeouts(); a negative one means no limit.
type Timeouts struct {
	// Connect bounds opening a connection, TLS handshake included.
	Connect time.Duration
	// Header bounds the wait for an answer's status and headers once the
	// request is sent.
	Header time.Duration
	// Idle bounds each pause in the arrival of an answer's body.
	Idle time.Duration
}

// DefaultTimeouts returns the timeouts remote stores use by default: 10 s
// to connect, 30 s for an answer's headers, 30 s without a byte of its
// body.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second}
}

// Resolve returns t with zero fields replaced by DefaultTimeouts() and
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
	def := DefaultTimeouts()
	return Timeouts{
		Connect: pick(t.Connect, def.Connect),
		Header:  pick(t.Header, def.Header),
		Idle:    pick(t.Idle, def.Idle),
	}
}
