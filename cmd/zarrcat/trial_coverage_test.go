package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// trialCoverage maps each friction of the newcomer trial
// (../shared/reviews/newcomer-trial.md, section 3: F1-F28) to what checks
// that it stays fixed: a test or example function in a package directory
// (relative to the repository root), or a text a file must hold (for the
// items that are documentation: the first build's cost, the LICENSE, the
// install lines). TestTrialCoverage fails when an item loses its check.
var trialCoverage = []struct {
	item      string
	dir, fn   string // a Test or Example function in dir
	file, has string // or: file must contain has
}{
	{item: "F1 cp into an existing non-Zarr directory", dir: "cmd/zarrcat", fn: "TestCpIntoExistingDirectory"},
	{item: "F2 loader checkpoint empty after a kill", dir: "examples/loader", fn: "TestCheckpointSurvivesKill"},
	{item: "F3 failed cp leaves a half-written array", dir: "cmd/zarrcat", fn: "TestCpFailedLeavesNothing"},
	{item: "F4 nested destinations, nodes inside arrays", dir: "cmd/zarrcat", fn: "TestCpParentsAndNesting"},
	{item: "F5 diff of sharded arrays and dtypes", dir: "cmd/zarrcat", fn: "TestDiffShardedAndDtype"},
	{item: "F6 index arrays select pointwise as NumPy", dir: "cmd/zarrcat", fn: "TestGetNumpySubscripts"},
	{item: "F7 CSV per RFC 4180", dir: "cmd/zarrcat", fn: "TestCSVIsRFC4180"},
	{item: "F8 64-bit integer min/max exact", dir: "cmd/zarrcat", fn: "TestStatsExact64"},
	{item: "F9 --help on every command", dir: "cmd/zarrcat", fn: "TestHelpAndTypos"},
	{item: "F10 did you mean, --version", dir: "cmd/zarrcat", fn: "TestHelpAndTypos"},
	{item: "F11 errors name what was typed", dir: "cmd/zarrcat", fn: "TestTargetErrorsNameTarget"},
	{item: "F12 text output for people", dir: "cmd/zarrcat", fn: "TestTextView"},
	{item: "F13 stale consolidated metadata", dir: "cmd/zarrcat", fn: "TestConsolidatedStaleAndBadEntry"},
	{item: "F14 the first build's cost stated", file: "README.md", has: "The first build is the slow part"},
	{item: "F15 a LICENSE file", file: "LICENSE", has: "License"},
	{item: "F15 install lines", file: "README.md", has: "go install github.com/gozarr/gozarr/cmd/zarrcat@latest"},
	{item: "F16 info --json carries what the text does", dir: "cmd/zarrcat", fn: "TestInfoJSONRich"},
	{item: "F17 diff compares values past a dtype difference", dir: "cmd/zarrcat", fn: "TestDiffShardedAndDtype"},
	{item: "F18 diff of groups", dir: "cmd/zarrcat", fn: "TestDiffGroups"},
	{item: "F19 addresses inside archives", dir: "cmd/zarrcat", fn: "TestAddressInsideArchive"},
	{item: "F20 output to /dev/stdout", dir: "cmd/zarrcat", fn: "TestOutputToDevStdout"},
	{item: "F21 the zarr.Compress example compiles", dir: "zarr", fn: "ExampleCompress"},
	{item: "F22 fs.New and a missing directory", dir: "store/fs", fn: "TestNew"},
	{item: "F23 dimension names and typed fill values", dir: "zarr", fn: "TestFillValueAndDimensionNames"},
	{item: "F24 Shards takes the shard shape, as zarr-python", dir: "zarr", fn: "TestShardsAsZarrPython"},
	{item: "F25 --resume after a killed cp", dir: "cmd/zarrcat", fn: "TestResumeRemovesKilledTemp"},
	{item: "F26 HTTP servers that close connections", dir: "store/http", fn: "TestClosingServerGated"},
	{item: "F27 S3 without credentials: one line", dir: "cmd/zarrcat", fn: "TestS3NoCredentialsOneLine"},
	{item: "F28 usage errors print the command's usage", dir: "cmd/zarrcat", fn: "TestHelpAndTypos"},
}

func TestTrialCoverage(t *testing.T) {
	root := filepath.Join("..", "..")
	funcs := map[string]map[string]bool{} // dir -> function names in its _test.go files
	declared := func(dir string) map[string]bool {
		if m, ok := funcs[dir]; ok {
			return m
		}
		m := map[string]bool{}
		files, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		fset := token.NewFileSet()
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					m[fd.Name.Name] = true
				}
			}
		}
		funcs[dir] = m
		return m
	}
	seen := map[string]bool{}
	for _, c := range trialCoverage {
		seen[strings.Fields(c.item)[0]] = true
		switch {
		case c.fn != "":
			if !declared(c.dir)[c.fn] {
				t.Errorf("%s: no %s in %s", c.item, c.fn, c.dir)
			}
		default:
			b, err := os.ReadFile(filepath.Join(root, c.file))
			if err != nil || !strings.Contains(string(b), c.has) {
				t.Errorf("%s: %s does not say %q (%v)", c.item, c.file, c.has, err)
			}
		}
	}
	for i := 1; i <= 28; i++ {
		if f := "F" + strconv.Itoa(i); !seen[f] {
			t.Errorf("trial friction %s has no check", f)
		}
	}
}
