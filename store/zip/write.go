package zip

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// ErrDuplicate reports a second entry of the same name given to a Writer.
var ErrDuplicate = errors.New("zip: duplicate entry name")

// ErrClosed reports a Writer used after Close.
var ErrClosed = errors.New("zip: writer closed")

// Fixed fields of the records the Writer writes.
const (
	versionZip64 = 45 // version needed to extract: ZIP64
	madeByUnix   = 3<<8 | versionZip64
	dosDate1980  = 1<<5 | 1          // 1980-01-01, the earliest DOS date: archives are reproducible
	unixMode     = 0o100644 << 16    // regular file, rw-r--r--, in the external attributes
	sat32        = 0xffffffff        // a 32-bit field whose value is in the ZIP64 extra field
	sat16        = 0xffff            // a 16-bit count whose value is in the ZIP64 end record
	lenExtraLoc  = 4 + 16            // ZIP64 extra of a local header: sizes
	lenExtraCen  = 4 + 24            // ZIP64 extra of a central header: sizes and offset
	maxNameBytes = 0xffff - lenLocal // a name must fit its 16-bit length
)

// Writer writes a ZIP archive to an io.Writer, one stored entry at a
// time: each entry's local header (with its CRC-32 and sizes, so no data
// descriptors), then its bytes; Close writes the central directory in the
// order of the entries. Every header carries ZIP64 sizes and offsets, so
// archives and entries may exceed 4 GiB, and the archive ends with the
// ZIP64 end records. Modification times are all 1980-01-01, so the same
// entries make the same archive. A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	off     int64
	entries []wentry
	names   map[string]bool
	comment []byte
	err     error // sticky: the first write error
	closed  bool
}

type wentry struct {
	name   string
	crc    uint32
	size   int64
	offset int64
}

// NewWriter returns a Writer writing an archive to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, names: map[string]bool{}} }

// SetComment sets the archive comment, written by Close: at most 65535
// bytes. See OMEComment for the one RFC-9 recommends.
func (w *Writer) SetComment(comment []byte) error {
	if len(comment) > maxComment {
		return fmt.Errorf("zip: comment of %d bytes (at most %d)", len(comment), maxComment)
	}
	w.comment = slices.Clone(comment)
	return nil
}

// OMEComment returns the archive comment RFC-9 recommends for a zipped
// OME-Zarr of the given version ("0.5", say): the JSON
// {"ome":{"version":"0.5"}}.
func OMEComment(version string) []byte {
	b, _ := json.Marshal(map[string]map[string]string{"ome": {"version": version}})
	return b
}

func (w *Writer) write(parts ...[]byte) error {
	for _, p := range parts {
		if w.err != nil {
			return w.err
		}
		n, err := w.w.Write(p)
		w.off += int64(n)
		if err == nil && n < len(p) {
			err = io.ErrShortWrite
		}
		if err != nil {
			w.err = fmt.Errorf("zip: writing archive: %w", err)
		}
	}
	return w.err
}

// Add writes value as the stored entry key, a valid store key
// (store.ValidateKey) not added before (ErrDuplicate). It checks ctx
// before writing; a write error is sticky, as the archive is then broken.
func (w *Writer) Add(ctx context.Context, key string, value []byte) error {
	if w.closed {
		return &store.KeyError{Op: "add", Key: key, Err: ErrClosed}
	}
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if len(key) > maxNameBytes {
		return &store.KeyError{Op: "add", Key: key, Err: fmt.Errorf("%w: name of %d bytes", store.ErrInvalidKey, len(key))}
	}
	if w.names[key] {
		return &store.KeyError{Op: "add", Key: key, Err: ErrDuplicate}
	}
	if err := ctx.Err(); err != nil {
		return &store.KeyError{Op: "add", Key: key, Err: err}
	}
	if w.err != nil {
		return w.err
	}
	e := wentry{name: key, crc: crc32.ChecksumIEEE(value), size: int64(len(value)), offset: w.off}
	var h [lenLocal + lenExtraLoc]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], sigLocal)
	le.PutUint16(h[4:], versionZip64)
	e.putFields(h[6:], h[lenLocal:], lenExtraLoc)
	if err := w.write(h[:lenLocal], []byte(key), h[lenLocal:], value); err != nil {
		return err
	}
	w.names[key] = true
	w.entries = append(w.entries, e)
	return nil
}

// putFields fills the fields local and central headers share (flags,
// method, time, date, CRC-32, sizes, name and extra lengths: 22 bytes of
// h) and the ZIP64 extra field x of extraLen bytes: the sizes, and the
// local header's offset when there is room for it (central headers).
func (e wentry) putFields(h, x []byte, extraLen int) {
	le := binary.LittleEndian
	le.PutUint16(h[0:], nameFlags(e.name))
	le.PutUint16(h[2:], methodStored)
	le.PutUint16(h[4:], 0) // time 00:00:00
	le.PutUint16(h[6:], dosDate1980)
	le.PutUint32(h[8:], e.crc)
	le.PutUint32(h[12:], sat32)
	le.PutUint32(h[16:], sat32)
	le.PutUint16(h[20:], uint16(len(e.name)))
	le.PutUint16(h[22:], uint16(extraLen))
	le.PutUint16(x[0:], zip64ExtraID)
	le.PutUint16(x[2:], uint16(extraLen-4))
	le.PutUint64(x[4:], uint64(e.size))
	le.PutUint64(x[12:], uint64(e.size))
	if extraLen >= lenExtraCen {
		le.PutUint64(x[20:], uint64(e.offset))
	}
}

// nameFlags returns the general-purpose flags for a name: the UTF-8 flag
// when it is not plain ASCII.
func nameFlags(name string) uint16 {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return flagUTF8
		}
	}
	return 0
}

// Close writes the central directory and the end records. It does not
// close the underlying writer. Closing twice is a no-op.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	le := binary.LittleEndian
	dirStart := w.off
	for _, e := range w.entries {
		var h [lenCentral + lenExtraCen]byte
		le.PutUint32(h[0:], sigCentral)
		le.PutUint16(h[4:], madeByUnix)
		le.PutUint16(h[6:], versionZip64)
		e.putFields(h[8:], h[lenCentral:], lenExtraCen)
		// comment length, disk number, internal attributes: 0
		le.PutUint32(h[38:], unixMode)
		le.PutUint32(h[42:], sat32)
		if err := w.write(h[:lenCentral], []byte(e.name), h[lenCentral:]); err != nil {
			return err
		}
	}
	dirSize := w.off - dirStart
	end64 := w.off
	n := uint64(len(w.entries))
	var t [lenEnd64 + lenLocator64 + lenEnd]byte
	le.PutUint32(t[0:], sigEnd64)
	le.PutUint64(t[4:], lenEnd64-12)
	le.PutUint16(t[12:], madeByUnix)
	le.PutUint16(t[14:], versionZip64)
	// this disk, the directory's disk: 0
	le.PutUint64(t[24:], n)
	le.PutUint64(t[32:], n)
	le.PutUint64(t[40:], uint64(dirSize))
	le.PutUint64(t[48:], uint64(dirStart))
	l := t[lenEnd64:]
	le.PutUint32(l[0:], sigLocator64)
	le.PutUint64(l[8:], uint64(end64))
	le.PutUint32(l[16:], 1) // one disk
	e := t[lenEnd64+lenLocator64:]
	le.PutUint32(e[0:], sigEnd)
	le.PutUint16(e[8:], uint16(min(n, sat16)))
	le.PutUint16(e[10:], uint16(min(n, sat16)))
	le.PutUint32(e[12:], uint32(min(uint64(dirSize), sat32)))
	le.PutUint32(e[16:], uint32(min(uint64(dirStart), sat32)))
	le.PutUint16(e[20:], uint16(len(w.comment)))
	return w.write(t[:], w.comment)
}

// Source is what Write archives: a store that can be listed.
type Source interface {
	store.Reader
	store.Lister
}

// WriteOption configures Write.
type WriteOption func(*writeOptions)

type writeOptions struct {
	comment []byte
	prefix  string
}

// WithComment sets the archive comment Write gives the archive (see
// OMEComment).
func WithComment(comment []byte) WriteOption {
	return func(o *writeOptions) { o.comment = comment }
}

// WithPrefix makes Write archive only the keys under prefix (a directory
// such as "image.zarr/"), with prefix removed from their names, so that
// the node at prefix becomes the archive's root.
func WithPrefix(prefix string) WriteOption {
	return func(o *writeOptions) { o.prefix = prefix }
}

// Write archives every key of src (or of its part under WithPrefix) into
// dst as stored entries, in the order RFC-9 recommends for a single-file
// OME-Zarr: the metadata documents first (zarr.json, and Zarr v2's
// .zgroup, .zarray, .zattrs and .zmetadata), breadth-first from the root,
// the root zarr.json leading; then every other key in lexical order. Each
// value is read whole and written before the next is read, so memory
// holds one value at a time. It returns the first error of src or dst.
func Write(ctx context.Context, dst io.Writer, src Source, opts ...WriteOption) error {
	var o writeOptions
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	if o.prefix != "" && !strings.HasSuffix(o.prefix, "/") {
		o.prefix += "/"
	}
	if err := store.ValidatePrefix(o.prefix); err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	var keys []string
	for k, err := range src.List(ctx, o.prefix) {
		if err != nil {
			return fmt.Errorf("zip: listing the source: %w", err)
		}
		keys = append(keys, k)
	}
	w := NewWriter(dst)
	if err := w.SetComment(o.comment); err != nil {
		return err
	}
	for _, k := range Order(keys, o.prefix) {
		v, err := src.Get(ctx, k, store.Full())
		if err != nil {
			return fmt.Errorf("zip: reading the source: %w", err)
		}
		if err := w.Add(ctx, k[len(o.prefix):], v); err != nil {
			return err
		}
	}
	return w.Close()
}

// metadataRank orders the metadata documents of one directory, zarr.json
// first; 0 means not metadata.
var metadataRank = map[string]int{"zarr.json": 1, ".zgroup": 2, ".zarray": 3, ".zattrs": 4, ".zmetadata": 5}

// Order returns keys (all starting with prefix, which is not part of the
// archive names) in the order Write archives them: metadata documents
// breadth-first (by depth, then directory, then zarr.json before the v2
// files), then the rest in lexical order. keys itself is not modified.
func Order(keys []string, prefix string) []string {
	type item struct {
		key, dir string
		depth    int
		rank     int
	}
	items := make([]item, len(keys))
	for i, k := range keys {
		name := strings.TrimPrefix(k, prefix)
		dir, base := "", name
		if j := strings.LastIndexByte(name, '/'); j >= 0 {
			dir, base = name[:j+1], name[j+1:]
		}
		items[i] = item{key: k, dir: dir, depth: strings.Count(name, "/"), rank: metadataRank[base]}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		am, bm := a.rank > 0, b.rank > 0
		switch {
		case am != bm:
			if am {
				return -1
			}
			return 1
		case !am:
			return strings.Compare(a.key, b.key)
		case a.depth != b.depth:
			return a.depth - b.depth
		case a.dir != b.dir:
			return strings.Compare(a.dir, b.dir)
		}
		return a.rank - b.rank
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.key
	}
	return out
}
