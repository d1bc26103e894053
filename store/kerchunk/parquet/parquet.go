// Package parquet is a read-only gozarr store over kerchunk's Parquet
// references: the layout of fsspec's LazyReferenceMapper (kerchunk's
// refs_to_dataframe), a directory holding ".zmetadata" (JSON: "metadata",
// every Zarr metadata document by key, and "record_size") and, for each
// array, files "<array>/refs.<n>.parq" of record_size rows each: the
// chunks of the array in C order of its chunk grid, with columns path
// (optional string: the target URL), offset and size (int64) and raw
// (optional bytes: the value itself). A row with neither path nor raw is
// a missing chunk; size 0 with a path is the whole target.
//
// It lives in a module of its own so the core module does not depend on
// a Parquet reader (github.com/parquet-go/parquet-go). Targets resolve
// through a virtual.Resolver exactly as in store/kerchunk: only under the
// references' directory and the prefixes given with Allow.
package parquet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/lazy"
	"github.com/gozarr/gozarr/store/internal/listing"
	"github.com/gozarr/gozarr/store/virtual"
)

// Sentinel errors, wrapped with what failed.
var (
	// ErrInvalid reports references that are not valid: a .zmetadata that
	// is not the layout's, a Parquet file without the layout's columns or
	// with a column of the wrong type, a malformed row.
	ErrInvalid = errors.New("kerchunk parquet: invalid references")
	// ErrTooLarge reports references over a limit.
	ErrTooLarge = errors.New("kerchunk parquet: references over a limit")
)

// Limits.
const (
	// MaxMetadataBytes bounds .zmetadata.
	MaxMetadataBytes = 256 << 20
	// MaxFileBytes bounds one refs.N.parq file.
	MaxFileBytes = 1 << 30
	// MaxRecordSize bounds record_size.
	MaxRecordSize = 1 << 24
)

// Option configures Open.
type Option func(*config)

type config struct {
	location string
	vopts    []virtual.Option
}

// WithLocation names the location of the store the references are read
// from (as kerchunk.WithLocation): absolute URLs under the references'
// directory then resolve into it.
func WithLocation(location string) Option { return func(c *config) { c.location = location } }

// Allow adds prefixes under which targets are allowed (virtual.Allow).
func Allow(prefixes ...string) Option {
	return func(c *config) { c.vopts = append(c.vopts, virtual.Allow(prefixes...)) }
}

// WithResolverOptions passes options to virtual.New.
func WithResolverOptions(opts ...virtual.Option) Option {
	return func(c *config) { c.vopts = append(c.vopts, opts...) }
}

// Store is a read-only store over Parquet references. It implements
// store.Reader, store.Lister and store.Locator and is safe for concurrent
// use. Each refs.N.parq file is read once, on first use of a chunk in it.
type Store struct {
	src     store.Reader
	dir     string // key prefix of the references' directory in src
	meta    map[string][]byte
	keys    []string // metadata keys, sorted
	arrays  map[string]*array
	records int
	res     *virtual.Resolver
	id      string
}

// array is what the chunk keys of one array need.
type array struct {
	grid []int
	sep  string

	files lazy.Map[int, []row] // the rows of refs.N.parq by N, loaded once
}

type row struct {
	path      string
	hasPath   bool
	off, size int64
	raw       []byte
	hasRaw    bool
}

// Open reads the references at dir (a key prefix of st ending in "/", or
// "" for st's root).
func Open(ctx context.Context, st store.Reader, dir string, opts ...Option) (*Store, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if dir != "" && (!strings.HasSuffix(dir, "/") || store.ValidatePrefix(dir) != nil) {
		return nil, fmt.Errorf("%w: directory %q is not a key prefix ending in /", ErrInvalid, dir)
	}
	b, err := st.Get(ctx, dir+".zmetadata", store.OffsetLen(0, MaxMetadataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("kerchunk parquet: %w", err)
	}
	if len(b) > MaxMetadataBytes {
		return nil, fmt.Errorf("%w: .zmetadata over %d bytes", ErrTooLarge, MaxMetadataBytes)
	}
	var doc struct {
		Metadata   map[string]json.RawMessage `json:"metadata"`
		RecordSize *int                       `json:"record_size"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Metadata == nil || doc.RecordSize == nil {
		return nil, fmt.Errorf("%w: .zmetadata is not {\"metadata\": {...}, \"record_size\": n}: %v", ErrInvalid, err)
	}
	if *doc.RecordSize < 1 || *doc.RecordSize > MaxRecordSize {
		return nil, fmt.Errorf("%w: record_size %d is not in 1..%d", ErrInvalid, *doc.RecordSize, MaxRecordSize)
	}
	s := &Store{src: st, dir: dir, meta: map[string][]byte{}, arrays: map[string]*array{}, records: *doc.RecordSize,
		id: "kerchunk-parquet:" + store.IDOf(st) + "/" + dir}
	for k, raw := range doc.Metadata {
		if err := store.ValidateKey(k); err != nil {
			return nil, fmt.Errorf("%w: metadata key: %w", ErrInvalid, err)
		}
		v := []byte(raw)
		var str string
		if json.Unmarshal(raw, &str) == nil {
			v = []byte(str)
		}
		s.meta[k] = v
		s.keys = append(s.keys, k)
		if p, ok := strings.CutSuffix(k, ".zarray"); ok {
			a, err := parseArray(v)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			s.arrays[strings.TrimSuffix(p, "/")] = a
		}
	}
	slices.Sort(s.keys)
	loc := ""
	if c.location != "" {
		loc = strings.TrimSuffix(c.location, "/") + "/" + strings.TrimSuffix(dir, "/")
	}
	s.res, err = virtual.New(append([]virtual.Option{virtual.WithBase(loc, st, dir)}, c.vopts...)...)
	if err != nil {
		return nil, fmt.Errorf("kerchunk parquet: %w", err)
	}
	return s, nil
}

// parseArray reads the chunk grid of a Zarr v2 .zarray.
func parseArray(doc []byte) (*array, error) {
	var m struct {
		Shape  []int  `json:"shape"`
		Chunks []int  `json:"chunks"`
		Sep    string `json:"dimension_separator"`
	}
	if err := json.Unmarshal(doc, &m); err != nil || len(m.Shape) != len(m.Chunks) {
		return nil, fmt.Errorf("%w: .zarray without a shape and chunks of one rank: %v", ErrInvalid, err)
	}
	a := &array{sep: "."}
	if m.Sep == "/" {
		a.sep = "/"
	}
	total := 1
	for d := range m.Shape {
		if m.Shape[d] < 0 || m.Chunks[d] < 1 {
			return nil, fmt.Errorf("%w: shape %v, chunks %v", ErrInvalid, m.Shape, m.Chunks)
		}
		g := (m.Shape[d] + m.Chunks[d] - 1) / m.Chunks[d]
		if g > 0 && total > math.MaxInt/2/g {
			return nil, fmt.Errorf("%w: chunk grid of shape %v is too large", ErrTooLarge, m.Shape)
		}
		total *= max(g, 1)
		a.grid = append(a.grid, g)
	}
	return a, nil
}

// chunk returns the array and C-order index of a chunk key, or ok false.
func (s *Store) chunk(key string) (*array, string, int, bool) {
	return findChunk(s.arrays, key)
}

// findChunk returns the array of a chunk key, the array's path and the
// chunk's index in C order of the grid.
func findChunk(arrays map[string]*array, key string) (*array, string, int, bool) {
	for p, a := range arrays {
		rest, ok := strings.CutPrefix(key, p+"/")
		if p == "" {
			rest, ok = key, true
		}
		if !ok {
			continue
		}
		if idx, ok := a.index(rest); ok {
			return a, p, idx, true
		}
	}
	return nil, "", 0, false
}

// load returns rows of file n of array p, reading it once (a read that
// ends with ctx is tried again by the next load).
func (s *Store) load(ctx context.Context, a *array, p string, n int) ([]row, error) {
	return a.files.Get(n, func() ([]row, error) {
		key := s.dir + p + "/refs." + strconv.Itoa(n) + ".parq"
		if p == "" {
			key = s.dir + "refs." + strconv.Itoa(n) + ".parq"
		}
		b, err := s.src.Get(ctx, key, store.OffsetLen(0, MaxFileBytes+1))
		if err != nil {
			return nil, err
		}
		if len(b) > MaxFileBytes {
			return nil, fmt.Errorf("%w: %q over %d bytes", ErrTooLarge, key, MaxFileBytes)
		}
		rows, err := readRows(b, s.records)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		return rows, nil
	})
}

// readRows decodes the rows of one refs file, checking its columns' types.
func readRows(b []byte, maxRows int) (rows []row, err error) {
	defer func() {
		if r := recover(); r != nil { // the decoder's own checks on hostile files
			rows, err = nil, fmt.Errorf("%w: unreadable Parquet file: %v", ErrInvalid, r)
		}
	}()
	if err := checkFile(b, maxRows); err != nil {
		return nil, err
	}
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if f.NumRows() > int64(maxRows) {
		return nil, fmt.Errorf("%w: %d rows, record_size is %d", ErrInvalid, f.NumRows(), maxRows)
	}
	cols := map[string]int{}
	want := map[string]pq.Kind{"path": pq.ByteArray, "offset": pq.Int64, "size": pq.Int64, "raw": pq.ByteArray}
	for i, leaf := range f.Schema().Columns() {
		if len(leaf) != 1 {
			continue
		}
		name := leaf[0]
		k, ok := want[name]
		if !ok {
			continue
		}
		col, _ := f.Schema().Lookup(name)
		if got := col.Node.Type().Kind(); got != k {
			return nil, fmt.Errorf("%w: column %q is %v, want %v", ErrInvalid, name, got, k)
		}
		cols[name] = i
	}
	for _, name := range []string{"offset", "size"} {
		if _, ok := cols[name]; !ok {
			return nil, fmt.Errorf("%w: no column %q", ErrInvalid, name)
		}
	}
	rows = make([]row, 0, f.NumRows())
	for _, rg := range f.RowGroups() {
		r := pq.NewRowGroupReader(rg)
		buf := make([]pq.Row, 256)
		for {
			n, err := r.ReadRows(buf)
			for _, rr := range buf[:n] {
				var out row
				for _, v := range rr {
					switch c := v.Column(); {
					case c == cols["offset"]:
						out.off = v.Int64()
					case c == cols["size"]:
						out.size = v.Int64()
					case hasCol(cols, "path", c) && !v.IsNull():
						out.path, out.hasPath = string(v.ByteArray()), true
					case hasCol(cols, "raw", c) && !v.IsNull():
						out.raw, out.hasRaw = slices.Clone(v.ByteArray()), true
					}
				}
				if out.off < 0 || out.size < 0 || out.off > 1<<62 || out.size > 1<<62 {
					return nil, fmt.Errorf("%w: row %d: offset %d, size %d", ErrInvalid, len(rows), out.off, out.size)
				}
				rows = append(rows, out)
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			if n == 0 {
				break
			}
		}
	}
	return rows, nil
}

func hasCol(cols map[string]int, name string, c int) bool {
	i, ok := cols[name]
	return ok && i == c
}

// ref returns key's row, ok false for a key with no value.
func (s *Store) ref(ctx context.Context, key string) (row, bool, error) {
	a, p, idx, ok := s.chunk(key)
	if !ok {
		return row{}, false, nil
	}
	rows, err := s.load(ctx, a, p, idx/s.records)
	if errors.Is(err, store.ErrNotFound) {
		return row{}, false, nil
	}
	if err != nil {
		return row{}, false, err
	}
	i := idx % s.records
	if i >= len(rows) {
		return row{}, false, nil
	}
	r := rows[i]
	return r, r.hasPath || r.hasRaw, nil
}

func (r row) virtualRef() virtual.Ref {
	return virtual.Ref{URL: r.path, Offset: r.off, Length: r.size, Whole: r.size == 0}
}

// Locate implements store.Locator.
func (s *Store) Locate(ctx context.Context, key string) (store.Location, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Location{}, err
	}
	if v, ok := s.meta[key]; ok {
		return store.Location{Inline: v}, nil
	}
	r, ok, err := s.ref(ctx, key)
	if err != nil {
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: err}
	}
	if !ok {
		return store.Location{}, &store.KeyError{Op: "locate", Key: key, Err: store.ErrNotFound}
	}
	if r.hasRaw {
		return store.Location{Inline: r.raw}, nil
	}
	return s.res.LocateKey(ctx, key, r.virtualRef())
}

// Get implements store.Reader.
func (s *Store) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	loc, err := s.Locate(ctx, key)
	if err != nil {
		return nil, err
	}
	if loc.Store == nil {
		lo, hi, err := br.Resolve(int64(len(loc.Inline)))
		if err != nil {
			return nil, &store.KeyError{Op: "get", Key: key, Err: err}
		}
		return slices.Clone(loc.Inline[lo:hi]), nil
	}
	off, n, bounded := loc.Range.Bounded()
	if !bounded {
		return loc.Store.Get(ctx, loc.Key, br)
	}
	lo, hi, err := br.Resolve(n)
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	b, err := loc.Store.Get(ctx, loc.Key, store.OffsetLen(off+lo, hi-lo))
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	if int64(len(b)) != hi-lo {
		return nil, &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: the target ends before the reference's range", virtual.ErrInvalidRef)}
	}
	return b, nil
}

// StoreID implements store.Identifier.
func (s *Store) StoreID() string { return s.id }

// Capabilities implements store.CapabilityReporter: the store locates values.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{Locator: s, MaxConcurrency: store.CapabilitiesOf(s.src).MaxConcurrency}
}

// List implements store.Lister: the metadata keys (chunk keys are not
// listed; Zarr readers do not need them).
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return listing.Sorted(ctx, s.keys, prefix)
}

// ListDir implements store.Lister over the metadata keys.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	return listing.Dir(ctx, s.keys, dir)
}
