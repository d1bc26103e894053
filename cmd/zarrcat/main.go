// Command zarrcat inspects, lists, summarises, compares and copies Zarr
// arrays and groups, and writes selections of arrays as .npy, text, CSV,
// JSON or raw bytes (zarrcat help COMMAND tells each command):
//
//	zarrcat info [--size] [--json] TARGET
//	zarrcat get [--format npy|text|csv|json|raw] [-o FILE] TARGET [SELECTION]
//	zarrcat ls|tree [--depth N] [--size] [--json] TARGET
//	zarrcat stats [--hist N] [--json] TARGET [SELECTION]
//	zarrcat cp [--chunks S] [--shards S] [--codec C] [--dtype T] [--resume] [--validate] SRC DST
//	zarrcat diff [--json] A B
//
// TARGET is an array's or group's directory, or a URL (file://, s3://,
// http(s)://). SELECTION uses NumPy syntax: "0:10,:,5", "[..., ::2]", "-1".
// Errors are one line on stderr and a non-zero exit status.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() { <-ctx.Done(); stop() }() // a second Ctrl-C ends zarrcat at once
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "zarrcat:", strings.TrimPrefix(err.Error(), "usage: "))
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		if errors.Is(err, errDiffer) {
			os.Exit(exitDiffer) // the report is on stdout
		}
		if errors.Is(err, errBrokenPipe) {
			os.Exit(0) // the reader has what it wanted: zarrcat get | head
		}
		fmt.Fprintln(os.Stderr, "zarrcat:", oneLine(err.Error()))
		os.Exit(1)
	}
}

const usage = `usage:
  zarrcat info [--size] [--json] TARGET
  zarrcat get [--format npy|text|csv|json|raw] [-o FILE] [--budget N] [--max-chunk-bytes N] TARGET [SELECTION]
  zarrcat ls|tree [--depth N] [--size] [--json] TARGET
  zarrcat stats [--hist N] [--json] [--budget N] TARGET [SELECTION]
  zarrcat cp [--chunks S] [--shards S] [--codec C] [--dtype T] [--resume] [--validate] [--budget N] SRC DST
  zarrcat diff [--json] A B        (exit status 3: they differ)
  zarrcat consolidate [--check] TARGET   writes (or checks) consolidated metadata
  zarrcat virtualize [-o refs.json] FILE.h5|FILE.nc   kerchunk references to an HDF5 file
  zarrcat log|branches|tags [--ref NAME] REPO   an Icechunk repository's history
  zarrcat help COMMAND             (flags and examples)
TARGET is an array or group directory, or a file://, s3://, http(s):// URL,
or a path inside an Icechunk repository (--ref NAME: branch, tag or snapshot),
or inside a kerchunk references file (--allow PREFIX: see zarrcat help refs).
SELECTION uses NumPy syntax, e.g. "0:10,:,5" or "[..., ::2]".
--max-chunk-bytes refuses arrays whose chunks decode to more (default 512MiB;
N is bytes, or a number with KiB, MiB, GiB or TiB).
  zarrcat clean [--older-than D] DIR   removes temporary files (.gozarr-tmp-*)
    that killed writes left, if older than D (default 1h; 0: all).
--timeout D (any command) bounds each wait on a remote server: connecting,
an answer's headers, each next part of its body (default 10s to connect,
30s otherwise; 0: no limit).
`

// oneLine folds an error message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// run executes one zarrcat command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	ctx, args, err := takeTimeout(ctx, args)
	if err != nil {
		return err
	}
	if ctx, args, err = takeRef(ctx, args); err != nil {
		return err
	}
	if ctx, args, err = takeAllow(ctx, args); err != nil {
		return err
	}
	if len(args) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "info":
		return cmdInfo(ctx, args[1:], stdout)
	case "get":
		return cmdGet(ctx, args[1:], stdout, stderr)
	case "stats":
		return cmdStats(ctx, args[1:], stdout, stderr)
	case "cp":
		return cmdCp(ctx, args[1:], stdout, stderr)
	case "diff":
		return cmdDiff(ctx, args[1:], stdout, stderr)
	case "ls", "tree":
		return cmdTree(ctx, args[0], args[1:], stdout)
	case "clean":
		return cmdClean(ctx, args[1:], stdout)
	case "consolidate":
		return cmdConsolidate(ctx, args[1:], stdout)
	case "virtualize":
		return cmdVirtualize(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		return cmdHelp(args[1:], stdout)
	case "log":
		return cmdLog(ctx, args[1:], stdout)
	case "branches", "tags":
		return cmdRefs(ctx, args[0], args[1:], stdout)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}

// splitArgs separates flags from positional arguments, allowing them in any
// order. valued names the flags: true for those that take a value ("-o
// FILE", "--o=FILE"), false for switches ("--json").
// An argument that looks like a selection ("-1", "-3:", ":-2") is
// positional, and so is everything after "--".
func splitArgs(args []string, valued map[string]bool) (flags map[string]string, pos []string, err error) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' || strings.ContainsAny(a[1:2], "0123456789:.") {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		takes, known := valued[name]
		if !known {
			return nil, nil, fmt.Errorf("%w: unknown flag %s", errUsage, a)
		}
		if !takes { // a switch: --json, -q
			if hasVal {
				return nil, nil, fmt.Errorf("%w: flag %s takes no value", errUsage, a)
			}
			flags[name] = ""
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%w: flag %s needs a value", errUsage, a)
			}
			i++
			val = args[i]
		}
		flags[name] = val
	}
	return flags, pos, nil
}
