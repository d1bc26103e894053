package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// DiskMarker is the name of the file that marks a Disk cache's directory
// as one: Close removes a directory only when it holds this marker with
// the content the cache wrote, so it never deletes anything else.
const DiskMarker = "GOZARR-CACHE"

// diskPrefix starts the name of every Disk cache directory.
const diskPrefix = "gozarr-chunk-cache-"

// DiskOptions configure a Disk cache. The zero value uses os.TempDir.
type DiskOptions struct {
	// Dir is the parent of the cache's own directory, which is created
	// with os.MkdirTemp (a random name starting "gozarr-chunk-cache-").
	// Default: os.TempDir().
	Dir string
}

// Disk is a cache that keeps values in files of one private temporary
// directory, bounded by the bytes on disk (plus key and EntryOverhead per
// entry), least recently used out first. Get reads the file into a fresh
// slice. The directory is created by NewDisk and removed, with everything
// in it, by Close; the process should Close the cache before it exits (the
// directory is never reused by a later process, and a marker file tells it
// apart from data).
//
// Disk errors do not fail reads: a value that cannot be written (disk full,
// unwritable directory) is simply not cached, and a file that cannot be
// read is a miss; both are counted in Stats.Errors with the last message in
// Stats.LastError. Disk is safe for concurrent use.
type Disk struct {
	c      core[string] // file name within dir
	dir    string
	token  string
	seq    atomic.Uint64
	mu     sync.RWMutex // held for reading by file operations, for writing by Close
	closed bool
	flight
}

// NewDisk creates the cache's directory and returns an empty Disk cache
// holding at most maxBytes. It fails only if the directory or its marker
// cannot be created (later disk errors are counted, not returned).
func NewDisk(maxBytes int64, opt DiskOptions) (*Disk, error) {
	dir, err := os.MkdirTemp(opt.Dir, diskPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("%w: disk cache: %v", ErrCache, err)
	}
	token := strconv.Itoa(os.Getpid()) + " " + filepath.Base(dir) + "\n"
	if err := os.WriteFile(filepath.Join(dir, DiskMarker), []byte(token), 0o600); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("%w: disk cache marker: %v", ErrCache, err)
	}
	d := &Disk{dir: dir, token: token}
	d.c = newCore(max(0, maxBytes), d.read)
	return d, nil
}

// Dir returns the cache's directory.
func (d *Disk) Dir() string { return d.dir }

// Get implements Cache: it reads the value's file into a fresh slice.
func (d *Disk) Get(key string) ([]byte, bool) {
	v, _, ok := d.getElem(key)
	return v, ok
}

func (d *Disk) getElem(key string) ([]byte, int, bool) {
	en, ok := d.c.get(key)
	if !ok {
		return nil, 0, false
	}
	v, err := d.read(en)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) { // else evicted meanwhile: a plain miss
			d.c.fail(fmt.Errorf("%w: disk cache read %q: %v", ErrCache, key, err))
		}
		d.c.del(key)
		return nil, 0, false
	}
	return v, en.elem, true
}

// read returns the contents of en's file.
func (d *Disk) read(en entry[string]) ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	f, err := os.Open(filepath.Join(d.dir, en.v))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]byte, en.raw)
	n, err := f.ReadAt(out, 0)
	if n == len(out) {
		return out, nil
	}
	if err == nil {
		err = fmt.Errorf("short file")
	}
	return nil, fmt.Errorf("read %d of %d bytes: %w", n, len(out), err)
}

// Add implements Cache: value is written to a new file; on a write error
// it is not cached and the error is counted.
func (d *Disk) Add(key string, value []byte) { d.AddElem(key, value, 0) }

// AddElem implements ElemAdder (the element size is kept for a tier
// below).
func (d *Disk) AddElem(key string, value []byte, elemSize int) {
	w := weight(key, len(value))
	if w > d.c.max {
		d.Remove(key) // an older value of key must not outlive this Add
		d.c.mu.Lock()
		d.c.evictions++
		f := d.c.onEvict
		d.c.mu.Unlock()
		if f != nil {
			f(key, value, elemSize)
		}
		return
	}
	name := strconv.FormatUint(d.seq.Add(1), 36)
	if err := d.write(name, value); err != nil {
		if !errors.Is(err, ErrClosed) {
			d.c.fail(fmt.Errorf("%w: disk cache write %q: %v", ErrCache, key, err))
		}
		d.Remove(key) // an older value of key must not outlive this Add
		return
	}
	dropped, _ := d.c.add(entry[string]{key: key, v: name, w: w, raw: int64(len(value)), elem: elemSize})
	if len(dropped) > 0 {
		d.c.handDown(dropped, func(old entry[string]) { d.unlink(old.v) })
	}
}

// write stores value in the file name, removing a partial file on error.
func (d *Disk) write(name string, value []byte) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	p := filepath.Join(d.dir, name)
	if err := os.WriteFile(p, value, 0o600); err != nil {
		os.Remove(p)
		return err
	}
	return nil
}

// unlink removes a value's file.
func (d *Disk) unlink(name string) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return
	}
	if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.c.fail(fmt.Errorf("%w: disk cache remove: %v", ErrCache, err))
	}
}

// Remove implements Cache.
func (d *Disk) Remove(key string) {
	if en, ok := d.c.del(key); ok {
		d.unlink(en.v)
	}
}

// Stats implements Cache: Bytes counts the bytes in files (plus keys and
// EntryOverhead per entry).
func (d *Disk) Stats() Stats { return d.c.stats() }

// Close removes the cache's directory and everything in it, after checking
// its marker; the cache is empty afterwards and caches nothing more. Close
// is idempotent.
func (d *Disk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.c.mu.Lock()
	d.c.ll.Init()
	clear(d.c.m)
	d.c.used, d.c.raw = 0, 0
	d.c.lastErr = ErrClosed.Error()
	d.c.mu.Unlock()
	got, err := os.ReadFile(filepath.Join(d.dir, DiskMarker))
	if err != nil || string(got) != d.token {
		return fmt.Errorf("%w: disk cache %s: marker missing or foreign, not removing", ErrCache, d.dir)
	}
	return os.RemoveAll(d.dir)
}

func (d *Disk) setOnEvict(f evictFunc, tr *transit) { d.c.setOnEvict(f, tr) }

func (d *Disk) has(key string) bool { return d.c.has(key) }

func (d *Disk) touch(key string) bool { return d.c.touch(key) }
