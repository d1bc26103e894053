package lazy_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store/internal/lazy"
)

// TestOnce: 16 goroutines Get 4 keys at once: each key loads once, every
// Get sees its value; an error is kept like a value.
func TestOnce(t *testing.T) {
	var m lazy.Map[int, string]
	var loads [4]atomic.Int32
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := g % 4
			v, err := m.Get(k, func() (string, error) {
				loads[k].Add(1)
				if k == 3 {
					return "", errors.New("bad key")
				}
				return fmt.Sprint("v", k), nil
			})
			if k == 3 && (err == nil || err.Error() != "bad key") || k != 3 && (err != nil || v != fmt.Sprint("v", k)) {
				t.Errorf("Get(%d) = %q, %v", k, v, err)
			}
		}()
	}
	wg.Wait()
	for k := range loads {
		if n := loads[k].Load(); n != 1 {
			t.Errorf("key %d loaded %d times, want 1", k, n)
		}
	}
}

// TestContextErrorNotKept: a load that failed because its context ended
// is tried again by the next Get.
func TestContextErrorNotKept(t *testing.T) {
	var m lazy.Map[string, int]
	n := 0
	load := func(ctx context.Context) func() (int, error) {
		return func() (int, error) {
			n++
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("opening: %w", err)
			}
			return 42, nil
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Get("k", load(done)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a done context: %v", err)
	}
	for range 2 {
		if v, err := m.Get("k", load(context.Background())); v != 42 || err != nil {
			t.Fatalf("Get after the cancelled load: %d %v", v, err)
		}
	}
	if n != 2 {
		t.Errorf("%d loads, want 2 (the cancelled one, then one kept)", n)
	}
}
