package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storeurl"
)

// openTarget opens the store a TARGET names and returns the node path of
// the target inside it: the target itself is the store's root. Local
// directories, file:// URLs and paths inside a local .zip/.ozx file
// (archive.ozx/0/labels) are opened read-only (and confined to the
// directory: links out of it are refused); s3:// and http(s):// go
// through storeurl (AWS settings from the standard environment) with the
// timeouts of --timeout, or the stores' defaults.
func openTarget(ctx context.Context, target string) (store.Reader, string, error) {
	if st, node, ok, err := openIcechunkTarget(ctx, target); ok {
		return st, node, err // icechunk.go
	}
	if st, node, ok, err := openHDF5Target(ctx, target); ok {
		return st, node, err // virtualize.go
	}
	if st, node, ok, err := openRefsTarget(ctx, target); ok {
		return st, node, err // refs.go
	}
	if st, node, ok, err := openParqTarget(ctx, target); ok {
		return st, node, err // parq.go
	}
	if strings.Contains(target, "://") && !strings.HasPrefix(target, "file://") {
		var opts []storeurl.Option
		if t, ok := ctx.Value(timeoutKey{}).(store.Timeouts); ok {
			opts = append(opts, storeurl.WithTimeouts(t))
		}
		st, err := storeurl.Open(ctx, target, opts...)
		if err != nil {
			return nil, "", err
		}
		return st, "", nil
	}
	loc, err := storeurl.Parse(target)
	if err != nil {
		return nil, "", err
	}
	info, err := os.Stat(loc.Path)
	if err != nil {
		if st, node, ok, aerr := openInArchive(ctx, loc.Path); ok {
			return st, node, aerr // a node inside a .zip or .ozx
		}
		return nil, "", fmt.Errorf("target %s: %w", target, err)
	}
	if lower := strings.ToLower(loc.Path); !info.IsDir() && !strings.HasSuffix(lower, ".ozx") && !strings.HasSuffix(lower, ".zip") {
		return nil, "", fmt.Errorf("target %s: not a directory (give the array's or group's directory)", target)
	}
	st, err := storeurl.Open(ctx, target, storeurl.WithFS(fs.ReadOnly()))
	if err != nil {
		return nil, "", err
	}
	return st, "", nil
}

// timeoutKey carries the --timeout of a command line to openTarget, as
// store.Timeouts.
type timeoutKey struct{}

// takeTimeout removes "--timeout D" (or "--timeout=D") from args, where it
// may appear before a "--" with any command, and returns ctx carrying it
// for openTarget and the other arguments. D bounds each wait on a remote
// server (connecting, an answer's headers, each next part of its body);
// 0 means no limit. Without the flag the stores' defaults apply
// (store.DefaultTimeouts).
func takeTimeout(ctx context.Context, args []string) (context.Context, []string, error) {
	rest, err := takeGlobal(args, []string{"timeout"}, func(_, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%w: --timeout wants a duration such as 30s or 2m, not %q", errUsage, v)
		}
		if d == 0 {
			d = -1 // store.Timeouts: no limit
		}
		ctx = context.WithValue(ctx, timeoutKey{}, store.Timeouts{Connect: d, Header: d, Idle: d})
		return nil
	})
	return ctx, rest, err
}

// takeGlobal removes the flags of names that take a value ("--name V" or
// "--name=V"), which may appear before a "--" with any command, handing
// each to set, and returns the other arguments.
func takeGlobal(args, names []string, set func(name, value string) error) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), nil
		}
		name, v, found, inline := "", "", false, false
		for _, n := range names {
			if v, inline = strings.CutPrefix(a, "--"+n+"="); inline || a == "--"+n {
				name, found = n, true
				break
			}
		}
		if !found {
			rest = append(rest, a)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%w: flag --%s needs a value", errUsage, name)
			}
			i++
			v = args[i]
		}
		if err := set(name, v); err != nil {
			return nil, err
		}
	}
	return rest, nil
}
