package icechunk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
)

func refIndexIn(list []namedRef, name string) (int, bool) {
	return slices.BinarySearchFunc(list, name, func(e namedRef, n string) int { return strings.Compare(e.name, n) })
}

func (r *Repository) checkWritableRef(name string) error {
	if !validRefName(name) {
		return fmt.Errorf("%w: bad ref name %q", ErrUnsupported, name)
	}
	return nil
}

// refType is a type of ref: a branch or a tag.
type refType string

const (
	refBranch refType = "branch"
	refTag    refType = "tag"
)

// at returns the snapshot that ri's ref of kind k and name points at.
func (k refType) at(ri *repoInfo, name string) (ID, bool) {
	list := ri.branches
	if k == refTag {
		list = ri.tags
	}
	i, ok := refIndexIn(list, name)
	if !ok {
		return ID{}, false
	}
	return ri.snapshots[list[i].index].ID, true
}

// CreateBranch creates branch name at snapshot id; an existing branch is
// ErrConflict.
func (r *Repository) CreateBranch(ctx context.Context, name string, id ID) error {
	return r.createRef(ctx, refBranch, name, id)
}

// DeleteBranch deletes branch name (never main).
func (r *Repository) DeleteBranch(ctx context.Context, name string) error {
	if name == "main" {
		return fmt.Errorf("%w: the main branch cannot be deleted", ErrConflict)
	}
	return r.deleteRef(ctx, refBranch, name)
}

// CreateTag creates tag name at snapshot id. Tags never move: an existing
// or deleted tag's name is ErrConflict.
func (r *Repository) CreateTag(ctx context.Context, name string, id ID) error {
	return r.createRef(ctx, refTag, name, id)
}

// DeleteTag deletes tag name; its name stays taken (a tombstone in the
// repo object's deleted tags).
func (r *Repository) DeleteTag(ctx context.Context, name string) error {
	return r.deleteRef(ctx, refTag, name)
}

// createRef creates the ref of kind k and name at snapshot id.
func (r *Repository) createRef(ctx context.Context, k refType, name string, id ID) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	if r.spec == 1 {
		return r.createRefV1(ctx, string(k), name, id)
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		if _, ok := k.at(ri, name); ok {
			return nil, fmt.Errorf("%w: %s %q exists", ErrConflict, k, name)
		}
		if _, ok := slices.BinarySearch(ri.deletedTags, name); ok && k == refTag {
			return nil, fmt.Errorf("%w: tag %q was deleted and cannot be made again", ErrConflict, name)
		}
		if _, ok := ri.find(id); !ok {
			return nil, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
		}
		if k == refTag {
			return &repoEdit{tags: map[string]ID{name: id}, update: repoUpdate{typ: updTagCreated, fields: []*fbField{fString(name)}}}, nil
		}
		return &repoEdit{branches: map[string]*ID{name: &id}, update: repoUpdate{typ: updBranchCreated, fields: []*fbField{fString(name)}}}, nil
	}, func(ri *repoInfo) bool { h, ok := k.at(ri, name); return ok && h == id })
}

// deleteRef deletes the ref of kind k and name.
func (r *Repository) deleteRef(ctx context.Context, k refType, name string) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	if r.spec == 1 {
		return r.deleteRefV1(ctx, string(k), name)
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		prev, ok := k.at(ri, name)
		if !ok {
			return nil, fmt.Errorf("%w: %s %q", ErrRefNotFound, k, name)
		}
		fields := []*fbField{fString(name), fStruct(prev[:], 1)}
		if k == refTag {
			return &repoEdit{delTags: []string{name}, update: repoUpdate{typ: updTagDeleted, fields: fields}}, nil
		}
		return &repoEdit{branches: map[string]*ID{name: nil}, update: repoUpdate{typ: updBranchDeleted, fields: fields}}, nil
	}, func(ri *repoInfo) bool { _, ok := k.at(ri, name); return !ok })
}

// Spec 1 refs: refs/branch.NAME/ref.json and refs/tag.NAME/ref.json, JSON
// naming a snapshot; branches move by a conditional write of their file,
// new refs are written create-only, a deleted tag leaves a tombstone
// (ref.json.deleted) beside its file, a deleted branch loses its file.

func refKeyV1(kind, name string) string { return "refs/" + kind + "." + name + "/ref.json" }

func refJSON(id ID) []byte { return []byte(`{"snapshot":"` + id.String() + `"}`) }

// parseRefJSON reads the snapshot id of a spec 1 ref file.
func parseRefJSON(key string, data []byte) (ID, error) {
	var ref struct {
		Snapshot string `json:"snapshot"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return ID{}, corruptf("%s: %v", key, err)
	}
	id, err := ParseID(ref.Snapshot)
	if err != nil {
		return ID{}, corruptf("%s: %v", key, err)
	}
	return id, nil
}

// moveBranchV1 moves a spec 1 branch from base to id by a conditional
// write of its ref file (If-Match on the version read). A branch at
// another snapshot is *errMoved; a write whose answer was lost is checked
// by rereading.
func (r *Repository) moveBranchV1(ctx context.Context, branch string, base, id ID) error {
	v, err := r.versioned()
	if err != nil {
		return err
	}
	key := refKeyV1("branch", branch)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, version, err := v.get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: branch %q was deleted", ErrConflict, branch)
		}
		if err != nil {
			return err
		}
		head, err := parseRefJSON(key, data)
		if err != nil {
			return err
		}
		if attempt > 0 && head == id {
			return nil // the lost write had been made
		}
		if head != base {
			return &errMoved{head}
		}
		err = v.setIf(ctx, key, refJSON(id), version)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrConflict) && attempt >= 5 {
			return err
		}
		if attempt >= 100 {
			return fmt.Errorf("%w: %s kept changing (%d attempts)", ErrConflict, key, attempt)
		}
	}
}

// createRefV1 writes a new spec 1 ref file create-only; one already there
// is ErrConflict.
func (r *Repository) createRefV1(ctx context.Context, kind, name string, id ID) error {
	v, err := r.versioned()
	if err != nil {
		return err
	}
	if _, err := r.snapshot(ctx, id); err != nil {
		return err
	}
	if kind == "tag" {
		if _, err := r.src.Get(ctx, refKeyV1(kind, name)+".deleted", store.OffsetLen(0, 0)); err == nil {
			return fmt.Errorf("%w: tag %q was deleted and cannot be made again", ErrConflict, name)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	key := refKeyV1(kind, name)
	for attempt := 0; ; attempt++ {
		err := v.setIf(ctx, key, refJSON(id), "")
		if errors.Is(err, store.ErrConflict) {
			if attempt > 0 {
				if data, err := r.src.Get(ctx, key, store.OffsetLen(0, 4096)); err == nil {
					if got, err := parseRefJSON(key, data); err == nil && got == id {
						return nil // the lost write had been made
					}
				}
			}
			return fmt.Errorf("%w: %s %q exists", ErrConflict, kind, name)
		}
		if err == nil || attempt >= 5 || ctx.Err() != nil {
			return err
		}
	}
}

// deleteRefV1 deletes a spec 1 branch (its file) or tag (a tombstone).
func (r *Repository) deleteRefV1(ctx context.Context, kind, name string) error {
	v, err := r.versioned()
	if err != nil {
		return err
	}
	if _, err := r.readRefV1(ctx, kind, name); err != nil {
		return err
	}
	key := refKeyV1(kind, name)
	if kind == "branch" {
		return v.dst.Delete(ctx, key)
	}
	if err := v.setIf(ctx, key+".deleted", nil, ""); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	return nil
}
