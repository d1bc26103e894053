package parquet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store"
)

// MaxJSONChunks bounds the chunk grids WriteJSON walks, all arrays
// together (store/kerchunk's default key limit).
const MaxJSONChunks = 1 << 24

// WriteJSON writes the references of s as one kerchunk version 1 JSON
// document, which store/kerchunk and fsspec read: the metadata documents
// of .zmetadata and every chunk's reference as its refs file has it
// ([url, offset, length], [url] for a whole file, "base64:..." for raw
// bytes; missing chunks left out). URLs are written as they are, not
// resolved: no target is opened, so the reader of the document applies
// its own allow-list. Chunk grids of more than MaxJSONChunks chunks in
// all are ErrTooLarge.
func (s *Store) WriteJSON(ctx context.Context, w io.Writer) error {
	total := 0
	for _, a := range s.arrays {
		n := 1
		for _, g := range a.grid {
			n *= max(g, 1)
		}
		if total += n; total > MaxJSONChunks {
			return fmt.Errorf("%w: more than %d chunks", ErrTooLarge, MaxJSONChunks)
		}
	}
	refs := make(map[string]any, len(s.meta))
	for k, v := range s.meta {
		refs[k] = string(v)
	}
	var kb []byte
	for p, a := range s.arrays {
		n := 1
		for _, g := range a.grid {
			n *= max(g, 1)
		}
		for f := 0; f*s.records < n; f++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			rows, err := s.load(ctx, a, p, f)
			if errors.Is(err, store.ErrNotFound) {
				continue // a missing refs file: no chunk of it
			}
			if err != nil {
				return err
			}
			for i, r := range rows {
				idx := f*s.records + i
				if idx >= n || !r.hasPath && !r.hasRaw {
					continue
				}
				kb = a.key(kb[:0], p, idx)
				switch {
				case r.hasRaw:
					refs[string(kb)] = "base64:" + base64.StdEncoding.EncodeToString(r.raw)
				case r.size == 0:
					refs[string(kb)] = []any{r.path}
				default:
					refs[string(kb)] = hdf5.ChunkRef{URL: r.path, Offset: uint64(r.off), Length: uint64(r.size)}
				}
			}
		}
	}
	return (&hdf5.Refs{Refs: refs}).WriteJSON(w)
}

// key appends the key of chunk idx (C order of the grid) of the array at
// p to b.
func (a *array) key(b []byte, p string, idx int) []byte {
	if p != "" {
		b = append(append(b, strings.TrimSuffix(p, "/")...), '/')
	}
	if len(a.grid) == 0 {
		return append(b, '0')
	}
	coords := make([]int, len(a.grid))
	for d := len(a.grid) - 1; d >= 0; d-- {
		g := max(a.grid[d], 1)
		coords[d] = idx % g
		idx /= g
	}
	for d, c := range coords {
		if d > 0 {
			b = append(b, a.sep...)
		}
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return b
}
