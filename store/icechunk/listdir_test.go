package icechunk

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/internal/arraytest"
)

// countManifests counts the manifests read through it.
type countManifests struct {
	*fs.Store
	n atomic.Int64
}

func (c *countManifests) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if strings.HasPrefix(key, "manifests/") {
		c.n.Add(1)
	}
	return c.Store.Get(ctx, key, r)
}

// TestListDirNoManifests: on every snapshot of the fixture repositories
// (the core's, spec 1 and 2) and upstream's, ListDir of every directory
// equals the listing List's keys give, and a directory at or above the
// arrays' own reads no manifest.
func TestListDirNoManifests(t *testing.T) {
	ctx := context.Background()
	dirs := []string{filepath.Join(fixtureDir, "spec1"), filepath.Join(fixtureDir, "spec2")}
	for _, u := range []string{"test-repo-v1", "test-repo-v2", "split-repo-v2"} {
		dirs = append(dirs, filepath.Join(fixtureDir, "upstream", u))
	}
	for _, d := range dirs {
		src, err := fs.New(d, fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		cm := &countManifests{Store: src}
		r, err := Open(ctx, cm)
		if err != nil {
			t.Fatal(err)
		}
		br, err := r.Branches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for name, id := range br {
			snap, err := r.Checkout(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			// every directory of every key (List reads all manifests)
			all := arraytest.Keys(t, snap, "")
			dirSet := map[string]bool{"": true}
			for _, k := range all {
				for i := range len(k) {
					if k[i] == '/' {
						dirSet[k[:i+1]] = true
					}
				}
			}
			arrays := map[string]bool{}
			for _, n := range snap.Nodes() {
				if n.Kind == KindArray {
					arrays[strings.TrimPrefix(n.Path, "/")+"/"] = true
				}
			}
			for dir := range dirSet {
				var wantKeys, wantDirs []string
				for _, k := range all {
					if !strings.HasPrefix(k, dir) {
						continue
					}
					rest := k[len(dir):]
					if i := strings.IndexByte(rest, '/'); i >= 0 {
						if !slices.Contains(wantDirs, rest[:i+1]) {
							wantDirs = append(wantDirs, rest[:i+1])
						}
					} else {
						wantKeys = append(wantKeys, rest)
					}
				}
				slices.Sort(wantDirs)
				fresh, err := Open(ctx, cm) // (no manifest cached)
				if err != nil {
					t.Fatal(err)
				}
				cold, err := fresh.Checkout(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				before := cm.n.Load()
				keys, ds, err := cold.ListDir(ctx, dir)
				if err != nil {
					t.Fatalf("%s %s ListDir(%q): %v", d, name, dir, err)
				}
				if !slices.Equal(keys, wantKeys) || !slices.Equal(ds, wantDirs) {
					t.Errorf("%s %s ListDir(%q) = %q %q, want %q %q", d, name, dir, keys, ds, wantKeys, wantDirs)
				}
				inChunks := false
				for a := range arrays {
					inChunks = inChunks || strings.HasPrefix(dir, a) && dir != a
				}
				if got := cm.n.Load() - before; !inChunks && got != 0 {
					t.Errorf("%s %s ListDir(%q) read %d manifests", d, name, dir, got)
				}
			}
		}
	}
}
