//go:build linux

package fs

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// On Linux, reads open their file with one openat2(2) call that the kernel
// confines to the root (RESOLVE_BENEATH), instead of the component-by-
// component walk os.Root does (an openat and a close per directory on the
// way): a chunk read costs as many system calls as an unconfined one.
// Writes, deletes and listings, and reads where openat2 is not available,
// go through the os.Root.

// initBeneath opens the root directory for openat2.
func (s *Store) initBeneath() {
	if noOpenat2.Load() {
		return
	}
	d, err := os.OpenFile(s.root, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	rc, err := d.SyscallConn()
	if err != nil {
		d.Close()
		return
	}
	s.dir, s.dirConn = d, rc
}

// openat2 opens name (relative to the root) with flags, confined to the
// root, and returns the descriptor. ok is false when openat2 could not
// decide (unavailable, or a concurrent rename it will not race): the caller
// goes through the os.Root instead. A path out of the root is s.escape.
func (s *Store) openat2(name string, flags int) (fd int, ok bool, err error) {
	if s.dirConn == nil || noOpenat2.Load() {
		return -1, false, nil
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	cerr := s.dirConn.Control(func(dfd uintptr) {
		for {
			fd, err = unix.Openat2(int(dfd), name, &how)
			if err != unix.EINTR {
				return
			}
		}
	})
	switch {
	case cerr != nil:
		return -1, false, nil
	case err == nil:
		return fd, true, nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EPERM):
		// Missing, or refused by a seccomp filter (older container
		// runtimes answer EPERM): the os.Root serves every read, and
		// reports any real permission error itself.
		noOpenat2.Store(true)
		return -1, false, nil
	case errors.Is(err, unix.EAGAIN):
		return -1, false, nil
	case errors.Is(err, unix.EXDEV):
		err = s.escape
	}
	return -1, true, &fs.PathError{Op: "openat2", Path: name, Err: err}
}

// openValue opens name for reading (readFlags), confined to the root
// unless the store follows links, and returns it with its mode type and
// size.
func (s *Store) openValue(name string) (vfile, fs.FileMode, int64, error) {
	fd, ok, err := s.openat2(name, readFlags)
	if !ok {
		return s.openFileValue(name)
	}
	if err != nil {
		return vfile{}, 0, 0, err
	}
	t, size, err := fstatMode(fd, name)
	if err != nil {
		unix.Close(fd)
		return vfile{}, 0, 0, err
	}
	return vfile{fd: fd}, t, size, nil
}

// preadFull reads len(b) bytes at off from fd, like os.File.ReadAt: fewer
// only with an error, io.EOF at the end of the file.
func preadFull(fd int, b []byte, off int64) (int, error) {
	done := 0
	for done < len(b) {
		n, err := unix.Pread(fd, b[done:], off+int64(done))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return done, &fs.PathError{Op: "pread", Path: "", Err: err}
		case n == 0:
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

// closeFd closes a descriptor from openat2.
func closeFd(fd int) { unix.Close(fd) }

// statMode returns the mode type and size of name's file, following links
// as reads do.
func (s *Store) statMode(name string) (fs.FileMode, int64, error) {
	fd, ok, err := s.openat2(name, unix.O_PATH)
	if !ok {
		fi, err := s.stat(name)
		if err != nil {
			return 0, 0, err
		}
		return fi.Mode().Type(), fi.Size(), nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	return fstatMode(fd, name)
}

// fstatMode returns the mode type and size of the file open as fd.
func fstatMode(fd int, name string) (fs.FileMode, int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	var t fs.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		t = fs.ModeDir
	case unix.S_IFIFO:
		t = fs.ModeNamedPipe
	case unix.S_IFSOCK:
		t = fs.ModeSocket
	case unix.S_IFCHR:
		t = fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		t = fs.ModeDevice
	case unix.S_IFREG:
	default:
		t = fs.ModeIrregular
	}
	return t, st.Size, nil
}
