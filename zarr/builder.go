package zarr

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/sharding"
)

// MetadataOption sets one part of the metadata NewArrayMetadata builds.
type MetadataOption func(*metaBuild) error

type metaBuild struct {
	fill       []byte
	fillJSON   json.RawMessage // FillValue, parsed once the data type is known
	filters    []codecs.Codec  // array -> array, before bytes
	endian     codecs.Endian
	compressor []codecs.Codec // bytes -> bytes, after bytes
	shards     []int          // shard shape (Shards)
	rectShards bool           // the rectilinear grid is of shards (RectilinearShards)
	indexEnd   bool
	attrs      map[string]any
	names      []*string
	rect       *RectilinearGrid // RectilinearChunks
}

// Compress appends bytes-to-bytes codecs (compressors, checksums) after
// the bytes codec, in order, each built by its package's typed constructor:
//
//	zs, err := codecs.NewZstd(3, false)
//	// ...
//	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeFloat32, chunks,
//		zarr.Compress(zs, codecs.NewCRC32C()))
func Compress(cs ...codecs.BytesToBytes) MetadataOption {
	return func(b *metaBuild) error {
		for _, c := range cs {
			if c == nil {
				return fmt.Errorf("%w: Compress: a nil codec", ErrInvalidMetadata)
			}
			b.compressor = append(b.compressor, c)
		}
		return nil
	}
}

// Filter appends array-to-array codecs (transpose, numcodecs filters)
// before the bytes codec.
func Filter(cs ...codecs.ArrayToArray) MetadataOption {
	return func(b *metaBuild) error {
		for _, c := range cs {
			if c == nil {
				return fmt.Errorf("%w: Filter: a nil codec", ErrInvalidMetadata)
			}
			b.filters = append(b.filters, c)
		}
		return nil
	}
}

// BigEndian stores elements big-endian (default little-endian).
func BigEndian() MetadataOption {
	return func(b *metaBuild) error { b.endian = codecs.BigEndian; return nil }
}

// Shards stores the array in shards of shardShape, each made of whole
// chunks of the shape given to NewArrayMetadata (which must divide it), as
// zarr-python's create_array(chunks=..., shards=...): chunks are what a read
// fetches and decodes, shards what one store write replaces. The filters,
// bytes codec and compressors apply to each chunk inside a shard; the shard
// index is little-endian with a crc32c checksum at the end of each shard, as
// zarr-python writes by default. In the metadata the chunk grid holds the
// shard shape and sharding_indexed the chunk shape.
func Shards(shardShape ...int) MetadataOption {
	return func(b *metaBuild) error { b.shards = slices.Clone(shardShape); return nil }
}

// IndexAtStart puts a sharded array's index at the start of each shard
// (with Shards or RectilinearShards).
func IndexAtStart() MetadataOption {
	return func(b *metaBuild) error { b.indexEnd = false; return nil }
}

// Fill sets the fill value: one element in memory representation
// (little-endian, the data type's size); for a variable-length type, its
// content (the string's UTF-8 or the bytes). Default: all zero bytes (""
// for variable-length types). FillValue takes a Go value instead.
func Fill(elem []byte) MetadataOption {
	return func(b *metaBuild) error { b.fill, b.fillJSON = slices.Clone(elem), nil; return nil }
}

// FillValue sets the fill value from a Go value of the array's kind: a
// bool, an integer (int, int8 ... uint64), a float (NaN and the
// infinities included), a complex number, or a string (a string data type,
// or a fill value as Zarr metadata spells it: "NaN", "0x7fc00000"). It is
// read as zarr-python reads the fill_value of metadata (dtype.ParseFill),
// so FillValue(math.NaN()) suits any float type; one that the data type
// cannot hold is an error of NewArrayMetadata. It replaces Fill.
func FillValue(v any) MetadataOption {
	return func(b *metaBuild) error {
		raw, err := fillJSON(v)
		if err != nil {
			return metaErr("fill_value", "%v", err)
		}
		b.fill, b.fillJSON = nil, raw
		return nil
	}
}

// fillJSON spells a Go fill value as Zarr metadata does.
func fillJSON(v any) (json.RawMessage, error) {
	float := func(f float64, bits int) string {
		switch {
		case math.IsNaN(f):
			return `"NaN"`
		case math.IsInf(f, 1):
			return `"Infinity"`
		case math.IsInf(f, -1):
			return `"-Infinity"`
		}
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	switch x := v.(type) {
	case float64:
		return json.RawMessage(float(x, 64)), nil
	case float32:
		return json.RawMessage(float(float64(x), 32)), nil
	case complex128:
		return json.RawMessage("[" + float(real(x), 64) + ", " + float(imag(x), 64) + "]"), nil
	case complex64:
		return json.RawMessage("[" + float(float64(real(x)), 32) + ", " + float(float64(imag(x)), 32) + "]"), nil
	case bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return json.Marshal(x)
	}
	return nil, fmt.Errorf("a Go %T is not a fill value (want a bool, integer, float, complex or string)", v)
}

// DimensionNames names the array's dimensions, one name each (Zarr v3
// "dimension_names", the dimensions xarray reads); "" leaves a dimension
// unnamed (null).
func DimensionNames(names ...string) MetadataOption {
	return func(b *metaBuild) error {
		b.names = make([]*string, len(names))
		for i, n := range names {
			if n != "" {
				b.names[i] = &n
			}
		}
		return nil
	}
}

// Attributes sets the user attributes.
func Attributes(attrs map[string]any) MetadataOption {
	return func(b *metaBuild) error { b.attrs = attrs; return nil }
}

// NewArrayMetadata builds the v3 metadata of a new array of shape and data
// type dt in chunks of shape chunks: the unit a read fetches and decodes,
// and, unless Shards groups them into shards, the unit a write replaces. It
// has the default chunk key encoding ("c/0/1"), fill value zero and the
// codecs the options name: filters, bytes, compressors, all inside
// sharding_indexed with Shards. The result is validated; pass it to
// CreateArray. For example, a float32 array of 4096² in 256²
// zstd-compressed chunks, stored in shards of 1024²:
//
//	zs, _ := codecs.NewZstd(3, false)
//	meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32, []int{256, 256},
//		zarr.Shards(1024, 1024), zarr.Compress(zs))
func NewArrayMetadata(shape []int, dt dtype.DataType, chunks []int, opts ...MetadataOption) (*ArrayMetadata, error) {
	b := metaBuild{endian: codecs.LittleEndian, indexEnd: true}
	for _, o := range opts {
		if err := o(&b); err != nil {
			return nil, err
		}
	}
	if b.fillJSON != nil {
		f, err := dtype.ParseFill(dt, b.fillJSON)
		if err != nil {
			return nil, metaErr("fill_value", "%s for %s: %v", b.fillJSON, dt, err)
		}
		b.fill = f
	}
	if b.fill == nil {
		b.fill = make([]byte, dt.Size())
		if dt.VarLen() { // the fill value's content: "" (zarr-python's default)
			b.fill = []byte{}
		}
	}
	bytesCodec, err := arrayToBytes(dt, b.endian)
	if err != nil {
		return nil, err
	}
	chain := slices.Concat(b.filters, []codecs.Codec{bytesCodec}, b.compressor)
	specs := make([]codecs.Spec, len(chain))
	for i, c := range chain {
		if specs[i], err = codecs.SpecOf(c); err != nil {
			return nil, err
		}
	}
	grid := chunks
	sharded := b.shards != nil || b.rectShards
	if sharded {
		if b.shards != nil && b.rect != nil {
			return nil, metaErr("chunk_grid", "Shards with a rectilinear grid (RectilinearShards gives the shards)")
		}
		if chunks == nil {
			return nil, metaErr("codecs", "sharded, but no chunk shape: NewArrayMetadata's chunks is the shape of the chunks inside each shard")
		}
		grid = b.shards
		loc := sharding.IndexEnd
		if !b.indexEnd {
			loc = sharding.IndexStart
		}
		index := []codecs.Spec{{Name: "bytes", Configuration: []byte(`{"endian":"little"}`)}, {Name: "crc32c"}}
		sc, err := sharding.New(chunks, specs, index, loc)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidMetadata, err)
		}
		spec, err := codecs.SpecOf(sc)
		if err != nil {
			return nil, err
		}
		specs = []codecs.Spec{spec}
	}
	meta := &ArrayMetadata{Shape: slices.Clone(shape), DataType: dt, ChunkShape: slices.Clone(grid),
		ChunkKeyEncoding: DefaultKeyEncoding(), FillValue: b.fill, Codecs: specs, Attributes: b.attrs, DimensionNames: b.names}
	if b.rect != nil {
		if grid != nil {
			return nil, metaErr("chunk_grid", "a chunk shape %v with RectilinearChunks (pass nil, or use RectilinearShards for shards of chunks of that shape)", grid)
		}
		meta.Rectilinear, meta.ChunkShape = b.rect, b.rect.MaxChunkShape()
	}
	if meta.Attributes == nil {
		meta.Attributes = map[string]any{}
	}
	if err := meta.Validate(); err != nil {
		return nil, err
	}
	resolved, err := codecs.NewChain(meta.Codecs, meta.ChunkRepr())
	if err == nil {
		var l *sharding.Layout
		if l, err = sharding.LayoutOf(resolved); err == nil && l != nil && meta.Rectilinear != nil {
			err = meta.Rectilinear.checkInner(l.ChunkShape())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMetadata, err)
	}
	return meta, nil
}
