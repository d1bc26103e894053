// Package zip reads and writes Zarr hierarchies stored in one ZIP archive:
// a local .zip file, or one on S3, HTTP or any other store.
//
// Open returns a read-only *Reader over the archive held under one key of
// any store.Reader. It reads the archive's end records and central
// directory with ranged reads (one suffix read, one read of the directory
// when the suffix does not already hold it, and a size query when the
// source can answer one), never the whole archive, and afterwards serves
// each value with ranged reads of its entry:
//
//   - stored (uncompressed) entries are read in part, range for range, so a
//     shard index or an inner chunk costs one small read of the archive;
//   - deflate entries are inflated from their start, as far as a read
//     needs; a later read further on continues where an earlier one
//     stopped (a few inflaters are kept), so reading a large entry's
//     ranges in order inflates it once;
//   - ZIP64 archives and entries (over 4 GiB, or over 65535 entries) are
//     read, and so is data prepended to the archive (self-extractors);
//   - when a name occurs more than once (an archive appended to), the last
//     entry of the central directory wins, as in zarr-python's ZipStore.
//
// Entry names that are not valid store keys (directory entries "a/",
// absolute or ".." paths) are not served. A Full read of an entry checks
// its CRC-32.
//
// Write and Writer produce archives: every entry stored (no ZIP-level
// compression), ZIP64 records throughout, no name twice, and, through
// Write, the metadata documents first (the root zarr.json, then the other
// zarr.json and Zarr v2 metadata files breadth-first) and the chunks after
// them, which is the layout OME-Zarr's RFC-9 recommends for single-file
// .ozx archives. Builder is a writable store that stages values and
// archives them once on Close, so rewriting a chunk never leaves a second
// entry of its name.
package zip

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
)

// ErrFormat reports an archive, or an entry of one, that is not valid ZIP:
// missing or inconsistent end records, a central directory or local header
// that does not parse, an entry extending past the end of the archive, or a
// value whose size or CRC-32 differs from what the directory says.
var ErrFormat = errors.New("zip: not a valid zip archive")

// ErrUnsupported reports an entry the reader cannot decode: encrypted, or
// compressed with a method other than stored (0) and deflate (8), or an
// archive split over several disks.
var ErrUnsupported = errors.New("zip: unsupported zip feature")

// Record signatures and sizes (APPNOTE.TXT 4.3).
const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigLocator64  = 0x07064b50
	lenLocal      = 30
	lenCentral    = 46
	lenEnd        = 22
	lenEnd64      = 56
	lenLocator64  = 20
	zip64ExtraID  = 0x0001
	maxComment    = 0xffff
	methodStored  = 0
	methodDeflate = 8
	flagEncrypted = 0x1
	flagUTF8      = 0x800
)

// DefaultMaxDirectory is the largest central directory Open reads unless
// WithMaxDirectory says otherwise: 512 MiB, some six million entries.
const DefaultMaxDirectory = 512 << 20

// entry is one archive member.
type entry struct {
	name   string
	method uint16
	flags  uint16
	crc    uint32
	csize  int64 // compressed size
	usize  int64 // uncompressed size
	header int64 // absolute offset of the local header
	// data is the absolute offset of the entry's data once its local
	// header has been read, else -1.
	data atomic.Int64
}

// Reader is a read-only store over one ZIP archive. It implements
// store.Reader, store.RangesReader, store.IntoReader, store.SizeReader,
// store.Lister and store.ConcurrencyLimiter (its source's limit, or that
// of a local disk when the source states none). It is safe for concurrent
// use.
type Reader struct {
	src     store.Reader
	key     string
	size    int64 // of the archive
	entries map[string]*entry
	keys    []string // sorted
	comment []byte
	limit   int

	mu          sync.Mutex
	cachedEntry *entry // the deflate entry last inflated whole
	cached      []byte // its value

	// A large deflate entry's inflaters are kept after a read, where the
	// read stopped, so that a next read further on continues from there
	// rather than inflating from the entry's start again: reading a shard
	// chunk by chunk, in order, inflates it once, not once a chunk, also
	// when the chunks are asked for concurrently (a read behind which
	// others wait hands its inflater on to the nearest of them).
	curMu sync.Mutex
	cur   []*inflateCursor // parked, idle; at most maxCursors
	busy  []*inflateCursor // in use by a read
}

// maxCursors is how many idle inflaters a Reader keeps parked. Each holds
// the inflater's window and at most a compBlock of compressed data.
const maxCursors = 4

// inflateCursor is an inflater of a deflate entry that has delivered the
// value's bytes before pos.
type inflateCursor struct {
	e     *entry
	cr    *compReader
	fr    io.ReadCloser
	pos   int64
	start int64 // while busy: where the read using it starts
	// waiters are the reads waiting for it (while busy), each to receive
	// it, or nil when it has passed their start.
	waiters []*cursorWaiter
}

// cursorWaiter is a read waiting for a busy inflater.
type cursorWaiter struct {
	start int64
	ch    chan *inflateCursor // buffered: one send
}

// takeCursor returns an inflater of e for a read starting at start: the
// parked one of e standing furthest on at or before start, or, when a
// read of e from no further than start (and past that one) is running,
// its inflater once it is done (unless it stopped past start); else a new
// one. The read ends with putCursor.
func (r *Reader) takeCursor(ctx context.Context, op, key string, e *entry, start int64) *inflateCursor {
	r.curMu.Lock()
	best := -1
	for i, c := range r.cur {
		if c.e == e && c.pos <= start && (best < 0 || c.pos > r.cur[best].pos) {
			best = i
		}
	}
	var behind *inflateCursor
	for _, c := range r.busy {
		if c.e == e && c.start <= start && (behind == nil || c.start > behind.start) {
			behind = c
		}
	}
	// A busy inflater nearer than the parked one is waited for: reads that
	// interleave (one a goroutine) then follow one inflater, not one each.
	if best >= 0 && (behind == nil || behind.start < r.cur[best].pos) {
		c := r.cur[best]
		r.cur = slices.Delete(r.cur, best, best+1)
		c.start, r.busy = start, append(r.busy, c)
		r.curMu.Unlock()
		c.cr.ctx, c.cr.op, c.cr.key = ctx, op, key
		return c
	}
	if behind != nil {
		w := &cursorWaiter{start: start, ch: make(chan *inflateCursor, 1)}
		behind.waiters = append(behind.waiters, w)
		r.curMu.Unlock()
		var c *inflateCursor
		select {
		case c = <-w.ch:
		case <-ctx.Done():
			r.curMu.Lock()
			for _, b := range r.busy {
				b.waiters = slices.DeleteFunc(b.waiters, func(x *cursorWaiter) bool { return x == w })
			}
			r.curMu.Unlock()
			select {
			case c = <-w.ch: // handed over meanwhile: pass it on
				if c != nil {
					r.putCursor(c, true)
				}
			default:
			}
			c = nil
		}
		if c != nil {
			c.cr.ctx, c.cr.op, c.cr.key = ctx, op, key
			return c
		}
		r.curMu.Lock()
	}
	cr := &compReader{ctx: ctx, r: r, op: op, key: key, e: e}
	c := &inflateCursor{e: e, cr: cr, fr: flate.NewReader(bufio.NewReaderSize(cr, 32<<10)), start: start}
	r.busy = append(r.busy, c)
	r.curMu.Unlock()
	return c
}

// putCursor ends a read that took c. When the read went well and stopped
// before the entry's end, c goes to the waiting read nearest on from
// where it stopped (the other waiters stay behind that one), or is parked
// when none can use it (the parked inflater standing least far on is
// closed when there are maxCursors); else it is closed. Waiters it cannot
// serve are told to start their own.
func (r *Reader) putCursor(c *inflateCursor, ok bool) {
	r.curMu.Lock()
	defer r.curMu.Unlock()
	r.busy = slices.DeleteFunc(r.busy, func(x *inflateCursor) bool { return x == c })
	usable := ok && c.pos < c.e.usize
	var next *cursorWaiter
	rest := c.waiters[:0:0]
	for _, w := range c.waiters {
		switch {
		case !usable || w.start < c.pos:
			w.ch <- nil
		case next == nil || w.start < next.start:
			if next != nil {
				rest = append(rest, next)
			}
			next = w
		default:
			rest = append(rest, w)
		}
	}
	c.waiters = nil
	switch {
	case !usable:
		c.fr.Close()
	case next != nil:
		c.start, c.waiters = next.start, rest
		r.busy = append(r.busy, c)
		next.ch <- c
	default:
		c.cr.ctx = nil // the read's context is not kept
		if len(r.cur) == maxCursors {
			least := 0
			for i, p := range r.cur {
				if p.pos < r.cur[least].pos {
					least = i
				}
			}
			r.cur[least].fr.Close()
			r.cur = slices.Delete(r.cur, least, least+1)
		}
		r.cur = append(r.cur, c)
	}
}

var (
	_ store.Reader             = (*Reader)(nil)
	_ store.RangesReader       = (*Reader)(nil)
	_ store.IntoReader         = (*Reader)(nil)
	_ store.SizeReader         = (*Reader)(nil)
	_ store.Lister             = (*Reader)(nil)
	_ store.ConcurrencyLimiter = (*Reader)(nil)
	_ store.Identifier         = (*Reader)(nil)
)

// Option configures Open.
type Option func(*options)

type options struct {
	maxDir int64
}

// WithMaxDirectory sets the largest central directory, in bytes, that Open
// accepts (default DefaultMaxDirectory); a larger one is ErrUnsupported
// rather than a large allocation.
func WithMaxDirectory(n int64) Option { return func(o *options) { o.maxDir = n } }

// tailLen is how much of the archive's end Open reads first: the end of
// central directory record with the longest possible comment, and the
// ZIP64 locator and end record before it.
const tailLen = lenEnd + maxComment + lenLocator64 + lenEnd64

// Open reads the central directory of the archive stored under key in src
// and returns a Reader over its entries. A missing key is the source's
// error (wrapping store.ErrNotFound); an archive that does not parse is
// ErrFormat. The Reader keeps the directory in memory (a few dozen bytes
// per entry plus the names) and reads entries from src on demand; src
// must stay usable, and the archive unchanged, while it is in use.
func Open(ctx context.Context, src store.Reader, key string, opts ...Option) (*Reader, error) {
	o := options{maxDir: DefaultMaxDirectory}
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	if src == nil {
		return nil, fmt.Errorf("zip: nil source store")
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("zip: %w", err)
	}
	r := &Reader{src: src, key: key, entries: map[string]*entry{}, limit: max(8, 4*runtime.GOMAXPROCS(0))}
	if n := store.CapabilitiesOf(src).MaxConcurrency; n > 0 {
		r.limit = n
	}
	if err := r.readDirectory(ctx, o); err != nil {
		var ke *store.KeyError
		if errors.As(err, &ke) {
			return nil, fmt.Errorf("zip: opening archive: %w", err)
		}
		return nil, fmt.Errorf("zip: opening archive %q: %w", key, err)
	}
	return r, nil
}

// end is what the end records say about the central directory.
type end struct {
	records   uint64
	dirSize   uint64
	dirOffset uint64 // relative to the archive's base
	dirEnd    int64  // absolute offset where the directory should end
}

func (r *Reader) readDirectory(ctx context.Context, o options) error {
	tail, err := r.src.Get(ctx, r.key, store.Suffix(tailLen))
	if err != nil {
		return err
	}
	i := findEnd(tail)
	if i < 0 {
		return fmt.Errorf("%w: no end of central directory record", ErrFormat)
	}
	// The archive's size: known when the suffix read returned less than
	// asked (it is the whole archive), else from the source or, failing
	// that, from the end records themselves.
	r.size = -1
	if len(tail) < tailLen {
		r.size = int64(len(tail))
	} else if sr := store.CapabilitiesOf(r.src).Sizer; sr != nil {
		if r.size, err = sr.Size(ctx, r.key); err != nil {
			return err
		}
		if r.size < int64(len(tail)) {
			return fmt.Errorf("%w: archive size %d is less than its last %d bytes", ErrFormat, r.size, len(tail))
		}
	}
	e, err := r.parseEnd(ctx, tail, i)
	if err != nil {
		return err
	}
	if e.dirSize > uint64(o.maxDir) {
		return fmt.Errorf("%w: central directory of %d bytes (limit %d)", ErrUnsupported, e.dirSize, o.maxDir)
	}
	if e.dirSize > uint64(e.dirEnd) {
		return fmt.Errorf("%w: central directory of %d bytes ends at %d", ErrFormat, e.dirSize, e.dirEnd)
	}
	dirStart := e.dirEnd - int64(e.dirSize)
	// Data before the archive proper (a self-extractor's stub) shifts
	// every offset the archive records by base.
	base := dirStart - int64(min(e.dirOffset, 1<<62))
	if base < 0 {
		return fmt.Errorf("%w: central directory offset %d past its end %d", ErrFormat, e.dirOffset, e.dirEnd)
	}
	var dir []byte
	if tailStart := r.size - int64(len(tail)); dirStart >= tailStart {
		dir = tail[dirStart-tailStart : e.dirEnd-tailStart]
	} else {
		if dir, err = r.src.Get(ctx, r.key, store.OffsetLen(dirStart, int64(e.dirSize))); err != nil {
			return err
		}
		if uint64(len(dir)) != e.dirSize {
			return fmt.Errorf("%w: central directory truncated (%d of %d bytes)", ErrFormat, len(dir), e.dirSize)
		}
	}
	return r.parseDirectory(dir, e.records, base)
}

// findEnd returns the index in tail of the end of central directory
// record whose comment reaches exactly to the end of tail, or -1.
func findEnd(tail []byte) int {
	for i := len(tail) - lenEnd; i >= 0; i-- {
		if binary.LittleEndian.Uint32(tail[i:]) == sigEnd &&
			i+lenEnd+int(binary.LittleEndian.Uint16(tail[i+20:])) == len(tail) {
			return i
		}
	}
	return -1
}

// parseEnd reads the end record at tail[i:] and, when the archive is
// ZIP64, the ZIP64 end record it points to. It sets r.size when it was
// not known yet and r.comment.
func (r *Reader) parseEnd(ctx context.Context, tail []byte, i int) (end, error) {
	b := tail[i:]
	le := binary.LittleEndian
	if le.Uint16(b[4:]) != 0 || le.Uint16(b[6:]) != 0 {
		return end{}, fmt.Errorf("%w: multi-disk archive", ErrUnsupported)
	}
	e := end{records: uint64(le.Uint16(b[10:])), dirSize: uint64(le.Uint32(b[12:])), dirOffset: uint64(le.Uint32(b[16:]))}
	r.comment = slices.Clone(b[lenEnd:])
	loc := i - lenLocator64
	if loc < 0 || le.Uint32(tail[loc:]) != sigLocator64 {
		// Not ZIP64: the directory ends where the end record starts.
		if r.size < 0 {
			// Without a size, assume no data before the archive.
			r.size = int64(e.dirOffset+e.dirSize) + int64(len(tail)-i)
		}
		e.dirEnd = r.size - int64(len(tail)-i)
		return e, nil
	}
	if le.Uint32(tail[loc+16:]) > 1 {
		return end{}, fmt.Errorf("%w: multi-disk archive", ErrUnsupported)
	}
	off64 := le.Uint64(tail[loc+8:]) // relative to the base
	// The ZIP64 end record normally sits right before the locator.
	var rec []byte
	at := loc - lenEnd64
	if r.size < 0 {
		if at < 0 || le.Uint32(tail[at:]) != sigEnd64 || off64 > 1<<62 {
			return end{}, fmt.Errorf("%w: ZIP64 end record not before its locator, and the source cannot tell the archive's size", ErrUnsupported)
		}
		r.size = int64(off64) + int64(len(tail)-at)
	}
	tailStart := r.size - int64(len(tail))
	if at >= 0 && le.Uint32(tail[at:]) == sigEnd64 {
		rec = tail[at:loc]
		e.dirEnd = tailStart + int64(at)
	} else {
		// Elsewhere (an extensible data sector, or data before the
		// archive): read it where the locator says, shifted by the base
		// that a record just before the locator would imply.
		if off64 > uint64(r.size) {
			return end{}, fmt.Errorf("%w: ZIP64 end record offset %d past the end", ErrFormat, off64)
		}
		var err error
		if rec, err = r.src.Get(ctx, r.key, store.OffsetLen(int64(off64), lenEnd64)); err != nil {
			return end{}, err
		}
		if len(rec) < lenEnd64 || le.Uint32(rec) != sigEnd64 {
			return end{}, fmt.Errorf("%w: no ZIP64 end record at %d", ErrFormat, off64)
		}
		e.dirEnd = int64(off64)
	}
	if le.Uint32(rec[16:]) != 0 || le.Uint32(rec[20:]) != 0 {
		return end{}, fmt.Errorf("%w: multi-disk archive", ErrUnsupported)
	}
	e.records = le.Uint64(rec[32:])
	e.dirSize = le.Uint64(rec[40:])
	e.dirOffset = le.Uint64(rec[48:])
	return e, nil
}

// parseDirectory reads every central directory record of dir.
func (r *Reader) parseDirectory(dir []byte, records uint64, base int64) error {
	le := binary.LittleEndian
	n := 0
	for len(dir) > 0 {
		if len(dir) < lenCentral || le.Uint32(dir) != sigCentral {
			return fmt.Errorf("%w: bad central directory record %d", ErrFormat, n)
		}
		nameLen := int(le.Uint16(dir[28:]))
		extraLen := int(le.Uint16(dir[30:]))
		commentLen := int(le.Uint16(dir[32:]))
		total := lenCentral + nameLen + extraLen + commentLen
		if len(dir) < total {
			return fmt.Errorf("%w: central directory record %d truncated", ErrFormat, n)
		}
		e := &entry{
			name:   string(dir[lenCentral : lenCentral+nameLen]),
			flags:  le.Uint16(dir[8:]),
			method: le.Uint16(dir[10:]),
			crc:    le.Uint32(dir[16:]),
		}
		csize, usize, off := uint64(le.Uint32(dir[20:])), uint64(le.Uint32(dir[24:])), uint64(le.Uint32(dir[42:]))
		if err := zip64Extra(dir[lenCentral+nameLen:lenCentral+nameLen+extraLen], &usize, &csize, &off); err != nil {
			return fmt.Errorf("%w: entry %q: %w", ErrFormat, e.name, err)
		}
		const maxOff = 1 << 62
		if csize > maxOff || usize > maxOff || off > maxOff || base+int64(off)+lenLocal+int64(nameLen) > r.size || int64(csize) > r.size {
			return fmt.Errorf("%w: entry %q: offset %d or size %d past the end of the archive", ErrFormat, e.name, off, csize)
		}
		e.csize, e.usize, e.header = int64(csize), int64(usize), base+int64(off)
		if e.method == methodStored && e.csize != e.usize {
			return fmt.Errorf("%w: stored entry %q: compressed size %d, size %d", ErrFormat, e.name, e.csize, e.usize)
		}
		e.data.Store(-1)
		if store.ValidateKey(e.name) == nil {
			if _, dup := r.entries[e.name]; !dup {
				r.keys = append(r.keys, e.name)
			}
			r.entries[e.name] = e // the last entry of a name wins
		}
		dir = dir[total:]
		n++
	}
	if uint64(n) != records && records != 0xffff && uint64(n)&0xffff != records {
		return fmt.Errorf("%w: central directory holds %d records, end record says %d", ErrFormat, n, records)
	}
	sort.Strings(r.keys)
	return nil
}

// zip64Extra replaces the sizes and offset saturated at 0xffffffff with
// their values from the ZIP64 extra field, if extra holds one.
func zip64Extra(extra []byte, usize, csize, off *uint64) error {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if len(extra) < 4+n {
			return fmt.Errorf("extra field truncated")
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != zip64ExtraID {
			continue
		}
		for _, p := range []*uint64{usize, csize, off} {
			if *p != 0xffffffff {
				continue
			}
			if len(field) < 8 {
				return fmt.Errorf("ZIP64 extra field too short")
			}
			*p = le.Uint64(field)
			field = field[8:]
		}
		return nil
	}
	return nil
}

// Key returns the key of the archive in its source store.
func (r *Reader) Key() string { return r.key }

// Comment returns the archive comment (for an RFC-9 .ozx, JSON naming the
// OME-Zarr version).
func (r *Reader) Comment() []byte { return slices.Clone(r.comment) }

// StoreID implements store.Identifier: the archive's store and key, so
// two Readers of one archive share caches, and no address is the name.
func (r *Reader) StoreID() string { return "zip:" + store.IDOf(r.src) + "#" + r.key }

// MaxConcurrency implements store.ConcurrencyLimiter: the source's request
// limit, or that of a local disk (as pipeline's default) when the source
// states none.
func (r *Reader) MaxConcurrency() int { return r.limit }

// Capabilities implements store.CapabilityReporter. A Reader is no object
// backend of its own but a format over its source, whose layer it reads
// through (a remote source's request limiter, bounded bodies, retries and
// coalescing, all by one store.GetRanges per call): reads into a caller's
// buffer, sizes and ranges; the source's request limit, coalescing knobs
// and locality, so an archive on a local disk is local (read on the
// caller's goroutines) and one on S3 keeps S3's limit.
func (r *Reader) Capabilities() store.Capabilities {
	src := store.CapabilitiesOf(r.src)
	c := store.Capabilities{Into: r, Sizer: r, Ranges: r, Coalesce: src.Coalesce, MaxConcurrency: src.MaxConcurrency, Local: src.Local}
	if !c.Local && c.MaxConcurrency == 0 {
		c.MaxConcurrency = r.limit
	}
	return c
}

// lookup validates key and ctx and returns key's entry.
func (r *Reader) lookup(ctx context.Context, op, key string) (*entry, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &store.KeyError{Op: op, Key: key, Err: err}
	}
	e := r.entries[key]
	if e == nil {
		return nil, &store.KeyError{Op: op, Key: key, Err: store.ErrNotFound}
	}
	return e, nil
}

// guessHeader is how many bytes past the name of a local header a read
// takes along, in case its extra field is longer than the central one.
const guessHeader = 64

// prefetchMax is the largest offset into an entry for which a first read
// takes the local header along instead of reading it on its own.
const prefetchMax = 64 << 10

// span reads the bytes [start, end) of e's stored data (start and end
// within its compressed size), learning the data offset from the local
// header on the first read of e.
func (r *Reader) span(ctx context.Context, op, key string, e *entry, start, end int64) ([]byte, error) {
	if d := e.data.Load(); d >= 0 {
		return r.read(ctx, op, key, d+start, end-start)
	}
	guess := int64(lenLocal + len(e.name) + guessHeader)
	n := guess
	if start <= prefetchMax {
		n += end
	}
	b, err := r.src.Get(ctx, r.key, store.OffsetLen(e.header, min(n, r.size-e.header)))
	if err != nil {
		return nil, keyErr(op, key, err)
	}
	d, err := e.parseLocal(b)
	if err != nil {
		return nil, &store.KeyError{Op: op, Key: key, Err: err}
	}
	e.data.Store(d)
	if rel := d - e.header; start <= prefetchMax && rel+end <= int64(len(b)) {
		return b[rel+start : rel+end : rel+end], nil
	}
	return r.read(ctx, op, key, d+start, end-start)
}

// parseLocal checks the local header at the start of b and returns the
// absolute offset of e's data.
func (e *entry) parseLocal(b []byte) (int64, error) {
	le := binary.LittleEndian
	if len(b) < lenLocal || le.Uint32(b) != sigLocal {
		return 0, fmt.Errorf("%w: no local header at %d", ErrFormat, e.header)
	}
	nameLen, extraLen := int(le.Uint16(b[26:])), int64(le.Uint16(b[28:]))
	if nameLen != len(e.name) || (len(b) >= lenLocal+nameLen && string(b[lenLocal:lenLocal+nameLen]) != e.name) {
		return 0, fmt.Errorf("%w: local header at %d names another entry", ErrFormat, e.header)
	}
	return e.header + lenLocal + int64(nameLen) + extraLen, nil
}

// read reads n bytes of the archive at off, all of which must be there.
func (r *Reader) read(ctx context.Context, op, key string, off, n int64) ([]byte, error) {
	if off+n > r.size {
		return nil, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: entry data past the end of the archive", ErrFormat)}
	}
	b, err := r.src.Get(ctx, r.key, store.OffsetLen(off, n))
	if err != nil {
		return nil, keyErr(op, key, err)
	}
	if int64(len(b)) != n {
		return nil, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: entry data truncated (%d of %d bytes)", ErrFormat, len(b), n)}
	}
	return b, nil
}

// keyErr names key in an error of the source, which names the archive.
func keyErr(op, key string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		// The archive vanished under the reader: not a missing entry.
		err = fmt.Errorf("%w: the archive is gone: %v", ErrFormat, err)
	}
	return &store.KeyError{Op: op, Key: key, Err: err}
}

// check reports an entry this reader cannot decode.
func (e *entry) check(op, key string) error {
	if e.flags&flagEncrypted != 0 {
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: encrypted entry", ErrUnsupported)}
	}
	if e.method != methodStored && e.method != methodDeflate {
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: compression method %d", ErrUnsupported, e.method)}
	}
	return nil
}

// value returns the bytes [start, end) of e's value (a valid interval of
// it), reading the archive.
func (r *Reader) value(ctx context.Context, op, key string, e *entry, start, end int64) ([]byte, error) {
	if err := e.check(op, key); err != nil {
		return nil, err
	}
	if start == end {
		return []byte{}, nil
	}
	if e.method == methodStored {
		b, err := r.span(ctx, op, key, e, start, end)
		if err == nil && start == 0 && end == e.usize && crc32.ChecksumIEEE(b) != e.crc {
			err = &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: CRC-32 mismatch", ErrFormat)}
		}
		return b, err
	}
	if e.usize <= maxCached {
		whole, err := r.inflated(ctx, op, key, e)
		if err != nil {
			return nil, err
		}
		return slices.Clone(whole[start:end]), nil
	}
	out, err := r.inflateRanges(ctx, op, key, e, []span{{start, end}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// span is an interval [start, end) of an entry's value.
type span struct{ start, end int64 }

// compBlock is how much compressed data inflateRanges reads from the
// archive at a time.
const compBlock = 1 << 20

// compReader reads e's compressed data from the archive a block at a
// time, as the inflater asks for it.
type compReader struct {
	ctx     context.Context
	r       *Reader
	op, key string
	e       *entry
	pos     int64
	buf     []byte
}

func (c *compReader) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		if c.pos >= c.e.csize {
			return 0, io.EOF
		}
		b, err := c.r.span(c.ctx, c.op, c.key, c.e, c.pos, min(c.pos+compBlock, c.e.csize))
		if err != nil {
			return 0, err
		}
		c.pos += int64(len(b))
		c.buf = b
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// inflateRanges returns the bytes of each of spans (valid intervals of
// e's value) of a deflate entry in one streaming pass: the compressed
// data is read a block at a time and inflated from the start only as far
// as the last span ends, bytes outside the spans are discarded as they
// pass. Memory is the spans' bytes (overlapping ones once), a block and
// the inflater's window, whatever the entry's size. A pass to the end
// checks the size, and one over the whole value the CRC-32.
func (r *Reader) inflateRanges(ctx context.Context, op, key string, e *entry, spans []span) ([][]byte, error) {
	if e.usize > e.csize*maxRatio+1<<10 {
		return nil, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: deflate entry of %d bytes claims %d", ErrFormat, e.csize, e.usize)}
	}
	// Merge overlapping spans into groups read once.
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return spans[order[a]].start < spans[order[b]].start })
	var groups []span
	for _, i := range order {
		s := spans[i]
		if s.start == s.end {
			continue
		}
		if n := len(groups); n > 0 && s.start <= groups[n-1].end {
			groups[n-1].end = max(groups[n-1].end, s.end)
			continue
		}
		groups = append(groups, s)
	}
	if len(groups) == 0 {
		out := make([][]byte, len(spans))
		for i := range out {
			out[i] = []byte{}
		}
		return out, nil
	}

	cur := r.takeCursor(ctx, op, key, e, groups[0].start)
	ok := false
	defer func() { r.putCursor(cur, ok) }()
	fr := cur.fr
	fail := func(err error) error {
		var ke *store.KeyError
		if errors.As(err, &ke) {
			return err
		}
		return &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: inflating: %w", ErrFormat, noEOF(err))}
	}
	data := make([][]byte, len(groups))
	pos := cur.pos
	for g, grp := range groups {
		if err := ctx.Err(); err != nil {
			return nil, &store.KeyError{Op: op, Key: key, Err: err}
		}
		if _, err := io.CopyN(io.Discard, fr, grp.start-pos); err != nil {
			return nil, fail(err)
		}
		data[g] = make([]byte, grp.end-grp.start)
		if _, err := io.ReadFull(fr, data[g]); err != nil {
			return nil, fail(err)
		}
		pos = grp.end
		cur.pos = pos
	}
	if pos == e.usize {
		if n, _ := fr.Read(make([]byte, 1)); n != 0 {
			return nil, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: deflate entry inflates to more than %d bytes", ErrFormat, e.usize)}
		}
		if len(groups) == 1 && groups[0].start == 0 && crc32.ChecksumIEEE(data[0]) != e.crc {
			return nil, &store.KeyError{Op: op, Key: key, Err: fmt.Errorf("%w: CRC-32 mismatch", ErrFormat)}
		}
	}
	ok = true
	out := make([][]byte, len(spans))
	g := 0
	for _, i := range order {
		s := spans[i]
		if s.start == s.end {
			out[i] = []byte{}
			continue
		}
		for groups[g].end < s.end || groups[g].start > s.start {
			g++
		}
		b := data[g][s.start-groups[g].start : s.end-groups[g].start]
		if len(spans) > 1 {
			b = slices.Clone(b) // results are the caller's, each its own
		}
		out[i] = b
	}
	return out, nil
}

// maxCached is the largest deflate entry the Reader keeps inflated, so
// that ranged reads of it do not inflate it again each time.
const maxCached = 16 << 20

// inflated returns all of e's value, a deflate entry of at most maxCached
// bytes, from the one-entry cache or inflated (and then cached). The
// result is shared: callers copy from it.
func (r *Reader) inflated(ctx context.Context, op, key string, e *entry) ([]byte, error) {
	r.mu.Lock()
	if r.cachedEntry == e {
		b := r.cached
		r.mu.Unlock()
		return b, nil
	}
	r.mu.Unlock()
	comp, err := r.span(ctx, op, key, e, 0, e.csize)
	if err != nil {
		return nil, err
	}
	b, err := inflate(comp, e, 0, e.usize)
	if err != nil {
		return nil, &store.KeyError{Op: op, Key: key, Err: err}
	}
	r.mu.Lock()
	r.cachedEntry, r.cached = e, b
	r.mu.Unlock()
	return b, nil
}

// maxRatio bounds deflate's expansion: no deflate stream inflates to more
// than about 1032 times its size.
const maxRatio = 1032

// inflate decompresses comp, e's deflate data, and returns the bytes
// [start, end) of the value. Inflating all of it checks its size and CRC.
func inflate(comp []byte, e *entry, start, end int64) ([]byte, error) {
	if e.usize > int64(len(comp))*maxRatio+1<<10 {
		return nil, fmt.Errorf("%w: deflate entry of %d bytes claims %d", ErrFormat, len(comp), e.usize)
	}
	fr := flate.NewReader(&byteReader{b: comp})
	defer fr.Close()
	if _, err := io.CopyN(io.Discard, fr, start); err != nil {
		return nil, fmt.Errorf("%w: inflating: %w", ErrFormat, noEOF(err))
	}
	whole := start == 0 && end == e.usize
	n := end - start
	if whole {
		n++ // one more byte must be missing
	}
	out := make([]byte, 0, end-start)
	buf := &sliceWriter{b: out}
	got, err := io.CopyN(buf, fr, n)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%w: inflating: %w", ErrFormat, err)
	}
	if got < end-start || (whole && got != end-start) {
		return nil, fmt.Errorf("%w: deflate entry inflates to a size other than %d", ErrFormat, e.usize)
	}
	if whole && crc32.ChecksumIEEE(buf.b) != e.crc {
		return nil, fmt.Errorf("%w: CRC-32 mismatch", ErrFormat)
	}
	return buf.b, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// byteReader is a bytes.Reader that is also an io.ByteReader, so flate
// reads it without buffering.
type byteReader struct {
	b []byte
}

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func (r *byteReader) ReadByte() (byte, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

// sliceWriter is an io.Writer appending to b.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// Get returns the bytes r selects of key's value. A missing key is
// store.ErrNotFound; an entry that does not decode is ErrFormat or
// ErrUnsupported.
func (r *Reader) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	if err := br.Validate(); err != nil {
		if kerr := store.ValidateKey(key); kerr != nil {
			return nil, kerr
		}
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	e, err := r.lookup(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	start, end, _ := br.Resolve(e.usize)
	return r.value(ctx, "get", key, e, start, end)
}

// GetRanges returns several ranges of key's value, in the order of ranges.
// The ranges of a stored entry go to the source as one store.GetRanges
// call (which a remote source coalesces and runs concurrently); a deflate
// entry is inflated once.
func (r *Reader) GetRanges(ctx context.Context, key string, ranges []store.ByteRange) ([][]byte, error) {
	if err := store.ValidateRequest("get", key, ranges...); err != nil {
		return nil, err
	}
	e, err := r.lookup(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	if err := e.check("get", key); err != nil {
		return nil, err
	}
	out := make([][]byte, len(ranges))
	if e.method == methodDeflate {
		if e.usize > maxCached {
			// Inflate only as far as the ranges need, keeping only their
			// bytes: never the whole of a large entry.
			spans := make([]span, len(ranges))
			for i, br := range ranges {
				spans[i].start, spans[i].end, _ = br.Resolve(e.usize)
			}
			return r.inflateRanges(ctx, "get", key, e, spans)
		}
		whole, err := r.inflated(ctx, "get", key, e)
		if err != nil {
			return nil, err
		}
		for i, br := range ranges {
			s, end, _ := br.Resolve(e.usize)
			out[i] = slices.Clone(whole[s:end])
			if out[i] == nil {
				out[i] = []byte{}
			}
		}
		return out, nil
	}
	d := e.data.Load()
	for i := 0; d < 0 && i < len(ranges); i++ {
		// Learn the data offset by serving the first range that reads
		// anything on its own.
		s, end, _ := ranges[i].Resolve(e.usize)
		if s == end {
			continue
		}
		if out[i], err = r.value(ctx, "get", key, e, s, end); err != nil {
			return nil, err
		}
		d = e.data.Load()
	}
	abs := make([]store.ByteRange, 0, len(ranges))
	idx := make([]int, 0, len(ranges))
	for i, br := range ranges {
		if out[i] != nil {
			continue
		}
		s, end, _ := br.Resolve(e.usize)
		if s == end {
			out[i] = []byte{}
			continue
		}
		abs = append(abs, store.OffsetLen(d+s, end-s))
		idx = append(idx, i)
	}
	if len(abs) == 0 {
		return out, nil
	}
	if d+e.csize > r.size {
		return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: entry data past the end of the archive", ErrFormat)}
	}
	got, err := store.GetRanges(ctx, r.src, r.key, abs)
	if err != nil {
		return nil, keyErr("get", key, err)
	}
	for j, b := range got {
		_, n, _ := abs[j].Bounded()
		if int64(len(b)) != n {
			return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: entry data truncated", ErrFormat)}
		}
		out[idx[j]] = b
	}
	return out, nil
}

// ReadInto reads the bytes [offset, offset+len(dst)) of key's value into
// dst and returns how many it read: fewer than len(dst) only when the value
// ends first.
func (r *Reader) ReadInto(ctx context.Context, key string, offset int64, dst []byte) (int, error) {
	if err := store.ValidateRequest("read", key, store.OffsetLen(offset, int64(len(dst)))); err != nil {
		return 0, err
	}
	e, err := r.lookup(ctx, "read", key)
	if err != nil {
		return 0, err
	}
	start, end, _ := store.OffsetLen(offset, int64(len(dst))).Resolve(e.usize)
	if into := store.CapabilitiesOf(r.src).Into; into != nil && e.method == methodStored && start < end {
		if d := e.data.Load(); d >= 0 {
			if d+e.csize > r.size {
				return 0, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("%w: entry data past the end of the archive", ErrFormat)}
			}
			n, err := into.ReadInto(ctx, r.key, d+start, dst[:end-start])
			if err != nil {
				return 0, keyErr("read", key, err)
			}
			if int64(n) != end-start {
				return 0, &store.KeyError{Op: "read", Key: key, Err: fmt.Errorf("%w: entry data truncated", ErrFormat)}
			}
			return n, nil
		}
	}
	b, err := r.value(ctx, "read", key, e, start, end)
	if err != nil {
		return 0, err
	}
	return copy(dst, b), nil
}

// Size returns the size of key's value, from the central directory.
func (r *Reader) Size(ctx context.Context, key string) (int64, error) {
	e, err := r.lookup(ctx, "size", key)
	if err != nil {
		return 0, err
	}
	return e.usize, nil
}

// List yields every key of the archive that starts with prefix, in
// lexical order.
func (r *Reader) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for k, err := range listing.Sorted(ctx, r.keys, prefix) {
			if !yield(k, err) || err != nil {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
		}
	}
}

// ListDir lists one level below dir: the keys directly in it and the names
// of its sub-directories (ending in "/"), both relative to dir and sorted.
func (r *Reader) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	return listing.Dir(ctx, r.keys, dir)
}
