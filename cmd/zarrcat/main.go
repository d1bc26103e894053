// Command zarrcat inspects, lists, summarises, compares and copies Zarr
// arrays and groups, and writes selections of arrays as .npy, text, CSV,
// JSON or raw bytes (zarrcat help COMMAND tells each command):
//
//	zarrcat info [--size] [--json] TARGET
//	zarrcat get [--format npy|text|csv|json|raw|png] [-o FILE] TARGET [SELECTION]
//	zarrcat ls|tree [--depth N] [--size] [--json] TARGET
//	zarrcat stats [--hist N] [--json] TARGET [SELECTION]
//	zarrcat cp [--chunks S] [--shards S] [--codec C] [--dtype T] [--resume] [--validate] SRC DST
//	zarrcat diff [--json] A B
//
// TARGET is an array's or group's directory, or a URL (file://, s3://,
// http(s)://). s3:// needs a build with -tags s3 (go install -tags s3
// github.com/gozarr/gozarr/cmd/zarrcat@latest): the default build leaves the
// AWS SDK out, a third of the packages of a first build. SELECTION uses NumPy syntax: "0:10,:,5", "[..., ::2]", "-1".
// Errors are one line on stderr and a non-zero exit status.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/storeurl"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() { <-ctx.Done(); stop() }() // a second Ctrl-C ends zarrcat at once
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		code := exitCode(err)
		switch {
		case errors.Is(err, errDiffer), errors.Is(err, errBrokenPipe):
			// diff's report is on stdout; a closed pipe: the reader has
			// what it wanted (zarrcat get | head).
		case code == 2:
			fmt.Fprintln(os.Stderr, "zarrcat:", oneLine(strings.TrimPrefix(err.Error(), "usage: ")))
			fmt.Fprint(os.Stderr, usageHint(err))
		default:
			fmt.Fprintln(os.Stderr, "zarrcat:", oneLine(err.Error()))
		}
		os.Exit(code)
	}
}

// exitCode is the exit status for run's error, as the README says: 2 a
// usage mistake (a flag, an argument, a selection that does not fit the
// array), 3 diff found differences, 0 a closed pipe, 1 any other error.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, errBrokenPipe):
		return 0
	case errors.Is(err, errDiffer):
		return exitDiffer
	case errors.Is(err, errUsage), errors.Is(err, nd.ErrInvalidSelection), errors.Is(err, nd.ErrOutOfBounds):
		return 2
	}
	return 1
}

// cmdError is a usage mistake of one command, which the hint names.
type cmdError struct {
	cmd string
	err error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// usageHint is what follows a usage mistake on stderr: the command's
// synopsis and where its help is (as git does), or the command list.
func usageHint(err error) string {
	var ce *cmdError
	if errors.As(err, &ce) {
		if h, ok := commandHelp[ce.cmd]; ok {
			synopsis, _, _ := strings.Cut(h, "\n")
			for _, l := range strings.Split(h, "\n")[1:] {
				if !strings.HasPrefix(l, "            ") && !strings.HasPrefix(l, "           [") {
					break
				}
				synopsis += "\n" + l
			}
			return "usage: " + synopsis + "\nRun 'zarrcat help " + ce.cmd + "' for its flags and examples.\n"
		}
	}
	return "Run 'zarrcat help' for the commands, 'zarrcat help COMMAND' for one.\n"
}

// commands are zarrcat's command names, for "did you mean".
func commands() []string {
	return []string{"info", "get", "ls", "tree", "stats", "cp", "diff", "clean", "consolidate", "virtualize", "log", "branches", "tags", "help", "version"}
}

// suggest returns the candidate nearest to typed (edit distance at most 2,
// or a prefix), or "".
func suggest(typed string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(typed, c)
		if len(typed) >= 2 && strings.HasPrefix(c, typed) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein (optimal string alignment)
// distance between a and b.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// version is zarrcat's version: the module version it was built at (go
// install ...@v1.2.3) or the VCS revision of a build from a clone.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "zarrcat (unknown version)"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+modified"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		v = "devel " + rev[:min(12, len(rev))] + dirty
	}
	s3 := "s3:// included"
	if !withS3 {
		s3 = "no s3://: " + s3Install
	}
	return fmt.Sprintf("zarrcat %s (%s, %s/%s; %s)", cmp.Or(v, "(devel)"), bi.GoVersion, runtime.GOOS, runtime.GOARCH, s3)
}

const usage = `usage:
  zarrcat info [--size] [--json] TARGET
  zarrcat get [--format npy|text|csv|json|raw|png] [-o FILE] [--budget N] [--max-chunk-bytes N] [-q]
              [--points FILE | --mask FILE.npy | --blocks | --oindex] TARGET [SELECTION]
  zarrcat ls|tree [--depth N] [--size] [--json] TARGET
  zarrcat stats [--hist N] [--json] [--budget N] [-q] TARGET [SELECTION]
  zarrcat cp [--chunks S] [--shards S] [--codec C] [--dtype T] [--resume | --overwrite]
             [--validate] [--budget N] [--json] [-q] SRC DST
  zarrcat diff [--json] [--budget N] [-q] A B   arrays or groups (exit status 3: they differ)
  zarrcat consolidate [--check] TARGET   writes (or checks) consolidated metadata
  zarrcat clean [--older-than D] DIR     removes temporary files killed writes left
  zarrcat virtualize [-o refs.json] FILE.h5|FILE.nc   kerchunk references to an HDF5 file
  zarrcat log|branches|tags [--ref NAME] REPO   an Icechunk repository's history
  zarrcat diff --ref A --ref B REPO   what changed between two Icechunk snapshots
  zarrcat version                        (also --version)
  zarrcat help COMMAND                   (flags and examples; also COMMAND --help)
TARGET is an array or group directory, a .zip/.ozx, a file://, s3:// (a
build with -tags s3), http(s):// URL, a path inside an Icechunk repository (--ref NAME: branch,
tag or snapshot), or inside a kerchunk references file (--allow PREFIX:
see zarrcat help refs).
SELECTION uses NumPy syntax, e.g. "0:10,:,5" or "[..., ::2]"; quote it.
--timeout D (any command) bounds each wait on a remote server: connecting,
an answer's headers, each next part of its body (default 10s to connect,
30s otherwise; 0: no limit).
--max-metadata-bytes N, --max-vlen-chunk-bytes N (any command) raise the
limits on one metadata document (16MiB) and on the values of one string or
bytes chunk (4MiB, or 256 bytes an element when more), which errors name.
Exit status: 0 success, 1 an error, 2 a usage mistake, 3 diff found differences.
`

// oneLine folds an error message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// run executes one zarrcat command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return linkHint(runCmd(ctx, args, stdout, stderr))
}

// s3Install is how to get a zarrcat that opens s3:// targets.
const s3Install = "go install -tags s3 github.com/gozarr/gozarr/cmd/zarrcat@latest (or go build -tags s3 ./cmd/zarrcat in a clone)"

// linkHint replaces storeurl's "import this package" advice for a URL
// scheme this build leaves out with what a zarrcat user can do.
func linkHint(err error) error {
	var nl *storeurl.NotLinkedError
	if !errors.As(err, &nl) {
		return err
	}
	if nl.Scheme == "s3" {
		return &hintError{fmt.Sprintf("%s: this zarrcat was built without S3 support (the default build leaves the AWS SDK out); for s3:// targets: %s", nl.Location, s3Install), err}
	}
	return &hintError{fmt.Sprintf("%s: zarrcat does not include the %s:// store (%s is a module of its own); copy the data to a local directory, or give its https:// address when it is public", nl.Location, nl.Scheme, strings.TrimPrefix(nl.Package, "github.com/gozarr/gozarr/")), err}
}

// hintError is err told in other words.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// runCmd is run without linkHint.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	ctx, args, err := takeTimeout(ctx, args)
	if err != nil {
		return err
	}
	if ctx, args, err = takeRef(ctx, args); err != nil {
		return err
	}
	if isRepoDiff(ctx, args) {
		return cmdRepoDiff(ctx, args[1:], stdout) // icechunk.go
	}
	if ctx, args, err = takeAllow(ctx, args); err != nil {
		return err
	}
	if ctx, args, err = takeLimits(ctx, args); err != nil {
		return err
	}
	if len(args) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version())
		return nil
	}
	if slices.Contains(commands(), args[0]) && args[0] != "help" {
		for _, a := range args[1:] {
			if a == "--" {
				break
			}
			if a == "-h" || a == "--help" || a == "-help" {
				return cmdHelp(args[:1], stdout)
			}
		}
	}
	err = cliLimitHint(args[0], dispatch(ctx, args, stdout, stderr))
	if exitCode(err) == 2 && slices.Contains(commands(), args[0]) {
		var ce *cmdError
		if !errors.As(err, &ce) {
			err = &cmdError{cmd: args[0], err: err}
		}
	}
	return err
}

// dispatch runs the command args[0].
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch args[0] {
	case "info":
		return cmdInfo(ctx, args[1:], stdout, stderr)
	case "get":
		return cmdGet(ctx, args[1:], stdout, stderr)
	case "stats":
		return cmdStats(ctx, args[1:], stdout, stderr)
	case "cp":
		return cmdCp(ctx, args[1:], stdout, stderr)
	case "diff":
		return cmdDiff(ctx, args[1:], stdout, stderr)
	case "ls", "tree":
		return cmdTree(ctx, args[0], args[1:], stdout, stderr)
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
	if s := suggest(args[0], commands()); s != "" {
		return fmt.Errorf("%w: unknown command %q; did you mean %q?", errUsage, args[0], s)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}

// selectionLike reports whether a, which starts with "-", is a selection
// rather than a flag: no flag name holds blanks, commas, colons, brackets
// or parentheses, and none is a selection ("--1", "-True": Python's
// unary minus).
func selectionLike(a, name string) bool {
	flag, _, _ := strings.Cut(name, "=")
	if strings.ContainsAny(flag, " \t,:[]()~") {
		return true
	}
	_, err := nd.ParseSelection(a)
	return err == nil
}

// splitArgs separates flags from positional arguments, allowing them in any
// order. valued names the flags: true for those that take a value ("-o
// FILE", "--o=FILE"), false for switches ("--json").
// An argument that looks like a selection ("-1", "-3:", ":-2", "--1",
// "-True", "-(2), 0", "- 4") is positional, and so is everything after
// "--".
func splitArgs(args []string, valued map[string]bool) (flags map[string]string, pos []string, err error) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(pos, args[i+1:]...), nil
		}
		name := strings.TrimLeft(a, "-")
		if len(a) < 2 || a[0] != '-' || strings.ContainsAny(a[1:2], "0123456789:.") || selectionLike(a, name) {
			pos = append(pos, a)
			continue
		}
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		takes, known := valued[name]
		if !known {
			names := make([]string, 0, len(valued))
			for k := range valued {
				names = append(names, k)
			}
			slices.Sort(names)
			if s := suggest(name, names); s != "" {
				dash := "--"
				if len(s) == 1 {
					dash = "-"
				}
				return nil, nil, fmt.Errorf("%w: unknown flag %s; did you mean %s%s?", errUsage, a, dash, s)
			}
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
