package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/zip"
	"github.com/gozarr/gozarr/zarr"
)

// destination is where cp writes, resolved from what the user typed.
type destination struct {
	typed string // DESTINATION as given
	// store is the location opened for writing: the enclosing Zarr
	// hierarchy's root when the destination lies inside one (so the
	// parent groups in between are written), else the destination.
	store string
	node  string // the copy's node path inside store ("" its root)
	shown string // the destination as a path to show (DIR/NAME when redirected)
	local bool
	// existed says a Zarr node was already at the destination (resume,
	// or a refusal); made is the first directory cp creates, which a
	// failed fresh copy removes ("" when none is made).
	existed bool
	made    string
	// replace is an existing archive --overwrite replaces: the copy is
	// written as a new archive at store, renamed onto it when complete.
	replace string
}

// isZarrDir reports whether a local directory holds a Zarr node's
// metadata.
func isZarrDir(dir string) bool {
	for _, n := range []string{zarr.MetadataKey, zarr.V2ArrayKey, zarr.V2GroupKey} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// sourceName is the last path element of a SOURCE, the name cp gives the
// copy inside an existing directory (as cp -r does); an archive's becomes
// NAME.zarr.
func sourceName(src string) string {
	p := src
	if loc, err := storeurl.Parse(src); err == nil && loc.Path != "" {
		p = loc.Path
	} else if _, rest, ok := strings.Cut(src, "://"); ok {
		p = rest
	}
	name := path.Base(strings.TrimRight(filepath.ToSlash(p), "/"))
	for _, ext := range []string{".zip", ".ozx"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			name = name[:len(name)-len(ext)] + ".zarr"
		}
	}
	if name == "." || name == "/" || name == "" {
		name = "copy.zarr"
	}
	return name
}

// resolveDestination decides where cp writes, as cp -r and rsync do: an
// existing directory that is not a Zarr node gets the copy as DIR/NAME
// (NAME the source's last element), never written into; an existing
// non-Zarr directory there too is refused, and so is a file. A destination
// inside an existing Zarr hierarchy is written through the hierarchy's
// root, so missing groups between are created and a node inside an array
// is refused.
func resolveDestination(src, dst string, overwrite bool) (*destination, error) {
	d := &destination{typed: dst, store: dst, shown: dst}
	if strings.Contains(dst, "://") && !strings.HasPrefix(dst, "file://") {
		return d, nil
	}
	loc, err := storeurl.Parse(dst)
	if err != nil {
		return nil, err
	}
	p := filepath.Clean(loc.Path)
	if l := strings.ToLower(p); strings.HasSuffix(l, ".zip") || strings.HasSuffix(l, ".ozx") {
		if fi, err := os.Stat(p); err == nil {
			if !overwrite || !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("destination %s exists: cp writes a new archive and never changes one (--overwrite replaces it, or give a new name)", dst)
			}
			// A new archive beside it, renamed over it once complete:
			// a failed copy leaves the old one as it was.
			d.store = filepath.Join(filepath.Dir(p), fmt.Sprintf(".gozarr-tmp-%d-%s", os.Getpid(), filepath.Base(p)))
			d.replace, d.existed = p, true
		}
		return d, nil
	}
	d.local = true
	fi, err := os.Stat(p)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("destination %s is a file, not a directory", dst)
	case err == nil && !isZarrDir(p):
		p = filepath.Join(p, sourceName(src))
		d.shown = p
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("destination %s is a file, not a directory", p)
			}
			if !isZarrDir(p) {
				if ents, _ := os.ReadDir(p); len(ents) > 0 {
					return nil, fmt.Errorf("destination %s exists and is not a Zarr array or group: cp never writes into other files (remove it, or give a new name)", p)
				}
			}
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("destination %s: %w", dst, err)
	}
	d.existed = isZarrDir(p)
	// The first missing directory, and the enclosing hierarchy's root.
	root := ""
	for q := p; ; {
		if _, err := os.Stat(q); errors.Is(err, fs.ErrNotExist) {
			d.made = q
		} else if isZarrDir(q) {
			root = q
		} else if q != p {
			break
		}
		up := filepath.Dir(q)
		if up == q {
			break
		}
		q = up
	}
	if root == "" || root == p {
		d.store = p
		return d, nil
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return nil, err
	}
	d.store, d.node = root, filepath.ToSlash(rel)
	return d, nil
}

// nodeName shows the destination of the node at rel below the copy's
// root.
func (d *destination) nodeName(rel string) string {
	if rel == "" {
		return d.shown
	}
	return strings.TrimRight(d.shown, "/") + "/" + rel
}

// cleanup removes what a failed fresh copy wrote, so the corrected command
// can run again: the directories it made (local), or every key under the
// copy (remote). A copy onto an existing node is left for --resume.
func (d *destination) cleanup(ctx context.Context, st store.Store) error {
	if b, ok := st.(*zip.Builder); ok { // a new archive: never written, its staging removed
		return b.Discard(ctx)
	}
	if d.existed {
		return nil
	}
	if d.local {
		if d.made != "" {
			return os.RemoveAll(d.made)
		}
		return nil
	}
	return zarr.DeleteNode(ctx, st, d.node)
}

// groupShown names the group at node path g of the destination's store
// as a location the user would type (the destination's own path less the
// node path in between), not as a node path ("/" read as the filesystem
// root).
func (d *destination) groupShown(g string) string {
	root, ok := d.shown, d.node == ""
	if !ok {
		root, ok = strings.CutSuffix(d.shown, "/"+d.node)
	}
	if !ok {
		root = d.store
	}
	if g == "" {
		return root
	}
	return strings.TrimSuffix(root, "/") + "/" + g
}
