package readmecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A unit is one command found in a README: a fenced shell block (run as
// one script), an indented block whose first line is a command, or an
// inline code span that is a command.
type unit struct {
	file string // the README, relative to the repository root
	line int    // where the unit starts
	kind string // "block", "indented" or "inline"
	text string // the command or script as written
	key  string // how the table names it: the first command line, comments dropped, spaces squeezed
}

// A goBlock is a fenced Go snippet.
type goBlock struct {
	file string
	line int
	text string
}

var (
	fenceRe = regexp.MustCompile("^\\s*```\\s*([A-Za-z]*)\\s*$")
	spanRe  = regexp.MustCompile("`([^`]+)`")
	spaceRe = regexp.MustCompile(`\s+`)
	// cmdRe says which first lines and code spans are commands.
	cmdRe = regexp.MustCompile(`^(\(cd \S+ && |cd \S+ && )?([A-Z][A-Z0-9_]*=(\$\([^)]*\)|\S+) )*` +
		`(/usr/bin/time )?(go (run|test|build|install|get|vet|generate) \S|taskset |eval |bash |\.\./shared/tools/\S+ \S|/tmp/\S+ -|zarrcat |zarrbeam )`)
)

// squeeze drops a trailing shell comment and squeezes spaces.
func squeeze(line string) string {
	line = strings.TrimSpace(line)
	if i := commentAt(line); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(spaceRe.ReplaceAllString(line, " "))
}

// commentAt returns where an unquoted "#" starting a word begins a shell
// comment in line, or -1.
func commentAt(line string) int {
	var q rune
	for i, r := range line {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// extract finds the units and Go snippets of one README. root is the
// repository root, used to tell a zarrcat code span naming a real path (a
// command) from one naming a subcommand or flag.
func extract(root, file, src string) ([]unit, []goBlock) {
	var units []unit
	var gos []goBlock
	lines := strings.Split(src, "\n")
	var para []string // the paragraph being gathered, for code spans
	paraLine := 0
	flush := func() {
		text := strings.Join(para, "\n")
		for _, m := range spanRe.FindAllStringSubmatchIndex(text, -1) {
			s := strings.TrimSpace(spaceRe.ReplaceAllString(text[m[2]:m[3]], " "))
			if !cmdRe.MatchString(s) || (strings.HasPrefix(s, "zarrcat ") && !namesPath(root, s)) {
				continue
			}
			n := paraLine + strings.Count(text[:m[0]], "\n")
			units = append(units, unit{file: file, line: n, kind: "inline", text: s, key: s})
		}
		para = para[:0]
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := fenceRe.FindStringSubmatch(l); m != nil {
			flush()
			start := i + 1
			var body []string
			for i++; i < len(lines); i++ {
				if c := fenceRe.FindStringSubmatch(lines[i]); c != nil && c[1] == "" {
					break
				}
				body = append(body, lines[i])
			}
			text := strings.Join(body, "\n") + "\n"
			switch m[1] {
			case "sh", "bash", "shell", "console":
				units = append(units, unit{file: file, line: start, kind: "block", text: text, key: firstCommand(body)})
			case "go":
				gos = append(gos, goBlock{file: file, line: start, text: text})
			}
			continue
		}
		if strings.HasPrefix(l, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == "") && len(para) == 0 {
			start := i + 1
			var body []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				body = append(body, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			if key := firstCommand(body); cmdRe.MatchString(key) {
				units = append(units, unit{file: file, line: start, kind: "indented", text: strings.Join(body, "\n") + "\n", key: key})
			}
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraLine = i + 1
		}
		para = append(para, l)
	}
	flush()
	return units, gos
}

// firstCommand returns the first command of a script (its continuation
// lines joined), comments dropped and spaces squeezed.
func firstCommand(body []string) string {
	var cmd []string
	for _, l := range body {
		cont := strings.HasSuffix(strings.TrimRight(l, " \t"), "\\")
		if s := squeeze(strings.TrimSuffix(strings.TrimRight(l, " \t"), "\\")); s != "" {
			cmd = append(cmd, s)
		}
		if len(cmd) > 0 && !cont {
			break
		}
	}
	return strings.Join(cmd, " ")
}

// namesPath reports whether a zarrcat code span names a path of the
// repository (testdata/..., hdf5/testdata/...): then it is a command to
// run rather than a mention of a subcommand or flag.
func namesPath(root, s string) bool {
	for _, w := range words(s) {
		if strings.Contains(w, "/") && !strings.HasPrefix(w, "/") {
			// A node inside a file (cf.nc/temp) names the file's path.
			for p := w; strings.Contains(p, "/"); p = p[:strings.LastIndex(p, "/")] {
				if _, err := os.Stat(filepath.Join(root, p)); err == nil {
					return true
				}
			}
		}
	}
	return false
}

// words splits a command into shell words (quotes removed, $(...) kept
// whole); operators (&&, ||, ;, |, parentheses) are words of their own.
func words(s string) []string {
	var out []string
	var w strings.Builder
	in := false // a word is being built
	end := func() {
		if in {
			out = append(out, w.String())
			w.Reset()
			in = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++
			end()
		case r == ' ' || r == '\t':
			end()
		case r == '\n':
			end()
			out = append(out, ";")
		case r == '#' && !in:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case r == '\'' || r == '"':
			in = true
			for i++; i < len(rs) && rs[i] != r; i++ {
				w.WriteRune(rs[i])
			}
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			in = true
			depth := 0
			for ; i < len(rs); i++ {
				w.WriteRune(rs[i])
				if rs[i] == '(' {
					depth++
				} else if rs[i] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
		case strings.ContainsRune("&|;()", r):
			end()
			op := string(r)
			if (r == '&' || r == '|') && i+1 < len(rs) && rs[i+1] == r {
				op += string(r)
				i++
			}
			out = append(out, op)
		default:
			in = true
			w.WriteRune(r)
		}
	}
	end()
	return out
}

// rootDir is the repository root, two levels up from this package's
// directory (where tests start; some change directory later).
var rootDir, rootErr = filepath.Abs("../..")

// repoRoot returns the repository root.
func repoRoot(t *testing.T) string {
	t.Helper()
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return rootDir
}

// readmes returns the README files of the tree rooted at root (relative
// paths), README.md first; the tracked ones when git is there, else those
// found by walking.
func readmes(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "-C", root, "ls-files", "README.md", "*/README.md").Output(); err == nil {
		files = strings.Fields(string(out))
	} else {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "README.md" {
				rel, _ := filepath.Rel(root, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	out := []string{"README.md"}
	for _, f := range files {
		if f != "README.md" {
			out = append(out, f)
		}
	}
	return out
}

// allUnits extracts the units and snippets of every README under root.
func allUnits(t *testing.T, root string) ([]unit, []goBlock) {
	t.Helper()
	var us []unit
	var gs []goBlock
	for _, f := range readmes(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		u, g := extract(root, f, string(b))
		us = append(us, u...)
		gs = append(gs, g...)
	}
	return us, gs
}

func TestExtract(t *testing.T) {
	const doc = "# T\n\n```sh\n# a comment\ngo build ./x   # build it\n./x run\n```\n\n" +
		"Text with `go test ./zarr -run X\n-bench Y` and `zarrcat help` and `nd.Index`.\n\n" +
		"    cd beam && go run ./cmd/zarrbeam \\\n        -src a\n\n    not a command\n\n" +
		"```go\nx := 1\n```\n"
	us, gs := extract(t.TempDir(), "R.md", doc)
	want := []unit{
		{file: "R.md", line: 3, kind: "block", text: "# a comment\ngo build ./x   # build it\n./x run\n", key: "go build ./x"},
		{file: "R.md", line: 9, kind: "inline", text: "go test ./zarr -run X -bench Y", key: "go test ./zarr -run X -bench Y"},
		{file: "R.md", line: 12, kind: "indented", text: "cd beam && go run ./cmd/zarrbeam \\\n    -src a\n\nnot a command\n\n", key: "cd beam && go run ./cmd/zarrbeam -src a"},
	}
	if len(us) != len(want) {
		t.Fatalf("units %+v", us)
	}
	for i := range want {
		if us[i] != want[i] {
			t.Errorf("unit %d: %+v, want %+v", i, us[i], want[i])
		}
	}
	if len(gs) != 1 || gs[0].text != "x := 1\n" || gs[0].line != 17 {
		t.Errorf("go blocks %+v", gs)
	}
	if w := words(`(cd a && X=1 go test -run '^$' -bench "A|B" ./p) # c`); strings.Join(w, "·") != "(·cd·a·&&·X=1·go·test·-run·^$·-bench·A|B·./p·)" {
		t.Errorf("words: %q", w)
	}
	if w := words(`go build -o "$(go env GOPATH)/bin/" ./x; echo $?`); strings.Join(w, "·") != "go·build·-o·$(go env GOPATH)/bin/·./x·;·echo·$?" {
		t.Errorf("words: %q", w)
	}
}
