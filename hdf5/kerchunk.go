package hdf5

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
)

// RefsOptions configures References.
type RefsOptions struct {
	// URL is the location of the HDF5 file written in every reference
	// (default: the key the File was opened with).
	URL string
	// Root is the group whose subtree the references describe, as the
	// root of the Zarr hierarchy ("" or "/": the whole file; "/a/b": that
	// group, keys relative to it). A path naming no group is ErrNotFound.
	Root string
	// SkipUnsupported leaves out the datasets References cannot describe
	// (compound or variable-length data, scale-offset or n-bit filters,
	// chunks with different filter masks) and lists them in
	// Refs.Skipped; by default the first one is an error.
	SkipUnsupported bool
}

// Refs are kerchunk references (version 1) to the datasets of an HDF5
// file: Zarr v2 metadata documents and, for every chunk, the URL, offset
// and length of its bytes in the file.
type Refs struct {
	// Refs maps each Zarr key to a string (the JSON text of a .zgroup,
	// .zarray or .zattrs document, or an inline value "base64:...") or a
	// ChunkRef.
	Refs map[string]any
	// Skipped lists the datasets left out (with SkipUnsupported), each as
	// "path: reason".
	Skipped []string
}

// ChunkRef is a reference to a chunk: length bytes at offset of the file
// at URL. It marshals as kerchunk's [url, offset, length].
type ChunkRef struct {
	URL            string
	Offset, Length uint64
}

// MarshalJSON writes [url, offset, length].
func (c ChunkRef) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil), nil
}

func (c ChunkRef) appendJSON(buf []byte) []byte {
	buf = append(buf, '[')
	buf = appendJSONString(buf, c.URL)
	buf = append(buf, ',')
	buf = strconv.AppendUint(buf, c.Offset, 10)
	buf = append(buf, ',')
	buf = strconv.AppendUint(buf, c.Length, 10)
	return append(buf, ']')
}

// WriteJSON writes r as a kerchunk version 1 JSON document, keys sorted.
func (r *Refs) WriteJSON(w io.Writer) error {
	keys := make([]string, 0, len(r.Refs))
	for k := range r.Refs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := []byte(`{"version":1,"refs":{`)
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		switch v := r.Refs[k].(type) {
		case string:
			buf = appendJSONString(buf, v)
		case ChunkRef:
			buf = v.appendJSON(buf)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			buf = append(buf, b...)
		}
		if len(buf) > 1<<15 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, "}}\n"...)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// appendJSONString appends s as a JSON string (no HTML escaping).
func appendJSONString(buf []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(buf, strings.TrimSuffix(sb.String(), "\n")...)
}

// hiddenAttrs are the HDF5 / NetCDF-4 bookkeeping attributes that kerchunk
// (like h5netcdf) does not copy into .zattrs.
var hiddenAttrs = map[string]bool{
	"REFERENCE_LIST": true, "CLASS": true, "DIMENSION_LIST": true, "NAME": true,
	"_Netcdf4Dimid": true, "_Netcdf4Coordinates": true, "_nc3_strict": true, "_NCProperties": true,
	"_FillValue": true,
}

// netcdfPhony starts the NAME of a NetCDF-4 dimension scale that is a
// dimension only, not a variable.
const netcdfPhony = "This is a netCDF dimension but not a netCDF variable"

// References walks the file and makes kerchunk references to every group
// and dataset: .zgroup and .zattrs for groups; .zarray (Zarr v2: dtype,
// shape, chunks, fill_value, the filter pipeline as numcodecs filters)
// and .zattrs (the attributes, and _ARRAY_DIMENSIONS from the dimension
// scales, as xarray reads them) for datasets; and a reference per stored
// chunk (a contiguous dataset is one chunk; a compact dataset's data is
// inline). NetCDF-4 dimensions that are not variables are left out, as
// kerchunk does.
func References(ctx context.Context, f *File, opts RefsOptions) (*Refs, error) {
	url := opts.URL
	if url == "" {
		url = f.key
	}
	out := &Refs{Refs: map[string]any{}}
	root := path.Clean("/" + opts.Root)
	if root != "/" {
		n, err := f.Node(ctx, root)
		if err != nil {
			return nil, err
		}
		if n.Dataset != nil {
			return nil, fmt.Errorf("hdf5: %w: %s is a dataset, not a group", ErrNotFound, root)
		}
	}
	err := f.Walk(ctx, func(n *Node) error {
		rel, ok := strings.CutPrefix(n.Path, root)
		if !ok || (root != "/" && rel != "" && rel[0] != '/') {
			return nil // outside the subtree
		}
		key := strings.TrimPrefix(rel, "/")
		prefix := ""
		if key != "" {
			prefix = key + "/"
		}
		attrs := zattrs(n)
		if n.Dataset == nil {
			out.Refs[prefix+".zgroup"] = `{"zarr_format":2}`
			return setJSON(out.Refs, prefix+".zattrs", attrs)
		}
		ds := n.Dataset
		if ds.IsScale && ds.Layout == Contiguous && ds.Address == Unallocated {
			if a := n.Attr("NAME"); a != nil {
				if s, ok := a.Value.(string); ok && strings.HasPrefix(s, netcdfPhony) {
					return nil
				}
			}
		}
		err := datasetRefs(ctx, n, url, prefix, attrs, out.Refs)
		if err != nil {
			if opts.SkipUnsupported && (errors.Is(err, ErrUnsupported)) {
				out.Skipped = append(out.Skipped, n.Path+": "+err.Error())
				return nil
			}
			return fmt.Errorf("hdf5: %s: %w", n.Path, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setJSON stores the JSON text of v under key.
func setJSON(refs map[string]any, key string, v any) error {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	refs[key] = strings.TrimSuffix(sb.String(), "\n")
	return nil
}

// zattrs converts a node's attributes to JSON values as kerchunk does:
// one-element arrays become scalars, strings stay strings, attributes this
// package does not decode are left out.
func zattrs(n *Node) map[string]any {
	out := map[string]any{}
	for _, a := range n.Attrs {
		if hiddenAttrs[a.Name] || a.Value == nil {
			continue
		}
		v := jsonValue(a.Value)
		if s, ok := v.(string); ok && s == "DIMENSION_SCALE" {
			continue
		}
		out[a.Name] = v
	}
	return out
}

// jsonValue turns an attribute value into something encoding/json writes:
// one-element slices become scalars, and non-finite floats the strings
// "NaN", "Infinity" and "-Infinity" (as Zarr writes fill values).
func jsonValue(v any) any {
	switch x := v.(type) {
	case float64:
		return jsonFloat(x)
	case []float64:
		if len(x) == 1 {
			return jsonFloat(x[0])
		}
		out := make([]any, len(x))
		for i, f := range x {
			out[i] = jsonFloat(f)
		}
		return out
	case []int64:
		if len(x) == 1 {
			return x[0]
		}
	case []uint64:
		if len(x) == 1 {
			return x[0]
		}
	case []string:
		if len(x) == 1 {
			return x[0]
		}
	case [][]uint64:
		return nil
	}
	return v
}

func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// codecFor returns the numcodecs filter (Zarr v2 form) for an HDF5 filter.
func codecFor(fl Filter, t *Datatype) (map[string]any, error) {
	v := func(i int, def uint32) uint32 {
		if i < len(fl.Values) {
			return fl.Values[i]
		}
		return def
	}
	switch fl.ID {
	case FilterDeflate:
		return map[string]any{"id": "zlib", "level": v(0, 6)}, nil
	case FilterShuffle:
		return map[string]any{"id": "shuffle", "elementsize": t.Size}, nil
	case FilterFletcher32:
		return map[string]any{"id": "fletcher32"}, nil
	case FilterLZF:
		// HDF5's lzf filter writes no size header (imagecodecs' default).
		return map[string]any{"id": "imagecodecs_lzf", "header": false}, nil
	case FilterLZ4:
		return map[string]any{"id": "imagecodecs_lz4h5"}, nil
	case FilterBitshuffle:
		// cd_values: filter version, library version, element size, block
		// size, compression (0 none, 2 LZ4, 3 zstd).
		cname := map[uint32]string{0: "none", 2: "lz4", 3: "zstd"}[v(4, 0)]
		if cname == "" {
			return nil, unsupported("bitshuffle compression %d", v(4, 0))
		}
		return map[string]any{"id": "bitshuffle", "blocksize": v(3, 0), "cname": cname, "elementsize": t.Size}, nil
	case FilterZstd:
		return map[string]any{"id": "zstd", "level": v(0, 3)}, nil
	case FilterBlosc:
		cnames := []string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}
		c := v(6, 0)
		if int(c) >= len(cnames) {
			return nil, unsupported("blosc compressor %d", c)
		}
		return map[string]any{"id": "blosc", "cname": cnames[c], "clevel": v(4, 5), "shuffle": v(5, 1), "blocksize": 0}, nil
	case FilterSzip:
		// cd_values: options mask, pixels per block, and, set by the
		// library, bits per pixel and pixels per scanline. The chunk
		// starts with HDF5's 4-byte size header (imagecodecs' "header").
		if len(fl.Values) < 4 {
			return nil, unsupported("szip filter with %d parameters", len(fl.Values))
		}
		return map[string]any{"id": "imagecodecs_szip", "options_mask": v(0, 0), "pixels_per_block": v(1, 0),
			"bits_per_pixel": v(2, 0), "pixels_per_scanline": v(3, 0), "header": true}, nil
	}
	name := fl.Name
	if name == "" {
		name = fmt.Sprint(fl.ID)
	}
	return nil, unsupported("filter %s (%d)", name, fl.ID)
}

// fillJSON returns the Zarr v2 fill_value of a dataset.
func fillJSON(ds *Dataset) any {
	fill := ds.Fill
	if fill == nil {
		fill = make([]byte, ds.Type.Size)
	}
	if ds.Type.Class == ClassString {
		return base64.StdEncoding.EncodeToString(fill)
	}
	t := ds.Type
	if t.Class == ClassEnum && t.Base != nil {
		t = t.Base
	}
	var order binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		order = binary.BigEndian
	}
	switch {
	case t.Class == ClassFloat && t.Size == 4:
		return jsonFloat(float64(math.Float32frombits(order.Uint32(fill))))
	case t.Class == ClassFloat && t.Size == 8:
		return jsonFloat(math.Float64frombits(order.Uint64(fill)))
	case t.Class == ClassFloat && t.Size == 2:
		return jsonFloat(dtype.Float16(order.Uint16(fill)).Float64())
	case t.Class == ClassInteger:
		var u uint64
		switch t.Size {
		case 1:
			u = uint64(fill[0])
		case 2:
			u = uint64(order.Uint16(fill))
		case 4:
			u = uint64(order.Uint32(fill))
		case 8:
			u = order.Uint64(fill)
		}
		if t.Signed {
			shift := 64 - 8*uint(t.Size)
			return int64(u<<shift) >> shift
		}
		return u
	}
	return nil
}

// dimNames returns _ARRAY_DIMENSIONS for a dataset: the names of its
// dimension scales, its own name for a scale, phony_dim_N otherwise.
func dimNames(n *Node) []string {
	ds := n.Dataset
	out := make([]string, len(ds.Shape))
	for i := range out {
		switch {
		case i < len(ds.Dims) && ds.Dims[i] != "":
			out[i] = path.Base(ds.Dims[i])
		case ds.IsScale:
			out[i] = path.Base(n.Path)
		default:
			out[i] = fmt.Sprintf("phony_dim_%d", i)
		}
	}
	return out
}

// datasetRefs adds the .zarray, .zattrs and chunk references of a dataset.
func datasetRefs(ctx context.Context, n *Node, url, prefix string, attrs map[string]any, refs map[string]any) error {
	ds := n.Dataset
	descr, err := ds.Type.NumpyDescr()
	if err != nil {
		return err
	}
	shape := ds.Shape
	if shape == nil {
		shape = []uint64{}
	}
	chunks := make([]uint64, len(shape))
	for i, s := range shape {
		chunks[i] = max(s, 1) // Zarr chunks are never empty
	}
	if ds.Layout == Chunked {
		chunks = ds.ChunkShape
	}
	var filters []any
	type ref struct {
		key  string
		addr uint64
		size uint64
		mask uint32
		// inline is the value written instead of a reference (a raw
		// chunk re-coded, see inlineAmbiguous).
		inline string
	}
	var list []ref
	var kb []byte
	chunkKey := func(off []uint64) string {
		if len(off) == 0 {
			return prefix + "0"
		}
		kb = append(kb[:0], prefix...)
		for i, o := range off {
			if i > 0 {
				kb = append(kb, '.')
			}
			kb = strconv.AppendUint(kb, o/chunks[i], 10)
		}
		return string(kb)
	}
	zeros := make([]uint64, len(shape))
	var inline string
	switch ds.Layout {
	case Compact:
		need := uint64(ds.Type.Size)
		for _, s := range shape {
			need *= s
		}
		inline = "base64:" + base64.StdEncoding.EncodeToString(ds.CompactData[:need])
	case Contiguous:
		if len(ds.Filters) > 0 {
			return errorf("a contiguous dataset with filters")
		}
		if ds.Address != Unallocated {
			list = append(list, ref{key: chunkKey(zeros), addr: ds.Address, size: ds.Size})
		}
	case Chunked:
		err := ds.chunks(ctx, func(c Chunk) error {
			list = append(list, ref{key: chunkKey(c.Offset), addr: c.Address, size: c.Size, mask: c.FilterMask})
			return nil
		})
		if err != nil {
			return err
		}
	default:
		return unsupported("%s layout", ds.Layout)
	}
	// Chunks whose filters were skipped: the same mask for all of them
	// drops those filters (as kerchunk does). Masks that differ cannot be
	// said in Zarr metadata, but for szip (an optional filter HDF5 skips
	// for the chunks it cannot shrink): its codec then tells raw chunks
	// from coded ones (optionalSzip).
	all, some := ^uint32(0), uint32(0)
	for _, r := range list {
		all &= r.mask
		some |= r.mask
	}
	if len(list) == 0 {
		all = 0
	}
	varying := some &^ all
	opt := -1 // the index of the optional szip filter
	if varying != 0 {
		i, err := optionalSzip(ds, varying, all)
		if err != nil {
			return err
		}
		opt = i
	}
	for i, fl := range ds.Filters {
		if i < 32 && all&(1<<i) != 0 {
			continue
		}
		c, err := codecFor(fl, ds.Type)
		if err != nil {
			return err
		}
		if i == opt {
			c["optional"] = true
		}
		filters = append(filters, c)
	}
	if opt >= 0 {
		for i, r := range list {
			if r.mask&(1<<opt) == 0 {
				continue
			}
			v, err := recodeAmbiguous(ctx, ds, opt, all, r.addr, r.size)
			if err != nil {
				return fmt.Errorf("the chunk %s: %w", r.key, err)
			}
			list[i].inline = v
		}
	}
	// A last blosc or zstd filter is the compressor (the same pipeline in
	// Zarr v2, and readers that know these ids only as compressors, such
	// as gozarr's v2 metadata, read it).
	var compressor any
	if n := len(filters); n > 0 {
		if id := filters[n-1].(map[string]any)["id"]; id == "blosc" || id == "zstd" {
			compressor, filters = filters[n-1], filters[:n-1]
			if len(filters) == 0 {
				filters = nil
			}
		}
	}
	zarray := map[string]any{
		"zarr_format": 2,
		"shape":       shape,
		"chunks":      chunks,
		"dtype":       descr,
		"fill_value":  fillJSON(ds),
		"order":       "C",
		"compressor":  compressor,
		"filters":     filters,
	}
	if err := setJSON(refs, prefix+".zarray", zarray); err != nil {
		return err
	}
	attrs["_ARRAY_DIMENSIONS"] = dimNames(n)
	if err := setJSON(refs, prefix+".zattrs", attrs); err != nil {
		return err
	}
	if inline != "" {
		refs[chunkKey(zeros)] = inline
	}
	for _, r := range list {
		if _, dup := refs[r.key]; dup {
			return errorf("two chunks at %s", r.key)
		}
		if r.inline != "" {
			refs[r.key] = r.inline
			continue
		}
		refs[r.key] = ChunkRef{url, r.addr, r.size}
	}
	return nil
}

// optionalSzip returns the index of the szip filter of ds when varying
// (the filter-mask bits that differ between its chunks; dropped: the bits
// all of them have) is that filter's bit alone, and the chunks stored
// without it can be told from coded ones by the codec's "optional" rule:
// the filters before it keep sizes exact (shuffle, fletcher32), the ones
// after it keep the start of the chunk (fletcher32). Anything else is
// ErrUnsupported.
func optionalSzip(ds *Dataset, varying, dropped uint32) (int, error) {
	i := 0
	for i < 32 && varying != 1<<i {
		i++
	}
	if i == 32 || i >= len(ds.Filters) || ds.Filters[i].ID != FilterSzip {
		return -1, unsupported("chunks with different filter masks (bits %#x differ)", varying)
	}
	for j, fl := range ds.Filters {
		if j == i || j < 32 && dropped&(1<<j) != 0 {
			continue
		}
		if fl.ID != FilterFletcher32 && (j > i || fl.ID != FilterShuffle) {
			return -1, unsupported("szip skipped for some chunks, with filter %d %s it", fl.ID, map[bool]string{true: "after", false: "before"}[j > i])
		}
	}
	return i, nil
}

// recodeAmbiguous returns "" for a chunk of ds stored without its
// optional szip filter (index opt) that the codec's rule tells from a coded
// one, and for one that starts with the 4 bytes the rule takes for a size
// header, its bytes szip-coded as an inline value ("base64:..."), or
// ErrUnsupported when filters follow szip.
func recodeAmbiguous(ctx context.Context, ds *Dataset, opt int, dropped uint32, addr, size uint64) (string, error) {
	f := ds.f
	n, err := ds.chunkBytes()
	if err != nil {
		return "", err
	}
	after := false
	for j, fl := range ds.Filters {
		if j < 32 && dropped&(1<<j) != 0 {
			continue
		}
		if j < opt && fl.ID == FilterFletcher32 {
			n += 4
		}
		after = after || j > opt
	}
	if size < 4 {
		return "", nil
	}
	head, err := f.r.Get(ctx, f.key, store.OffsetLen(int64(f.base+addr), 4))
	if err != nil {
		return "", err
	}
	if len(head) < 4 {
		return "", errorf("%d bytes at %d: the file ends early", 4, addr)
	}
	if uint64(binary.LittleEndian.Uint32(head)) != n {
		return "", nil
	}
	if after || size != n {
		return "", unsupported("stored without szip, it starts with the bytes of an szip size header")
	}
	raw, err := f.r.Get(ctx, f.key, store.OffsetLen(int64(f.base+addr), int64(n)))
	if err != nil {
		return "", err
	}
	if uint64(len(raw)) != n {
		return "", errorf("%d bytes at %d: the file ends early", n, addr)
	}
	v := ds.Filters[opt].Values
	c, err := numcodecs.NewSzip(int(v[0]), int(v[1]), int(v[2]), int(v[3]), true)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	b, err := c.Encode(nil, raw)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b), nil
}
