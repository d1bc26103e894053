package zarr

import (
	"context"
	"errors"
	"fmt"

	"github.com/gozarr/gozarr/store"
)

// getOptional reads a whole value, reporting a missing key as nil, nil.
func getOptional(ctx context.Context, s store.Reader, key string) ([]byte, error) {
	b, err := s.Get(ctx, key, store.Full())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

// nodeDocs are the metadata documents of one node: its v3 zarr.json, or
// its v2 document (.zarray or .zgroup) and .zattrs.
type nodeDocs struct {
	v3, v2, v2attrs []byte
}

// readNode reads the metadata documents of the node at p, which must be of
// type want: zarr.json first, then the v2 document. A missing node is
// ErrNodeNotFound, one of the other type ErrNodeType.
func readNode(ctx context.Context, s store.Reader, p string, want NodeType) (nodeDocs, error) {
	var d nodeDocs
	v3, err := getOptional(ctx, s, nodeKey(p, MetadataKey))
	if err != nil {
		return d, err
	}
	if v3 != nil {
		nt, err := ParseNodeType(v3)
		if err != nil {
			return d, fmt.Errorf("open %q: %w", p, err)
		}
		if nt != want {
			return d, fmt.Errorf("open %q: %w: found a %s, not a %s", p, ErrNodeType, nt, want)
		}
		d.v3 = v3
		return d, nil
	}
	key, other := V2ArrayKey, V2GroupKey
	if want == NodeGroup {
		key, other = other, key
	}
	if d.v2, err = getOptional(ctx, s, nodeKey(p, key)); err != nil {
		return d, err
	}
	if d.v2 == nil {
		if _, err := s.Get(ctx, nodeKey(p, other), store.Suffix(0)); err == nil {
			return d, fmt.Errorf("open %q: %w: found a v2 %s, not a %s", p, ErrNodeType, other, want)
		}
		return d, fmt.Errorf("open %q: %w (no %s or %s)", p, ErrNodeNotFound, MetadataKey, key)
	}
	d.v2attrs, err = getOptional(ctx, s, nodeKey(p, V2AttrsKey))
	return d, err
}
