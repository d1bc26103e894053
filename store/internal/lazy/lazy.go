// Package lazy holds values loaded at most once per key on first use, for
// the stores that open or read things on demand and share them between
// concurrent reads (a reference resolver's target stores, a Parquet
// reference store's refs files).
package lazy

import (
	"context"
	"errors"
	"sync"
)

// Map loads the value of a key once, on first Get, and keeps it (or its
// error). Concurrent Gets of a key wait for the one load; Gets of other
// keys do not. A load that fails with a context error (context.Canceled,
// context.DeadlineExceeded: the caller gave up, the key is not at fault)
// is not kept, so a later Get loads again. The zero Map is empty and
// ready; a Map must not be copied after first use.
type Map[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	mu   sync.Mutex
	done bool
	v    V
	err  error
}

// Get returns the value of k, calling load for it if no earlier Get has
// kept one.
func (m *Map[K, V]) Get(k K, load func() (V, error)) (V, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[K]*entry[V]{}
	}
	e := m.m[k]
	if e == nil {
		e = &entry[V]{}
		m.m[k] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		v, err := load()
		if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return v, err
		}
		e.v, e.err, e.done = v, err, true
	}
	return e.v, e.err
}
