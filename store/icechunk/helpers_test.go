package icechunk_test

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// The steps the tests of this package repeat: fixture repositories of
// both spec versions, sessions, commits and checkouts. Each fails its
// test on an error; arraytest has the array steps.

// forSpecs runs fn as one subtest per fixture repository, spec 1 and 2.
func forSpecs(t *testing.T, fn func(t *testing.T, spec string)) {
	t.Helper()
	for _, spec := range []string{"spec1", "spec2"} {
		t.Run(spec, func(t *testing.T) { fn(t, spec) })
	}
}

// copyDir copies a fixture repository, so tests can write to it.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-r", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

// fixtureCopy copies the fixture repository of spec ("spec1", "spec2")
// and opens the copy: its directory and the repository.
func fixtureCopy(t testing.TB, spec string) (string, *icechunk.Repository) {
	t.Helper()
	dir := copyDir(t, filepath.Join(fixtures, spec))
	return dir, openRepo(t, dir)
}

// openRepo opens the repository in directory dir.
func openRepo(t testing.TB, dir string, opts ...icechunk.Option) *icechunk.Repository {
	t.Helper()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return open(t, st, opts...)
}

// open opens the repository on st.
func open(t testing.TB, st store.Reader, opts ...icechunk.Option) *icechunk.Repository {
	t.Helper()
	return arraytest.Must(icechunk.Open(context.Background(), st, opts...))(t)
}

// create creates a repository on st.
func create(t testing.TB, st store.Store, opts ...icechunk.Option) *icechunk.Repository {
	t.Helper()
	return arraytest.Must(icechunk.Create(context.Background(), st, opts...))(t)
}

// session starts a session on branch of r.
func session(t testing.TB, r *icechunk.Repository, branch string, opts ...icechunk.WriteOption) *icechunk.Session {
	t.Helper()
	return arraytest.Must(r.Session(context.Background(), branch, opts...))(t)
}

// commit commits s with message (and no metadata).
func commit(t testing.TB, s *icechunk.Session, message string) icechunk.ID {
	t.Helper()
	id, err := s.Commit(context.Background(), message, nil)
	if err != nil {
		t.Fatalf("commit %q: %v", message, err)
	}
	return id
}

// checkout checks out snapshot id of r.
func checkout(t testing.TB, r *icechunk.Repository, id icechunk.ID) *icechunk.Snapshot {
	t.Helper()
	return arraytest.Must(r.Checkout(context.Background(), id))(t)
}

// checkoutRef checks out the snapshot of ref (a branch or tag) of r.
func checkoutRef(t testing.TB, r *icechunk.Repository, ref string) *icechunk.Snapshot {
	t.Helper()
	return arraytest.Must(r.CheckoutRef(context.Background(), ref))(t)
}

// resolve returns the snapshot ref (a branch, tag or snapshot id) names.
func resolve(t testing.TB, r *icechunk.Repository, ref string) icechunk.ID {
	t.Helper()
	return arraytest.Must(r.Resolve(context.Background(), ref))(t)
}

// history returns the snapshot ref names and its ancestry, newest first.
func history(t testing.TB, r *icechunk.Repository, ref string) (icechunk.ID, []icechunk.SnapshotInfo) {
	t.Helper()
	id := resolve(t, r, ref)
	anc, err := r.Ancestry(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return id, anc
}

// commitVirtual sets the virtual refs (by chunk key) in s and commits it.
func commitVirtual(t testing.TB, s *icechunk.Session, refs map[string]virtual.Ref) icechunk.ID {
	t.Helper()
	for key, ref := range refs {
		if err := s.SetVirtual(context.Background(), key, ref); err != nil {
			t.Fatalf("SetVirtual %s: %v", key, err)
		}
	}
	return commit(t, s, "virtual refs")
}

// newArraySession creates a repository on st (with opts) and a session on
// main holding a new int32 (or dt) array at path of shape and chunks.
func newArraySession(t *testing.T, st store.Store, path string, dt dtype.DataType, shape, chunks []int, opts ...icechunk.Option) (*icechunk.Session, *zarr.Array) {
	t.Helper()
	s := session(t, create(t, st, opts...), "main")
	return s, arraytest.Create(t, s, path, shape, dt, chunks)
}

// openMainArray opens the repository on st afresh (with opts) and the
// array at path of main's snapshot.
func openMainArray(t *testing.T, st store.Reader, path string, opts ...icechunk.Option) *zarr.Array {
	t.Helper()
	return arraytest.Open(t, checkoutRef(t, open(t, st, opts...), "main"), path)
}

// checkRefs compares r's branches and tags (names and snapshot ids) with
// want.
func checkRefs(t *testing.T, r *icechunk.Repository, branches, tags map[string]string) {
	t.Helper()
	br, tg := refs(t, r)
	for _, c := range []struct {
		what string
		got  map[string]icechunk.ID
		want map[string]string
	}{{"branches", br, branches}, {"tags", tg, tags}} {
		got := map[string]string{}
		for k, v := range c.got {
			got[k] = v.String()
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s %v, want %v", c.what, got, c.want)
		}
	}
}

// refs returns r's branches and tags.
func refs(t testing.TB, r *icechunk.Repository) (branches, tags map[string]icechunk.ID) {
	t.Helper()
	ctx := context.Background()
	branches, err := r.Branches(ctx)
	if err == nil {
		tags, err = r.Tags(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	return branches, tags
}
