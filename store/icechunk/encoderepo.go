package icechunk

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Update types of the repo object's ops log (the UpdateType union).
const (
	updRepoInitialized = iota + 1
	updRepoMigrated
	updConfigChanged
	updMetadataChanged
	updTagCreated
	updTagDeleted
	updBranchCreated
	updBranchDeleted
	updBranchReset
	updNewCommit
	updCommitAmended
	updNewDetachedSnapshot
	updGCRan
	updExpirationRan
	updFeatureFlagChanged
	updRepoStatusChanged
)

// updateFields lists each update type's fields: s a string, i an
// ObjectId12, 1 a byte, 2 a uint16, t the RepoStatus table.
var updateFields = map[uint8]string{
	updRepoMigrated: "11", updTagCreated: "s", updTagDeleted: "si", updBranchCreated: "s",
	updBranchDeleted: "si", updBranchReset: "si", updNewCommit: "si", updCommitAmended: "sii",
	updNewDetachedSnapshot: "i", updFeatureFlagChanged: "211", updRepoStatusChanged: "t",
}

// updateFieldReaders read field i of an update's body, by the letters of
// updateFields; a field that is absent is nil (only a RepoStatus table
// may be).
var updateFieldReaders = map[rune]func(body fbTable, i int) (*fbField, error){
	's': func(body fbTable, i int) (*fbField, error) {
		s, err := body.str(i, true)
		return fString(s), err
	},
	'i': func(body fbTable, i int) (*fbField, error) {
		b, err := body.inline(i, 12)
		if err == nil && b == nil {
			err = corruptf("ops log update without a snapshot id")
		}
		return fStruct(bytes.Clone(b), 1), err
	},
	'1': func(body fbTable, i int) (*fbField, error) {
		v, err := body.u8(i, 0)
		return fU8(v), err
	},
	'2': func(body fbTable, i int) (*fbField, error) {
		v, err := body.u16(i, 0)
		return fU16(v), err
	},
	't': func(body fbTable, i int) (*fbField, error) {
		st, ok, err := body.table(i, false)
		if err != nil || !ok {
			return nil, err
		}
		return copyStatus(st)
	},
}

// maxUpdates is how many ops log entries the repo object keeps; older
// ones stay in the backups under overwritten/.
const maxUpdates = 1000

type repoUpdate struct {
	typ    uint8
	fields []*fbField
	at     uint64
	backup string
}

// repoEdit is a change to the repo object.
type repoEdit struct {
	snap     *SnapshotInfo // a new snapshot, or nil
	snapMeta []metaItem
	branches map[string]*ID // set (non-nil) or delete (nil) branches
	tags     map[string]ID  // new tags
	delTags  []string       // tags to delete
	update   repoUpdate
	backup   string // where the current repo object is copied
}

func copyStatus(t fbTable) (*fbField, error) {
	a, err := t.u8(0, 0)
	if err != nil {
		return nil, err
	}
	at, err := t.u64(1, 0)
	if err != nil {
		return nil, err
	}
	reason, err := t.str(2, false)
	if err != nil {
		return nil, err
	}
	f := []*fbField{fU8(a), fU64(at), nil}
	if reason != "" {
		f[2] = fString(reason)
	}
	return fRef(func(b *fbBuilder) int { return b.table(f) }), nil
}

func readItems(v fbVector) ([]metaItem, error) {
	out := make([]metaItem, v.n)
	err := v.eachTable(func(j int, t fbTable) (err error) {
		if out[j].name, err = t.str(0, true); err == nil {
			out[j].value, err = t.bytes(1, true)
		}
		return err
	})
	return out, err
}

func readUpdate(t fbTable) (repoUpdate, error) {
	var u repoUpdate
	var err error
	if u.typ, err = t.u8(0, 0); err != nil {
		return u, err
	}
	if u.at, err = t.u64(2, 0); err != nil {
		return u, err
	}
	if u.backup, err = t.str(3, false); err != nil {
		return u, err
	}
	body, _, err := t.table(1, true)
	if err != nil {
		return u, err
	}
	if u.typ < updRepoInitialized || u.typ > updRepoStatusChanged {
		return u, corruptf("ops log update of type %d", u.typ)
	}
	for i, k := range updateFields[u.typ] {
		f, err := updateFieldReaders[k](body, i)
		if err != nil {
			return u, err
		}
		u.fields = append(u.fields, f)
	}
	return u, nil
}

// encodeRepo writes the repo object ri with edit applied.
func encodeRepo(ri *repoInfo, e *repoEdit) ([]byte, error) {
	type snapW struct {
		info   SnapshotInfo
		meta   []metaItem
		pruned []byte
	}
	snaps := make([]snapW, 0, len(ri.snapshots)+1)
	for i, si := range ri.snapshots {
		mv, err := ri.metadataOf(i)
		if err != nil {
			return nil, err
		}
		items, err := readItems(mv)
		if err != nil {
			return nil, err
		}
		pv, err := ri.snapTables[i].vector(5, 12, false)
		if err != nil {
			return nil, err
		}
		var pruned []byte
		if _, ok, _ := ri.snapTables[i].ref(5); ok {
			pruned = append([]byte{}, pv.buf[pv.start:pv.start+12*pv.n]...)
		}
		snaps = append(snaps, snapW{si, items, pruned})
	}
	if e.snap != nil {
		if _, ok := ri.find(e.snap.ID); ok {
			return nil, fmt.Errorf("icechunk: snapshot %v exists", e.snap.ID)
		}
		snaps = append(snaps, snapW{info: *e.snap, meta: e.snapMeta})
	}
	slices.SortFunc(snaps, func(a, b snapW) int { return bytes.Compare(a.info.ID[:], b.info.ID[:]) })
	index := make(map[ID]int, len(snaps))
	for i, s := range snaps {
		index[s.info.ID] = i
	}
	refsOf := func(old []namedRef, set map[string]*ID, add map[string]ID, del []string) ([]namedRef, error) {
		m := map[string]int{}
		for _, r := range old {
			m[r.name] = index[ri.snapshots[r.index].ID]
		}
		for name, id := range set {
			if id == nil {
				delete(m, name)
				continue
			}
			i, ok := index[*id]
			if !ok {
				return nil, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, *id)
			}
			m[name] = i
		}
		for name, id := range add {
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
			}
			m[name] = i
		}
		for _, name := range del {
			delete(m, name)
		}
		out := make([]namedRef, 0, len(m))
		for n, i := range m {
			out = append(out, namedRef{n, i})
		}
		slices.SortFunc(out, func(a, b namedRef) int { return strings.Compare(a.name, b.name) })
		return out, nil
	}
	branches, err := refsOf(ri.branches, e.branches, nil, nil)
	if err != nil {
		return nil, err
	}
	tags, err := refsOf(ri.tags, nil, e.tags, e.delTags)
	if err != nil {
		return nil, err
	}
	deleted := slices.Clone(ri.deletedTags)
	deleted = append(deleted, e.delTags...)
	slices.Sort(deleted)
	deleted = slices.Compact(deleted)

	// the ops log: the new update first, then the old ones
	ups, err := ri.root.vector(riLatestUpdates, 4, true)
	if err != nil {
		return nil, err
	}
	updates := []repoUpdate{e.update}
	for j := 0; j < ups.n && len(updates) < maxUpdates; j++ {
		t, err := ups.table(j)
		if err != nil {
			return nil, err
		}
		u, err := readUpdate(t)
		if err != nil {
			return nil, err
		}
		if j == 0 && u.backup == "" {
			u.backup = e.backup // the copy made before this update
		}
		updates = append(updates, u)
	}
	before, err := ri.root.str(riBeforeUpdates, false)
	if err != nil {
		return nil, err
	}
	if ups.n+1 > maxUpdates {
		before = e.backup
	}
	st, _, err := ri.root.table(riStatus, true)
	if err != nil {
		return nil, err
	}
	status, err := copyStatus(st)
	if err != nil {
		return nil, err
	}
	mv, err := ri.root.vector(riMetadata, 4, false)
	if err != nil {
		return nil, err
	}
	repoMeta, err := readItems(mv)
	if err != nil {
		return nil, err
	}
	config, err := ri.root.bytes(riConfig, false)
	if err != nil {
		return nil, err
	}
	var flags [2][]byte
	for i, fld := range []int{riEnabledFlags, riDisabledFlags} {
		v, err := ri.root.vector(fld, 2, false)
		if err != nil {
			return nil, err
		}
		flags[i] = v.buf[v.start : v.start+2*v.n]
	}
	extra, err := ri.root.bytes(12, false)
	if err != nil {
		return nil, err
	}
	refTables := func(refs []namedRef) *fbField {
		return fTables(len(refs), func(b *fbBuilder, i int) int {
			return b.table([]*fbField{fString(refs[i].name), fU32(uint32(refs[i].index))})
		})
	}
	b := newFB()
	fb := b.finish(func(b *fbBuilder) int {
		f := make([]*fbField, 13)
		f[riSpec] = fU8(ri.spec)
		f[riTags] = refTables(tags)
		f[riBranches] = refTables(branches)
		f[riDeletedTags] = fStrings(deleted)
		f[riSnapshots] = fTables(len(snaps), func(b *fbBuilder, i int) int {
			s := &snaps[i]
			parent := int32(-1)
			if s.info.HasParent {
				parent = int32(index[s.info.Parent])
			}
			sf := []*fbField{fStruct(s.info.ID[:], 1), fU32(uint32(parent)), fU64(uint64(s.info.Time.UnixMicro())),
				fString(s.info.Message), encodeMetadata(s.meta), nil}
			if s.pruned != nil {
				sf[5] = fStructs(len(s.pruned)/12, 1, s.pruned)
			}
			return b.table(sf)
		})
		f[riStatus] = status
		f[riMetadata] = encodeMetadata(repoMeta)
		f[riLatestUpdates] = fTables(len(updates), func(b *fbBuilder, i int) int {
			u := &updates[i]
			uf := []*fbField{fU8(u.typ), fRef(func(b *fbBuilder) int { return b.table(u.fields) }), fU64(u.at), nil}
			if u.backup != "" {
				uf[3] = fString(u.backup)
			}
			return b.table(uf)
		})
		if before != "" {
			f[riBeforeUpdates] = fString(before)
		}
		if config != nil {
			f[riConfig] = fBytes(config)
		}
		if len(flags[0]) > 0 {
			f[riEnabledFlags] = fStructs(len(flags[0])/2, 2, flags[0])
		}
		if len(flags[1]) > 0 {
			f[riDisabledFlags] = fStructs(len(flags[1])/2, 2, flags[1])
		}
		if extra != nil {
			f[12] = fBytes(extra)
		}
		return b.table(f)
	})
	return encodeFile(2, fileRepoInfo, fb), nil
}

// backupName is the name under overwritten/ for a copy of the repo object
// made at t: "repo." then the milliseconds from t to 3000-01-01, then 12
// random bytes in base 32.
func backupName(t time.Time) string {
	end := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	id := newID()
	return fmt.Sprintf("repo.%d.%s", end.Sub(t).Milliseconds(), id)
}
