package parquet

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store"
)

// DefaultRecordSize is the record_size Write uses for 0: kerchunk's
// default (LazyReferenceMapper, refs_to_dataframe).
const DefaultRecordSize = 100000

// maxWriteChunks bounds the chunk grid of an array Write writes.
const maxWriteChunks = 1 << 24

// refRow is one row of a refs.N.parq file, with kerchunk's column types
// (fastparquet's: path a UTF-8 string, raw bytes, both optional).
type refRow struct {
	Path   *string `parquet:"path,optional,plain"`
	Offset int64   `parquet:"offset,plain"`
	Size   int64   `parquet:"size,plain"`
	Raw    []byte  `parquet:"raw,optional,plain"`
}

// Write writes kerchunk references in kerchunk's Parquet layout (what
// LazyReferenceMapper and refs_to_dataframe write, and Open reads) under
// dir of st (a key prefix ending in "/", or "" for st's root): .zmetadata
// with every metadata document (.zgroup, .zarray, .zattrs) and
// record_size, and for every array <array>/refs.N.parq, record_size rows
// per file in C order of the chunk grid: path, offset, size for a chunk
// in a file, raw for one kept inline, all null/zero for a missing chunk.
// refs is a kerchunk version 1 "refs" map as hdf5.Refs holds it: strings
// (a JSON document, or an inline value, "base64:..." or text) and
// hdf5.ChunkRef values. recordSize 0 means DefaultRecordSize.
func Write(ctx context.Context, st store.Writer, dir string, refs map[string]any, recordSize int) error {
	if recordSize == 0 {
		recordSize = DefaultRecordSize
	}
	if recordSize < 1 || recordSize > MaxRecordSize {
		return fmt.Errorf("%w: record_size %d is not in 1..%d", ErrInvalid, recordSize, MaxRecordSize)
	}
	if dir != "" && (!strings.HasSuffix(dir, "/") || store.ValidatePrefix(dir) != nil) {
		return fmt.Errorf("%w: directory %q is not a key prefix ending in /", ErrInvalid, dir)
	}
	meta := map[string]json.RawMessage{}
	arrays := map[string]*array{}
	for k, v := range refs {
		base := k[strings.LastIndex(k, "/")+1:]
		if base != ".zarray" && base != ".zattrs" && base != ".zgroup" {
			continue
		}
		s, ok := v.(string)
		if !ok || !json.Valid([]byte(s)) {
			return fmt.Errorf("%w: %q is not a JSON document", ErrInvalid, k)
		}
		meta[k] = json.RawMessage(s)
		if base == ".zarray" {
			a, err := parseArray([]byte(s))
			if err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
			arrays[strings.TrimSuffix(strings.TrimSuffix(k, ".zarray"), "/")] = a
		}
	}
	// Every chunk key goes to its array's row.
	rows := map[string][]refRow{}
	for k, v := range refs {
		if _, ok := meta[k]; ok {
			continue
		}
		a, p, idx, ok := findChunk(arrays, k)
		if !ok {
			return fmt.Errorf("%w: %q is neither metadata nor a chunk of an array", ErrInvalid, k)
		}
		r := refRow{}
		switch v := v.(type) {
		case hdf5.ChunkRef:
			if v.Offset > 1<<62 || v.Length > 1<<62 {
				return fmt.Errorf("%w: %q: offset %d, length %d", ErrInvalid, k, v.Offset, v.Length)
			}
			u := v.URL
			r.Path, r.Offset, r.Size = &u, int64(v.Offset), int64(v.Length)
		case string:
			if b64, ok := strings.CutPrefix(v, "base64:"); ok {
				b, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					return fmt.Errorf("%w: %q: %v", ErrInvalid, k, err)
				}
				r.Raw = b
			} else {
				r.Raw = []byte(v)
			}
			if r.Raw == nil {
				r.Raw = []byte{}
			}
		default:
			return fmt.Errorf("%w: %q: a value of type %T", ErrInvalid, k, v)
		}
		if rows[p] == nil {
			if a.chunks() > maxWriteChunks {
				return fmt.Errorf("%w: %q: %d chunks, at most %d", ErrTooLarge, p, a.chunks(), maxWriteChunks)
			}
			rows[p] = make([]refRow, a.chunks())
		}
		rows[p][idx] = r
	}
	for _, p := range slices.Sorted(maps.Keys(arrays)) {
		all := rows[p]
		if all == nil {
			if arrays[p].chunks() > maxWriteChunks {
				return fmt.Errorf("%w: %q: %d chunks, at most %d", ErrTooLarge, p, arrays[p].chunks(), maxWriteChunks)
			}
			all = make([]refRow, arrays[p].chunks())
		}
		for n := 0; n*recordSize < len(all); n++ {
			part := all[n*recordSize : min((n+1)*recordSize, len(all))]
			var buf bytes.Buffer
			// Version 1 data pages: fastparquet (kerchunk's reader) reads no
			// others.
			if err := pq.Write(&buf, part, pq.DataPageVersion(1)); err != nil {
				return fmt.Errorf("kerchunk parquet: writing %s refs %d: %w", p, n, err)
			}
			key := dir + "refs." + strconv.Itoa(n) + ".parq"
			if p != "" {
				key = dir + p + "/refs." + strconv.Itoa(n) + ".parq"
			}
			if err := st.Set(ctx, key, buf.Bytes()); err != nil {
				return err
			}
		}
	}
	doc, err := json.Marshal(struct {
		Metadata   map[string]json.RawMessage `json:"metadata"`
		RecordSize int                        `json:"record_size"`
	}{meta, recordSize})
	if err != nil {
		return err
	}
	return st.Set(ctx, dir+".zmetadata", doc)
}

// chunks returns the number of chunks of the array's grid.
func (a *array) chunks() int {
	n := 1
	for _, g := range a.grid {
		n *= g
	}
	return n
}

// index returns the C-order index of chunk key rest ("i.j.k"; "0" for a
// scalar array).
func (a *array) index(rest string) (int, bool) {
	parts := strings.Split(rest, a.sep)
	if len(a.grid) == 0 {
		return 0, rest == "0"
	}
	if len(parts) != len(a.grid) {
		return 0, false
	}
	idx := 0
	for d, s := range parts {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= a.grid[d] || strconv.Itoa(i) != s {
			return 0, false
		}
		idx = idx*a.grid[d] + i
	}
	return idx, true
}
