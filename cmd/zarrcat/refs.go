package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/storeurl"
)

// refsHelp tells how commands read kerchunk references ("zarrcat help refs").
const refsHelp = `A kerchunk references file (.json, .json.gz, .json.zst: kerchunk's version 0
or 1, as kerchunk, VirtualiZarr or zarrcat virtualize write them) is a TARGET
of info, get, ls, tree, stats, cp and diff; the rest of the path names the
node:
  zarrcat tree testdata/virtual/filters.json
  zarrcat get testdata/virtual/filters.json/zlib_shuffle "0:2, 0:5"
References may name any URL; zarrcat reads only those under the references
file's own directory, and under each prefix given with --allow (any command,
repeatable). Any other reference is refused, naming it, before a request:
  zarrcat --allow s3://bucket/data info refs.json/temp
  --allow PREFIX   a directory, s3://bucket/prefix, https://host/path, ...
A local directory of kerchunk's Parquet references (refs.parq: .zmetadata and
refs.N.parq files) is a TARGET too, read through the Parquet module's
refs2parq command (next to zarrcat, on PATH, or $GOZARR_REFS2PARQ), and
zarrcat virtualize -o OUT.parq writes one through it.
`

func init() { commandHelp["refs"] = refsHelp }

// allowKey carries the --allow prefixes of a command line to openTarget.
type allowKey struct{}

// takeAllow removes every "--allow PREFIX" (or "--allow=PREFIX") before
// any "--", like takeTimeout, and returns ctx carrying the prefixes.
func takeAllow(ctx context.Context, args []string) (context.Context, []string, error) {
	var rest, allow []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		v, ok := strings.CutPrefix(a, "--allow=")
		if !ok && a != "--allow" {
			rest = append(rest, a)
			continue
		}
		if !ok {
			if i+1 >= len(args) {
				return ctx, nil, fmt.Errorf("%w: flag --allow needs a prefix", errUsage)
			}
			i++
			v = args[i]
		}
		if v == "" {
			return ctx, nil, fmt.Errorf("%w: --allow needs a non-empty prefix", errUsage)
		}
		allow = append(allow, v)
	}
	if allow != nil {
		ctx = context.WithValue(ctx, allowKey{}, allow)
	}
	return ctx, rest, nil
}

// refsExts are the file name endings that make a TARGET a references file.
var refsExts = []string{".json", ".json.gz", ".json.zst"}

// splitRefs splits a TARGET into a references file and the node path
// inside it, when one of its path segments ends with a references
// extension (and, locally, is a regular file). Zarr's own documents
// (zarr.json, .zarray, ...) are not references.
func splitRefs(target string) (file, node string, ok bool) {
	remote := strings.Contains(target, "://") && !strings.HasPrefix(target, "file://")
	parts := strings.Split(target, "/")
	for i := 1; i <= len(parts); i++ {
		name := strings.ToLower(parts[i-1])
		match := false
		for _, e := range refsExts {
			match = match || strings.HasSuffix(name, e)
		}
		if !match || name == "zarr.json" || (remote && i <= 3) {
			continue
		}
		p := strings.Join(parts[:i], "/")
		if !remote {
			info, err := os.Stat(strings.TrimPrefix(p, "file://"))
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
		}
		return p, strings.Join(parts[i:], "/"), true
	}
	return "", "", false
}

// openRefsTarget opens a TARGET inside a kerchunk references file (ok
// false when TARGET names none): targets under the file's directory and
// the --allow prefixes resolve, with the stores' --timeout.
func openRefsTarget(ctx context.Context, target string) (store.Reader, string, bool, error) {
	file, node, ok := splitRefs(target)
	if !ok {
		return nil, "", false, nil
	}
	sopts := []storeurl.Option{storeurl.WithFS(fs.ReadOnly())}
	if t, ok := ctx.Value(timeoutKey{}).(store.Timeouts); ok {
		sopts = append(sopts, storeurl.WithTimeouts(t))
	}
	allow, _ := ctx.Value(allowKey{}).([]string)
	ks, err := kerchunk.OpenURL(ctx, file, sopts, kerchunk.Allow(allow...))
	if err != nil {
		return nil, "", true, err
	}
	return ks, node, true, nil
}
