package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// TestCleanTemp checks that CleanTemp removes the temporary files a killed
// writer leaves, only those older than the age given, prunes the
// directories they leave empty, and touches nothing else.
func TestCleanTemp(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	if err := s.Set(ctx, "c/0/0", []byte("value")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]time.Time{
		".gozarr-tmp-old":          old,
		".gozarr-tmp-new":          time.Now(),
		"c/0/.gozarr-tmp-1":        old,
		"c/1/.gozarr-tmp-2":        old, // c/1 holds nothing else
		"c/2/3/.gozarr-tmp-3":      old,
		"c/0/.gozarr-tmp-dir/keep": old, // a directory: not a temporary file
		"c/0/not-a-tmp":            old,
	}
	for name, mtime := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.CleanTemp(ctx, time.Hour)
	if err != nil || n != 4 {
		t.Errorf("CleanTemp(1h) = %d, %v; want 4 removed", n, err)
	}
	want := []string{".gozarr-tmp-new", "c/", "c/0/", "c/0/.gozarr-tmp-dir/", "c/0/.gozarr-tmp-dir/keep", "c/0/0", "c/0/not-a-tmp"}
	if got := tree(t, root); !slices.Equal(got, want) {
		t.Errorf("after CleanTemp(1h): %q\nwant %q", got, want)
	}
	// Age 0 removes every temporary file.
	if n, err := s.CleanTemp(ctx, 0); err != nil || n != 1 {
		t.Errorf("CleanTemp(0) = %d, %v; want 1 removed", n, err)
	}
	if b, err := s.Get(ctx, "c/0/0", store.Full()); err != nil || string(b) != "value" {
		t.Errorf("Get(c/0/0) after CleanTemp = %q, %v", b, err)
	}
	ro, err := fs.New(root, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.CleanTemp(ctx, 0); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("CleanTemp on a read-only store = %v; want ErrReadOnly", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.CleanTemp(cctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("CleanTemp with a cancelled context = %v", err)
	}
}
