// Package fs is a store.Store over a directory of the local filesystem,
// laid out the way zarr-python's LocalStore lays it out: key "a/b/c" is the
// file root/a/b/c.
//
// # Safety
//
// Every key and prefix passes store.ValidateKey or store.ValidatePrefix and
// filepath.IsLocal before the filesystem is touched, so "..", absolute
// paths, backslashes, NUL and empty segments are refused with
// store.ErrInvalidKey.
//
// The store is confined to its root: every file is opened, created,
// renamed and removed through an os.Root, so a symbolic link is followed
// only while it stays inside the root. A key that a link leads outside (a
// chunk, a chunk directory or a group child linked elsewhere) is refused
// with ErrOutsideRoot by every read, write and delete, and listings leave
// such links out. FollowSymlinks lifts the confinement, for a root whose
// links are trusted.
//
// Only regular files are values. A directory is a missing key
// (store.ErrNotFound); a FIFO, socket or device is refused with
// ErrNotRegular, never read and never waited on: files are opened without
// blocking (O_NONBLOCK) and checked with fstat on the opened file, so the
// check holds even if the file is swapped in between. Listings show
// neither.
//
// # Writes and temporary files
//
// Set writes a temporary file (named ".gozarr-tmp-" and a random suffix) in
// the key's directory and renames it over the key, so a concurrent reader
// sees the old value or the new one, never a mix. Temporary files are never
// listed, and keys with a segment starting with ".gozarr-tmp-" are refused.
// A failed Set removes its temporary file, but a process killed in the
// middle of a Set leaves one behind: CleanTemp (and "zarrcat clean") removes
// those older than a given age. Delete removes the file and then every
// directory it leaves empty, up to but not including the root.
//
// A filesystem cannot hold both "a" and "a/b": setting one while the other
// exists fails (and keeps the old value).
package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gozarr/gozarr/store"
)

// tempPrefix starts the name of every temporary file Set writes.
const tempPrefix = ".gozarr-tmp-"

// noOpenat2 is set once openat2 (Linux) is found missing (before Linux
// 5.6) or refused (a seccomp filter), for the whole process.
var noOpenat2 atomic.Bool

// errEscape stands for the root's refusal of a path out of it until New
// learns the error os.Root uses.
var errEscape = errors.New("path escapes from parent")

var (
	// ErrNotRegular reports a key whose file is not a regular file nor a
	// directory: a FIFO, a socket or a device, which the store refuses
	// to read.
	ErrNotRegular = errors.New("fs: not a regular file")
	// ErrOutsideRoot reports a key that a symbolic link leads outside the
	// store's root, which the store refuses to follow (see
	// FollowSymlinks).
	ErrOutsideRoot = errors.New("fs: symbolic link leads outside the store root")
)

// Store is a store rooted at a directory. It implements store.Store,
// store.RangesReader, store.IntoReader and store.SizeReader, and on Linux
// store.VectorReader too, and is safe for concurrent use, also by several
// processes sharing the directory.
type Store struct {
	root     string          // absolute, cleaned
	rt       *os.Root        // the root, confining every access; nil with FollowSymlinks
	escape   error           // the error rt reports for a path leading outside it
	dir      *os.File        // the root, for openat2 on Linux; nil if not used
	dirConn  syscall.RawConn // dir's descriptor
	readOnly bool
	sync     bool
	follow   bool
	mapBytes int64     // MapCache's bound, in bytes
	mapCount int       // and in mappings
	maps     *mapCache // nil when disabled (and off Unix)
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.RangesReader = (*Store)(nil)
	_ store.IntoReader   = (*Store)(nil)
	_ store.SizeReader   = (*Store)(nil)
)

// Option configures New.
type Option func(*Store)

// ReadOnly makes Set, Delete and CleanTemp fail with store.ErrReadOnly.
// Default: writable.
func ReadOnly() Option { return func(s *Store) { s.readOnly = true } }

// WithSync makes Set fsync each file before renaming it into place, so the
// value survives a crash of the machine, at a large cost per write.
// Default: no fsync (the rename is still atomic for other readers).
func WithSync() Option { return func(s *Store) { s.sync = true } }

// FollowSymlinks makes the store follow symbolic links wherever they lead,
// also outside the root, as plain path lookups do. Default: confined to the
// root (see the package doc). FIFOs, sockets and devices stay refused.
func FollowSymlinks() Option { return func(s *Store) { s.follow = true } }

// MapCache bounds the mappings that Map (on Unix) keeps open across reads:
// at most maxBytes bytes and maxMappings files, the least recently used
// idle ones unmapped first; a mapping a reader holds is never unmapped,
// so only mappings in use exceed the bound. maxBytes or maxMappings <= 0
// disables the cache: every Map maps its file and its release unmaps it.
// Default: 256 MiB and 256 mappings on 64-bit systems (enough for the
// shards a service reads again and again, small enough that a read-all of
// a large array stays within the pipeline's memory bounds, RSS included),
// disabled on 32-bit ones (whose address space large shards would fill).
//
// A kept mapping spares a reader that comes back to the same file (a
// service gathering from the same shards) the mapping, the minor page
// fault on the first touch of each page and the unmapping (a TLB
// shootdown on every core). It costs address space (up to maxBytes) and
// the page tables of the pages touched (about 2 KiB per MiB touched), not
// memory of its own: the pages are the page cache's, shared with every
// reader of the file, and the kernel may still reclaim them, faulting
// them in again on the next touch. The process's RSS counts the touched
// pages of kept mappings (as file-backed RssFile, not RssAnon), so a
// read of many shards shows an RSS up to maxBytes higher than without
// the cache, for the same memory in use. It keeps files that were
// replaced or deleted on disk until their mapping is evicted, or dropped
// by a write or a delete of the key through the store. Map checks every
// file it maps again against the cached mapping (see Map), so a cached
// mapping never serves bytes of a file replaced or rewritten since.
func MapCache(maxBytes int64, maxMappings int) Option {
	return func(s *Store) { s.mapBytes, s.mapCount = maxBytes, maxMappings }
}

// Default bounds of MapCache on 64-bit systems.
const (
	defaultMapBytes = 256 << 20
	defaultMapCount = 256
)

// New returns a store rooted at root, which must be an existing directory.
// Unless FollowSymlinks is given, it keeps the directory open (as an
// os.Root, and on Linux a second descriptor for openat2) until Close or
// until the store is garbage collected.
func New(root string, opts ...Option) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fs: root %q: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("fs: root %q is not a directory", root)
	}
	s := &Store{root: abs, escape: errEscape}
	if bits.UintSize == 64 {
		s.mapBytes, s.mapCount = defaultMapBytes, defaultMapCount
	}
	for _, o := range opts {
		o(s)
	}
	s.initMaps()
	if !s.follow {
		if s.rt, err = os.OpenRoot(abs); err != nil {
			return nil, fmt.Errorf("fs: root: %w", err)
		}
		// os.Root reports an escape with an unexported error; learn it
		// from a lookup that is refused before touching the disk.
		if _, err := s.rt.Stat(".."); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				s.escape = pe.Err
			}
		}
		s.initBeneath()
	}
	return s, nil
}

// Root returns the absolute path of the store's root directory.
func (s *Store) Root() string { return s.root }

// Close releases the handles on the root directory that a confined store
// keeps open (see New) and unmaps the mappings Map kept (see MapCache):
// the idle ones now, those still held when their reader releases them.
// The store must not be used after. It is optional: a store that becomes
// unreachable releases them when it is garbage collected, but a program
// that opens many stores should close them, as it would files.
func (s *Store) Close() error {
	s.maps.close()
	var err error
	if s.rt != nil {
		err = s.rt.Close()
	}
	if s.dir != nil {
		if derr := s.dir.Close(); err == nil {
			err = derr
		}
	}
	return err
}

// checkKey validates key for the filesystem.
func checkKey(op, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if !filepath.IsLocal(filepath.FromSlash(key)) {
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: not a local path", store.ErrInvalidKey)}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(seg, tempPrefix) {
			return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: segment %q is reserved for temporary files", store.ErrInvalidKey, seg)}
		}
	}
	return nil
}

// checkPrefix validates a listing prefix for the filesystem.
func checkPrefix(prefix string) error {
	if err := store.ValidatePrefix(prefix); err != nil {
		return err
	}
	if p := strings.TrimSuffix(prefix, "/"); p != "" && !filepath.IsLocal(filepath.FromSlash(p)) {
		return &store.KeyError{Op: "list", Key: prefix, Err: fmt.Errorf("%w: not a local path", store.ErrInvalidKey)}
	}
	return nil
}

// name validates key and ctx and returns the file name of key relative to
// the root.
func (s *Store) name(ctx context.Context, op, key string) (string, error) {
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", &store.KeyError{Op: op, Key: key, Err: err}
	}
	return filepath.FromSlash(key), nil
}

// dirName returns the file name of a listing directory ("" or ending in
// "/") relative to the root.
func dirName(dir string) string {
	if dir = strings.TrimSuffix(dir, "/"); dir == "" {
		return "."
	}
	return filepath.FromSlash(dir)
}

// The file operations, all on names relative to the root: through the
// os.Root, or by path with FollowSymlinks.

func (s *Store) openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if s.rt == nil {
		return os.OpenFile(filepath.Join(s.root, name), flag, perm)
	}
	return s.rt.OpenFile(name, flag, perm)
}

func (s *Store) stat(name string) (fs.FileInfo, error) {
	if s.rt == nil {
		return os.Stat(filepath.Join(s.root, name))
	}
	return s.rt.Stat(name)
}

func (s *Store) lstat(name string) (fs.FileInfo, error) {
	if s.rt == nil {
		return os.Lstat(filepath.Join(s.root, name))
	}
	return s.rt.Lstat(name)
}

func (s *Store) mkdirAll(name string) error {
	if s.rt == nil {
		return os.MkdirAll(filepath.Join(s.root, name), 0o777)
	}
	return s.rt.MkdirAll(name, 0o777)
}

func (s *Store) rename(from, to string) error {
	if s.rt == nil {
		return os.Rename(filepath.Join(s.root, from), filepath.Join(s.root, to))
	}
	return s.rt.Rename(from, to)
}

func (s *Store) remove(name string) error {
	if s.rt == nil {
		return os.Remove(filepath.Join(s.root, name))
	}
	return s.rt.Remove(name)
}

// isNotFound reports whether err from opening or stat-ing a key's path
// means the key does not exist: no such file, or a "directory" on the way
// that is a file.
func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// isEscape reports whether err is the root's refusal of a path leading
// outside it.
func (s *Store) isEscape(err error) bool {
	return s.escape != nil && errors.Is(err, s.escape)
}

// keyErr wraps an error from the filesystem, turning "does not exist" into
// store.ErrNotFound and a path out of the root into ErrOutsideRoot.
func (s *Store) keyErr(op, key string, err error) error {
	switch {
	case s.isEscape(err):
		return &store.KeyError{Op: op, Key: key, Err: ErrOutsideRoot}
	case isNotFound(err):
		return &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	}
	return opErr(op, key, err)
}

// opErr wraps an error from the filesystem as is, dropping the file path
// that the key already names.
func opErr(op, key string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	case errors.As(err, &le):
		err = fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return &store.KeyError{Op: op, Key: key, Err: err}
}

// modeErr returns the error for reading key's file of the given mode: nil
// for a regular file, store.ErrNotFound for a directory, ErrNotRegular for
// anything else.
func modeErr(op, key string, mode fs.FileMode) error {
	switch t := mode.Type(); {
	case t.IsRegular():
		return nil
	case t.IsDir():
		return &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	case t&fs.ModeNamedPipe != 0:
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: a named pipe (FIFO)", ErrNotRegular)}
	case t&fs.ModeSocket != 0:
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: a socket", ErrNotRegular)}
	case t&fs.ModeDevice != 0:
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: a device", ErrNotRegular)}
	}
	return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: mode %v", ErrNotRegular, mode.Type())}
}

// vfile is a value's file opened for reading: an *os.File, or on Linux a
// bare descriptor from openat2 (which spares the os.File's set-up calls).
type vfile struct {
	f  *os.File
	fd int // when f is nil
}

// ReadAt reads len(b) bytes at off, like os.File.ReadAt.
func (v vfile) ReadAt(b []byte, off int64) (int, error) {
	if v.f != nil {
		return v.f.ReadAt(b, off)
	}
	return preadFull(v.fd, b, off)
}

// Close closes the file.
func (v vfile) Close() {
	if v.f != nil {
		v.f.Close()
		return
	}
	closeFd(v.fd)
}

// open opens key's file for reading, without blocking, and returns it with
// its size. A directory is store.ErrNotFound, any other file that is not
// regular ErrNotRegular: the check is on the opened file, so it cannot be
// raced.
func (s *Store) open(ctx context.Context, op, key string) (vfile, int64, error) {
	name, err := s.name(ctx, op, key)
	if err != nil {
		return vfile{}, 0, err
	}
	f, mode, size, err := s.openValue(name)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): say what it is.
		if !isNotFound(err) && !s.isEscape(err) {
			if mode, _, serr := s.statMode(name); serr == nil {
				if merr := modeErr(op, key, mode); merr != nil {
					return vfile{}, 0, merr
				}
			}
		}
		return vfile{}, 0, s.keyErr(op, key, err)
	}
	if err := modeErr(op, key, mode); err != nil {
		f.Close()
		return vfile{}, 0, err
	}
	return f, size, nil
}

// openFileValue opens name for reading through openFile and returns it with
// its mode type and size.
func (s *Store) openFileValue(name string) (vfile, fs.FileMode, int64, error) {
	f, err := s.openFile(name, readFlags, 0)
	if err != nil {
		return vfile{}, 0, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return vfile{}, 0, 0, err
	}
	return vfile{f: f}, fi.Mode().Type(), fi.Size(), nil
}

// readRange reads the bytes of a validated r from f, of the given size.
func readRange(f vfile, size int64, r store.ByteRange) ([]byte, error) {
	start, end, err := r.Resolve(size)
	if err != nil {
		return nil, err
	}
	b := make([]byte, end-start)
	n, err := f.ReadAt(b, start)
	if err == io.EOF {
		// The file shrank after Stat (someone wrote it in place, not
		// through Set): return what is there, as a clamped range would.
		err = nil
	}
	return b[:n], err
}

// Get returns the bytes r selects from key's value (see package store for
// clamping). A missing key, or one naming a directory, is
// store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := checkRanges(key, r); err != nil {
		return nil, err
	}
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readRange(f, size, r)
	if err != nil {
		return nil, s.keyErr("get", key, err)
	}
	return b, nil
}

// checkRanges validates the ranges of a read of key (before the key, as
// store/mem does), the first bad one's error in a *store.KeyError.
func checkRanges(key string, ranges ...store.ByteRange) error {
	for _, r := range ranges {
		if err := r.Validate(); err != nil {
			return &store.KeyError{Op: "get", Key: key, Err: err}
		}
	}
	return nil
}

// GetRanges reads several ranges of key's value through one open file, in
// the order of ranges, all from the same version of the value.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	if err := checkRanges(key, ranges...); err != nil {
		return nil, err
	}
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		if out[i], err = readRange(f, size, r); err != nil {
			return nil, s.keyErr("get", key, err)
		}
	}
	return out, nil
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key's value straight
// into dst with one ReadAt, and returns how many it read (fewer when the
// value ends first).
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	f, err := s.openAt(ctx, "read", key, offset)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(dst, offset)
	if err != nil && err != io.EOF {
		return n, opErr("read", key, err)
	}
	return n, nil
}

// openAt opens key's value for a read of op from offset, which must not
// be negative.
func (s *Store) openAt(ctx context.Context, op, key string, offset int64) (vfile, error) {
	if offset < 0 {
		return vfile{}, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: offset %d", store.ErrInvalidRange, offset)}
	}
	f, _, err := s.open(ctx, op, key)
	return f, err
}

// Size returns the length of key's value.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	name, err := s.name(ctx, "size", key)
	if err != nil {
		return 0, err
	}
	mode, size, err := s.statMode(name)
	if err != nil {
		return 0, s.keyErr("size", key, err)
	}
	if err := modeErr("size", key, mode); err != nil {
		return 0, err
	}
	return size, nil
}

// Set writes value under key atomically (see the package doc), creating
// parent directories as needed. On any error the temporary file is removed
// and the old value, if any, is kept.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	name, err := s.name(ctx, "set", key)
	if err != nil {
		return err
	}
	if s.readOnly {
		return &store.KeyError{Op: "set", Key: key, Err: store.ErrReadOnly}
	}
	dir := filepath.Dir(name)
	// A concurrent Delete may prune the directory between MkdirAll and
	// creating the temporary file; try again a few times if so.
	var f *os.File
	var tmp string
	for attempt := 0; ; attempt++ {
		if dir != "." {
			if err := s.mkdirAll(dir); err != nil {
				return s.writeErr("set", key, err)
			}
		}
		f, tmp, err = s.createTemp(dir)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return s.writeErr("set", key, err)
		}
	}
	err = writeFile(ctx, f, value, s.sync)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = s.rename(tmp, name)
	}
	if err != nil {
		s.remove(tmp)
		s.prune(dir) // directories MkdirAll made for nothing
		return s.writeErr("set", key, err)
	}
	s.maps.drop(key)
	return nil
}

// writeErr is opErr for writes, which report a path out of the root as
// ErrOutsideRoot too.
func (s *Store) writeErr(op, key string, err error) error {
	if s.isEscape(err) {
		return &store.KeyError{Op: op, Key: key, Err: ErrOutsideRoot}
	}
	return opErr(op, key, err)
}

// createTemp creates a new temporary file in dir (relative to the root),
// honouring the umask (os.CreateTemp would make it 0600), and returns it
// with its name relative to the root.
func (s *Store) createTemp(dir string) (*os.File, string, error) {
	for {
		name := filepath.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := s.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
}

// writeFile writes value to f in pieces, checking ctx between them, and
// fsyncs when sync is set.
func writeFile(ctx context.Context, f *os.File, value []byte, sync bool) error {
	const piece = 4 << 20
	for len(value) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(value), piece)
		if _, err := f.Write(value[:n]); err != nil {
			return err
		}
		value = value[n:]
	}
	if sync {
		return f.Sync()
	}
	return nil
}

// Delete removes key and prunes the directories it leaves empty, up to but
// not including the root. Deleting a missing key, or one naming a
// directory, is not an error and changes nothing. A key that is a symbolic
// link is removed as a link; one reached through a link out of the root is
// ErrOutsideRoot.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := s.name(ctx, "delete", key)
	if err != nil {
		return err
	}
	if s.readOnly {
		return &store.KeyError{Op: "delete", Key: key, Err: store.ErrReadOnly}
	}
	fi, err := s.lstat(name)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return s.writeErr("delete", key, err)
	}
	if fi.IsDir() {
		return nil
	}
	err = s.remove(name)
	s.maps.drop(key)
	if err != nil && !isNotFound(err) {
		return s.writeErr("delete", key, err)
	}
	s.prune(filepath.Dir(name))
	return nil
}

// prune removes dir (relative to the root) and its parents while they are
// empty, up to but not including the root. Removing a directory that is
// not empty fails, which ends the walk up.
func (s *Store) prune(dir string) {
	for ; dir != "." && dir != "" && filepath.IsLocal(dir); dir = filepath.Dir(dir) {
		if s.remove(dir) != nil {
			return
		}
	}
}

// entry is one directory entry as listing sees it.
type entry struct {
	name  string
	isDir bool
	link  fs.FileInfo // for a directory reached through a symbolic link
}

// sortKey orders entries so that walking them depth-first yields keys in
// lexical order: every key below directory d starts with d+"/".
func (e entry) sortKey() string {
	if e.isDir {
		return e.name + "/"
	}
	return e.name
}

// readDirNames reads the entries of the directory name (relative to the
// root). A missing directory has none.
func (s *Store) readDirNames(name string) ([]fs.DirEntry, error) {
	f, err := s.openFile(name, dirFlags, 0)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if isNotFound(err) {
		return nil, nil
	}
	return des, err
}

// readDir lists the entries of the directory at rel (slash-separated,
// relative to the root, "" for the root) whose names start with namePrefix:
// values (regular files, or links to them) and directories, sorted for
// listing. Temporary files, names that are not valid key segments, links
// that dangle or lead out of the root, FIFOs, sockets and devices are left
// out. A missing directory has no entries.
func (s *Store) readDir(rel, namePrefix string) ([]entry, error) {
	dir := dirName(rel)
	des, err := s.readDirNames(dir)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, namePrefix) || strings.HasPrefix(name, tempPrefix) || checkKey("list", name) != nil {
			continue
		}
		t := de.Type()
		var link fs.FileInfo
		if t&fs.ModeSymlink != 0 {
			fi, err := s.stat(filepath.Join(dir, name))
			if err != nil {
				continue // dangling, or out of the root
			}
			t, link = fi.Mode().Type(), fi
		}
		switch {
		case t.IsDir():
			out = append(out, entry{name, true, link})
		case t.IsRegular():
			out = append(out, entry{name, false, nil})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	return out, nil
}

// List yields the keys starting with prefix in lexical order, walking the
// directory tree as it goes (so keys written or deleted during the walk may
// or may not appear). A directory reached through a symbolic link is
// walked unless it is one the walk is already in (a link loop). Errors, an
// invalid prefix and a done ctx are yielded as errors and end the listing.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := checkPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		// Keys starting with "a/b/c" are the names starting with "c" in
		// directory "a/b" and everything below those that are directories.
		dir, name := "", prefix
		if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
			dir, name = prefix[:i+1], prefix[i+1:]
		}
		var stack []fs.FileInfo
		if fi, err := s.stat(dirName(dir)); err == nil {
			stack = append(stack, fi)
		}
		s.walk(ctx, prefix, dir, name, stack, yield)
	}
}

// walk yields the keys below rel (a directory key ending in "/", or "")
// whose names start with namePrefix, in lexical order. stack holds the
// directories the walk is in, to skip links back to them. It reports
// whether to go on.
func (s *Store) walk(ctx context.Context, prefix, rel, namePrefix string, stack []fs.FileInfo, yield func(string, error) bool) bool {
	if err := ctx.Err(); err != nil {
		yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
		return false
	}
	entries, err := s.readDir(rel, namePrefix)
	if err != nil {
		yield("", s.keyErr("list", prefix, err))
		return false
	}
	for _, e := range entries {
		if !e.isDir {
			if !yield(rel+e.name, nil) {
				return false
			}
			continue
		}
		sub := stack
		if e.link != nil {
			if slices.ContainsFunc(stack, func(fi fs.FileInfo) bool { return os.SameFile(fi, e.link) }) {
				continue // a loop
			}
			sub = append(stack[:len(stack):len(stack)], e.link)
		}
		if !s.walk(ctx, prefix, rel+e.name+"/", "", sub, yield) {
			return false
		}
	}
	return true
}

// ListDir lists the keys directly in dir and its sub-directories (ending in
// "/"), both relative to dir and sorted. dir is "" or ends in "/"; a dir
// without the trailing "/" is read as if it had one. A missing dir is empty.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if err := checkPrefix(dir); err != nil {
		return nil, nil, err
	}
	if dir, err = store.ListDirArg(ctx, dir); err != nil {
		return nil, nil, err
	}
	entries, err := s.readDir(dir, "")
	if err != nil {
		return nil, nil, s.keyErr("list", dir, err)
	}
	for _, e := range entries {
		if e.isDir {
			dirs = append(dirs, e.name+"/")
		} else {
			keys = append(keys, e.name)
		}
	}
	return keys, dirs, nil
}

// CleanTemp removes the temporary files that Set calls cut short by a
// crash or a kill left below the root (see the package doc), if they were
// last modified more than olderThan ago, and prunes the directories that
// leaves empty. It returns how many files it removed. A Set in progress
// keeps writing its temporary file, so an age of a few minutes or more
// leaves concurrent writers alone; 0 removes every temporary file. It does
// not follow symbolic links, and fails with store.ErrReadOnly on a
// read-only store.
func (s *Store) CleanTemp(ctx context.Context, olderThan time.Duration) (int, error) {
	if s.readOnly {
		return 0, &store.KeyError{Op: "clean", Key: "", Err: store.ErrReadOnly}
	}
	return s.cleanDir(ctx, ".", time.Now().Add(-olderThan))
}

// cleanDir is CleanTemp for the directory name (relative to the root) and
// the modification time before which a temporary file is stale.
func (s *Store) cleanDir(ctx context.Context, name string, cutoff time.Time) (int, error) {
	key := filepath.ToSlash(name)
	if name == "." {
		key = ""
	}
	if err := ctx.Err(); err != nil {
		return 0, &store.KeyError{Op: "clean", Key: key, Err: err}
	}
	des, err := s.readDirNames(name)
	if err != nil {
		return 0, s.keyErr("clean", key, err)
	}
	removed, pruned := 0, false
	for _, de := range des {
		p := filepath.Join(name, de.Name())
		switch {
		case de.IsDir():
			n, err := s.cleanDir(ctx, p, cutoff)
			removed += n
			if err != nil {
				return removed, err
			}
		case de.Type().IsRegular() && strings.HasPrefix(de.Name(), tempPrefix):
			fi, err := de.Info()
			if err != nil || !fi.ModTime().Before(cutoff) {
				continue // gone already, or perhaps still being written
			}
			if err := s.remove(p); err != nil && !isNotFound(err) {
				return removed, opErr("clean", filepath.ToSlash(p), err)
			}
			removed++
			pruned = true
		}
	}
	if pruned {
		s.prune(name)
	}
	return removed, nil
}
