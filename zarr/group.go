package zarr

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	// cons is the consolidated metadata of the nodes below the group, nil
	// when there is none (or WithoutConsolidated).
	cons *consolidated
}

// Child is one node directly inside a group.
type Child struct {
	Name string   // last path element
	Path string   // node path in the store
	Type NodeType // NodeArray or NodeGroup
}

// OpenGroup opens the group at path in s (v3 zarr.json first, then v2
// .zgroup). A missing group is ErrNodeNotFound; an array is ErrNodeType.
//
// Consolidated metadata is used when the group has it: a v3 zarr.json's
// inline "consolidated_metadata", or a v2 .zmetadata beside .zgroup (read
// first, so a consolidated v2 group opens with that one document). The
// group then opens its children (OpenArray, OpenGroup, Children) from it
// with no further requests; a child it does not list is looked up in the
// store. WithoutConsolidated ignores it; WithVerifiedConsolidated checks it
// against the stored documents first (see VerifyConsolidated).
//
// Of the options WithMaxMetadataBytes, WithZarrFormat and the two above
// apply to a group; it passes WithMaxMetadataBytes on to the nodes opened
// through it.
func OpenGroup(ctx context.Context, s store.Reader, nodePath string, opts ...Option) (*Group, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	g := &Group{st: s, path: p, maxMeta: o.maxMeta}
	if o.zarrFormat != 2 {
		doc, err := getOptional(ctx, s, nodeKey(p, MetadataKey), o.metaLimit())
		if err != nil {
			return nil, err
		}
		if doc == nil && o.zarrFormat == 3 {
			return nil, fmt.Errorf("open %q: %w (no %s)", p, ErrNodeNotFound, MetadataKey)
		}
		if doc != nil {
			nt, err := ParseNodeType(doc)
			if err != nil {
				return nil, fmt.Errorf("open %q: %w", p, err)
			}
			if nt != NodeGroup {
				return nil, fmt.Errorf("open %q: %w: found %s, not a group", p, ErrNodeType, withArticle(nt))
			}
			if err := g.fromDocs(nodeDocs{v3: doc}, o.noCons); err != nil {
				return nil, err
			}
			return g, g.verifyIf(ctx, o)
		}
	}
	if !o.noCons {
		zm, err := getOptional(ctx, s, nodeKey(p, V2ConsolidatedKey), o.metaLimit())
		if err != nil {
			return nil, err
		}
		if zm != nil {
			c, err := parseConsolidatedV2(zm)
			if err != nil {
				return nil, fmt.Errorf("open group %q: %s: %w", p, V2ConsolidatedKey, err)
			}
			if root, ok := c.nodes[""]; ok && root.typ == NodeGroup {
				delete(c.nodes, "")
				if err := g.fromDocs(root.docs, true); err != nil {
					return nil, err
				}
				g.cons = c
				return g, g.verifyIf(ctx, o)
			}
		}
	}
	o2 := o
	o2.zarrFormat = 2
	d, err := readNode(ctx, s, p, NodeGroup, o2)
	if err != nil {
		return nil, err
	}
	if err := g.fromDocs(d, true); err != nil {
		return nil, err
	}
	return g, nil
}

// fromDocs sets the group's metadata from its documents, and its
// consolidated metadata from a v3 document's unless noCons.
func (g *Group) fromDocs(d nodeDocs, noCons bool) error {
	if d.v3 != nil {
		meta, err := ParseGroupMetadata(d.v3)
		if err != nil {
			return fmt.Errorf("open group %q: %w", g.path, err)
		}
		g.meta, g.format = meta, 3
		if !noCons {
			c, err := parseConsolidatedV3(meta.Extensions[ConsolidatedMetadataKey])
			if err != nil {
				return fmt.Errorf("open group %q: %s: %w", g.path, ConsolidatedMetadataKey, err)
			}
			g.cons = c
		}
		return nil
	}
	meta, err := ParseGroupMetadataV2(d.v2, d.v2attrs)
	if err != nil {
		return fmt.Errorf("open group %q: %w", g.path, err)
	}
	g.meta, g.format = meta, 2
	return nil
}

// CreateGroup writes a v3 group with the given attributes at path (nil
// means none) and returns it opened, as zarr-python's create_group does:
// missing parent groups (the root included) are written too; a path inside
// an array is ErrNodeType; a node already at path is ErrNodeExists unless
// Overwrite is given (of the options only Overwrite and
// WithMaxMetadataBytes apply), which deletes it and everything under it.
func CreateGroup(ctx context.Context, s store.Store, nodePath string, attrs map[string]any, opts ...Option) (*Group, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	if err := prepareCreate(ctx, s, p, 3, o); err != nil {
		return nil, err
	}
	return writeGroupV3(ctx, s, p, attrs)
}

// writeGroupV3 writes the zarr.json of a v3 group.
func writeGroupV3(ctx context.Context, s store.Store, p string, attrs map[string]any) (*Group, error) {
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
// name: from the consolidated metadata when the group has some (no
// requests), otherwise by listing the store, which must then be a
// store.Lister.
func (g *Group) Children(ctx context.Context) ([]Child, error) {
	if g.cons != nil {
		return g.cons.children(g.path), nil
	}
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
// options only WithMaxMetadataBytes and WithZarrFormat apply.
func NodeTypeAt(ctx context.Context, s store.Reader, nodePath string, opts ...Option) (NodeType, error) {
	p, err := cleanPath(nodePath)
	if err != nil {
		return "", err
	}
	o := collect(opts)
	if o.zarrFormat != 2 {
		doc, err := getOptional(ctx, s, nodeKey(p, MetadataKey), o.metaLimit())
		if err != nil {
			return "", err
		}
		if doc != nil {
			return ParseNodeType(doc)
		}
	}
	if o.zarrFormat == 3 {
		return "", fmt.Errorf("%q: %w", p, ErrNodeNotFound)
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

// OpenArray opens the array named name (a path relative to the group)
// inside the group: from the consolidated metadata when it lists the name,
// with no request, otherwise from the store. The group's
// WithMaxMetadataBytes applies unless opts set their own.
func (g *Group) OpenArray(ctx context.Context, name string, opts ...Option) (*Array, error) {
	if e, p, ok := g.lookup(name); ok {
		if e.typ != NodeArray {
			return nil, fmt.Errorf("open %q: %w: consolidated metadata lists a %s", p, ErrNodeType, e.typ)
		}
		return openArrayDocs(g.st, p, e.docs, append(g.inherit(), opts...))
	}
	return OpenArray(ctx, g.st, nodeKey(g.path, name), append(g.inherit(), opts...)...)
}

// OpenGroup opens the group named name inside the group, from the
// consolidated metadata when it lists the name (the child group then has
// the consolidated metadata of the nodes below it), otherwise from the
// store, with the group's WithMaxMetadataBytes unless opts set their own.
func (g *Group) OpenGroup(ctx context.Context, name string, opts ...Option) (*Group, error) {
	if e, p, ok := g.lookup(name); ok {
		if e.typ != NodeGroup {
			return nil, fmt.Errorf("open %q: %w: consolidated metadata lists a %s", p, ErrNodeType, e.typ)
		}
		o := collect(append(g.inherit(), opts...))
		c := &Group{st: g.st, path: p, maxMeta: o.maxMeta}
		if err := c.fromDocs(e.docs, true); err != nil {
			return nil, err
		}
		if !o.noCons {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, g.path), "/")
			c.cons = g.cons.sub(rel)
		}
		return c, nil
	}
	return OpenGroup(ctx, g.st, nodeKey(g.path, name), append(g.inherit(), opts...)...)
}

// CreateArray writes meta as a new v3 array named name (a path relative to
// the group) inside the group and returns it opened: CreateArray(ctx,
// store, path+"/"+name, meta, opts...), with the same parent-group,
// existing-node and Overwrite rules. A v2 group's children are created
// with CreateArrayV2 (a v3 array inside it is ErrNodeType). The group's
// consolidated metadata, if any, does not list the new array until it is
// consolidated again.
func (g *Group) CreateArray(ctx context.Context, name string, meta *ArrayMetadata, opts ...Option) (*Array, error) {
	st, err := g.writable(name, "CreateArrayV2")
	if err != nil {
		return nil, err
	}
	return CreateArray(ctx, st, nodeKey(g.path, name), meta, append(g.inherit(), opts...)...)
}

// CreateGroup writes a v3 group named name inside the group (attrs nil
// means none) and returns it opened, as the package's CreateGroup does for
// path+"/"+name; in a v2 group it is ErrNodeType (use CreateGroupV2).
func (g *Group) CreateGroup(ctx context.Context, name string, attrs map[string]any, opts ...Option) (*Group, error) {
	st, err := g.writable(name, "CreateGroupV2")
	if err != nil {
		return nil, err
	}
	return CreateGroup(ctx, st, nodeKey(g.path, name), attrs, append(g.inherit(), opts...)...)
}

// writable returns the group's store as a store.Store for a v3 child named
// name: ErrNodeType in a v2 group (naming v2create, the function to use),
// store.ErrReadOnly when the group was opened over a read-only store.
func (g *Group) writable(name, v2create string) (store.Store, error) {
	if g.format == 2 {
		return nil, fmt.Errorf("create %q in %q: %w: the group is zarr v2 (use %s)", name, g.path, ErrNodeType, v2create)
	}
	st, ok := g.st.(store.Store)
	if !ok {
		return nil, fmt.Errorf("create %q in %q: %w", name, g.path, store.ErrReadOnly)
	}
	return st, nil
}
