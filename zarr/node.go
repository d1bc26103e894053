package zarr

import (
	"context"
	"errors"
	"fmt"

	"github.com/gozarr/gozarr/store"
)

// getOptional reads a metadata document of at most limit bytes, reporting a
// missing key as nil, nil. It asks the store for limit+1 bytes, so a larger
// document is refused (ErrTooLarge) without being read whole.
func getOptional(ctx context.Context, s store.Reader, key string, limit int64) ([]byte, error) {
	b, err := s.Get(ctx, key, store.OffsetLen(0, limit+1))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("metadata document %q: %w: more than %d bytes (raise the limit with zarr.WithMaxMetadataBytes)", key, ErrTooLarge, limit)
	}
	return b, nil
}

// nodeDocs are the metadata documents of one node: its v3 zarr.json, or
// its v2 document (.zarray or .zgroup) and .zattrs.
type nodeDocs struct {
	v3, v2, v2attrs []byte
}

// readNode reads the metadata documents of the node at p, which must be of
// type want: zarr.json first, then the v2 document (only the one of them
// WithZarrFormat names, when it is given). A missing node is
// ErrNodeNotFound, one of the other type ErrNodeType; a document of more than
// the metadata limit is ErrTooLarge.
func readNode(ctx context.Context, s store.Reader, p string, want NodeType, o options) (nodeDocs, error) {
	var d nodeDocs
	limit := o.metaLimit()
	var v3 []byte
	var err error
	if o.zarrFormat != 2 {
		if v3, err = getOptional(ctx, s, nodeKey(p, MetadataKey), limit); err != nil {
			return d, err
		}
	}
	if v3 == nil && o.zarrFormat == 3 {
		return d, fmt.Errorf("open %q: %w (no %s)", p, ErrNodeNotFound, MetadataKey)
	}
	if v3 != nil {
		nt, err := ParseNodeType(v3)
		if err != nil {
			return d, fmt.Errorf("open %q: %w", p, err)
		}
		if nt != want {
			return d, fmt.Errorf("open %q: %w: found %s, not %s", p, ErrNodeType, withArticle(nt), withArticle(want))
		}
		d.v3 = v3
		return d, nil
	}
	key, other := V2ArrayKey, V2GroupKey
	if want == NodeGroup {
		key, other = other, key
	}
	if d.v2, err = getOptional(ctx, s, nodeKey(p, key), limit); err != nil {
		return d, err
	}
	if d.v2 == nil {
		if _, err := s.Get(ctx, nodeKey(p, other), store.Suffix(0)); err == nil {
			return d, fmt.Errorf("open %q: %w: found a v2 %s, not %s", p, ErrNodeType, other, withArticle(want))
		}
		return d, fmt.Errorf("open %q: %w (no %s or %s)", p, ErrNodeNotFound, MetadataKey, key)
	}
	d.v2attrs, err = getOptional(ctx, s, nodeKey(p, V2AttrsKey), limit)
	return d, err
}
