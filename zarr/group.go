package zarr

import (
	"context"
	"errors"
	"fmt"

	"github.com/gozarr/gozarr/store"
)

// Group is an open Zarr group (v3, or v2). It is safe for concurrent use.
type Group struct {
	st     store.Reader
	path   string
	meta   *GroupMetadata
	format int
	// maxMeta is WithMaxMetadataBytes as given to OpenGroup (0: not set),
	// passed on to the nodes opened through the group.
	maxMeta int64
}

// Child is one node directly inside a group.
type Child struct {
	Name string   // last path element
	Path string   // node path in the store
	Type NodeType // NodeArray or NodeGroup
}

// OpenGroup opens the group at path in s (v3 zarr.json first, then v2
// .zgroup). A missing group is ErrNodeNotFound; an array is ErrNodeType.
// Of the options only WithMaxMetadataBytes applies to a group; the group
// passes it on to the nodes opened through it.
func OpenGroup(ctx context.Context, s store.Reader, nodePath string, opts ...Option) (*Group, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	d, err := readNode(ctx, s, p, NodeGroup, o.metaLimit())
	if err != nil {
		return nil, err
	}
	if d.v3 != nil {
		meta, err := ParseGroupMetadata(d.v3)
		if err != nil {
			return nil, fmt.Errorf("open group %q: %w", p, err)
		}
		return &Group{st: s, path: p, meta: meta, format: 3, maxMeta: o.maxMeta}, nil
	}
	meta, err := ParseGroupMetadataV2(d.v2, d.v2attrs)
	if err != nil {
		return nil, fmt.Errorf("open group %q: %w", p, err)
	}
	return &Group{st: s, path: p, meta: meta, format: 2, maxMeta: o.maxMeta}, nil
}

// CreateGroup writes a v3 group with the given attributes at path (nil
// means none) and returns it opened.
func CreateGroup(ctx context.Context, s store.Store, nodePath string, attrs map[string]any) (*Group, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	meta := &GroupMetadata{Attributes: attrs}
	doc, err := meta.Marshal()
	if err != nil {
		return nil, err
	}
	if err := s.Set(ctx, nodeKey(p, MetadataKey), doc); err != nil {
		return nil, err
	}
	return &Group{st: s, path: p, meta: meta, format: 3}, nil
}

// Path returns the group's node path ("" for the root).
func (g *Group) Path() string { return g.path }

// ZarrFormat returns 3 or 2.
func (g *Group) ZarrFormat() int { return g.format }

// Attributes returns the group's user attributes.
func (g *Group) Attributes() map[string]any { return g.meta.Attributes }

// Children lists the arrays and groups directly inside the group, sorted by
// name. It needs a store that can list (store.Lister).
func (g *Group) Children(ctx context.Context) ([]Child, error) {
	l, ok := g.st.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("group %q: store cannot list children", g.path)
	}
	dir := ""
	if g.path != "" {
		dir = g.path + "/"
	}
	_, dirs, err := l.ListDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []Child
	for _, d := range dirs {
		name := d[:len(d)-1]
		p := nodeKey(g.path, name)
		nt, err := NodeTypeAt(ctx, g.st, p, g.inherit()...)
		if errors.Is(err, ErrNodeNotFound) {
			continue // a chunk directory, or a plain folder
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Child{Name: name, Path: p, Type: nt})
	}
	return out, nil
}

// NodeTypeAt reports whether an array or a group is at path, by its v3 or
// v2 metadata document; ErrNodeNotFound when neither is there. Of the
// options only WithMaxMetadataBytes applies.
func NodeTypeAt(ctx context.Context, s store.Reader, nodePath string, opts ...Option) (NodeType, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return "", err
	}
	o := collect(opts)
	doc, err := getOptional(ctx, s, nodeKey(p, MetadataKey), o.metaLimit())
	if err != nil {
		return "", err
	}
	if doc != nil {
		return ParseNodeType(doc)
	}
	for _, c := range []struct {
		key string
		t   NodeType
	}{{V2ArrayKey, NodeArray}, {V2GroupKey, NodeGroup}} {
		_, err := s.Get(ctx, nodeKey(p, c.key), store.Suffix(0))
		if err == nil {
			return c.t, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	return "", fmt.Errorf("%q: %w", p, ErrNodeNotFound)
}

// inherit returns the options the group passes on to the nodes opened
// through it: its metadata limit, when OpenGroup was given one.
func (g *Group) inherit() []Option {
	if g.maxMeta == 0 {
		return nil
	}
	return []Option{WithMaxMetadataBytes(g.maxMeta)}
}

// OpenArray opens the array named name inside the group. The group's
// WithMaxMetadataBytes applies unless opts set their own.
func (g *Group) OpenArray(ctx context.Context, name string, opts ...Option) (*Array, error) {
	return OpenArray(ctx, g.st, nodeKey(g.path, name), append(g.inherit(), opts...)...)
}

// OpenGroup opens the group named name inside the group, with the group's
// WithMaxMetadataBytes unless opts set their own.
func (g *Group) OpenGroup(ctx context.Context, name string, opts ...Option) (*Group, error) {
	return OpenGroup(ctx, g.st, nodeKey(g.path, name), append(g.inherit(), opts...)...)
}
