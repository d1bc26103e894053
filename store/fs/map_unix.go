//go:build unix

package fs

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gozarr/gozarr/store"
)

// Map implements store.Mapper: the whole of key's file mapped read-only
// (shared: the kernel's cached pages, no copy), and the function that
// releases it (a second call does nothing). The file is opened as reads
// open it (confined to the root, regular files only) and closed before
// Map returns; the mapping stays. An empty value maps to no bytes. See
// store.Mapper for what a file truncated under the mapping does.
//
// Mappings are kept open across reads (see MapCache): Map fstats the file
// it opened and, when its device, inode, size and modification and change
// times are those of the key's cached mapping, returns the cached bytes,
// no system call beyond the open, fstat and close; otherwise it maps the
// file afresh, and the old mapping is unmapped once its last reader
// releases it.
func (s *Store) Map(ctx context.Context, key string) ([]byte, func(), error) {
	f, _, err := s.open(ctx, "map", key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			s.maps.drop(key) // deleted by another writer: let its pages go
		}
		return nil, nil, err
	}
	defer f.Close()
	fd := f.fd
	if f.f != nil {
		fd = int(f.f.Fd())
	}
	id, err := fstatID(fd)
	if err != nil {
		return nil, nil, opErr("map", key, fmt.Errorf("fstat: %w", err))
	}
	size := id.size
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	if size > math.MaxInt || uint64(size) > uint64(^uintptr(0)>>1) {
		return nil, nil, &store.KeyError{Op: "map", Key: key, Err: fmt.Errorf("a file of %d bytes does not fit the address space", size)}
	}
	c := s.maps
	if c != nil {
		if m := c.acquire(key, id); m != nil {
			return m.data, (&mapRef{c: c, m: m}).unmap, nil
		}
	}
	b, err := mmap(fd, int(size))
	if err != nil {
		return nil, nil, opErr("map", key, fmt.Errorf("mmap: %w", err))
	}
	if c == nil {
		return b, unmapOnce(b), nil
	}
	m := c.insert(&mapping{key: key, id: id, data: b, refs: 1})
	return m.data, (&mapRef{c: c, m: m}).unmap, nil
}
