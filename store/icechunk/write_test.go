package icechunk_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/zarr"
)

// copyDir copies a fixture repository, so tests can write to it.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-r", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

func TestSessionRoundTrip(t *testing.T) {
	for _, spec := range []string{"spec1", "spec2"} {
		t.Run(spec, func(t *testing.T) { sessionRoundTrip(t, spec) })
	}
}

func sessionRoundTrip(t *testing.T, spec string) {
	ctx := context.Background()
	dir := copyDir(t, filepath.Join(fixtures, spec))
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Session(ctx, "main", icechunk.WithManifestSplit(3), icechunk.WithInlineThreshold(16))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{10, 7}, dtype.TypeInt32, []int{3, 2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, "grid/new", meta)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4*70)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		t.Fatal(err)
	}
	id, err := s.Commit(ctx, "gozarr writes", map[string]any{"author": "gozarr", "n": 3.0})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r2.CheckoutRef(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if snap.ID() != id {
		t.Fatalf("main at %v, committed %v", snap.ID(), id)
	}
	b, err := zarr.OpenArray(ctx, snap, "grid/new")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := b.ReadBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data) {
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
	r3, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
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
	_ = os.Getenv
}
