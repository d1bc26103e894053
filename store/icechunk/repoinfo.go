package icechunk

import (
	"bytes"
	"slices"
)

// namedRef is a branch or tag of the repo object.
type namedRef struct {
	name  string
	index int // into repoInfo.snapshots
}

// repoInfo is the parsed repo object of a spec 2 repository.
type repoInfo struct {
	buf         []byte
	spec        uint8
	tags        []namedRef // sorted by name
	branches    []namedRef // sorted by name
	deletedTags []string
	snapshots   []SnapshotInfo // sorted by id; Metadata left nil
	snapTables  []fbTable
	parents     []int // index of each snapshot's parent, -1 for none
	root        fbTable
}

// Repo, Ref and SnapshotInfo table fields.
const (
	riSpec = iota
	riTags
	riBranches
	riDeletedTags
	riSnapshots
	riStatus
	riMetadata
	riLatestUpdates
	riBeforeUpdates
	riConfig
	riEnabledFlags
	riDisabledFlags
)

const (
	siID = iota
	siParentOffset
	siFlushedAt
	siMessage
	siMetadata
)

func parseRepoInfo(data []byte, maxBytes int64) (*repoInfo, error) {
	h, buf, err := decodeFile(data, fileRepoInfo, maxBytes)
	if err != nil {
		return nil, err
	}
	if h.spec < 2 {
		return nil, corruptf("repo object of spec version %d", h.spec)
	}
	root, err := fbRoot(buf)
	if err != nil {
		return nil, err
	}
	ri := &repoInfo{buf: buf, root: root}
	if ri.spec, err = root.u8(riSpec, 0); err != nil {
		return nil, err
	}
	snaps, err := root.vector(riSnapshots, 4, true)
	if err != nil {
		return nil, err
	}
	ri.snapshots = make([]SnapshotInfo, snaps.n)
	ri.snapTables = make([]fbTable, snaps.n)
	ri.parents = make([]int, snaps.n)
	for j := range ri.snapshots {
		t, err := snaps.table(j)
		if err != nil {
			return nil, err
		}
		ri.snapTables[j] = t
		id, err := t.inline(siID, 12)
		if err != nil {
			return nil, err
		}
		if id == nil {
			return nil, corruptf("snapshot %d without an id", j)
		}
		si := &ri.snapshots[j]
		si.ID = ID(id)
		if j > 0 && bytes.Compare(ri.snapshots[j-1].ID[:], id) >= 0 {
			return nil, corruptf("snapshots not sorted by id")
		}
		po, err := t.u32(siParentOffset, 0)
		if err != nil {
			return nil, err
		}
		p := int64(int32(po))
		if p < -1 || p >= int64(snaps.n) || p == int64(j) {
			return nil, corruptf("snapshot %v: parent offset %d of %d snapshots", si.ID, p, snaps.n)
		}
		ri.parents[j] = int(p)
		us, err := t.u64(siFlushedAt, 0)
		if err != nil {
			return nil, err
		}
		si.Time = microsTime(us)
		if si.Message, err = t.str(siMessage, false); err != nil {
			return nil, err
		}
	}
	for j, p := range ri.parents {
		if p >= 0 {
			ri.snapshots[j].Parent, ri.snapshots[j].HasParent = ri.snapshots[p].ID, true
		}
	}
	if ri.tags, err = readRefs(root, riTags, snaps.n); err != nil {
		return nil, err
	}
	if ri.branches, err = readRefs(root, riBranches, snaps.n); err != nil {
		return nil, err
	}
	dt, err := root.vector(riDeletedTags, 4, true)
	if err != nil {
		return nil, err
	}
	for j := 0; j < dt.n; j++ {
		s, err := dt.str(j)
		if err != nil {
			return nil, err
		}
		ri.deletedTags = append(ri.deletedTags, s)
	}
	return ri, nil
}

func readRefs(root fbTable, field, nsnaps int) ([]namedRef, error) {
	v, err := root.vector(field, 4, true)
	if err != nil {
		return nil, err
	}
	out := make([]namedRef, v.n)
	err = v.eachTable(func(j int, t fbTable) error {
		name, err := t.str(0, true)
		if err != nil {
			return err
		}
		idx, err := t.u32(1, 0)
		if err != nil {
			return err
		}
		if int64(idx) >= int64(nsnaps) {
			return corruptf("ref %q points to snapshot %d of %d", name, idx, nsnaps)
		}
		if j > 0 && out[j-1].name >= name {
			return corruptf("refs not sorted by name")
		}
		out[j] = namedRef{name: name, index: int(idx)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// find returns the index of snapshot id.
func (ri *repoInfo) find(id ID) (int, bool) {
	return slices.BinarySearchFunc(ri.snapshots, id, func(s SnapshotInfo, id ID) int { return bytes.Compare(s.ID[:], id[:]) })
}

// metadataOf returns snapshot i's metadata vector.
func (ri *repoInfo) metadataOf(i int) (fbVector, error) {
	return ri.snapTables[i].vector(siMetadata, 4, false)
}
