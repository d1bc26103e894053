package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// V2ConsolidatedKey names a v2 group's consolidated metadata document
// (zarr-python's and xarray's .zmetadata).
const V2ConsolidatedKey = ".zmetadata"

// ErrStaleConsolidated reports consolidated metadata that does not match
// the nodes stored below its group. The error is a *StaleError.
var ErrStaleConsolidated = errors.New("consolidated metadata is stale")

// StaleError lists how a group's consolidated metadata differs from the
// stored nodes. It wraps ErrStaleConsolidated.
type StaleError struct {
	// Group is the group's path.
	Group string
	// Changed lists nodes whose stored documents differ from the
	// consolidated ones; Gone nodes the consolidated metadata lists that
	// are no longer stored; Unlisted stored nodes it does not list (found
	// only on a store that can list). Paths are relative to the group.
	Changed, Gone, Unlisted []string
}

// Error describes the differences, a few paths of each kind.
func (e *StaleError) Error() string {
	var parts []string
	for _, k := range []struct {
		what  string
		paths []string
	}{{"changed", e.Changed}, {"gone", e.Gone}, {"not listed", e.Unlisted}} {
		if len(k.paths) == 0 {
			continue
		}
		show := k.paths
		more := ""
		if len(show) > 5 {
			show, more = show[:5], fmt.Sprintf(" and %d more", len(k.paths)-5)
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s%s)", len(k.paths), k.what, strings.Join(show, ", "), more))
	}
	return fmt.Sprintf("group %q: %v: %s", e.Group, ErrStaleConsolidated, strings.Join(parts, "; "))
}

// Unwrap returns ErrStaleConsolidated.
func (e *StaleError) Unwrap() error { return ErrStaleConsolidated }

// WithZarrFormat makes OpenArray, OpenGroup and NodeTypeAt look only for
// the documents of that Zarr format (2 or 3), saving the request that
// looks for the other: a v2 group opened WithZarrFormat(2) reads its
// .zmetadata alone when it has one. Other values keep the default (v3,
// then v2).
func WithZarrFormat(format int) Option {
	return func(o *options) {
		if format == 2 || format == 3 {
			o.zarrFormat = format
		} else {
			o.zarrFormat = 0
		}
	}
}

// WithoutConsolidated makes OpenGroup ignore consolidated metadata and
// read every child's documents from the store.
func WithoutConsolidated() Option { return func(o *options) { o.noCons = true } }

// WithVerifiedConsolidated makes OpenGroup check consolidated metadata
// against the stored documents (Group.VerifyConsolidated) and fail with a
// *StaleError when they differ, at the cost of the requests that reads
// them.
func WithVerifiedConsolidated() Option { return func(o *options) { o.verifyCons = true } }

// consolidated is the metadata of the nodes below a group, by path
// relative to the group.
type consolidated struct {
	format int
	nodes  map[string]consEntry
}

type consEntry struct {
	typ  NodeType
	docs nodeDocs
}

// parseConsolidatedV3 reads a v3 group's "consolidated_metadata" field:
// {"kind": "inline", "must_understand": false, "metadata": {path: doc}}.
// An absent or null field, or a kind other than "inline", is no
// consolidated metadata (nil).
func parseConsolidatedV3(raw json.RawMessage) (*consolidated, error) {
	if raw == nil || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var c struct {
		Kind     string                     `json:"kind"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, metaErr(ConsolidatedMetadataKey, "want {\"kind\", \"metadata\"}: %v", err)
	}
	if c.Kind != "inline" || c.Metadata == nil {
		return nil, nil
	}
	out := &consolidated{format: 3, nodes: make(map[string]consEntry, len(c.Metadata))}
	for k, doc := range c.Metadata {
		p, err := consPath(k)
		if err != nil {
			return nil, err
		}
		t, err := ParseNodeType(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidMetadata, k, err)
		}
		out.nodes[p] = consEntry{typ: t, docs: nodeDocs{v3: doc}}
	}
	return out, nil
}

// parseConsolidatedV2 reads a .zmetadata document: {"metadata": {key:
// doc}, "zarr_consolidated_format": 1}, keys being ".zgroup", ".zattrs",
// "a/.zarray", "a/.zattrs", ... The group's own documents are the entry of
// path "".
func parseConsolidatedV2(doc []byte) (*consolidated, error) {
	var c struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Format   *int                       `json:"zarr_consolidated_format"`
	}
	if err := json.Unmarshal(doc, &c); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidMetadata, err)
	}
	if c.Format == nil || *c.Format != 1 {
		return nil, fmt.Errorf("%w: zarr_consolidated_format: want 1", ErrUnsupported)
	}
	byDir := map[string]*nodeDocs{}
	types := map[string]NodeType{}
	for k, v := range c.Metadata {
		dir, base := "", k
		if i := strings.LastIndexByte(k, '/'); i >= 0 {
			dir, base = k[:i], k[i+1:]
		}
		if base != V2ArrayKey && base != V2GroupKey && base != V2AttrsKey {
			continue
		}
		if dir != "" {
			p, err := consPath(dir)
			if err != nil {
				return nil, err
			}
			dir = p
		}
		d := byDir[dir]
		if d == nil {
			d = &nodeDocs{}
			byDir[dir] = d
		}
		switch base {
		case V2AttrsKey:
			d.v2attrs = v
		default:
			if d.v2 != nil {
				return nil, fmt.Errorf("%w: %s: both %s and %s at %q", ErrInvalidMetadata, V2ConsolidatedKey, V2ArrayKey, V2GroupKey, dir)
			}
			d.v2 = v
			types[dir] = map[string]NodeType{V2ArrayKey: NodeArray, V2GroupKey: NodeGroup}[base]
		}
	}
	out := &consolidated{format: 2, nodes: make(map[string]consEntry, len(types))}
	for dir, t := range types {
		out.nodes[dir] = consEntry{typ: t, docs: *byDir[dir]}
	}
	return out, nil
}

// consPath checks a relative node path of consolidated metadata.
func consPath(k string) (string, error) {
	p, err := cleanPath(k)
	if err != nil || p == "" || p != k {
		return "", fmt.Errorf("%w: consolidated metadata: bad node path %q", ErrInvalidMetadata, k)
	}
	return p, nil
}

// sub returns the consolidated metadata below the relative path rel.
func (c *consolidated) sub(rel string) *consolidated {
	out := &consolidated{format: c.format, nodes: map[string]consEntry{}}
	for k, e := range c.nodes {
		if r, ok := strings.CutPrefix(k, rel+"/"); ok {
			out.nodes[r] = e
		}
	}
	return out
}

// children returns the direct children, sorted by name.
func (c *consolidated) children(groupPath string) []Child {
	var out []Child
	for k, e := range c.nodes {
		if !strings.Contains(k, "/") {
			out = append(out, Child{Name: k, Path: nodeKey(groupPath, k), Type: e.typ})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookup finds name (a path relative to the group) in the group's
// consolidated metadata and returns the entry and the node's store path.
func (g *Group) lookup(name string) (consEntry, string, bool) {
	if g.cons == nil {
		return consEntry{}, "", false
	}
	rel, err := cleanPath(name)
	if err != nil || rel == "" {
		return consEntry{}, "", false
	}
	e, ok := g.cons.nodes[rel]
	return e, nodeKey(g.path, rel), ok
}

// Consolidated reports whether the group opens its children from
// consolidated metadata, and how many nodes below it that metadata lists.
func (g *Group) Consolidated() (ok bool, nodes int) {
	if g.cons == nil {
		return false, 0
	}
	return true, len(g.cons.nodes)
}

func (g *Group) verifyIf(ctx context.Context, o options) error {
	if !o.verifyCons || g.cons == nil {
		return nil
	}
	return g.VerifyConsolidated(ctx)
}

// VerifyConsolidated compares the group's consolidated metadata with the
// documents stored for each node it lists (one read per document) and,
// when the store can list, looks for stored nodes it does not list. It
// returns nil when they agree (documents compare as JSON values; a v3
// group's own consolidated_metadata field is not compared), a *StaleError
// wrapping ErrStaleConsolidated when they do not, and nil for a group
// without consolidated metadata.
func (g *Group) VerifyConsolidated(ctx context.Context) error {
	if g.cons == nil {
		return nil
	}
	o := collect(g.inherit())
	o.zarrFormat = g.cons.format
	se := &StaleError{Group: g.path}
	for rel, e := range g.cons.nodes {
		d, err := readNode(ctx, g.st, nodeKey(g.path, rel), e.typ, o)
		if errors.Is(err, ErrNodeNotFound) || errors.Is(err, ErrNodeType) {
			se.Gone = append(se.Gone, rel)
			continue
		}
		if err != nil {
			return err
		}
		if !sameDocs(e.docs, d) {
			se.Changed = append(se.Changed, rel)
		}
	}
	if l, ok := g.st.(store.Lister); ok {
		stored, err := walkNodes(ctx, g.st, l, g.path, o)
		if err != nil {
			return err
		}
		for _, n := range stored {
			if _, ok := g.cons.nodes[n.rel]; !ok {
				se.Unlisted = append(se.Unlisted, n.rel)
			}
		}
	}
	if len(se.Changed)+len(se.Gone)+len(se.Unlisted) == 0 {
		return nil
	}
	for _, s := range [][]string{se.Changed, se.Gone, se.Unlisted} {
		slices.Sort(s)
	}
	return se
}

// sameDocs reports whether two nodes' documents hold the same JSON values.
func sameDocs(a, b nodeDocs) bool {
	return sameJSON(a.v3, b.v3) && sameJSON(a.v2, b.v2) && sameJSON(orEmptyObject(a.v2attrs, a.v2 != nil), orEmptyObject(b.v2attrs, b.v2 != nil))
}

func orEmptyObject(b []byte, v2 bool) []byte {
	if v2 && len(bytes.TrimSpace(b)) == 0 {
		return []byte("{}")
	}
	return b
}

func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, erra := decodeForCompare(a)
	vb, errb := decodeForCompare(b)
	return erra == nil && errb == nil && reflect.DeepEqual(va, vb)
}

func decodeForCompare(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, ConsolidatedMetadataKey)
	}
	return v, nil
}

// storedNode is one node found by walking a store.
type storedNode struct {
	rel  string // path relative to the walk's root
	typ  NodeType
	docs nodeDocs
}

// maxWalkNodes bounds a hierarchy walk.
const maxWalkNodes = 1 << 20

// walkNodes lists every node below the group at root (not root itself),
// depth first in name order, with its documents.
func walkNodes(ctx context.Context, s store.Reader, l store.Lister, root string, o options) ([]storedNode, error) {
	var out []storedNode
	var walk func(p string) error
	walk = func(p string) error {
		dir := ""
		if p != "" {
			dir = p + "/"
		}
		_, dirs, err := l.ListDir(ctx, dir)
		if err != nil {
			return err
		}
		sort.Strings(dirs)
		for _, d := range dirs {
			child := nodeKey(p, strings.TrimSuffix(d, "/"))
			nt, err := NodeTypeAt(ctx, s, child, WithMaxMetadataBytes(o.metaLimit()), WithZarrFormat(o.zarrFormat))
			if errors.Is(err, ErrNodeNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			docs, err := readNode(ctx, s, child, nt, o)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(child, root), "/")
			out = append(out, storedNode{rel: rel, typ: nt, docs: docs})
			if len(out) > maxWalkNodes {
				return fmt.Errorf("group %q: %w: more than %d nodes", root, ErrTooLarge, maxWalkNodes)
			}
			if nt == NodeGroup {
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(root)
}

// Consolidate writes consolidated metadata for the group at nodePath: the
// documents of every node below it, found by listing the store. A v3 group gets them inline in its zarr.json
// ("consolidated_metadata", as zarr-python 3 writes it), a v2 group a
// .zmetadata document (as zarr-python and xarray write it). It returns the
// group reopened from the new metadata. Consolidated metadata is a
// snapshot: run Consolidate again after changing the hierarchy, or readers
// see the old documents (VerifyConsolidated finds the differences).
func Consolidate(ctx context.Context, s store.Store, nodePath string, opts ...Option) (*Group, error) {
	g, err := OpenGroup(ctx, s, nodePath, append(opts, WithoutConsolidated())...)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	o.zarrFormat = g.format
	nodes, err := walkNodes(ctx, s, s, g.path, o)
	if err != nil {
		return nil, err
	}
	if g.format == 3 {
		meta := make(map[string]json.RawMessage, len(nodes))
		for _, n := range nodes {
			doc := n.docs.v3
			if n.typ == NodeGroup {
				// As zarr-python: a child group's entry carries an empty
				// consolidated_metadata of its own.
				if doc, err = withEmptyConsolidated(doc); err != nil {
					return nil, fmt.Errorf("consolidate %q: %s: %w", g.path, n.rel, err)
				}
			}
			meta[n.rel] = compact(doc)
		}
		gm := *g.meta
		gm.Extensions = cloneExt(g.meta.Extensions)
		cm, err := marshalSorted(meta)
		if err != nil {
			return nil, err
		}
		gm.Extensions[ConsolidatedMetadataKey] = inlineConsolidated(cm)
		doc, err := gm.Marshal()
		if err != nil {
			return nil, err
		}
		if err := s.Set(ctx, nodeKey(g.path, MetadataKey), doc); err != nil {
			return nil, err
		}
	} else {
		meta := map[string]json.RawMessage{V2GroupKey: json.RawMessage(`{"zarr_format":2}`)}
		attrs, err := MarshalAttributes(g.meta.Attributes)
		if err != nil {
			return nil, err
		}
		meta[V2AttrsKey] = compact(attrs)
		for _, n := range nodes {
			key := V2ArrayKey
			if n.typ == NodeGroup {
				key = V2GroupKey
			}
			meta[n.rel+"/"+key] = compact(n.docs.v2)
			a := n.docs.v2attrs
			if len(bytes.TrimSpace(a)) == 0 {
				a = []byte("{}")
			}
			if !json.Valid(a) {
				return nil, fmt.Errorf("consolidate %q: %w: %s is not valid JSON", g.path, ErrInvalidMetadata, path.Join(n.rel, V2AttrsKey))
			}
			meta[n.rel+"/"+V2AttrsKey] = compact(a)
		}
		cm, err := marshalSorted(meta)
		if err != nil {
			return nil, err
		}
		doc := append(append([]byte(`{"metadata":`), cm...), `,"zarr_consolidated_format":1}`...)
		var out bytes.Buffer
		if err := json.Indent(&out, doc, "", "  "); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
		}
		if err := s.Set(ctx, nodeKey(g.path, V2ConsolidatedKey), out.Bytes()); err != nil {
			return nil, err
		}
	}
	return OpenGroup(ctx, s, g.path, append(opts, WithZarrFormat(g.format))...)
}

func inlineConsolidated(metadata json.RawMessage) json.RawMessage {
	return json.RawMessage(`{"kind":"inline","must_understand":false,"metadata":` + string(metadata) + `}`)
}

func withEmptyConsolidated(doc []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
	}
	top[ConsolidatedMetadataKey] = inlineConsolidated(json.RawMessage(`{}`))
	return marshalSorted(top)
}

func cloneExt(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
