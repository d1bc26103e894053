package hdf5

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/store"
)

// undef is the undefined address ("all bits set") of the format.
const undef = ^uint64(0)

// Default limits (see the With... options).
const (
	defaultMaxMetadata = 256 << 20
	defaultMaxChunks   = 1 << 22
	defaultMaxObjects  = 1 << 20
	maxDepth           = 64       // group nesting and B-tree depth
	maxRank            = 32       // dataspace rank (HDF5's H5S_MAX_RANK)
	maxStructure       = 64 << 20 // one metadata structure read at once
	pageSize           = 32 << 10
	cachePages         = 256
)

// Option configures Open.
type Option func(*config) error

type config struct {
	maxMeta    int64
	maxChunks  int
	maxObjects int
}

// WithMaxMetadataBytes bounds the metadata bytes a File reads from its
// store over its life (object headers, B-tree nodes, heaps, chunk
// indexes); reading more is an error wrapping ErrLimit. The default is 256
// MiB; n must be positive.
func WithMaxMetadataBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("hdf5: WithMaxMetadataBytes(%d): must be positive", n)
		}
		c.maxMeta = n
		return nil
	}
}

// WithMaxChunks bounds the chunks one dataset may list (default 4194304);
// n must be positive.
func WithMaxChunks(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("hdf5: WithMaxChunks(%d): must be positive", n)
		}
		c.maxChunks = n
		return nil
	}
}

// WithMaxObjects bounds the groups and datasets Walk visits (default
// 1048576); n must be positive.
func WithMaxObjects(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("hdf5: WithMaxObjects(%d): must be positive", n)
		}
		c.maxObjects = n
		return nil
	}
}

// File is an open HDF5 file. It is safe for concurrent use.
type File struct {
	r    store.Reader
	key  string
	cfg  config
	size uint64 // bytes of the file that may be read (end of file)
	base uint64 // base address: addresses are relative to it

	sb superblock

	mu    sync.Mutex
	pages map[uint64]*page
	lru   []uint64 // page numbers, least recently used first (small)
	read  int64    // metadata bytes read so far

	objMu   sync.Mutex
	objects map[uint64]*objectHeader // parsed object headers by address
	gheaps  map[uint64][]byte        // global heap collections by address
	listing []*Node                  // every group and dataset, once walked
}

type page struct {
	data []byte
}

// Open reads the superblock of the HDF5 file stored under key and returns
// the File. The file is read lazily: Open reads only its first bytes (and
// the superblock where it is, at 0, 512, 1024, ...).
func Open(ctx context.Context, r store.Reader, key string, opts ...Option) (*File, error) {
	f := &File{r: r, key: key, cfg: config{maxMeta: defaultMaxMetadata, maxChunks: defaultMaxChunks, maxObjects: defaultMaxObjects},
		pages: map[uint64]*page{}, objects: map[uint64]*objectHeader{}, gheaps: map[uint64][]byte{}}
	for _, o := range opts {
		if err := o(&f.cfg); err != nil {
			return nil, err
		}
	}
	f.size = 1<<63 - 1
	if sz := store.CapabilitiesOf(r).Sizer; sz != nil {
		n, err := sz.Size(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("hdf5: %s: %w", key, err)
		}
		f.size = uint64(n)
	}
	if err := f.readSuperblock(ctx); err != nil {
		return nil, fmt.Errorf("hdf5: %s: %w", key, err)
	}
	return f, nil
}

// Key returns the store key the file was opened from.
func (f *File) Key() string { return f.key }

// SuperblockVersion returns the version of the file's superblock (0 to 3).
func (f *File) SuperblockVersion() int { return int(f.sb.version) }

// errorf returns an error wrapping ErrFormat.
func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// unsupported returns an error wrapping ErrUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// readAbs reads n bytes at the absolute file offset off (not relative to
// the base address), through the page cache.
func (f *File) readAbs(ctx context.Context, off, n uint64) ([]byte, error) {
	if n > maxStructure {
		return nil, fmt.Errorf("%w: a %d-byte structure at %d", ErrLimit, n, off)
	}
	if off > f.size || n > f.size-off {
		return nil, errorf("%d bytes at %d are past the end of the file (%d bytes)", n, off, f.size)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, n)
	for n > 0 {
		pn := off / pageSize
		p, err := f.page(ctx, pn)
		if err != nil {
			return nil, err
		}
		in := off - pn*pageSize
		if in >= uint64(len(p.data)) {
			return nil, errorf("%d bytes at %d: the file ends at %d", n, off, pn*pageSize+uint64(len(p.data)))
		}
		take := min(n, uint64(len(p.data))-in)
		out = append(out, p.data[in:in+take]...)
		off += take
		n -= take
	}
	return out, nil
}

// page returns page pn of the file, reading it if it is not cached.
func (f *File) page(ctx context.Context, pn uint64) (*page, error) {
	f.mu.Lock()
	if p, ok := f.pages[pn]; ok {
		f.touch(pn)
		f.mu.Unlock()
		return p, nil
	}
	if f.read+pageSize > f.cfg.maxMeta {
		f.mu.Unlock()
		return nil, fmt.Errorf("%w: more than %d bytes of metadata", ErrLimit, f.cfg.maxMeta)
	}
	f.read += pageSize
	f.mu.Unlock()
	want := uint64(pageSize)
	if pn*pageSize+want > f.size {
		want = f.size - pn*pageSize
	}
	b, err := f.r.Get(ctx, f.key, store.OffsetLen(int64(pn*pageSize), int64(want)))
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) > want {
		b = b[:want]
	}
	p := &page{data: b}
	f.mu.Lock()
	if _, ok := f.pages[pn]; !ok {
		if len(f.lru) >= cachePages {
			delete(f.pages, f.lru[0])
			f.lru = f.lru[1:]
		}
		f.pages[pn] = p
		f.lru = append(f.lru, pn)
	}
	f.mu.Unlock()
	return p, nil
}

// touch moves pn to the most recently used end of the LRU list. Callers
// hold f.mu.
func (f *File) touch(pn uint64) {
	if n := len(f.lru); n > 0 && f.lru[n-1] == pn {
		return
	}
	for i, q := range f.lru {
		if q == pn {
			copy(f.lru[i:], f.lru[i+1:])
			f.lru[len(f.lru)-1] = pn
			return
		}
	}
}

// readAt reads n bytes at the address addr (relative to the base
// address); what names the structure for error messages.
func (f *File) readAt(ctx context.Context, addr, n uint64, what string) ([]byte, error) {
	if addr == undef {
		return nil, errorf("%s at the undefined address", what)
	}
	if addr > f.size || f.base > f.size-addr {
		return nil, errorf("%s at %d: past the end of the file (%d bytes)", what, addr, f.size)
	}
	b, err := f.readAbs(ctx, f.base+addr, n)
	if err != nil {
		return nil, fmt.Errorf("%s at %d: %w", what, addr, err)
	}
	return b, nil
}

// checkRange reports whether [addr, addr+n) lies inside the file.
func (f *File) checkRange(addr, n uint64, what string) error {
	if addr == undef || addr > f.size || f.base > f.size-addr || n > f.size-f.base-addr {
		return errorf("%s: %d bytes at %d are outside the file (%d bytes)", what, n, addr, f.size)
	}
	return nil
}

// dec reads little-endian fields from a byte slice. The first read past
// the end latches an error; later reads return zeros.
type dec struct {
	b    []byte
	p    int
	err  error
	so   int // size of offsets
	sl   int // size of lengths
	what string
}

func (f *File) dec(b []byte, what string) *dec {
	return &dec{b: b, so: int(f.sb.sizeOffsets), sl: int(f.sb.sizeLengths), what: what}
}

func (d *dec) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || n > len(d.b)-d.p {
		d.err = errorf("%s: truncated (%d bytes needed at %d of %d)", d.what, n, d.p, len(d.b))
		return false
	}
	return true
}

func (d *dec) u8() uint8 {
	if !d.need(1) {
		return 0
	}
	d.p++
	return d.b[d.p-1]
}

func (d *dec) u16() uint16 {
	if !d.need(2) {
		return 0
	}
	d.p += 2
	return binary.LittleEndian.Uint16(d.b[d.p-2:])
}

func (d *dec) u32() uint32 {
	if !d.need(4) {
		return 0
	}
	d.p += 4
	return binary.LittleEndian.Uint32(d.b[d.p-4:])
}

func (d *dec) u64() uint64 { return d.uN(8) }

// uN reads an n-byte little-endian unsigned integer (n ≤ 8).
func (d *dec) uN(n int) uint64 {
	if n > 8 {
		d.err = errorf("%s: a %d-byte integer", d.what, n)
		return 0
	}
	if !d.need(n) {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(d.b[d.p+i])
	}
	d.p += n
	return v
}

// addr reads an address; all bits set (of any width) is undef.
func (d *dec) addr() uint64 {
	v := d.uN(d.so)
	if d.so < 8 && v == 1<<(8*d.so)-1 {
		return undef
	}
	return v
}

func (d *dec) length() uint64 { return d.uN(d.sl) }

func (d *dec) bytes(n int) []byte {
	if !d.need(n) {
		return nil
	}
	d.p += n
	return d.b[d.p-n : d.p]
}

func (d *dec) skip(n int) { d.bytes(n) }

func (d *dec) left() int { return len(d.b) - d.p }

// signature checks a 4-byte signature.
func (d *dec) signature(sig string) {
	b := d.bytes(4)
	if d.err == nil && string(b) != sig {
		d.err = errorf("%s: signature %q, want %q", d.what, b, sig)
	}
}

// checkSum verifies the Jenkins lookup3 checksum that follows b[start:d.p].
func (d *dec) checkSum(start int) {
	if d.err != nil {
		return
	}
	body := d.b[start:d.p]
	want := d.u32()
	if d.err == nil && lookup3(body) != want {
		d.err = errorf("%s: checksum mismatch", d.what)
	}
}

// lookup3 is the Jenkins lookup3 checksum of version 2 structures.
func lookup3(b []byte) uint32 { return numcodecs.JenkinsLookup3(b, 0) }

// span is a byte range of the file (relative to the base address).
type span struct{ addr, n uint64 }

// maxPrefetch bounds the reads a prefetch keeps in flight.
const maxPrefetch = 16

// prefetch loads the pages under the given ranges into the cache,
// maxPrefetch reads at a time, so that a walk that then reads them one by
// one waits for one round trip, not one per structure (what a remote
// store's latency needs). Errors are left to the reads that follow. At most
// half the cache is prefetched at once.
func (f *File) prefetch(ctx context.Context, spans []span) {
	seen := map[uint64]bool{}
	var todo []uint64
	f.mu.Lock()
	for _, s := range spans {
		if s.addr == undef || s.addr > f.size || f.base > f.size-s.addr || s.n > f.size-f.base-s.addr {
			continue
		}
		first := (f.base + s.addr) / pageSize
		last := (f.base + s.addr + max(s.n, 1) - 1) / pageSize
		for pn := first; pn <= last && len(todo) < cachePages/2; pn++ {
			if _, ok := f.pages[pn]; !ok && !seen[pn] {
				seen[pn] = true
				todo = append(todo, pn)
			}
		}
	}
	f.mu.Unlock()
	if len(todo) < 2 {
		return // one read is no faster ahead of time
	}
	sem := make(chan struct{}, maxPrefetch)
	var wg sync.WaitGroup
	for _, pn := range todo {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, _ = f.page(ctx, pn)
		}()
	}
	wg.Wait()
}
