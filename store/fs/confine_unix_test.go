//go:build unix

package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// linkedStore builds a root whose symbolic links lead outside it, and next
// to it a directory "outside" holding a secret value and a group:
//
//	root/c/0       -> outside/secret      (a chunk)
//	root/c/1       a regular value
//	root/d         -> outside             (a chunk directory)
//	root/g         -> outside/group       (a group child)
//	root/in/alias  -> ../c/1              (a link that stays inside)
//	root/in/loop   -> ..                  (a loop inside)
//	root/up        -> ..                  (the root's parent)
func linkedStore(t *testing.T, opts ...fs.Option) (s *fs.Store, root, outside string) {
	t.Helper()
	ctx := context.Background()
	s, root = newStore(t, opts...)
	outside = filepath.Join(filepath.Dir(root), "outside")
	for p, v := range map[string]string{"secret": "secret!", "0": "secret chunk", "group/zarr.json": `{"secret": 1}`} {
		p = filepath.Join(outside, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set(ctx, "c/1", []byte("inside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "in"), 0o777); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"c/0": filepath.Join(outside, "secret"), "d": outside, "g": filepath.Join(outside, "group"),
		"in/alias": filepath.Join("..", "c", "1"), "in/loop": "..", "up": "..",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return s, root, outside
}

// bothReadPaths runs test with the Linux openat2 fast path for reads (on
// other systems, the os.Root again) and with reads through the os.Root.
func bothReadPaths(t *testing.T, test func(t *testing.T)) {
	t.Run("openat2", test)
	t.Run("os.Root", func(t *testing.T) {
		defer fs.SetOpenat2(false)()
		test(t)
	})
}

// TestSymlinksConfined checks that by default no read, write, delete or
// listing follows a symbolic link out of the root, while links that stay
// inside it work.
func TestSymlinksConfined(t *testing.T) { bothReadPaths(t, testSymlinksConfined) }

func testSymlinksConfined(t *testing.T) {
	ctx := context.Background()
	s, _, outside := linkedStore(t)
	for _, key := range []string{"c/0", "d/0", "d/secret", "g/zarr.json", "up/outside/secret"} {
		for name, call := range readCalls(s, key) {
			err := call(ctx)
			if !errors.Is(err, fs.ErrOutsideRoot) || errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s(%q) = %v; want ErrOutsideRoot", name, key, err)
			}
			var ke *store.KeyError
			if !errors.As(err, &ke) || ke.Key != key {
				t.Errorf("%s(%q): %v does not name the key", name, key, err)
			}
		}
	}
	if b, err := s.Get(ctx, "in/alias", store.Full()); err != nil || string(b) != "inside" {
		t.Errorf("Get(in/alias), a link inside the root = %q, %v; want inside", b, err)
	}
	// Writing and deleting through a link leave the outside alone.
	if err := s.Set(ctx, "d/new", []byte("x")); !errors.Is(err, fs.ErrOutsideRoot) {
		t.Errorf("Set(d/new) = %v; want ErrOutsideRoot", err)
	}
	if err := s.Delete(ctx, "d/0"); !errors.Is(err, fs.ErrOutsideRoot) {
		t.Errorf("Delete(d/0) = %v; want ErrOutsideRoot", err)
	}
	if err := s.Delete(ctx, "g/zarr.json"); !errors.Is(err, fs.ErrOutsideRoot) {
		t.Errorf("Delete(g/zarr.json) = %v; want ErrOutsideRoot", err)
	}
	if got := tree(t, outside); !slices.Equal(got, []string{"0", "group/", "group/zarr.json", "secret"}) {
		t.Errorf("outside after writes through links: %q", got)
	}
	// Set over the link c/0 replaces the link, not its target.
	if err := s.Set(ctx, "c/0", []byte("mine")); err != nil {
		t.Errorf("Set(c/0) over a link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret!" {
		t.Errorf("outside/secret = %q after Set(c/0)", b)
	}
	// Listing shows what is inside, and nothing reached through links out.
	var all []string
	for k, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		all = append(all, k)
	}
	if want := []string{"c/0", "c/1", "in/alias"}; !slices.Equal(all, want) {
		t.Errorf("List = %q, want %q", all, want)
	}
	keys, dirs, err := s.ListDir(ctx, "")
	if err != nil || len(keys) != 0 || !slices.Equal(dirs, []string{"c/", "in/"}) {
		t.Errorf("ListDir() = %q %q, %v; want [c/ in/]", keys, dirs, err)
	}
	keys, dirs, err = s.ListDir(ctx, "in/")
	if err != nil || !slices.Equal(keys, []string{"alias"}) || !slices.Equal(dirs, []string{"loop/"}) {
		t.Errorf("ListDir(in/) = %q %q, %v; want [alias] [loop/]", keys, dirs, err)
	}
	for _, dir := range []string{"d/", "g/"} {
		if _, _, err := s.ListDir(ctx, dir); !errors.Is(err, fs.ErrOutsideRoot) {
			t.Errorf("ListDir(%s) = %v; want ErrOutsideRoot", dir, err)
		}
		for _, err := range s.List(ctx, dir) {
			if !errors.Is(err, fs.ErrOutsideRoot) {
				t.Errorf("List(%s) yielded %v; want ErrOutsideRoot", dir, err)
			}
		}
	}
}

// TestFollowSymlinks checks the explicit way out: with FollowSymlinks the
// store reads through links wherever they lead, as before.
func TestFollowSymlinks(t *testing.T) {
	ctx := context.Background()
	s, _, _ := linkedStore(t, fs.FollowSymlinks())
	for key, want := range map[string]string{"c/0": "secret!", "d/0": "secret chunk", "g/zarr.json": `{"secret": 1}`, "in/alias": "inside"} {
		if b, err := s.Get(ctx, key, store.Full()); err != nil || string(b) != want {
			t.Errorf("Get(%q) = %q, %v; want %q", key, b, err, want)
		}
	}
	keys, dirs, err := s.ListDir(ctx, "")
	if err != nil || len(keys) != 0 || !slices.Equal(dirs, []string{"c/", "d/", "g/", "in/", "up/"}) {
		t.Errorf("ListDir() = %q %q, %v", keys, dirs, err)
	}
	// The walk goes through links but not round loops: up/root/up is
	// where it already is.
	var all []string
	for k, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		all = append(all, k)
	}
	want := []string{"c/0", "c/1", "d/0", "d/group/zarr.json", "d/secret", "g/zarr.json", "in/alias",
		"up/outside/0", "up/outside/group/zarr.json", "up/outside/secret",
		"up/root/c/0", "up/root/c/1", "up/root/d/0", "up/root/d/group/zarr.json", "up/root/d/secret",
		"up/root/g/zarr.json", "up/root/in/alias"}
	if !slices.Equal(all, want) {
		t.Errorf("List = %q\nwant %q", all, want)
	}
}
