package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/zarr"
)

// targetError is an error about the node a TARGET names, told with the
// target as the user typed it rather than its node path in the store
// ("" for the root); it wraps the library's error, sentinels included.
type targetError struct {
	msg string
	err error
}

func (e *targetError) Error() string { return e.msg }
func (e *targetError) Unwrap() error { return e.err }

// maxHintProbes bounds the subdirectories a "not found" hint looks into.
const maxHintProbes = 32

// targetErr rewrites err, from opening the node at nodePath of st (the
// store target opened), to name target, and adds what would help: the
// Zarr nodes one level below when there is none at the target (an
// archive's top-level folder, the arrays of a directory of them), and
// "zarrcat ls" when a command that reads arrays was given a group.
func targetErr(ctx context.Context, st store.Reader, target, nodePath string, err error) error {
	if err == nil {
		return nil
	}
	var te *targetError
	if errors.As(err, &te) {
		return err
	}
	msg := err.Error()
	p := strings.Trim(nodePath, "/")
	for _, prefix := range []string{fmt.Sprintf("open %q: ", p), fmt.Sprintf("%q: ", p)} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			msg = rest
			break
		}
	}
	switch {
	case errors.Is(err, zarr.ErrNodeNotFound):
		msg = "no Zarr array or group: not found (no zarr.json, .zarray or .zgroup there)" + nodesBelow(ctx, st, target, p)
	case errors.Is(err, zarr.ErrNodeType) && strings.Contains(msg, "not an array"):
		msg += fmt.Sprintf("; 'zarrcat ls %s' lists the arrays in it", target)
	}
	if !strings.HasPrefix(msg, target+": ") { // the walker's errors name it already
		msg = target + ": " + msg
	}
	return &targetError{msg: msg, err: err}
}

// nodesBelow names the Zarr nodes directly below p, as TARGET/NAME, for a
// "not found" error: "" when there are none or st cannot list.
func nodesBelow(ctx context.Context, st store.Reader, target, p string) string {
	l, ok := st.(store.Lister)
	if !ok {
		return ""
	}
	dir := ""
	if p != "" {
		dir = p + "/"
	}
	_, dirs, err := l.ListDir(ctx, dir)
	if err != nil {
		return ""
	}
	var found []string // up to a fourth, which says there are more
	for i, d := range dirs {
		if i == maxHintProbes || len(found) == 4 {
			break
		}
		if _, err := zarr.NodeTypeAt(ctx, st, dir+strings.TrimSuffix(d, "/")); err == nil {
			found = append(found, strings.TrimSuffix(target, "/")+"/"+strings.TrimSuffix(d, "/"))
		}
	}
	switch {
	case len(found) == 0:
		return ""
	case len(dirs) == 1 && isArchive(target):
		return fmt.Sprintf("; the archive's top-level folder is one: give %s", found[0])
	case len(found) <= 3:
		return "; below it: " + strings.Join(found, ", ")
	}
	return "; below it: " + strings.Join(found[:3], ", ") + ", ..."
}

// isArchive reports whether target names a .zip or .ozx file.
func isArchive(target string) bool {
	lower := strings.ToLower(strings.TrimSuffix(target, "/"))
	return strings.HasSuffix(lower, ".zip") || strings.HasSuffix(lower, ".ozx")
}

// openInArchive opens a local TARGET that is a path inside a .zip or .ozx
// file (archive.ozx/0/labels): the archive's store and the node path in
// it. ok is false when no part of the path is such a file.
func openInArchive(ctx context.Context, local string) (st store.Reader, nodePath string, ok bool, err error) {
	slashed := filepath.ToSlash(local)
	for i := 0; i < len(slashed); {
		j := strings.IndexByte(slashed[i:], '/')
		if j < 0 {
			break
		}
		head := slashed[:i+j]
		i += j + 1
		if !isArchive(head) {
			continue
		}
		info, serr := os.Stat(filepath.FromSlash(head))
		if serr != nil || !info.Mode().IsRegular() {
			continue
		}
		st, err := storeurl.Open(ctx, filepath.FromSlash(head), storeurl.WithFS(fs.ReadOnly()))
		if err != nil {
			return nil, "", true, err
		}
		return st, path.Clean("/" + slashed[i:])[1:], true, nil
	}
	return nil, "", false, nil
}

// quoteHint is what a command taking TARGET [SELECTION] adds when given
// more positional arguments: a selection split by the shell (0:3, 0:2
// unquoted) is one argument once quoted.
func quoteHint(pos []string) string {
	if len(pos) <= 2 {
		return ""
	}
	// The shell split "0:3, 0:2" at its space; '0:3' '0:2' were two
	// arguments meant as two items: either way one selection has commas.
	sel := pos[1]
	for _, p := range pos[2:] {
		if strings.HasSuffix(sel, ",") {
			sel += " " + p
		} else {
			sel += ", " + p
		}
	}
	return fmt.Sprintf(", not %d arguments: quote the selection, e.g. '%s'", len(pos), sel)
}

// readErr rewrites an error of reading an array below the node path
// nodePath of the store a TARGET opened (the library's `read "NODE":
// ...`) to name the array as typed: target, or target/REST for a node
// inside it ('read "": chunk ...' named neither). Other errors pass as
// they are.
func readErr(target, nodePath string, err error) error {
	var te *targetError
	if err == nil || errors.As(err, &te) {
		return err
	}
	rest, ok := strings.CutPrefix(err.Error(), "read ")
	q, qerr := strconv.QuotedPrefix(rest)
	if !ok || qerr != nil {
		return err
	}
	p, _ := strconv.Unquote(q)
	base := strings.Trim(nodePath, "/")
	switch {
	case base == "":
	case p == base || strings.HasPrefix(p, base+"/"):
		p = p[len(base):]
	default:
		return err
	}
	shown := strings.TrimSuffix(target, "/")
	if p = strings.Trim(p, "/"); p != "" {
		shown += "/" + p
	}
	return &targetError{msg: shown + ": " + strings.TrimPrefix(rest[len(q):], ": "), err: err}
}
