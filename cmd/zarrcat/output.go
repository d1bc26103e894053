package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// errBrokenPipe marks output whose reader went away (zarrcat get | head):
// the command stops quietly with exit status 0, as cat and ncdump do.
var errBrokenPipe = errors.New("broken pipe")

// output is where a command writes its result: stdout, a regular file
// replaced atomically (a temporary file in the same directory, renamed over
// the target when the command succeeds, so a failed run never leaves a
// partial file), or anything else written in place: a character device
// (/dev/null, a terminal), a FIFO, a socket, or a symbolic link such as
// /dev/stdout. A rename never lands on a non-regular file: it would replace
// /dev/null with a regular file when run as root.
type output struct {
	*bufio.Writer
	f    *os.File    // nil for stdout
	tmp  string      // temporary file to rename onto path; "" when written in place
	keep os.FileMode // the replaced file's permissions, set on tmp
	kept bool        // keep holds them (a file is replaced)
	path string
}

// tempPrefix starts the names of get's temporary files: the local store's
// prefix, so that zarrcat clean removes those a killed get -o left.
const tempPrefix = ".gozarr-tmp-zarrcat-"

// createTemp creates a new file in dir for an atomic replace, with
// permissions perm less the umask (as a shell's > creates a file;
// os.CreateTemp makes it private).
func createTemp(dir string, perm os.FileMode) (*os.File, error) {
	for {
		name := filepath.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// isStdoutPath reports whether an -o path names standard output
// (/dev/stdout, /dev/fd/1, /proc/self/fd/1): a command writes there as to
// "-".
func isStdoutPath(path string) bool {
	switch filepath.Clean(path) {
	case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// createOutput opens path for writing; "" or "-" is stdout.
func createOutput(path string, stdout io.Writer) (*output, error) {
	const bufSize = 1 << 20
	if path == "" || path == "-" {
		return &output{Writer: bufio.NewWriterSize(stdout, bufSize)}, nil
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && info.Mode().IsRegular():
		keep, kept := os.FileMode(0o666), err == nil
		if kept {
			keep = info.Mode().Perm() // a replaced file keeps its permissions
		}
		f, err := createTemp(filepath.Dir(path), keep)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			// Name the file asked for, not the temporary one.
			return nil, &fs.PathError{Op: "create", Path: path, Err: pe.Err}
		}
		if err != nil {
			return nil, err
		}
		return &output{Writer: bufio.NewWriterSize(f, bufSize), f: f, tmp: f.Name(), keep: keep, kept: kept, path: path}, nil
	case err != nil:
		return nil, err
	}
	// In place: a link is followed (O_TRUNC empties a regular file at its
	// end, as a shell's > does; devices and FIFOs have nothing to truncate).
	flag := os.O_WRONLY
	if t, err := os.Stat(path); err == nil && t.Mode().IsRegular() {
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return &output{Writer: bufio.NewWriterSize(f, bufSize), f: f, path: path}, nil
}

// Commit flushes the output and, for an atomic replace, renames the
// temporary file onto the target. The output is closed either way.
func (o *output) Commit() error {
	err := o.Flush()
	if o.f == nil {
		return pipeErr(err)
	}
	if err == nil && o.kept {
		err = o.f.Chmod(o.keep) // the umask does not take from a replaced file's permissions
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && o.tmp != "" {
		err = os.Rename(o.tmp, o.path)
	}
	if err != nil && o.tmp != "" {
		os.Remove(o.tmp)
	}
	return pipeErr(err)
}

// Abort discards the output after a failure: the temporary file of an
// atomic replace is removed, the target is left as it was.
func (o *output) Abort() {
	if o.f == nil {
		return
	}
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// pipeErr turns EPIPE into errBrokenPipe.
func pipeErr(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: %w", errBrokenPipe, err)
	}
	return err
}

// writeOutput runs write on the output at path and commits it, or aborts it
// when write fails.
func writeOutput(path string, stdout io.Writer, write func(w io.Writer) error) error {
	o, err := createOutput(path, stdout)
	if err != nil {
		return err
	}
	if err := write(o); err != nil {
		o.Abort()
		return pipeErr(err)
	}
	return o.Commit()
}
