package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/storeurl"
)

// Icechunk repositories as targets: a TARGET inside a directory holding an
// Icechunk repository (a "repo" object, or refs/branch.main/ref.json) reads
// the snapshot --ref names (a branch, tag or snapshot id; default main),
// with the rest of the path as the node inside it. Remote URLs name the
// repository's root.

// refKey carries --ref to openTarget.
type refKey struct{}

// takeRef removes "--ref NAME" (or "--ref=NAME") before any "--", like
// takeTimeout.
func takeRef(ctx context.Context, args []string) (context.Context, []string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		v, ok := strings.CutPrefix(a, "--ref=")
		if !ok && a != "--ref" {
			rest = append(rest, a)
			continue
		}
		if !ok {
			if i+1 >= len(args) {
				return ctx, nil, fmt.Errorf("%w: flag --ref needs a branch, tag or snapshot id", errUsage)
			}
			i++
			v = args[i]
		}
		refs, _ := ctx.Value(refKey{}).([]string)
		ctx = context.WithValue(ctx, refKey{}, append(slices.Clone(refs), v))
	}
	return ctx, rest, nil
}

// refsOf returns the --ref values given.
func refsOf(ctx context.Context) []string {
	r, _ := ctx.Value(refKey{}).([]string)
	return r
}

// refOf returns the last --ref, or main.
func refOf(ctx context.Context) string {
	if r := refsOf(ctx); len(r) > 0 {
		return r[len(r)-1]
	}
	return "main"
}

// isRepoDiff reports a "diff --ref A --ref B REPO" command line.
func isRepoDiff(ctx context.Context, args []string) bool {
	return len(args) > 0 && args[0] == "diff" && len(refsOf(ctx)) == 2
}

// cmdRepoDiff prints what changed from snapshot A to B: "+", "-" or "~"
// with the node kind and path, then per array the chunks changed.
func cmdRepoDiff(ctx context.Context, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: diff --ref A --ref B wants one REPO", errUsage)
	}
	r, _, err := openRepo(ctx, pos[0])
	if err != nil {
		return err
	}
	var ids [2]icechunk.ID
	for i, ref := range refsOf(ctx) {
		if ids[i], err = r.Resolve(ctx, ref); err != nil {
			return err
		}
	}
	d, err := r.Diff(ctx, ids[0], ids[1])
	if err != nil {
		return err
	}
	if _, ok := flags["json"]; ok {
		return writeJSON(stdout, d)
	}
	for _, l := range []struct {
		mark, kind string
		paths      []string
	}{{"+", "group", d.NewGroups}, {"+", "array", d.NewArrays}, {"-", "group", d.DeletedGroups},
		{"-", "array", d.DeletedArrays}, {"~", "group", d.UpdatedGroups}, {"~", "array", d.UpdatedArrays}} {
		for _, p := range l.paths {
			fmt.Fprintf(stdout, "%s %s %s\n", l.mark, l.kind, p)
		}
	}
	paths := slices.Sorted(maps.Keys(d.UpdatedChunks))
	for _, p := range paths {
		fmt.Fprintf(stdout, "  chunks %s: %d changed %v\n", p, len(d.UpdatedChunks[p]), d.UpdatedChunks[p])
	}
	return nil
}

// isRepoDir reports whether dir holds an Icechunk repository.
func isRepoDir(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, "repo")); err == nil && st.Mode().IsRegular() {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "refs", "branch.main", "ref.json"))
	return err == nil
}

// findRepo returns the repository root holding a local target, and the
// node path under it, if the target is in one.
func findRepo(target string) (root, node string, ok bool) {
	loc, err := storeurl.Parse(target)
	if err != nil || strings.Contains(target, "://") && !strings.HasPrefix(target, "file://") {
		return "", "", false
	}
	p := filepath.Clean(loc.Path)
	var rest []string
	for {
		if isRepoDir(p) {
			slices.Reverse(rest)
			return p, strings.Join(rest, "/"), true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", "", false
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

// openRepo opens the repository a target names (its root for URLs).
func openRepo(ctx context.Context, target string) (*icechunk.Repository, string, error) {
	var st store.Reader
	node := ""
	if root, n, ok := findRepo(target); ok {
		s, err := fs.New(root, fs.ReadOnly())
		if err != nil {
			return nil, "", err
		}
		st, node = s, n
	} else {
		s, err := storeurl.Open(ctx, target, storeurl.WithFS(fs.ReadOnly()))
		if err != nil {
			return nil, "", err
		}
		st = s
	}
	r, err := icechunk.Open(ctx, st)
	if err != nil {
		return nil, "", fmt.Errorf("target %s: %w", target, err)
	}
	return r, node, nil
}

// openIcechunkTarget opens a target inside a repository as the snapshot
// --ref names; ok is false when the target is in none.
func openIcechunkTarget(ctx context.Context, target string) (store.Reader, string, bool, error) {
	remote := strings.Contains(target, "://") && !strings.HasPrefix(target, "file://")
	if _, _, ok := findRepo(target); !ok && !remote {
		if ctx.Value(refKey{}) != nil {
			return nil, "", true, fmt.Errorf("%w: --ref: %s is not in an Icechunk repository", errUsage, target)
		}
		return nil, "", false, nil
	}
	if remote && len(refsOf(ctx)) == 0 {
		return nil, "", false, nil // a remote URL is a repository only when --ref says so
	}
	r, node, err := openRepo(ctx, target)
	if err != nil {
		return nil, "", true, err
	}
	snap, err := r.CheckoutRef(ctx, refOf(ctx))
	if err != nil {
		return nil, "", true, err
	}
	return snap, node, true, nil
}

const icechunkHelp = `
TARGET may be inside an Icechunk repository (spec 1 or 2): a local
directory holding a "repo" object or refs/, or, with --ref, a remote URL of
the repository's root. --ref NAME (any command) reads the branch, tag or
snapshot id NAME (default main); the rest of the path names the node.
zarrcat cp SOURCE REPO/NAME [--ref BRANCH] [-m MSG] copies into a session
on BRANCH (default main) and commits it with the message MSG; with two
--ref the first names SOURCE's ref (when SOURCE is in a repository too).
`

var logHelp = `zarrcat log [--ref NAME] [--json] REPO
Lists the ancestry of a branch, tag or snapshot (default main), newest
first: snapshot id, commit time (UTC), message.
Examples:
  zarrcat log testdata/icechunk/spec2
  zarrcat log --ref dev testdata/icechunk/spec1
  zarrcat get --ref v1 testdata/icechunk/spec2/i4 "0:2, 0:5"
  zarrcat tree --ref dev testdata/icechunk/spec2
  zarrcat diff --ref v1 --ref main testdata/icechunk/spec2
zarrcat diff --ref A --ref B [--json] REPO lists the nodes created (+),
deleted (-) and changed (~) from snapshot A to B, and the chunks changed.
` + icechunkHelp

var branchesHelp = `zarrcat branches [--json] REPO
zarrcat tags [--json] REPO
Lists an Icechunk repository's branches (or tags, deleted ones left out):
name and snapshot id, sorted by name.
Examples:
  zarrcat branches testdata/icechunk/spec2
  zarrcat tags testdata/icechunk/spec1
  zarrcat info --ref v3 testdata/icechunk/spec1/u8
` + icechunkHelp

func init() {
	commandHelp["log"] = logHelp
	commandHelp["branches"] = branchesHelp
	commandHelp["tags"] = branchesHelp
}

func cmdLog(ctx context.Context, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: log wants one REPO", errUsage)
	}
	r, _, err := openRepo(ctx, pos[0])
	if err != nil {
		return err
	}
	id, err := r.Resolve(ctx, refOf(ctx))
	if err != nil {
		return err
	}
	anc, err := r.Ancestry(ctx, id)
	if err != nil {
		return err
	}
	if _, ok := flags["json"]; ok {
		type entry struct {
			ID       string         `json:"id"`
			Parent   string         `json:"parent,omitempty"`
			Time     time.Time      `json:"time"`
			Message  string         `json:"message"`
			Metadata map[string]any `json:"metadata"`
		}
		out := make([]entry, len(anc))
		for i, si := range anc {
			out[i] = entry{ID: si.ID.String(), Time: si.Time, Message: si.Message, Metadata: si.Metadata}
			if si.HasParent {
				out[i].Parent = si.Parent.String()
			}
		}
		return writeJSON(stdout, out)
	}
	for _, si := range anc {
		fmt.Fprintf(stdout, "%s  %s  %s\n", si.ID, si.Time.Format("2006-01-02T15:04:05.000000Z"), oneLine(si.Message))
	}
	return nil
}

func cmdRefs(ctx context.Context, kind string, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: %s wants one REPO", errUsage, kind)
	}
	r, _, err := openRepo(ctx, pos[0])
	if err != nil {
		return err
	}
	var refs map[string]icechunk.ID
	if kind == "tags" {
		refs, err = r.Tags(ctx)
	} else {
		refs, err = r.Branches(ctx)
	}
	if err != nil {
		return err
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	slices.Sort(names)
	if _, ok := flags["json"]; ok {
		out := map[string]string{}
		for _, n := range names {
			out[n] = refs[n].String()
		}
		return writeJSON(stdout, out)
	}
	for _, n := range names {
		fmt.Fprintf(stdout, "%s  %s\n", refs[n], n)
	}
	return nil
}

// repoDest is a cp DESTINATION inside an Icechunk repository: the copy is
// written into a session on a branch and committed when it is complete.
type repoDest struct {
	session *icechunk.Session
	branch  string
	message string
	dest    *destination
}

// repoDestination recognizes a cp DESTINATION inside an Icechunk
// repository: a local path below a repository's directory, or, with -m or
// --ref, a remote URL below a repository's root. The last --ref then names
// the branch written (default main) and an earlier one the source's ref;
// the returned context carries the source's. rd is nil for other
// destinations (where -m is a usage error).
func repoDestination(ctx context.Context, dst string, flags map[string]string) (context.Context, *repoDest, error) {
	msg, hasMsg := flags["m"]
	refs := refsOf(ctx)
	var st store.Reader
	var node string
	if root, n, ok := findRepo(dst); ok {
		s, err := fs.New(root)
		if err != nil {
			return ctx, nil, err
		}
		st, node = s, n
	} else if remote := strings.Contains(dst, "://") && !strings.HasPrefix(dst, "file://"); remote && (hasMsg || len(refs) > 0) {
		s, n, err := findRemoteRepo(ctx, dst)
		if err != nil {
			return ctx, nil, err
		}
		st, node = s, n
	}
	if st == nil {
		if hasMsg {
			return ctx, nil, fmt.Errorf("%w: -m is the commit message of a copy into an Icechunk repository, and %s is in none", errUsage, dst)
		}
		return ctx, nil, nil
	}
	if node == "" {
		return ctx, nil, fmt.Errorf("%w: cp into an Icechunk repository needs a node path below its root (REPO/NAME)", errUsage)
	}
	branch := "main"
	srcCtx := context.WithValue(ctx, refKey{}, nil)
	if len(refs) > 0 {
		branch = refs[len(refs)-1]
		if len(refs) > 1 {
			srcCtx = context.WithValue(ctx, refKey{}, refs[:len(refs)-1])
		}
	}
	r, err := icechunk.Open(ctx, st)
	if err != nil {
		return ctx, nil, fmt.Errorf("destination %s: %w", dst, err)
	}
	s, err := r.Session(ctx, branch)
	if errors.Is(err, icechunk.ErrRefNotFound) {
		return ctx, nil, fmt.Errorf("destination %s: --ref %s: %w (a copy is committed onto a branch)", dst, branch, err)
	}
	if err != nil {
		return ctx, nil, fmt.Errorf("destination %s: %w", dst, err)
	}
	if !hasMsg {
		msg = "zarrcat cp to /" + node
	}
	d := &destination{typed: dst, store: dst, node: node, shown: dst}
	for _, err := range s.List(ctx, node+"/") {
		if err != nil {
			return ctx, nil, err
		}
		d.existed = true
		break
	}
	return srcCtx, &repoDest{session: s, branch: branch, message: msg, dest: d}, nil
}

// findRemoteRepo finds the repository root at or above a remote URL and
// the node path below it.
func findRemoteRepo(ctx context.Context, url string) (store.Reader, string, error) {
	u := strings.TrimRight(url, "/")
	scheme := strings.Index(u, "://") + 3
	var rest []string
	for {
		s, err := storeurl.Open(ctx, u)
		if err != nil {
			return nil, "", err
		}
		for _, k := range []string{"repo", "refs/branch.main/ref.json"} {
			if _, err := s.Get(ctx, k, store.OffsetLen(0, 0)); err == nil {
				slices.Reverse(rest)
				return s, strings.Join(rest, "/"), nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, "", fmt.Errorf("destination %s: %w", url, err)
			}
		}
		i := strings.LastIndexByte(u, '/')
		if i < scheme || !strings.Contains(u[scheme:], "/") {
			return nil, "", fmt.Errorf("%w: no Icechunk repository at or above %s", errUsage, url)
		}
		rest = append(rest, u[i+1:])
		u = u[:i]
	}
}

// commit commits a completed copy onto the branch.
func (rd *repoDest) commit(ctx context.Context, src string) (icechunk.ID, error) {
	id, err := rd.session.Commit(ctx, rd.message, map[string]any{"zarrcat": "cp " + src + " /" + rd.dest.node})
	if err != nil {
		return id, fmt.Errorf("committing the copy to branch %s: %w", rd.branch, err)
	}
	return id, nil
}
