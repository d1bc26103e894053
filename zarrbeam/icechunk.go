package zarrbeam

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/zarr"
)

// Writing into an Icechunk branch: the fork/merge pattern. The launcher
// creates the array (committed on the branch, see IcechunkTarget.Begin);
// each worker writes its regions in a session forked from that snapshot
// (the chunks go to the repository's chunks/ at once) and emits the
// session's chunk refs; CommitIcechunk merges every worker's refs into one
// session at the same snapshot and commits once. A failed and retried
// bundle writes its chunks again under new ids: only the refs of the
// bundles the runner committed reach the merge, so no chunk is lost or
// duplicated (the files of a failed attempt are left unreferenced, for
// Icechunk's garbage collection). The commit carries the job's id in its
// metadata ("zarrbeam_job"), so a retried commit finds it and commits
// nothing more.

// IcechunkTarget names an array of an Icechunk repository written by a
// job: the repository's store URL (as OpenStore opens it), the branch,
// the snapshot every worker forks from (Base, a snapshot id; Begin sets
// it), the array's node path, and the job's id, which makes the commit
// happen once.
type IcechunkTarget struct {
	URL    string
	Branch string
	Base   string
	Path   string
	Job    string
}

func init() {
	beam.RegisterType(reflect.TypeOf(IcechunkTarget{}))
	register.DoFn4x1[context.Context, string, Region, func([]byte), error](&icechunkWriteFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(string), error](&icechunkCommitFn{})
	register.Emitter1[[]byte]()
	register.Iter1[[]byte]()
}

// repo opens the target's repository (its store must be writable).
func (t IcechunkTarget) repo(ctx context.Context) (*icechunk.Repository, error) {
	st, err := OpenStore(ctx, t.URL)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(store.Store); !ok {
		return nil, fmt.Errorf("zarrbeam: icechunk %s: %w", t.URL, store.ErrReadOnly)
	}
	return icechunk.Open(ctx, st)
}

// Begin returns t with Base set to the head of t.Branch now: the
// snapshot the job's workers fork from. The array at t.Path must exist
// there (create and commit it first).
func (t IcechunkTarget) Begin(ctx context.Context) (IcechunkTarget, error) {
	r, err := t.repo(ctx)
	if err != nil {
		return t, err
	}
	id, err := r.Resolve(ctx, t.Branch)
	if err != nil {
		return t, err
	}
	snap, err := r.Checkout(ctx, id)
	if err != nil {
		return t, err
	}
	if _, err := zarr.OpenArray(ctx, snap, t.Path); err != nil {
		return t, fmt.Errorf("zarrbeam: icechunk %s branch %s: %w", t.URL, t.Branch, err)
	}
	t.Base = id.String()
	return t, nil
}

// WriteIcechunk writes regions (KV<string, Region>, aligned to the array's
// write units as Write wants them without Merge) into the array of dst,
// in sessions forked from dst.Base, and returns the PCollection of their
// exported chunk refs ([]byte) for CommitIcechunk.
func WriteIcechunk(s beam.Scope, dst IcechunkTarget, regions beam.PCollection) beam.PCollection {
	s = s.Scope("zarrbeam.WriteIcechunk")
	return beam.ParDo(s, &icechunkWriteFn{Dst: dst}, regions)
}

// CommitIcechunk merges the chunk refs of WriteIcechunk into one session
// at dst.Base and commits it once on dst.Branch with message (rebased
// over commits to other chunks made since, else the job fails with
// icechunk.ErrConflict). Its output holds the snapshot id committed.
func CommitIcechunk(s beam.Scope, dst IcechunkTarget, changes beam.PCollection, message string) beam.PCollection {
	s = s.Scope("zarrbeam.CommitIcechunk")
	return beam.ParDo(s, &icechunkCommitFn{Dst: dst, Message: message}, beam.Impulse(s), beam.SideInput{Input: changes})
}

type icechunkWriteFn struct {
	Dst  IcechunkTarget
	repo *icechunk.Repository
	base icechunk.ID
}

func (f *icechunkWriteFn) Setup(ctx context.Context) (err error) {
	if f.base, err = icechunk.ParseID(f.Dst.Base); err != nil {
		return fmt.Errorf("zarrbeam: icechunk target without a base snapshot (IcechunkTarget.Begin): %w", err)
	}
	f.repo, err = f.Dst.repo(ctx)
	return err
}

func (f *icechunkWriteFn) ProcessElement(ctx context.Context, _ string, b Region, emit func([]byte)) error {
	s, err := f.repo.SessionAt(ctx, f.Dst.Branch, f.base)
	if err != nil {
		return err
	}
	a, err := zarr.OpenArray(ctx, s, f.Dst.Path)
	if err != nil {
		return fmt.Errorf("zarrbeam: icechunk %s: %w", f.Dst.URL, err)
	}
	ref := Ref{URL: f.Dst.URL + "@" + f.Dst.Branch, Path: f.Dst.Path}
	if err := writeRegion(ctx, a, ref, b, nil, func(string) {}); err != nil {
		return err
	}
	doc, err := s.ExportChanges()
	if err != nil {
		return err
	}
	emit(doc)
	return nil
}

type icechunkCommitFn struct {
	Dst     IcechunkTarget
	Message string
}

func (f *icechunkCommitFn) ProcessElement(ctx context.Context, _ []byte, changes func(*[]byte) bool, emit func(string)) error {
	base, err := icechunk.ParseID(f.Dst.Base)
	if err != nil {
		return fmt.Errorf("zarrbeam: icechunk target without a base snapshot (IcechunkTarget.Begin): %w", err)
	}
	r, err := f.Dst.repo(ctx)
	if err != nil {
		return err
	}
	// a retried commit: the job's commit may be on the branch already
	if id, ok, err := jobCommit(ctx, r, f.Dst, base); err != nil {
		return err
	} else if ok {
		emit(id.String())
		return nil
	}
	s, err := r.SessionAt(ctx, f.Dst.Branch, base)
	if err != nil {
		return err
	}
	var doc []byte
	for changes(&doc) {
		if err := s.ImportChanges(doc); err != nil {
			return fmt.Errorf("zarrbeam: icechunk %s: merging a worker's writes: %w", f.Dst.URL, err)
		}
	}
	id, err := s.Commit(ctx, f.Message, map[string]any{"zarrbeam_job": f.Dst.Job})
	if err != nil {
		return fmt.Errorf("zarrbeam: icechunk %s: commit to %s: %w", f.Dst.URL, f.Dst.Branch, err)
	}
	if err := fault("committed", id.String()); err != nil {
		return err
	}
	emit(id.String())
	return nil
}

// jobCommit finds the commit of job t.Job among the snapshots of t.Branch
// made since base.
func jobCommit(ctx context.Context, r *icechunk.Repository, t IcechunkTarget, base icechunk.ID) (icechunk.ID, bool, error) {
	if t.Job == "" {
		return icechunk.ID{}, false, nil
	}
	head, err := r.Resolve(ctx, t.Branch)
	if err != nil {
		return icechunk.ID{}, false, err
	}
	anc, err := r.Ancestry(ctx, head)
	if err != nil {
		return icechunk.ID{}, false, err
	}
	i := slices.IndexFunc(anc, func(si icechunk.SnapshotInfo) bool { return si.ID == base })
	if i < 0 {
		return icechunk.ID{}, false, nil
	}
	for _, si := range anc[:i] {
		if si.Metadata["zarrbeam_job"] == t.Job {
			return si.ID, true, nil
		}
	}
	return icechunk.ID{}, false, nil
}
