//go:build linux

package fs

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gozarr/gozarr/store"
)

var _ store.VectorReader = (*Store)(nil)

// iovMax is the most buffers one preadv call takes (Linux's IOV_MAX).
const iovMax = 1024

// iovPool recycles the iovec arrays ReadVec hands the kernel, so a steady
// stream of vectored reads allocates none.
var iovPool = sync.Pool{New: func() any { s := make([]unix.Iovec, 0, iovMax); return &s }}

// ReadVec reads the bytes [off, off+total) of key's value, total being the
// sum of len(bufs), straight into bufs in order, with preadv(2): one call
// per 1024 buffers (Linux's IOV_MAX), more where the kernel returns fewer
// bytes than asked. It returns how many bytes it read; when the value ends
// first, fewer than total and an error wrapping io.ErrUnexpectedEOF (see
// store.VectorReader). A missing key, or one naming a directory, is
// store.ErrNotFound; a FIFO, socket or device ErrNotRegular. ReadVec is
// only available on Linux, and safe for concurrent use with distinct bufs.
func (s *Store) ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error) {
	f, err := s.openAt(ctx, "readvec", key, off)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	if total == 0 {
		return 0, nil
	}
	n, err := preadvAll(ctx, f, off, bufs)
	switch {
	case err != nil:
		return n, &store.KeyError{Op: "readvec", Key: key, Err: err}
	case n < total:
		return n, &store.KeyError{Op: "readvec", Key: key, Err: fmt.Errorf(
			"%w: the value has %d bytes from offset %d, %d wanted", io.ErrUnexpectedEOF, n, off, total)}
	}
	return n, nil
}

// preadvAll reads from f at off into bufs until they are full or the file
// ends, and returns how many bytes it read. It checks ctx between calls.
func preadvAll(ctx context.Context, f vfile, off int64, bufs [][]byte) (int, error) {
	withFd := func(fn func(fd uintptr) bool) error { fn(uintptr(f.fd)); return nil }
	if f.f != nil {
		rc, err := f.f.SyscallConn()
		if err != nil {
			return 0, err
		}
		withFd = rc.Read
	}
	iovp := iovPool.Get().(*[]unix.Iovec)
	defer func() {
		clear((*iovp)[:cap(*iovp)]) // drop the pointers into bufs
		*iovp = (*iovp)[:0]
		iovPool.Put(iovp)
	}()
	done := 0
	skip := 0 // bytes of bufs[0] already read
	for len(bufs) > 0 {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		batch := min(len(bufs), iovMax)
		iov := (*iovp)[:0]
		for i, b := range bufs[:batch] {
			if i == 0 {
				b = b[skip:]
			}
			if len(b) == 0 {
				continue
			}
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			iov = append(iov, v)
		}
		n := 0
		if len(iov) > 0 {
			var errno syscall.Errno
			lo, hi := offsetHalves(off)
			cerr := withFd(func(fd uintptr) bool {
				for {
					r, _, e := unix.Syscall6(unix.SYS_PREADV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)), lo, hi, 0)
					if e != syscall.EINTR {
						n, errno = int(r), e
						return true
					}
				}
			})
			if cerr != nil {
				return done, cerr
			}
			if errno != 0 {
				return done, fmt.Errorf("preadv: %w", errno)
			}
			if n == 0 {
				return done, nil // end of file
			}
		}
		done += n
		off += int64(n)
		bufs, skip = advance(bufs[:batch], bufs, skip, n)
	}
	return done, nil
}

// advance drops from bufs the buffers that n more bytes filled, batch being
// the buffers that read was given (a prefix of bufs) and skip how far into
// bufs[0] earlier reads got, and returns the rest with the new skip.
func advance(batch, bufs [][]byte, skip, n int) ([][]byte, int) {
	k := 0
	for ; k < len(batch); k++ {
		rem := len(batch[k])
		if k == 0 {
			rem -= skip
		}
		if n < rem {
			break
		}
		n -= rem
		skip = 0
	}
	return bufs[k:], skip + n
}

// offsetHalves splits a file offset into the two words preadv(2) takes:
// the low word, and on 32-bit platforms the high one.
func offsetHalves(off int64) (lo, hi uintptr) {
	const half = bits.UintSize / 2
	return uintptr(off), uintptr(uint64(off) >> half >> half)
}
