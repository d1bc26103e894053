package readmecheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// staticCheck checks a command against the source without running it:
// every directory it changes into, script it runs and package it names
// exists; every flag given to a `go run` program (or a binary built from
// one) is defined by it; build tags are used; and every -run, -bench and
// -fuzz pattern of `go test` names a function of the packages tested. bins
// maps binaries built by earlier commands (go build -o) to their package
// directories, and is extended by this one. It returns the problems found.
func staticCheck(root, cmd string, bins map[string]string) []string {
	var probs []string
	bad := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	ws := words(cmd)
	dir := root
	var stack []string
	for i := 0; i < len(ws); {
		// One simple command: ws[i:j].
		j := i
		for j < len(ws) && !isOp(ws[j]) {
			j++
		}
		args := ws[i:j]
		op := ""
		if j < len(ws) {
			op = ws[j]
		}
		for len(args) > 0 && regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`).MatchString(args[0]) {
			args = args[1:]
		}
		for len(args) > 0 {
			if args[0] == "/usr/bin/time" {
				args = args[1:]
			} else if args[0] == "taskset" && len(args) > 2 {
				args = args[3:]
			} else {
				break
			}
		}
		if len(args) > 0 {
			switch name := args[0]; {
			case name == "cd":
				if len(args) < 2 {
					bad("cd without a directory")
					break
				}
				d := filepath.Join(dir, args[1])
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					bad("cd %s: no such directory", args[1])
				}
				dir = d
			case name == "eval" || name == "bash":
				for _, m := range regexp.MustCompile(`bash (\S+)`).FindAllStringSubmatch(strings.Join(args, " "), -1) {
					if !exists(filepath.Join(dir, m[1])) {
						bad("%s: no such script", m[1])
					}
				}
			case strings.HasPrefix(name, "../shared/tools/"):
				if len(args) > 1 && !exists(filepath.Join(dir, args[1])) {
					bad("%s: no such script", args[1])
				}
			case name == "go":
				probs = append(probs, checkGo(root, dir, args[1:], bins)...)
			default:
				if pkg, ok := bins[name]; ok {
					probs = append(probs, checkFlags(pkg, args[1:])...)
				}
			}
		}
		switch op {
		case "(":
			stack = append(stack, dir)
		case ")":
			if n := len(stack); n > 0 {
				dir, stack = stack[n-1], stack[:n-1]
			}
		}
		i = j + 1
	}
	return probs
}

func isOp(w string) bool {
	switch w {
	case "&&", "||", ";", "|", "(", ")", "&":
		return true
	}
	return false
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// goFlagsWithValue are the go command's build and test flags that take a
// value as the next word.
var goFlagsWithValue = map[string]bool{
	"tags": true, "o": true, "run": true, "bench": true, "benchtime": true, "count": true, "cpu": true,
	"fuzz": true, "fuzztime": true, "timeout": true, "list": true, "skip": true, "p": true, "parallel": true,
	"coverprofile": true, "cpuprofile": true, "memprofile": true, "ldflags": true, "gcflags": true,
}

// goBoolFlags are the go command's flags without a value that the README
// uses.
var goBoolFlags = map[string]bool{"v": true, "race": true, "benchmem": true, "short": true, "trimpath": true, "x": true, "n": true}

// checkGo checks one go command run in dir.
func checkGo(root, dir string, args []string, bins map[string]string) []string {
	var probs []string
	bad := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	if len(args) == 0 {
		return []string{"go without a subcommand"}
	}
	sub, args := args[0], args[1:]
	flags := map[string][]string{}
	var pkgs, progArgs []string
	seenFlag := false
	for k := 0; k < len(args); k++ {
		a := args[k]
		if sub == "run" && len(pkgs) == 1 {
			progArgs = append(progArgs, a)
			continue
		}
		if strings.HasPrefix(a, "-") {
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case goFlagsWithValue[name] && !hasVal:
				if k+1 < len(args) {
					k++
					val = args[k]
				}
			case goFlagsWithValue[name], goBoolFlags[name]:
			default:
				bad("go %s: unknown flag %s", sub, a)
			}
			flags[name] = append(flags[name], val)
			seenFlag = len(pkgs) > 0
			continue
		}
		if seenFlag && sub == "test" {
			bad("go test: %s comes after a flag that follows the packages, so go test passes it to the test binary instead of testing it", a)
		}
		pkgs = append(pkgs, a)
	}
	switch sub {
	case "get", "install":
		for _, p := range pkgs {
			path, _, _ := strings.Cut(p, "@")
			rel, ok := strings.CutPrefix(path, "github.com/gozarr/gozarr")
			if !ok {
				bad("go %s %s: not a gozarr path", sub, p)
				continue
			}
			d := filepath.Join(root, strings.TrimPrefix(rel, "/"))
			if !hasGoFiles(d) && !exists(filepath.Join(d, "go.mod")) {
				bad("go %s %s: no package or module at %s", sub, p, rel)
			}
		}
		return probs
	case "tool", "vet", "generate":
		return probs
	}
	var dirs []string
	for _, p := range pkgs {
		if strings.HasSuffix(p, "/...") {
			d := filepath.Join(dir, strings.TrimSuffix(p, "/..."))
			if !exists(d) {
				bad("go %s %s: no such directory", sub, p)
			}
			continue
		}
		d := filepath.Join(dir, p)
		if !hasGoFiles(d) {
			bad("go %s %s: no Go package there", sub, p)
			continue
		}
		dirs = append(dirs, d)
	}
	if len(pkgs) == 0 {
		dirs = append(dirs, dir)
	}
	for _, tag := range flags["tags"] {
		for _, tg := range strings.Split(tag, ",") {
			if !tagUsed(dirs, tg) && !tagUsed(goDirs(root), tg) {
				bad("go %s: no file of %v has the build tag %s", sub, pkgs, tg)
			}
		}
	}
	switch sub {
	case "run":
		if len(dirs) == 1 {
			probs = append(probs, checkFlags(dirs[0], progArgs)...)
		}
	case "build":
		if o := flags["o"]; len(o) == 1 && len(dirs) == 1 && filepath.IsAbs(o[0]) {
			bins[o[0]] = dirs[0]
		}
	case "test":
		names := testNames(dirs)
		for _, pat := range flags["bench"] {
			if !matchTop(pat, names, "Benchmark") {
				bad("go test -bench %s: no benchmark of %v matches", pat, pkgs)
			}
		}
		if len(flags["bench"]) == 0 {
			for _, pat := range flags["run"] {
				if !matchTop(pat, names, "Test", "Example", "Fuzz") {
					bad("go test -run %s: no test of %v matches", pat, pkgs)
				}
			}
		}
		for _, pat := range flags["fuzz"] {
			if !matchTop(pat, names, "Fuzz") {
				bad("go test -fuzz %s: no fuzz target of %v matches", pat, pkgs)
			}
		}
	}
	return probs
}

// goDirs returns every directory under root holding Go files (the
// build tags of a command can select files of its dependencies).
func goDirs(root string) []string {
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			if hasGoFiles(p) {
				dirs = append(dirs, p)
			}
		}
		return nil
	})
	return dirs
}

func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// goSources returns the contents of dir's Go files, test files or not.
func goSources(dir string, tests bool) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, f := range m {
		if strings.HasSuffix(f, "_test.go") != tests {
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

var buildLineRe = regexp.MustCompile(`(?m)^//go:build (.*)$`)

// tagUsed reports whether a Go file in one of dirs has a build constraint
// naming tag.
func tagUsed(dirs []string, tag string) bool {
	word := regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(tag) + `($|[^\w.])`)
	for _, d := range dirs {
		for _, src := range append(goSources(d, false), goSources(d, true)...) {
			for _, m := range buildLineRe.FindAllStringSubmatch(src, -1) {
				if word.MatchString(m[1]) {
					return true
				}
			}
		}
	}
	return false
}

var flagDefRe = regexp.MustCompile(`\.(?:Bool|Int|Int64|Uint|Uint64|String|Float64|Duration|Func|BoolFunc|TextVar|Var|BoolVar|IntVar|Int64Var|UintVar|Uint64Var|StringVar|Float64Var|DurationVar)\(\s*(?:&?[\w.\[\]]+\s*,\s*)?"([\w.-]+)"`)

// checkFlags checks that every flag in args is defined by the program in
// dir (a flag.X("name", ...) or flag.XVar(&v, "name", ...) call of its
// non-test files, on the flag package or a FlagSet).
func checkFlags(dir string, args []string) []string {
	defined := map[string]bool{"h": true, "help": true}
	for _, src := range goSources(dir, false) {
		for _, m := range flagDefRe.FindAllStringSubmatch(src, -1) {
			defined[m[1]] = true
		}
	}
	var probs []string
	for _, a := range args {
		a = strings.Trim(a, "[]")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !defined[name] {
			probs = append(probs, fmt.Sprintf("%s: flag %s is not defined by %s", filepath.Base(dir), a, dir))
		}
	}
	return probs
}

var testFuncRe = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)

// testNames returns the test, benchmark, fuzz and example functions of
// the _test.go files of dirs.
func testNames(dirs []string) []string {
	var names []string
	for _, d := range dirs {
		for _, src := range goSources(d, true) {
			for _, m := range testFuncRe.FindAllStringSubmatch(src, -1) {
				names = append(names, m[1])
			}
		}
	}
	return names
}

// matchTop reports whether every alternative of a go test pattern matches
// one of names having one of the prefixes at its first level. As go test
// does, the pattern is split at unbracketed bars into alternatives and each
// alternative at unbracketed slashes into levels. A pattern that matches
// nothing on purpose ("^$", "X", for -run beside -bench) fails here.
func matchTop(pat string, names []string, prefixes ...string) bool {
	for _, alt := range splitPattern(pat, '|') {
		re, err := regexp.Compile(splitPattern(alt, '/')[0])
		if err != nil {
			return false
		}
		found := false
		for _, n := range names {
			for _, p := range prefixes {
				if strings.HasPrefix(n, p) && re.MatchString(n) {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// splitPattern splits a -run or -bench pattern at sep outside brackets and
// parentheses.
func splitPattern(pat string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, pat[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, pat[start:])
}

// TestStaticCheck: the static check finds what it is for, on the real tree.
func TestStaticCheck(t *testing.T) {
	root := repoRoot(t)
	for cmd, want := range map[string]string{
		"go run ./bench/zarrsbench -reps 3 -profile /tmp/p":                   "",
		"go run ./bench/zarrsbench -reps 3 -no-such-flag":                     "flag -no-such-flag is not defined",
		"go test ./pipeline -run '^$' -bench 'SortPoints|TileCopy'":           "",
		"go test ./pipeline -run '^$' -bench 'SortPoints|NoSuchBench'":        "no benchmark",
		"go test ./dtype -run Narrow ./zarr":                                  "passes it to the test binary",
		"go test -run NoSuchTest ./dtype":                                     "no test",
		"(cd no/such/dir && go test ./...)":                                   "no such directory",
		"go run -tags nosuchtag ./bench/cinflate":                             "build tag nosuchtag",
		"go build -tags cblosc -o /tmp/cb ./bench/cblosc && /tmp/cb -bogus 1": "flag -bogus",
		"../shared/tools/zarr-python testdata/no_such_script.py":              "no such script",
		"go get github.com/gozarr/gozarr/store/nosuch":                        "no package or module",
	} {
		probs := staticCheck(root, cmd, map[string]string{})
		got := strings.Join(probs, "\n")
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", cmd, got, want)
		}
	}
}

// A fragment is an inline code span of flags alone ("-reps 5", "-bench
// TileCopy -benchtime 2000x") that the README gives for the go run or go
// test command before it in the same section.
type fragment struct {
	file string
	line int
	text string
	ctx  string // that command
}

var (
	fragRe   = regexp.MustCompile(`^--?[a-z][\w-]*( |$)`)
	goCmdRe  = regexp.MustCompile(`^(\(?cd \S+ && )?([A-Z][A-Z0-9_]*=\S+ )*go (run|test) `)
	headerRe = regexp.MustCompile(`(?m)^#+ `)
	fencedRe = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```\\s*$")
)

// fragments finds the flag fragments of a README and their commands: a
// fragment of go test flags belongs to the last go test command of its
// section, any other to the last go run command. Double-dash flags are
// zarrcat's (checked by running it) and -tags go to the build: both are
// left out here (tags are checked by TestReadmeFlagFragments alone).
func fragments(file, src string) []fragment {
	var out []fragment
	// Fenced blocks go (their newlines kept for the line numbers): their
	// backticks would pair with the spans'.
	src = fencedRe.ReplaceAllStringFunc(src, func(b string) string { return strings.Repeat("\n", strings.Count(b, "\n")) })
	for _, sec := range headerRe.Split(src, -1) {
		run, test := "", ""
		base := strings.Count(src[:strings.Index(src, sec)], "\n")
		for _, m := range spanRe.FindAllStringSubmatchIndex(sec, -1) {
			s := strings.TrimSpace(spaceRe.ReplaceAllString(sec[m[2]:m[3]], " "))
			if goCmdRe.MatchString(s) {
				c := strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
				if strings.Contains(c, "go run ") {
					run = c
				} else {
					test = c
				}
				continue
			}
			if !fragRe.MatchString(s) || strings.HasPrefix(s, "--") || strings.Contains(s, "...") {
				continue
			}
			ctx, goTest := run, true
			for _, w := range words(s) {
				if n, ok := strings.CutPrefix(w, "-"); ok && !goFlagsWithValue[n] && !goBoolFlags[n] {
					goTest = false
				}
			}
			if goTest {
				ctx = test
			}
			line := base + 1 + strings.Count(sec[:m[0]], "\n")
			out = append(out, fragment{file: file, line: line, text: s, ctx: ctx})
		}
	}
	return out
}

// TestReadmeFlagFragments: the flags the README gives alone exist in the
// command before them.
func TestReadmeFlagFragments(t *testing.T) {
	root := repoRoot(t)
	n := 0
	for _, f := range readmes(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range fragments(f, string(b)) {
			n++
			if tags, ok := strings.CutPrefix(fr.text, "-tags "); ok {
				for _, tg := range strings.Split(tags, ",") {
					if !tagUsed(goDirs(root), tg) {
						t.Errorf("%s:%d: no Go file has the build tag %s", fr.file, fr.line, tg)
					}
				}
				continue
			}
			if fr.ctx == "" {
				t.Logf("%s:%d: flags %s follow no command in their section: not checked", fr.file, fr.line, fr.text)
				continue
			}
			before := map[string]bool{}
			for _, p := range staticCheck(root, fr.ctx, map[string]string{}) {
				before[p] = true
			}
			for _, p := range staticCheck(root, fr.ctx+" "+fr.text, map[string]string{}) {
				if !before[p] {
					t.Errorf("%s:%d: %s\n\t(flags %s, for %s)", fr.file, fr.line, p, fr.text, fr.ctx)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d flag fragments found", n)
	}
	t.Logf("%d flag fragments checked", n)
}
