//go:build unix

package fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gozarr/gozarr/store"
)

// lockStripes is how many lock files one store root has: keys share them
// by hash (two keys on one stripe only wait for each other, never
// deadlock, since a writer holds one key's lock at a time).
const lockStripes = 256

var _ store.KeyLocker = (*Store)(nil)

// LockKey implements store.KeyLocker with flock(2) on one of lockStripes
// lock files kept outside the store, in the machine's temporary directory
// (gozarr-locks/<hash of the root>/), so no file appears in the store and
// every process on this machine that writes the same root shares them.
// The kernel releases the lock of a process that dies. It waits, polling,
// until the lock is free or ctx ends. Processes on other machines (a
// network filesystem) are not seen.
func (s *Store) LockKey(ctx context.Context, key string) (func(), error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, &store.KeyError{Op: "lock", Key: key, Err: err}
	}
	sum := sha256.Sum256([]byte(s.root))
	dir := filepath.Join(os.TempDir(), "gozarr-locks", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &store.KeyError{Op: "lock", Key: key, Err: err}
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	name := filepath.Join(dir, fmt.Sprintf("%03d", h.Sum32()%lockStripes))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &store.KeyError{Op: "lock", Key: key, Err: err}
	}
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, &store.KeyError{Op: "lock", Key: key, Err: err}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, &store.KeyError{Op: "lock", Key: key, Err: ctx.Err()}
		case <-time.After(wait):
		}
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
