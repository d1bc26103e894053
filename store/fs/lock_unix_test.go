//go:build unix

package fs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// TestLockKey: a key's lock excludes a second holder (another open of the
// lock file, as another process makes) until it is released; waiting ends
// with ctx; invalid keys are refused; locking leaves no file in the store.
func TestLockKey(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	unlock, err := s.LockKey(ctx, "a/c/0/0")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.LockKey(short, "a/c/0/0"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want a deadline error", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := s.LockKey(ctx, "a/c/0/0")
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lock was not handed over after its release")
	}
	if _, err := s.LockKey(ctx, "../x"); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("lock of ../x: %v, want ErrInvalidKey", err)
	}
	for k, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("locking left key %q in the store", k)
	}
}
