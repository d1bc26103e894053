package icechunk

import (
	"bytes"
	"context"
	"slices"
)

// Diff is what changed between two snapshots: node paths created,
// deleted and whose zarr.json changed, and per array (new ones included)
// the coordinates of the chunks whose refs were added, changed or removed,
// sorted.
type Diff struct {
	NewGroups, NewArrays         []string
	DeletedGroups, DeletedArrays []string
	UpdatedGroups, UpdatedArrays []string
	UpdatedChunks                map[string][][]uint32
}

// Diff compares snapshot from with snapshot to. It reads the manifests of
// every array whose manifests differ between them.
func (r *Repository) Diff(ctx context.Context, from, to ID) (*Diff, error) {
	a, err := r.Checkout(ctx, from)
	if err != nil {
		return nil, err
	}
	b, err := r.Checkout(ctx, to)
	if err != nil {
		return nil, err
	}
	d := &Diff{UpdatedChunks: map[string][][]uint32{}}
	s := &Session{repo: r}
	refs := func(n *node) (map[string]*writeRef, error) {
		if n == nil {
			return map[string]*writeRef{}, nil
		}
		return s.baseRefs(ctx, n)
	}
	for i := range b.snap.nodes {
		nb := &b.snap.nodes[i]
		na := a.snap.find(nb.path)
		if na != nil && na.kind != nb.kind {
			na = nil // replaced by a node of the other kind
		}
		switch {
		case na == nil && nb.kind == KindArray:
			d.NewArrays = append(d.NewArrays, nb.path)
		case na == nil:
			d.NewGroups = append(d.NewGroups, nb.path)
		case !bytes.Equal(na.userData, nb.userData) && nb.kind == KindArray:
			d.UpdatedArrays = append(d.UpdatedArrays, nb.path)
		case !bytes.Equal(na.userData, nb.userData):
			d.UpdatedGroups = append(d.UpdatedGroups, nb.path)
		}
		if nb.kind != KindArray || (na != nil && sameManifests(na, nb)) {
			continue
		}
		ra, err := refs(na)
		if err != nil {
			return nil, err
		}
		rb, err := refs(nb)
		if err != nil {
			return nil, err
		}
		var changed [][]uint32
		for k, x := range rb {
			if y, ok := ra[k]; !ok || !sameRef(x, y) {
				changed = append(changed, x.coords)
			}
		}
		for k, y := range ra {
			if _, ok := rb[k]; !ok {
				changed = append(changed, y.coords)
			}
		}
		if len(changed) > 0 {
			slices.SortFunc(changed, compareCoords)
			d.UpdatedChunks[nb.path] = changed
		}
	}
	for i := range a.snap.nodes {
		na := &a.snap.nodes[i]
		if nb := b.snap.find(na.path); nb == nil || nb.kind != na.kind {
			if na.kind == KindArray {
				d.DeletedArrays = append(d.DeletedArrays, na.path)
			} else {
				d.DeletedGroups = append(d.DeletedGroups, na.path)
			}
		}
	}
	return d, nil
}

func sameManifests(a, b *node) bool {
	if a.id != b.id || len(a.manifests) != len(b.manifests) {
		return false
	}
	for i := range a.manifests {
		if a.manifests[i].id != b.manifests[i].id {
			return false
		}
	}
	return true
}

func sameRef(a, b *writeRef) bool {
	return a.kind == b.kind && a.offset == b.offset && a.length == b.length && a.chunkID == b.chunkID &&
		a.location == b.location && a.etag == b.etag && a.modified == b.modified && bytes.Equal(a.inline, b.inline)
}
