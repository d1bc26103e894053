package icechunk_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
)

func TestSessionRoundTrip(t *testing.T) { forSpecs(t, sessionRoundTrip) }

func sessionRoundTrip(t *testing.T, spec string) {
	ctx := context.Background()
	dir := copyDir(t, filepath.Join(fixtures, spec))
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, open(t, st), "main", icechunk.WithManifestSplit(3), icechunk.WithInlineThreshold(16))
	data := arraytest.Ramp(4*70, 7)
	arraytest.Write(t, arraytest.Create(t, s, "grid/new", []int{10, 7}, dtype.TypeInt32, []int{3, 2}), data)
	id, err := s.Commit(ctx, "gozarr writes", map[string]any{"author": "gozarr", "n": 3.0})
	if err != nil {
		t.Fatal(err)
	}
	r2 := open(t, st)
	snap := checkoutRef(t, r2, "main")
	if snap.ID() != id {
		t.Fatalf("main at %v, committed %v", snap.ID(), id)
	}
	if got := arraytest.Read(t, snap, "grid/new"); string(got) != string(data) {
		t.Errorf("read back differs")
	}
	anc, err := r2.Ancestry(ctx, id)
	if err != nil || len(anc) != 5 || anc[0].Message != "gozarr writes" || anc[0].Metadata["author"] != "gozarr" {
		t.Errorf("ancestry %+v %v", anc, err)
	}
	if err := r2.CreateTag(ctx, "gz", id); err != nil {
		t.Fatal(err)
	}
	if err := r2.CreateTag(ctx, "gone", id); !errors.Is(err, icechunk.ErrConflict) {
		t.Errorf("recreating a deleted tag: %v", err)
	}
	if err := r2.CreateBranch(ctx, "gzb", id); err != nil {
		t.Fatal(err)
	}
	if err := r2.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if anc[0].Metadata["n"] != 3.0 && anc[0].Metadata["n"] != int64(3) && anc[0].Metadata["n"] != uint64(3) {
		t.Errorf("metadata n = %#v, want 3", anc[0].Metadata["n"])
	}
	// refs made once only; main stays; a deleted tag's name stays taken
	for what, err := range map[string]error{
		"tag twice":    r2.CreateTag(ctx, "gz", id),
		"branch twice": r2.CreateBranch(ctx, "gzb", id),
		"delete main":  r2.DeleteBranch(ctx, "main"),
	} {
		if !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", what, err)
		}
	}
	if err := r2.DeleteTag(ctx, "gz"); err != nil {
		t.Fatal(err)
	}
	if err := r2.CreateTag(ctx, "gz", id); !errors.Is(err, icechunk.ErrConflict) {
		t.Errorf("recreating a tag deleted by gozarr: %v", err)
	}
	if err := r2.DeleteTag(ctx, "gz"); !errors.Is(err, icechunk.ErrRefNotFound) {
		t.Errorf("deleting a deleted tag: %v", err)
	}
	r3 := open(t, st)
	br, err := r3.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := r3.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := br["dev"]; ok || br["gzb"] != id || br["main"] != id {
		t.Errorf("branches after the edits: %v", br)
	}
	if _, ok := tags["gz"]; ok {
		t.Errorf("tags after deleting gz: %v", tags)
	}
	if _, err := r3.Resolve(ctx, "gz"); !errors.Is(err, icechunk.ErrRefNotFound) {
		t.Errorf("resolving the deleted tag gz: %v", err)
	}
}
