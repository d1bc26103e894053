package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/gozarr/gozarr/internal/bufpool"
)

// DiskMarker is the name of the file that marks a Disk cache's directory
// as one: Close removes a directory only when it holds this marker with
// the content the cache wrote, so it never deletes anything else.
const DiskMarker = "GOZARR-CACHE"

// diskPrefix starts the name of every Disk cache directory.
const diskPrefix = "gozarr-chunk-cache-"

// diskFile is the name of the file that holds a Disk cache's values.
const diskFile = "values"

// diskBlock is the unit of space in a Disk cache's file: extents start and
// end on multiples of it.
const diskBlock = 4096

// DiskOptions configure a Disk cache. The zero value uses os.TempDir.
type DiskOptions struct {
	// Dir is the parent of the cache's own directory, which is created
	// with os.MkdirTemp (a random name starting "gozarr-chunk-cache-").
	// Default: os.TempDir().
	Dir string
}

// Disk is a cache that keeps values in one file of a private temporary
// directory, bounded by the bytes stored (plus key and EntryOverhead per
// entry), least recently used out first. Get reads the value into a fresh
// slice.
//
// The file is carved into extents of whole 4 KiB blocks: a value is written
// with one positioned write into a free extent (the best fit among freed
// ones, else at the end of the file) and read back with one positioned
// read, so a hit, an Add and an eviction cost no file creation, opening
// or deletion. Freed neighbours merge, free space at the end is truncated,
// and once free space inside the file passes a quarter of what it holds
// (at least 64 MiB), freed extents are also released to the file system
// (hole punching, on Linux). Entries moved down from a Compressed tier are
// stored compressed, as they were there.
//
// The directory is created by NewDisk and removed, with everything in it,
// by Close; the process should Close the cache before it exits (the
// directory is never reused by a later process, and a marker file tells it
// apart from data).
//
// Disk errors do not fail reads: a value that cannot be written (disk full,
// unwritable file) is simply not cached, and a value that cannot be read
// is a miss; both are counted in Stats.Errors with the last message in
// Stats.LastError. Disk is safe for concurrent use.
type Disk struct {
	c     core[*extent]
	dir   string
	token string
	mu    sync.RWMutex // held for reading by file operations, for writing by Close
	f     fileIO       // nil once closed
	space space
	flight
}

// fileIO is what a Disk needs of its file (tests inject faults).
type fileIO interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Truncate(size int64) error
}

// extent is one value's place in the file, reference counted (refs) so
// that the place is not reused while a Get still reads it.
type extent struct {
	refs
	off    int64
	n      int  // bytes stored
	packed bool // a Blosc frame of the value (moved down from Compressed)
}

// NewDisk creates the cache's directory and file and returns an empty Disk
// cache holding at most maxBytes. It fails only if they cannot be created
// (later disk errors are counted, not returned).
func NewDisk(maxBytes int64, opt DiskOptions) (*Disk, error) {
	dir, err := os.MkdirTemp(opt.Dir, diskPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("%w: disk cache: %v", ErrCache, err)
	}
	token := strconv.Itoa(os.Getpid()) + " " + filepath.Base(dir) + "\n"
	if err := os.WriteFile(filepath.Join(dir, DiskMarker), []byte(token), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: disk cache marker: %v", ErrCache, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, diskFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: disk cache file: %v", ErrCache, err)
	}
	d := &Disk{dir: dir, token: token, f: f}
	d.space.init(64<<20, 2)
	d.c = newCore(max(0, maxBytes), d.read)
	return d, nil
}

// Dir returns the cache's directory.
func (d *Disk) Dir() string { return d.dir }

// Get implements Cache: it reads the value into a fresh slice.
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
		if !errors.Is(err, errFreed) && !errors.Is(err, ErrClosed) {
			d.c.fail(fmt.Errorf("%w: disk cache read %q: %v", ErrCache, key, err))
			if old, ok := d.c.delIf(key, func(e entry[*extent]) bool { return e.v == en.v }); ok {
				old.v.release()
			}
		}
		return nil, 0, false
	}
	return v, en.elem, true
}

// read returns en's decoded value.
func (d *Disk) read(en entry[*extent]) ([]byte, error) {
	x := en.v
	if !x.retain() {
		return nil, errFreed
	}
	defer x.release()
	if !x.packed {
		out := make([]byte, x.n)
		if err := d.readAt(out, x.off); err != nil {
			return nil, err
		}
		return out, nil
	}
	// A frame is read into a pooled buffer and decompressed from there.
	buf := bufpool.Get(x.n)
	defer bufpool.Put(buf)
	if err := d.readAt(*buf, x.off); err != nil {
		return nil, err
	}
	return unpack(*buf, int(en.raw))
}

// readAt fills out from the file at off.
func (d *Disk) readAt(out []byte, off int64) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.f == nil {
		return ErrClosed
	}
	n := len(out)
	k, err := d.f.ReadAt(out, off)
	if k == n {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d of %d bytes: %w", k, n, err)
}

// Add implements Cache: value is written to the file; on a write error it
// is not cached and the error is counted.
func (d *Disk) Add(key string, value []byte) { d.AddElem(key, value, 0) }

// AddElem implements ElemAdder (the element size is kept for a tier
// below).
func (d *Disk) AddElem(key string, value []byte, elemSize int) {
	d.add(key, moved{value: value, raw: len(value), elem: elemSize})
}

// addPacked stores an entry moved down from a Compressed tier as its
// frame.
func (d *Disk) addPacked(key string, m moved) { d.add(key, m) }

func (d *Disk) add(key string, m moved) {
	data, packed := m.value, false
	if m.packed != nil {
		data, packed = m.packed.b, true
	}
	w := weight(key, len(data))
	if w > d.c.max {
		d.Remove(key) // an older value of key must not outlive this Add
		d.c.mu.Lock()
		d.c.evictions++
		f := d.c.onEvict
		d.c.mu.Unlock()
		if f != nil {
			f(key, m)
		}
		return
	}
	x, err := d.write(data)
	if err != nil {
		if !errors.Is(err, ErrClosed) {
			d.c.fail(fmt.Errorf("%w: disk cache write %q: %v", ErrCache, key, err))
		}
		d.Remove(key) // an older value of key must not outlive this Add
		return
	}
	x.packed = packed
	dropped, _ := d.c.add(entry[*extent]{key: key, v: x, w: w, raw: int64(m.raw), elem: m.elem})
	if len(dropped) > 0 {
		d.c.handDown(dropped, func(old entry[*extent]) { old.v.release() })
	}
}

// write stores data in a new extent, returning it with one reference.
func (d *Disk) write(data []byte) (*extent, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.f == nil {
		return nil, ErrClosed
	}
	size := roundBlock(int64(len(data)))
	off := d.space.alloc(size)
	if _, err := d.f.WriteAt(data, off); err != nil {
		d.free(off, size)
		return nil, err
	}
	x := &extent{off: off, n: len(data)}
	x.count.Store(1)
	x.onFree = func() { d.free(off, size) }
	return x, nil
}

// free returns an extent's blocks to the free space, truncating the file
// when the end is free and punching holes past the slack.
func (d *Disk) free(off, size int64) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.f == nil {
		return
	}
	d.space.free(off, size, func(from, to int64, tail bool) {
		if !tail {
			punchHole(d.f, from, to-from)
		} else if err := d.f.Truncate(from); err != nil {
			d.c.fail(fmt.Errorf("%w: disk cache truncate: %v", ErrCache, err))
		}
	})
}

// Remove implements Cache.
func (d *Disk) Remove(key string) {
	if en, ok := d.c.del(key); ok {
		en.v.release()
	}
}

// Stats implements Cache: Bytes counts the bytes stored (plus keys and
// EntryOverhead per entry).
func (d *Disk) Stats() Stats { return d.c.stats() }

// Close removes the cache's directory and everything in it, after checking
// its marker; the cache is empty afterwards and caches nothing more. Close
// waits for reads and writes in progress. It is idempotent.
func (d *Disk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	d.f.Close()
	d.f = nil
	d.c.mu.Lock()
	d.c.reset()
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

// roundBlock rounds n up to whole blocks.
func roundBlock(n int64) int64 { return (n + diskBlock - 1) &^ (diskBlock - 1) }

func (d *Disk) fail(err error) { d.c.fail(err) }
