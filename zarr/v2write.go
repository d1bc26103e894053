package zarr

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
)

// NewNumcodec returns the numcodecs object {"id": id, ...config} of a v2
// filter or compressor, for ArrayMetadataV2: NewNumcodec("zstd",
// map[string]any{"level": 3}), NewNumcodec("blosc", map[string]any{"cname":
// "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}). config must not hold
// "id".
func NewNumcodec(id string, config map[string]any) (Numcodec, error) {
	if id == "" {
		return Numcodec{}, metaErr("codec", "empty id")
	}
	if _, ok := config["id"]; ok {
		return Numcodec{}, metaErr("codec", "%s: configuration holds \"id\"", id)
	}
	obj := make(map[string]json.RawMessage, len(config)+1)
	for k, v := range config {
		b, err := json.Marshal(v)
		if err != nil {
			return Numcodec{}, metaErr("codec", "%s: %s: %v", id, k, err)
		}
		obj[k] = b
	}
	obj["id"], _ = json.Marshal(id)
	b, err := marshalSorted(obj)
	if err != nil {
		return Numcodec{}, err
	}
	return Numcodec{ID: id, Object: b}, nil
}

// prepareV2 fills the derived fields of v2 metadata for writing: DType
// from DataType and BigEndian when DType is empty (or DataType from DType
// otherwise), order "C" and separator "." when unset.
func prepareV2(m *ArrayMetadataV2) error {
	if m.DType == "" {
		if !m.DataType.Valid() {
			return metaErr("dtype", "missing (set DType or DataType)")
		}
		m.DType = m.DataType.NumpyDescr()
		if m.BigEndian && m.DataType.SwapUnit() > 1 {
			m.DType = ">" + strings.TrimLeft(m.DType, "<|")
		}
	} else if isObjectDType(m.DType) {
		if !m.DataType.VarLen() {
			return metaErr("dtype", "%q needs DataType dtype.TypeVarString or TypeVarBytes", m.DType)
		}
	} else {
		d, big, err := dtype.ParseNumpy(m.DType)
		if err != nil {
			return fmt.Errorf("%w: dtype: %w", ErrUnsupported, err)
		}
		m.DataType, m.BigEndian = d, big
	}
	if m.Order == "" {
		m.Order = "C"
	}
	if err := prepareVarV2(m); err != nil {
		return err
	}
	if m.DimensionSeparator == "" {
		m.DimensionSeparator = "."
	}
	return nil
}

// CreateArrayV2 writes meta as a new Zarr v2 array at path: its .zarray
// (as zarr-python writes it) and its .zattrs, and returns it opened.
// meta needs Shape, Chunks and DType (a NumPy dtype such as "<f4", ">i8",
// "<U3", "<M8[ns]") or DataType (and BigEndian); Order ("C", "F"),
// DimensionSeparator ("." or "/"), FillValue (nil: null), Compressor and
// Filters are as in the document (NewNumcodec makes them). meta is
// completed in place. As CreateArray, it writes missing parent groups (v2
// .zgroup), refuses a path inside an array, and refuses a node already at
// path unless Overwrite is given (which deletes it first).
func CreateArrayV2(ctx context.Context, s store.Store, nodePath string, meta *ArrayMetadataV2, opts ...Option) (*Array, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, metaErr("array", "nil metadata")
	}
	if err := prepareV2(meta); err != nil {
		return nil, err
	}
	v3, err := meta.ToV3()
	if err != nil {
		return nil, err
	}
	a, err := newArray(s, p, v3, 2, opts)
	if err != nil {
		return nil, err
	}
	if err := a.checkEncode(); err != nil {
		return nil, fmt.Errorf("create %q: %w", p, err)
	}
	doc, err := meta.Marshal()
	if err != nil {
		return nil, err
	}
	attrs, err := MarshalAttributes(meta.Attributes)
	if err != nil {
		return nil, err
	}
	if err := prepareCreate(ctx, s, p, 2, a.opts); err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, V2ArrayKey), doc); err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, V2AttrsKey), attrs); err != nil {
		return nil, err
	}
	return a, nil
}

// CreateGroupV2 writes a Zarr v2 group (.zgroup and .zattrs) with the given
// attributes at path (nil means none) and returns it opened. Parents and
// an existing node are handled as by CreateGroup.
func CreateGroupV2(ctx context.Context, s store.Store, nodePath string, attrs map[string]any, opts ...Option) (*Group, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	if err := prepareCreate(ctx, s, p, 2, collect(opts)); err != nil {
		return nil, err
	}
	return writeGroupV2(ctx, s, p, attrs)
}

// writeGroupV2 writes the .zgroup and .zattrs of a v2 group.
func writeGroupV2(ctx context.Context, s store.Store, p string, attrs map[string]any) (*Group, error) {
	doc, err := MarshalAttributes(attrs)
	if err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, V2GroupKey), []byte("{\n  \"zarr_format\": 2\n}")); err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, V2AttrsKey), doc); err != nil {
		return nil, err
	}
	return &Group{st: s, path: p, meta: &GroupMetadata{Attributes: attrsOrEmpty(attrs)}, format: 2}, nil
}
