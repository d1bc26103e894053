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
	r, err := icechunk.Open(context.Background(), st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// create creates a repository on st.
func create(t testing.TB, st store.Store, opts ...icechunk.Option) *icechunk.Repository {
	t.Helper()
	r, err := icechunk.Create(context.Background(), st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// session starts a session on branch of r.
func session(t testing.TB, r *icechunk.Repository, branch string, opts ...icechunk.WriteOption) *icechunk.Session {
	t.Helper()
	s, err := r.Session(context.Background(), branch, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	snap, err := r.Checkout(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkoutRef checks out the snapshot of ref (a branch or tag) of r.
func checkoutRef(t testing.TB, r *icechunk.Repository, ref string) *icechunk.Snapshot {
	t.Helper()
	snap, err := r.CheckoutRef(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return snap
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
	ctx := context.Background()
	br, err := r.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := r.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
