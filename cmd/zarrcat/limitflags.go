package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gozarr/gozarr/zarr"
)

// limitFlags are the library limits any command takes a flag for, so that
// every limit an error mentions can be raised from the command line: the
// flag and the zarr option it sets.
var limitFlags = []struct {
	flag, option string
	set          func(int64) zarr.Option
}{
	{"max-metadata-bytes", "zarr.WithMaxMetadataBytes", zarr.WithMaxMetadataBytes},
	{"max-vlen-chunk-bytes", "zarr.WithMaxVLenChunkBytes", zarr.WithMaxVLenChunkBytes},
}

// limitsKey carries the zarr options of a command line's limit flags.
type limitsKey struct{}

// takeLimits removes the limit flags ("--max-metadata-bytes N", ...,
// or "--flag=N") from args, where they may appear before a "--" with any
// command, and returns ctx carrying their options for opened nodes.
func takeLimits(ctx context.Context, args []string) (context.Context, []string, error) {
	var opts []zarr.Option
	names := make([]string, len(limitFlags))
	for i, l := range limitFlags {
		names[i] = l.flag
	}
	rest, err := takeGlobal(args, names, func(name, v string) error {
		n, err := parseBytes(v)
		if err != nil {
			return fmt.Errorf("%w: --%s: %v", errUsage, name, err)
		}
		for _, l := range limitFlags {
			if l.flag == name {
				opts = append(opts, l.set(n))
			}
		}
		return nil
	})
	if err != nil {
		return ctx, nil, err
	}
	if len(opts) > 0 {
		ctx = context.WithValue(ctx, limitsKey{}, opts)
	}
	return ctx, rest, nil
}

// withLimits returns opts and the options of the command line's limit
// flags.
func withLimits(ctx context.Context, opts ...zarr.Option) []zarr.Option {
	l, _ := ctx.Value(limitsKey{}).([]zarr.Option)
	return append(opts, l...)
}

// cliLimitHint rewrites the library's "raise it with zarr.WithXxx" in an
// error's text to the flag that raises the limit in zarrcat command cmd
// (cp bounds a chunk by --budget).
func cliLimitHint(cmd string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	for _, l := range limitFlags {
		out = strings.ReplaceAll(out, l.option, "--"+l.flag)
	}
	chunkFlag := "--max-chunk-bytes (default 512MiB)"
	if cmd == "cp" {
		chunkFlag = "--budget"
	}
	out = strings.ReplaceAll(out, "zarr.WithMaxChunkBytes", chunkFlag)
	if errors.Is(err, zarr.ErrChunkTooLarge) {
		// A chunk over a limit zarrcat can raise is no unsupported
		// feature of the array, whatever else the error wraps.
		out = strings.Replace(out, " ("+zarr.ErrUnsupported.Error()+")", "", 1)
	}
	if out == msg {
		return err
	}
	return &targetError{msg: out, err: err}
}
