package fs_test

import (
	"bytes"
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storetest"
)

func newStore(t testing.TB, opts ...fs.Option) (*fs.Store, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	s, err := fs.New(root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, root
}

func TestConformance(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store {
		s, root := newStore(t)
		t.Cleanup(func() { checkNoTemp(t, root) })
		return s
	})
}

// TestReaderConformance runs the read-only suite over files written
// directly, not through Set, as another program (zarr-python) would.
func TestReaderConformance(t *testing.T) {
	storetest.TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
		root := t.TempDir()
		for k, v := range contents {
			p := filepath.Join(root, filepath.FromSlash(k))
			if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, v, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		s, err := fs.New(root, fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// checkNoTemp fails if any temporary file is left under root.
func checkNoTemp(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".gozarr-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// tree returns every file and directory under dir, slash-separated.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() {
				rel += "/"
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{filepath.Join(dir, "missing"), file} {
		if s, err := fs.New(root); err == nil {
			t.Errorf("New(%q) = %v, want an error", root, s)
		}
	}
	s, err := fs.New(dir + "/./")
	if err != nil || s.Root() != dir {
		t.Errorf("New(%q) root = %q, %v; want %q", dir+"/./", s.Root(), err, dir)
	}
}

func TestSetLayoutAndNoTempFiles(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t, fs.WithSync())
	for _, k := range []string{"zarr.json", "c/0/0", "c/0/1", "c/0/1", "arr/zarr.json"} {
		if err := s.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"arr/", "arr/zarr.json", "c/", "c/0/", "c/0/0", "c/0/1", "zarr.json"}
	if got := tree(t, root); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(root, "c", "0", "1"))
	if err != nil || string(b) != "c/0/1" {
		t.Errorf("file c/0/1 = %q, %v", b, err)
	}
}

func TestTempFilesHidden(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	if err := s.Set(ctx, "a/b", []byte("b")); err != nil {
		t.Fatal(err)
	}
	// Leftovers of a crashed writer.
	for _, p := range []string{".gozarr-tmp-123", "a/.gozarr-tmp-456"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte("junk"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	keys := storetest.ListKeys(t, s, "")
	if !slices.Equal(keys, []string{"a/b"}) {
		t.Errorf("List = %q, want [a/b]", keys)
	}
	if k, d, err := s.ListDir(ctx, "a/"); err != nil || !slices.Equal(k, []string{"b"}) || len(d) != 0 {
		t.Errorf("ListDir(a/) = %q, %q, %v; want [b], []", k, d, err)
	}
	for _, k := range []string{".gozarr-tmp-123", "a/.gozarr-tmp-456", ".gozarr-tmp-x/y"} {
		if _, err := s.Get(ctx, k, store.Full()); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%q): err = %v, want ErrInvalidKey", k, err)
		}
		if err := s.Set(ctx, k, nil); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Set(%q): err = %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestFailedWriteKeepsOldValue(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	for _, k := range []string{"file", "dir/x"} {
		if err := s.Set(ctx, k, []byte("old "+k)); err != nil {
			t.Fatal(err)
		}
	}
	// "file/y" needs "file" to be a directory; "dir" and "dir2/sub/x" are
	// directories.
	if err := os.MkdirAll(filepath.Join(root, "dir2", "sub", "x"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"file/y", "file/y/z", "dir", "dir2/sub/x"} {
		err := s.Set(ctx, k, []byte("new"))
		if err == nil {
			t.Errorf("Set(%q) succeeded", k)
			continue
		}
		var ke *store.KeyError
		if !errors.As(err, &ke) || ke.Key != k || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Set(%q): err = %v, want a KeyError naming the key, not ErrNotFound", k, err)
		}
	}
	want := []string{"dir/", "dir/x", "dir2/", "dir2/sub/", "dir2/sub/x/", "file"}
	if got := tree(t, root); !slices.Equal(got, want) {
		t.Errorf("files after failed writes = %q, want %q", got, want)
	}
	got, err := s.Get(ctx, "file", store.Full())
	if err != nil || string(got) != "old file" {
		t.Errorf("Get(file) = %q, %v; want old value", got, err)
	}
	got, err = s.Get(ctx, "dir/x", store.Full())
	if err != nil || string(got) != "old dir/x" {
		t.Errorf("Get(dir/x) = %q, %v; want old value", got, err)
	}
	checkNoTemp(t, root)
}

// cancelLater is a context that turns cancelled after its Err has been
// called n times: it cancels a Set after its first check, mid-write.
type cancelLater struct {
	context.Context
	n int
}

func (c *cancelLater) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

func TestSetCancelledMidWrite(t *testing.T) {
	s, root := newStore(t)
	if err := s.Set(context.Background(), "kept/k", []byte("old")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kept/k", "new/dirs/k"} {
		err := s.Set(&cancelLater{Context: context.Background(), n: 1}, k, make([]byte, 10<<20))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Set(%q) cancelled mid-write: err = %v, want context.Canceled", k, err)
		}
	}
	if got, err := s.Get(context.Background(), "kept/k", store.Full()); err != nil || string(got) != "old" {
		t.Errorf("Get(kept/k) = %q, %v; want old", got, err)
	}
	// No temporary file, and no directory made for the new key.
	if got, want := tree(t, root), []string{"kept/", "kept/k"}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

func TestSetIntoReadOnlyDir(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	if err := s.Set(ctx, "dir/x", []byte("old dir/x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "dir"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "dir"), 0o777) })
	if f, err := os.Create(filepath.Join(root, "dir", "probe")); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skip("permissions are not enforced for this user (root?): read-only directory case skipped")
	}
	if err := s.Set(ctx, "dir/x", []byte("new")); err == nil {
		t.Error("Set into a read-only directory succeeded")
	}
	if got, err := s.Get(ctx, "dir/x", store.Full()); err != nil || string(got) != "old dir/x" {
		t.Errorf("Get(dir/x) after failed Set = %q, %v; want old value", got, err)
	}
	checkNoTemp(t, root)
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	w, root := newStore(t)
	if err := w.Set(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s, err := fs.New(root, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "k", []byte("new")); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on read-only store: err = %v, want ErrReadOnly", err)
	}
	if err := s.Set(ctx, "other/k", []byte("new")); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on read-only store: err = %v, want ErrReadOnly", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Delete on read-only store: err = %v, want ErrReadOnly", err)
	}
	if got, err := s.Get(ctx, "k", store.Full()); err != nil || string(got) != "v" {
		t.Errorf("Get = %q, %v; want v", got, err)
	}
	if got := tree(t, root); !slices.Equal(got, []string{"k"}) {
		t.Errorf("files = %q, want [k]", got)
	}
}

func TestDeletePrunes(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	for _, k := range []string{"a/b/c/d", "a/x", "e/f/g"} {
		if err := s.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		key  string
		want []string
	}{
		{"a/b/c/d", []string{"a/", "a/x", "e/", "e/f/", "e/f/g"}},
		{"e/f/g", []string{"a/", "a/x"}},
		{"a/x", nil},
	}
	for _, st := range steps {
		if err := s.Delete(ctx, st.key); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, root); !slices.Equal(got, st.want) {
			t.Errorf("after Delete(%q) files = %q, want %q", st.key, got, st.want)
		}
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("root removed: %v", err)
	}
}

func TestHostileKeysStayInRoot(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	parent := filepath.Dir(root)
	if err := os.WriteFile(filepath.Join(parent, "outside"), []byte("secret"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(storetest.HostileKeys, "../outside", "../root2/x", "/tmp/x", "a/../../outside") {
		s.Set(ctx, k, []byte("evil"))
		s.Delete(ctx, k)
		if b, err := s.Get(ctx, k, store.Full()); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%q) = %q, %v; want ErrInvalidKey", k, b, err)
		}
	}
	if got := tree(t, parent); !slices.Equal(got, []string{"outside", "root/"}) {
		t.Errorf("files around the root = %q, want [outside root/]", got)
	}
	if b, _ := os.ReadFile(filepath.Join(parent, "outside")); string(b) != "secret" {
		t.Errorf("file outside the root changed: %q", b)
	}
}

// TestRefdata lists and reads the zarr-python reference corpus through the
// store and compares with what the os package sees.
func TestRefdata(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "..", "testdata", "refdata")
	s, err := fs.New(root, fs.ReadOnly())
	if err != nil {
		t.Skip("no reference corpus:", err)
	}
	var want []string
	for _, p := range tree(t, root) {
		if !strings.HasSuffix(p, "/") {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	got := storetest.ListKeys(t, s, "")
	if !slices.Equal(got, want) {
		t.Fatalf("List found %d keys, want %d", len(got), len(want))
	}
	read := 0
	for _, k := range got {
		if !strings.HasSuffix(k, "zarr.json") && !strings.HasSuffix(k, ".zarray") {
			continue
		}
		b, err := s.Get(ctx, k, store.Full())
		if err != nil {
			t.Fatal(err)
		}
		wantB, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(k)))
		if err != nil || !bytes.Equal(b, wantB) {
			t.Errorf("Get(%q) differs from the file (%v)", k, err)
		}
		if !bytes.Contains(b, []byte("zarr_format")) {
			t.Errorf("Get(%q) = %.40q, not Zarr metadata", k, b)
		}
		read++
	}
	if read == 0 {
		t.Error("no metadata documents found in the reference corpus")
	}
}

func BenchmarkStore(b *testing.B) {
	s, _ := newStore(b)
	storetest.BenchmarkStore(b, s)
}
