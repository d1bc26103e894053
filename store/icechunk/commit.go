package icechunk

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
)

// errMoved reports, inside a commit, a branch that moved to head.
type errMoved struct{ head ID }

func (e *errMoved) Error() string { return "branch moved to " + e.head.String() }

// Commit writes the session's changes as a new snapshot on its branch,
// with a message and metadata (JSON-like values), and moves the branch:
// manifests of the changed arrays (split past WithManifestSplit refs), the
// transaction log, the snapshot, then the conditional update of the repo
// object (its old version copied to overwritten/ first). If the branch moved
// since the session began and the commits since touch none of what this
// session changed, the changes are rebased onto the new tip and committed;
// otherwise the error wraps ErrConflict and names the paths. After a
// commit the session continues from the new snapshot.
func (s *Session) Commit(ctx context.Context, message string, metadata map[string]any) (ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range 100 {
		snapID := newID()
		now := time.Now().UTC()
		items := metaItems(s.repo.spec, metadata)
		if err := s.writeSnapshot(ctx, snapID, now, message, items); err != nil {
			return ID{}, err
		}
		base := s.base.snap.id
		info := &SnapshotInfo{ID: snapID, Parent: base, HasParent: true, Time: now.Truncate(time.Microsecond), Message: message}
		var err error
		if s.repo.spec == 1 {
			err = s.repo.moveBranchV1(ctx, s.branch, base, snapID)
		} else {
			err = s.repo.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
				head, err := branchIn(ri, s.branch)
				if err != nil {
					return nil, err
				}
				if head != base {
					return nil, &errMoved{head}
				}
				id := snapID
				return &repoEdit{snap: info, snapMeta: items, branches: map[string]*ID{s.branch: &id},
					update: repoUpdate{typ: updNewCommit, fields: []*fbField{fString(s.branch), fStruct(snapID[:], 1)}}}, nil
			}, func(ri *repoInfo) bool {
				head, err := branchIn(ri, s.branch)
				return err == nil && head == snapID
			})
		}
		var moved *errMoved
		if errors.As(err, &moved) {
			if err := s.rebase(ctx, moved.head); err != nil {
				return ID{}, err
			}
			continue
		}
		if err != nil {
			return ID{}, err
		}
		next, err := s.repo.Checkout(ctx, snapID)
		if err != nil {
			return ID{}, err
		}
		s.base, s.changes = next, map[string]*change{}
		return snapID, nil
	}
	return ID{}, fmt.Errorf("%w: branch %q kept moving", ErrConflict, s.branch)
}

func branchIn(ri *repoInfo, branch string) (ID, error) {
	id, ok := refBranch.at(ri, branch)
	if !ok {
		return ID{}, fmt.Errorf("%w: branch %q was deleted", ErrConflict, branch)
	}
	return id, nil
}

// baseRefs returns the refs of base node n, from all its manifests.
func (s *Session) baseRefs(ctx context.Context, n *node) (map[string]*writeRef, error) {
	out := map[string]*writeRef{}
	for i := range n.manifests {
		m, err := s.repo.manifest(ctx, n.manifests[i].id)
		if err != nil {
			return nil, err
		}
		err = m.eachRef(n.id, func(c []uint32, r chunkRef) error {
			c = slices.Clone(c)
			out[coordsKey(c)] = &writeRef{coords: c, chunkRef: r}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sortedRefs returns the refs of all (nil ones left out) in coordinate
// order.
func sortedRefs(all map[string]*writeRef) []writeRef {
	ptrs := make([]*writeRef, 0, len(all))
	for _, r := range all {
		if r != nil {
			ptrs = append(ptrs, r)
		}
	}
	refs := make([]writeRef, len(ptrs))
	for i, k := range coordOrder(len(ptrs), func(i int) []uint32 { return ptrs[i].coords }) {
		refs[i] = *ptrs[k]
	}
	return refs
}

// coordOrder returns the indexes 0..n-1 ordered by the coordinates at
// gives them (compareCoords' order). With a row-major index in their
// bounding box that fits in 64 bits (always, short of absurd grids) it
// sorts 16-byte (index, position) pairs rather than comparing coordinate
// slices: sorting a commit's 10^6 refs and tx log coordinates that way
// was a third of its CPU.
func coordOrder(n int, at func(int) []uint32) []int {
	var box []uint64 // per dimension, the largest coordinate + 1
	fits := true     // one rank, and the box's size fits in 64 bits
	for i := range n {
		c := at(i)
		if box == nil {
			box = make([]uint64, len(c))
		}
		if len(c) != len(box) {
			fits = false
			break
		}
		for d, x := range c {
			box[d] = max(box[d], uint64(x)+1)
		}
	}
	span := uint64(1)
	for _, b := range box {
		hi, lo := bits.Mul64(span, b)
		if hi != 0 {
			fits = false
			break
		}
		span = lo
	}
	order := make([]int, n)
	if !fits {
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return compareCoords(at(a), at(b)) })
		return order
	}
	type keyed struct {
		key uint64
		at  int
	}
	ks := make([]keyed, n)
	for i := range n {
		var k uint64
		for d, x := range at(i) {
			k = k*box[d] + uint64(x)
		}
		ks[i] = keyed{k, i}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	for i, k := range ks {
		order[i] = k.at
	}
	return order
}

// writeManifests writes refs (of one array) into manifests split along
// the first dimension, and returns their refs and file infos.
func (s *Session) writeManifests(ctx context.Context, node NodeID, all map[string]*writeRef) ([]manifestRef, []manifestInfo, error) {
	refs := sortedRefs(all)
	var mrefs []manifestRef
	var infos []manifestInfo
	for lo := 0; lo < len(refs); {
		hi := min(lo+s.opts.split, len(refs))
		// never split one index of the first dimension across manifests
		if len(refs[0].coords) > 0 {
			for hi < len(refs) && refs[hi].coords[0] == refs[hi-1].coords[0] {
				hi++
			}
		} else {
			hi = len(refs)
		}
		part := refs[lo:hi]
		nd := len(part[0].coords)
		mr := manifestRef{id: newID(), from: make([]uint32, nd), to: make([]uint32, nd)}
		for d := 0; d < nd; d++ {
			mr.from[d], mr.to[d] = part[0].coords[d], part[0].coords[d]+1
			for _, r := range part {
				mr.from[d] = min(mr.from[d], r.coords[d])
				mr.to[d] = max(mr.to[d], r.coords[d]+1)
			}
		}
		data := encodeManifest(s.repo.spec, mr.id, node, part)
		if err := s.dst.Set(ctx, "manifests/"+mr.id.String(), data); err != nil {
			return nil, nil, err
		}
		mrefs = append(mrefs, mr)
		infos = append(infos, manifestInfo{id: mr.id, size: uint64(len(data)), refs: uint32(len(part))})
		lo = hi
	}
	return mrefs, infos, nil
}

// writeSnapshot writes the manifests, transaction log and snapshot of the
// session's changes over its base.
func (s *Session) writeSnapshot(ctx context.Context, id ID, now time.Time, message string, items []metaItem) error {
	base := s.base.snap
	files := map[ID]manifestInfo{}
	var nodes []writeNode
	tx := &txLog{chunks: map[NodeID][][]uint32{}}
	apply := func(wn *writeNode, c *change, baseNode *node) error {
		if c == nil {
			return nil
		}
		if c.userData != nil && baseNode != nil && !bytes.Equal(c.userData, baseNode.userData) {
			if wn.kind == KindArray {
				tx.updatedArrays = append(tx.updatedArrays, wn.id)
			} else {
				tx.updatedGroups = append(tx.updatedGroups, wn.id)
			}
		}
		if c.userData != nil {
			wn.userData, wn.shape, wn.numChunks, wn.chunkLen = c.userData, c.meta.shape, c.meta.numChunks, c.meta.chunks
		}
		if len(c.chunks) == 0 || wn.kind != KindArray {
			return nil
		}
		all := c.chunks // a new array: its refs are the session's (read only below)
		if baseNode != nil {
			var err error
			if all, err = s.baseRefs(ctx, baseNode); err != nil {
				return err
			}
		}
		for k, r := range c.chunks {
			if baseNode != nil {
				all[k] = r
			}
			var cc []uint32
			if r != nil {
				cc = r.coords
			} else {
				cc = keyCoords(k)
			}
			tx.chunks[wn.id] = append(tx.chunks[wn.id], cc)
		}
		mrefs, infos, err := s.writeManifests(ctx, wn.id, all)
		if err != nil {
			return err
		}
		wn.manifests = mrefs
		for _, in := range infos {
			files[in.id] = in
		}
		return nil
	}
	for i := range base.nodes {
		n := &base.nodes[i]
		c := s.changes[n.path]
		if c != nil && (c.deleted || c.isNew) {
			if c.deleted {
				if n.kind == KindArray {
					tx.deletedArrays = append(tx.deletedArrays, n.id)
				} else {
					tx.deletedGroups = append(tx.deletedGroups, n.id)
				}
			}
			if c.isNew {
				return fmt.Errorf("%w: %s was created by another commit", ErrConflict, n.path)
			}
			continue
		}
		wn := writeNode{path: n.path, id: n.id, kind: n.kind, userData: n.userData, shape: n.shape, numChunks: n.numChunks, chunkLen: n.chunkLen, manifests: n.manifests}
		if err := apply(&wn, c, n); err != nil {
			return err
		}
		for _, m := range wn.manifests {
			if _, ok := files[m.id]; !ok {
				in, ok := base.files[m.id]
				if !ok {
					return corruptf("snapshot %v does not list manifest %v", base.id, m.id)
				}
				files[m.id] = in
			}
		}
		nodes = append(nodes, wn)
	}
	for p, c := range s.changes {
		if !c.isNew || c.deleted {
			continue
		}
		wn := writeNode{path: p, id: c.id, kind: c.kind}
		if c.kind == KindArray {
			tx.newArrays = append(tx.newArrays, c.id)
		} else {
			tx.newGroups = append(tx.newGroups, c.id)
		}
		if err := apply(&wn, c, nil); err != nil {
			return err
		}
		nodes = append(nodes, wn)
	}
	slices.SortFunc(nodes, func(a, b writeNode) int { return strings.Compare(a.path, b.path) })
	spec := s.repo.spec
	if spec == 1 {
		// spec 1 states each dimension's chunk length
		for i := range nodes {
			wn := &nodes[i]
			if wn.kind != KindArray || wn.chunkLen != nil {
				continue
			}
			m, err := parseNodeMeta(wn.userData)
			if err != nil {
				return fmt.Errorf("array %s: %w", wn.path, err)
			}
			wn.chunkLen = m.chunks
		}
	}
	infos := slices.SortedFunc(maps.Values(files), func(a, b manifestInfo) int { return bytes.Compare(a.id[:], b.id[:]) })
	if err := s.dst.Set(ctx, "transactions/"+id.String(), encodeTxLog(spec, id, tx)); err != nil {
		return err
	}
	return s.dst.Set(ctx, "snapshots/"+id.String(), encodeSnapshot(spec, id, &base.id, nodes, now, message, items, infos))
}

func keyCoords(k string) []uint32 {
	c := make([]uint32, len(k)/4)
	for i := range c {
		c[i] = uint32(k[4*i])<<24 | uint32(k[4*i+1])<<16 | uint32(k[4*i+2])<<8 | uint32(k[4*i+3])
	}
	return c
}

// parsed transaction log: what a commit changed.
type txChanges struct {
	nodes  map[NodeID]string // node id -> "new", "deleted", "updated"
	chunks map[NodeID]map[string]bool
}

func (r *Repository) txChanges(ctx context.Context, id ID) (*txChanges, error) {
	key := "transactions/" + id.String()
	data, err := r.src.Get(ctx, key, store.Full())
	if err != nil {
		return nil, err
	}
	_, buf, err := decodeFile(data, fileTxLog, r.opts.maxObject)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	root, err := fbRoot(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	tc := &txChanges{nodes: map[NodeID]string{}, chunks: map[NodeID]map[string]bool{}}
	for f, what := range map[int]string{1: "new", 2: "new", 3: "deleted", 4: "deleted", 5: "updated", 6: "updated"} {
		v, err := root.vector(f, 8, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		for j := 0; j < v.n; j++ {
			tc.nodes[NodeID(v.at(j))] = what
		}
	}
	uc, err := root.vector(7, 4, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	for j := 0; j < uc.n; j++ {
		t, err := uc.table(j)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		nid, err := t.inline(0, 8)
		if err != nil || nid == nil {
			return nil, fmt.Errorf("%s: %w", key, corruptf("updated chunks without a node id"))
		}
		cs, err := t.vector(1, 4, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		set := map[string]bool{}
		for k := 0; k < cs.n; k++ {
			ct, err := cs.table(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			cv, err := ct.vector(0, 4, true)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			c := make([]uint32, cv.n)
			for d := range c {
				c[d] = cv.u32(d)
			}
			set[coordsKey(c)] = true
		}
		tc.chunks[NodeID(nid)] = set
	}
	return tc, nil
}

// rebase moves the session onto head if the commits between its base and
// head touch nothing it changed; else ErrConflict naming the paths.
func (s *Session) rebase(ctx context.Context, head ID) error {
	anc, err := s.repo.Ancestry(ctx, head)
	if err != nil {
		return err
	}
	base := s.base.snap.id
	var between []ID
	found := false
	for _, si := range anc {
		if si.ID == base {
			found = true
			break
		}
		between = append(between, si.ID)
	}
	if !found {
		return fmt.Errorf("%w: branch %q was reset past the session's base %v", ErrConflict, s.branch, base)
	}
	headSnap, err := s.repo.Checkout(ctx, head)
	if err != nil {
		return err
	}
	var conflicts []string
	for _, id := range between {
		tc, err := s.repo.txChanges(ctx, id)
		if err != nil {
			return err
		}
		for p, c := range s.changes {
			if c.isNew {
				if headSnap.snap.find(p) != nil {
					conflicts = append(conflicts, p+" (created by both)")
				}
				continue
			}
			what, touched := tc.nodes[c.id]
			switch {
			case touched && what == "deleted":
				conflicts = append(conflicts, p+" (deleted by "+id.String()+")")
			case touched && (c.userData != nil || c.deleted):
				conflicts = append(conflicts, p+" (metadata changed by "+id.String()+")")
			case c.deleted && len(tc.chunks[c.id]) > 0:
				conflicts = append(conflicts, p+" (chunks written by "+id.String()+")")
			default:
				for k := range c.chunks {
					if tc.chunks[c.id][k] {
						conflicts = append(conflicts, fmt.Sprintf("%s chunk %v (written by %v)", p, keyCoords(k), id))
						break
					}
				}
			}
		}
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return fmt.Errorf("%w: branch %q moved to %v: %s", ErrConflict, s.branch, head, strings.Join(slices.Compact(conflicts), "; "))
	}
	s.base = headSnap
	return nil
}
