package icechunk

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

func refIndexIn(list []namedRef, name string) (int, bool) {
	return slices.BinarySearchFunc(list, name, func(e namedRef, n string) int { return strings.Compare(e.name, n) })
}

func (r *Repository) checkWritableRef(name string) error {
	if r.spec != 2 {
		return fmt.Errorf("%w: writing spec %d repositories", ErrUnsupported, r.spec)
	}
	if !validRefName(name) {
		return fmt.Errorf("%w: bad ref name %q", ErrUnsupported, name)
	}
	return nil
}

// CreateBranch creates branch name at snapshot id; an existing branch is
// ErrConflict.
func (r *Repository) CreateBranch(ctx context.Context, name string, id ID) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		if _, ok := refIndexIn(ri.branches, name); ok {
			return nil, fmt.Errorf("%w: branch %q exists", ErrConflict, name)
		}
		if _, ok := ri.find(id); !ok {
			return nil, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
		}
		return &repoEdit{branches: map[string]*ID{name: &id}, update: repoUpdate{typ: updBranchCreated, fields: []*fbField{fString(name)}}}, nil
	}, func(ri *repoInfo) bool { h, err := branchIn(ri, name); return err == nil && h == id })
}

// DeleteBranch deletes branch name (never main).
func (r *Repository) DeleteBranch(ctx context.Context, name string) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	if name == "main" {
		return fmt.Errorf("%w: the main branch cannot be deleted", ErrConflict)
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		i, ok := refIndexIn(ri.branches, name)
		if !ok {
			return nil, fmt.Errorf("%w: branch %q", ErrRefNotFound, name)
		}
		prev := ri.snapshots[ri.branches[i].index].ID
		return &repoEdit{branches: map[string]*ID{name: nil}, update: repoUpdate{typ: updBranchDeleted, fields: []*fbField{fString(name), fStruct(prev[:], 1)}}}, nil
	}, func(ri *repoInfo) bool { _, ok := refIndexIn(ri.branches, name); return !ok })
}

// CreateTag creates tag name at snapshot id. Tags never move: an existing
// or deleted tag's name is ErrConflict.
func (r *Repository) CreateTag(ctx context.Context, name string, id ID) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		if _, ok := refIndexIn(ri.tags, name); ok {
			return nil, fmt.Errorf("%w: tag %q exists", ErrConflict, name)
		}
		if _, ok := slices.BinarySearch(ri.deletedTags, name); ok {
			return nil, fmt.Errorf("%w: tag %q was deleted and cannot be made again", ErrConflict, name)
		}
		if _, ok := ri.find(id); !ok {
			return nil, fmt.Errorf("%w: snapshot %v", ErrRefNotFound, id)
		}
		return &repoEdit{tags: map[string]ID{name: id}, update: repoUpdate{typ: updTagCreated, fields: []*fbField{fString(name)}}}, nil
	}, func(ri *repoInfo) bool {
		i, ok := refIndexIn(ri.tags, name)
		return ok && ri.snapshots[ri.tags[i].index].ID == id
	})
}

// DeleteTag deletes tag name; its name stays taken (a tombstone in the
// repo object's deleted tags).
func (r *Repository) DeleteTag(ctx context.Context, name string) error {
	if err := r.checkWritableRef(name); err != nil {
		return err
	}
	return r.updateRepo(ctx, func(ri *repoInfo) (*repoEdit, error) {
		i, ok := refIndexIn(ri.tags, name)
		if !ok {
			return nil, fmt.Errorf("%w: tag %q", ErrRefNotFound, name)
		}
		prev := ri.snapshots[ri.tags[i].index].ID
		return &repoEdit{delTags: []string{name}, update: repoUpdate{typ: updTagDeleted, fields: []*fbField{fString(name), fStruct(prev[:], 1)}}}, nil
	}, func(ri *repoInfo) bool { _, ok := refIndexIn(ri.tags, name); return !ok })
}
