//go:build unix

package fs

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sys/unix"

	"github.com/gozarr/gozarr/store"
)

// Map implements store.Mapper: the whole of key's file mapped read-only
// (shared: the kernel's cached pages, no copy), and the function that
// unmaps it. The file is opened as reads open it (confined to the root,
// regular files only) and closed before Map returns; the mapping stays.
// An empty value maps to no bytes. See store.Mapper for what a file
// truncated under the mapping does.
func (s *Store) Map(ctx context.Context, key string) ([]byte, func(), error) {
	f, size, err := s.open(ctx, "map", key)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	if size > math.MaxInt || uint64(size) > uint64(^uintptr(0)>>1) {
		return nil, nil, &store.KeyError{Op: "map", Key: key, Err: fmt.Errorf("a file of %d bytes does not fit the address space", size)}
	}
	fd := f.fd
	if f.f != nil {
		fd = int(f.f.Fd())
	}
	b, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, opErr("map", key, fmt.Errorf("mmap: %w", err))
	}
	return b, func() { unix.Munmap(b) }, nil
}
