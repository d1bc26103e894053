package objstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// bodyError is a failure while reading an answer's body: the connection
// broke or stalled after the answer began. It is transient.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "reading body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// retry runs attempt until it succeeds, fails with an error that is not
// transient, the context ends or Config.Retry.MaxAttempts attempts are
// spent, and returns the last error. Between attempts it waits (see wait)
// and then runs recheck, when not nil, whose error ends the retries (a
// conditional write's check that its condition still holds).
func (s *Store) retry(ctx context.Context, op string, recheck func(context.Context, error) error, attempt func(context.Context) error) error {
	for i := 1; ; i++ {
		err := attempt(ctx)
		if err == nil || i >= s.cfg.Retry.MaxAttempts || ctx.Err() != nil || !s.transient(ctx, op, err) {
			return err
		}
		if werr := s.wait(ctx, i, err); werr != nil {
			return fmt.Errorf("%w (after %w)", werr, err)
		}
		if recheck != nil {
			if err := recheck(ctx, err); err != nil {
				return err
			}
		}
	}
}

// do sends one request with f under a request slot, with retries (see
// retry): a context done before the slot is free sends nothing.
func (s *Store) do(ctx context.Context, op string, recheck func(context.Context, error) error, f func(context.Context) error) error {
	return s.retry(ctx, op, recheck, func(ctx context.Context) error {
		if err := s.lim.Acquire(ctx); err != nil {
			return err
		}
		defer s.lim.Release()
		if err := ctx.Err(); err != nil {
			return err
		}
		return f(ctx)
	})
}

// transient reports whether err may go away when the request is sent
// again.
func (s *Store) transient(ctx context.Context, op string, err error) bool {
	var be *bodyError
	return errors.As(err, &be) || s.kind(ctx, op, err) == KindTransient
}

// wait pauses before attempt+1: the wait the last error asked for (a
// RetryDelayer), else full jitter over 50 ms·2^attempt, capped at
// Config.Retry.MaxBackoff. It returns ctx.Err() if ctx ends first.
func (s *Store) wait(ctx context.Context, attempt int, last error) error {
	d := min(50*time.Millisecond<<min(attempt, 20), s.cfg.Retry.MaxBackoff)
	d = time.Duration(rand.Int64N(int64(d)) + 1)
	var rd RetryDelayer
	if errors.As(last, &rd) && rd.RetryDelay() > 0 {
		d = rd.RetryDelay()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
