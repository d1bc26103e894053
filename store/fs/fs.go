// Package fs is a store.Store over a directory of the local filesystem,
// laid out the way zarr-python's LocalStore lays it out: key "a/b/c" is the
// file root/a/b/c.
//
// # Safety
//
// Every key and prefix passes store.ValidateKey or store.ValidatePrefix and
// filepath.IsLocal before the filesystem is touched, so "..", absolute
// paths, backslashes, NUL and empty segments are refused with
// store.ErrInvalidKey. Symbolic links inside the root are followed: a link
// that points outside the root is the owner's choice and is out of scope.
//
// # Writes
//
// Set writes a temporary file (named ".gozarr-tmp-*") in the key's
// directory and renames it over the key, so a concurrent reader sees the
// old value or the new one, never a mix. Temporary files are never listed,
// and keys with a segment starting with ".gozarr-tmp-" are refused. Delete
// removes the file and then every directory it leaves empty, up to but not
// including the root.
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
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gozarr/gozarr/store"
)

// tempPrefix starts the name of every temporary file Set writes.
const tempPrefix = ".gozarr-tmp-"

// Store is a store rooted at a directory. It implements store.Store,
// store.RangesReader, store.IntoReader and store.SizeReader, and on Linux
// store.VectorReader too, and is safe for concurrent use, also by several
// processes sharing the directory.
type Store struct {
	root     string // absolute, cleaned
	readOnly bool
	sync     bool
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.RangesReader = (*Store)(nil)
	_ store.IntoReader   = (*Store)(nil)
	_ store.SizeReader   = (*Store)(nil)
)

// Option configures New.
type Option func(*Store)

// ReadOnly makes Set and Delete fail with store.ErrReadOnly. Default:
// writable.
func ReadOnly() Option { return func(s *Store) { s.readOnly = true } }

// WithSync makes Set fsync each file before renaming it into place, so the
// value survives a crash of the machine, at a large cost per write.
// Default: no fsync (the rename is still atomic for other readers).
func WithSync() Option { return func(s *Store) { s.sync = true } }

// New returns a store rooted at root, which must be an existing directory.
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
	s := &Store{root: abs}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Root returns the absolute path of the store's root directory.
func (s *Store) Root() string { return s.root }

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

// path validates key and ctx and returns the file path of key.
func (s *Store) path(ctx context.Context, op, key string) (string, error) {
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", &store.KeyError{Op: op, Key: key, Err: err}
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// isNotFound reports whether err from opening or stat-ing a key's path
// means the key does not exist: no such file, or a "directory" on the way
// that is a file.
func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// keyErr wraps an error from the filesystem, turning "does not exist" into
// store.ErrNotFound.
func keyErr(op, key string, err error) error {
	if isNotFound(err) {
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

// open opens key's file and returns it with its size. A directory is
// store.ErrNotFound.
func (s *Store) open(ctx context.Context, op, key string) (*os.File, int64, error) {
	p, err := s.path(ctx, op, key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, keyErr(op, key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, keyErr(op, key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	}
	return f, fi.Size(), nil
}

// readRange reads the bytes of a validated r from f, of the given size.
func readRange(f *os.File, size int64, r store.ByteRange) ([]byte, error) {
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
	if err := r.Validate(); err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readRange(f, size, r)
	if err != nil {
		return nil, keyErr("get", key, err)
	}
	return b, nil
}

// GetRanges reads several ranges of key's value through one open file, in
// the order of ranges, all from the same version of the value.
func (s *Store) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	for _, r := range ranges {
		if err := r.Validate(); err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: err}
		}
	}
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		if out[i], err = readRange(f, size, r); err != nil {
			return nil, keyErr("get", key, err)
		}
	}
	return out, nil
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key's value straight
// into dst with one ReadAt, and returns how many it read (fewer when the
// value ends first).
func (s *Store) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	if offset < 0 {
		return 0, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("%w: offset %d", store.ErrInvalidRange, offset)}
	}
	p, err := s.path(ctx, "read", key)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, keyErr("read", key, err)
	}
	defer f.Close()
	n, err := f.ReadAt(dst, offset)
	if err == io.EOF {
		return n, nil
	}
	if err != nil || len(dst) == 0 {
		// Reading a directory fails; only then pay for a Stat to tell
		// "not a value" from a real I/O error.
		if fi, serr := f.Stat(); serr == nil && !fi.Mode().IsRegular() {
			return 0, &store.KeyError{Op: "read", Key: key, Err: store.ErrNotFound}
		}
		if err != nil {
			return n, opErr("read", key, err)
		}
	}
	return n, nil
}

// Size returns the length of key's value.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	p, err := s.path(ctx, "size", key)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, keyErr("size", key, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, &store.KeyError{Op: "size", Key: key, Err: store.ErrNotFound}
	}
	return fi.Size(), nil
}

// Set writes value under key atomically (see the package doc), creating
// parent directories as needed. On any error the temporary file is removed
// and the old value, if any, is kept.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	p, err := s.path(ctx, "set", key)
	if err != nil {
		return err
	}
	if s.readOnly {
		return &store.KeyError{Op: "set", Key: key, Err: store.ErrReadOnly}
	}
	dir := filepath.Dir(p)
	// A concurrent Delete may prune the directory between MkdirAll and
	// creating the temporary file; try again a few times if so.
	var f *os.File
	for attempt := 0; ; attempt++ {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return opErr("set", key, err)
		}
		f, err = createTemp(dir)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return opErr("set", key, err)
		}
	}
	tmp := f.Name()
	err = writeFile(ctx, f, value, s.sync)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		s.prune(dir) // directories MkdirAll made for nothing
		return opErr("set", key, err)
	}
	return nil
}

// createTemp creates a new temporary file in dir, honouring the umask
// (os.CreateTemp would make it 0600).
func createTemp(dir string) (*os.File, error) {
	for {
		name := filepath.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
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
// directory, is not an error and changes nothing.
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.path(ctx, "delete", key)
	if err != nil {
		return err
	}
	if s.readOnly {
		return &store.KeyError{Op: "delete", Key: key, Err: store.ErrReadOnly}
	}
	fi, err := os.Lstat(p)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return opErr("delete", key, err)
	}
	if fi.IsDir() {
		return nil
	}
	if err := os.Remove(p); err != nil && !isNotFound(err) {
		return opErr("delete", key, err)
	}
	s.prune(filepath.Dir(p))
	return nil
}

// prune removes dir and its parents while they are empty, up to but not
// including the root. os.Remove fails on a directory that is not empty,
// which ends the walk up.
func (s *Store) prune(dir string) {
	for ; dir != s.root && strings.HasPrefix(dir, s.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}

// entry is one directory entry as listing sees it.
type entry struct {
	name  string
	isDir bool
}

// sortKey orders entries so that walking them depth-first yields keys in
// lexical order: every key below directory d starts with d+"/".
func (e entry) sortKey() string {
	if e.isDir {
		return e.name + "/"
	}
	return e.name
}

// readDir lists the entries of the directory at rel (slash-separated,
// relative to the root, "" for the root) whose names start with namePrefix:
// values (regular files, or links to them) and directories, sorted for
// listing. Temporary files and names that are not valid key segments are
// left out. A missing directory has no entries.
func (s *Store) readDir(rel, namePrefix string) ([]entry, error) {
	dir := filepath.Join(s.root, filepath.FromSlash(rel))
	des, err := os.ReadDir(dir)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []entry
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, namePrefix) || strings.HasPrefix(name, tempPrefix) || checkKey("list", name) != nil {
			continue
		}
		t := de.Type()
		if t&fs.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				continue // dangling link
			}
			t = fi.Mode().Type()
		}
		switch {
		case t.IsDir():
			out = append(out, entry{name, true})
		case t.IsRegular():
			out = append(out, entry{name, false})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	return out, nil
}

// List yields the keys starting with prefix in lexical order, walking the
// directory tree as it goes (so keys written or deleted during the walk may
// or may not appear). Errors, an invalid prefix and a done ctx are yielded
// as errors and end the listing.
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
		s.walk(ctx, prefix, dir, name, yield)
	}
}

// walk yields the keys below rel (a directory key ending in "/", or "")
// whose names start with namePrefix, in lexical order. It reports whether
// to go on.
func (s *Store) walk(ctx context.Context, prefix, rel, namePrefix string, yield func(string, error) bool) bool {
	if err := ctx.Err(); err != nil {
		yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
		return false
	}
	entries, err := s.readDir(rel, namePrefix)
	if err != nil {
		yield("", opErr("list", prefix, err))
		return false
	}
	for _, e := range entries {
		if e.isDir {
			if !s.walk(ctx, prefix, rel+e.name+"/", "", yield) {
				return false
			}
		} else if !yield(rel+e.name, nil) {
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
	if err := ctx.Err(); err != nil {
		return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: err}
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	entries, err := s.readDir(dir, "")
	if err != nil {
		return nil, nil, opErr("list", dir, err)
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
