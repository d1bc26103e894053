package readmecheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The full mode (GOZARR_README_RUN=all) runs every README command whose
// prerequisites this machine has, not only those CI runs: commands marked
// static run as written twice in a row; a long one (check.long, more than
// 2 minutes as written) runs twice in its scaled form (check.alt) and, after
// every other command, once as written; the quick start's test command
// runs twice, last. A command whose prerequisite is missing is logged as
// skipped with the reason, as are the patterns (template) and the commands
// that need the user's own locations (check.never). GOZARR_README_ONLY, a
// regular expression, limits the run to the commands whose key it matches
// (the others are logged as skipped); GOZARR_README_LONG=written runs only
// the long commands, as written (after a run that did the rest);
// GOZARR_README_REPORT names a file the table of what ran,
// how long, and the result is written to.
//
// Commands only the full mode runs may print progress on stderr (it is
// logged, not compared); benchmarks' outputs are compared with every
// figure masked.

// needs says, by name, what the full mode needs for a command: each
// function makes it available to the commands (a server's exports in
// r.env, a link in the temporary directory) and returns "" — or returns
// why it is missing, with how to get it.
var needs = map[string]func(r *runner) string{
	"chroot": func(r *runner) string { return r.python("import zarr, numcodecs, numpy") },
	"zfpy":   func(r *runner) string { return r.python("import zfpy") },
	"blosc":  func(r *runner) string { return cLinks("blosc.h", "-lblosc", "libblosc-dev") },
	"cinflate": func(r *runner) string {
		if why := cLinks("zlib.h", "-lz", "zlib1g-dev"); why != "" {
			return why
		}
		return cLinks("libdeflate.h", "-ldeflate", "libdeflate-dev")
	},
	"npm": func(r *runner) string {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				return "no " + tool + " on PATH (zarrita.js is installed with npm and run with node)"
			}
		}
		return ""
	},
	"pcoref": func(r *runner) string {
		// The command names /tmp/pcoref, which the runner maps to its
		// temporary directory: link the machine's build there.
		const bin = "/tmp/pcoref/target/release/pcoref"
		if !exists(bin) {
			return "no " + bin + ": build it with codecs/pcodec/testdata/pcoref/build.sh (cargo, the pcodec sources)"
		}
		if err := os.Symlink("/tmp/pcoref", filepath.Join(r.tmp, "pcoref")); err != nil && !os.IsExist(err) {
			return err.Error()
		}
		return ""
	},
	"s3": func(r *runner) string {
		return r.server(".ci/s3server.sh", "versitygw", "github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	},
	"gcs": func(r *runner) string {
		return r.server(".ci/gcsserver.sh", "fake-gcs-server", "github.com/fsouza/fake-gcs-server")
	},
}

// need makes what a command needs available, once per runner, and returns
// why the first missing one is missing ("" when all are there).
func (r *runner) need(names []string) string {
	if r.have == nil {
		r.have = map[string]string{}
	}
	for _, n := range names {
		why, ok := r.have[n]
		if !ok {
			why = needs[n](r)
			r.have[n] = why
		}
		if why != "" {
			return n + ": " + why
		}
	}
	return ""
}

// python returns why the reference chroot cannot run code ("" if it can),
// trying it from the clone as the README's commands do (../shared beside).
func (r *runner) python(code string) string {
	tool := filepath.Join(r.clone, "..", "shared", "tools", "zarr-python")
	if !exists(tool) {
		return "no ../shared/tools/zarr-python beside the repository"
	}
	out, errOut, err := r.sh(r.clone, "../shared/tools/zarr-python -c '"+code+"'", r.env)
	if err != nil {
		return fmt.Sprintf("the reference chroot cannot %q (make it with ../shared/tools/zarr-python-env.sh): %v %s", code, err, lastLine(out+errOut))
	}
	return ""
}

// cLinks returns why a C program including header and linked with lib
// does not build ("" if it does), naming the Debian package to install.
func cLinks(header, lib, pkg string) string {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "no C compiler (" + cc + ") for cgo"
	}
	dir, err := os.MkdirTemp("", "readmecheck-cc")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "t.c")
	if err := os.WriteFile(src, []byte("#include <"+header+">\nint main(void) { return 0; }\n"), 0o644); err != nil {
		return err.Error()
	}
	if out, err := exec.Command(cc, src, lib, "-o", filepath.Join(dir, "t")).CombinedOutput(); err != nil {
		return fmt.Sprintf("%s with %s does not build (apt-get install %s): %s", header, lib, pkg, lastLine(string(out)))
	}
	return ""
}

// server starts a test server with its .ci script (state in the runner's
// temporary directory, stopped when the test ends) and adds its exports to
// r.env; it does not install the server (that takes minutes, and the
// network): it returns why not when bin is neither on PATH nor in the
// machine's GOPATH/bin.
func (r *runner) server(script, bin, module string) string {
	gobin := realGoBin()
	if _, err := exec.LookPath(bin); err != nil && !exists(filepath.Join(gobin, bin)) {
		return fmt.Sprintf("no %s on PATH or in %s (go install %s, or run .ci/run once)", bin, gobin, module)
	}
	env := append(append([]string(nil), r.env...), "GOBIN="+gobin)
	out, errOut, err := r.sh(r.clone, "bash "+script+" start", env)
	if err != nil {
		return fmt.Sprintf("bash %s start: %v %s", script, err, lastLine(errOut))
	}
	r.t.Cleanup(func() {
		if _, errOut, err := r.sh(r.clone, "bash "+script+" stop", env); err != nil {
			r.t.Logf("bash %s stop: %v %s", script, err, errOut)
		}
	})
	for _, l := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(l), "export "); ok {
			r.env = append(r.env, kv)
		}
	}
	return ""
}

// realGoBin is where `go install` puts commands outside the test (GOBIN,
// else GOPATH/bin of the test's own environment).
func realGoBin() string {
	if out, err := exec.Command("go", "env", "GOBIN").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	return filepath.Join(strings.TrimSpace(string(out)), "bin")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// figuresRe matches every number and spacesRe runs of spaces, masked and
// squeezed in the outputs of benchmarks (runner.maskFigures).
var (
	figuresRe = regexp.MustCompile(`[-+]?\d[\d_,]*(\.\d+)?([eE][-+]?\d+)?`)
	spacesRe  = regexp.MustCompile(`[ \t]+`)
)

// isBench reports whether a command is a benchmark (its output is
// compared with its figures masked).
func isBench(c check) bool {
	return c.how == quick || c.long || strings.HasPrefix(c.why, whyBench)
}

// A result is one line of the full mode's report.
type result struct {
	where, cmd, mode string
	secs             []float64
	res              string
}

// record adds a line to the report.
func (r *runner) record(where, cmd, mode string, secs []float64, res string) {
	r.results = append(r.results, result{where, cmd, mode, secs, res})
	r.report()
}

// skip logs (and reports) a command that is not run, and why.
func (r *runner) skip(where, cmd, why string) {
	r.t.Logf("%s: skipped: %s\n\t(command: %s)", where, why, cmd)
	r.record(where, cmd, "skipped", nil, why)
}

// full runs the units in the full mode.
func (r *runner) full(units []unit) {
	t := r.t
	var only *regexp.Regexp
	if s := os.Getenv("GOZARR_README_ONLY"); s != "" {
		only = regexp.MustCompile(s)
	}
	type job struct {
		where, text string
		o           runOpts
		once        bool
		mins        int
	}
	longOnly := os.Getenv("GOZARR_README_LONG") == "written"
	var last []job // after every other command: long ones as written, the test command
	seen := map[string]string{}
	for _, u := range units {
		where := fmt.Sprintf("%s:%d", u.file, u.line)
		c := checks[u.key]
		key := squeeze(strings.ReplaceAll(u.text, "\n", " "))
		if prev, ok := seen[key]; ok {
			r.skip(where, u.key, "the same command as "+prev)
			continue
		}
		seen[key] = where
		switch {
		case only != nil && !only.MatchString(u.key):
			r.skip(where, u.key, "not selected by GOZARR_README_ONLY")
			continue
		case longOnly && !c.long:
			r.skip(where, u.key, "GOZARR_README_LONG=written: the long commands as written only")
			continue
		case c.how == template:
			r.skip(where, u.key, "a pattern, not a command: "+c.why)
			continue
		case c.never != "":
			r.skip(where, u.key, c.never)
			continue
		case c.how == install:
			r.install(where, u.text)
			continue
		case c.module != "" && r.pub == nil:
			r.skip(where, u.key, "a go get in the user's module, which the install block made (not run)")
			continue
		case c.module != "":
			r.goGetSub(where, u.text, c.module)
			continue
		case c.how == start:
			lines := strings.SplitN(strings.TrimSpace(u.text), "\n", 2)
			r.twice(where+" (quick start, first command)", lines[0], runOpts{})
			last = append(last, job{where: where + " (quick start, test command)", text: lines[1], mins: 1 << 20})
			continue
		}
		if why := r.need(c.needs); why != "" {
			r.skip(where, u.key, "needs "+why)
			continue
		}
		o := runOpts{mask: masks[u.key], stderr: c.how != run}
		if isBench(c) {
			o.figures = true
		}
		if c.long {
			if longOnly {
				r.skip(where+" (scaled form)", c.alt, "GOZARR_README_LONG=written: the long commands as written only")
			} else if prev, ok := seen[c.alt]; ok {
				r.skip(where+" (scaled form)", c.alt, "the same command as "+prev)
			} else {
				seen[c.alt] = where + " (scaled form)"
				r.twice(where+" (scaled form)", c.alt, o)
			}
			last = append(last, job{where: where + " (as written, once)", text: u.text, o: o, once: true, mins: c.mins})
			continue
		}
		r.twice(where, u.text, o)
	}
	sort.SliceStable(last, func(i, j int) bool { return last[i].mins < last[j].mins })
	for _, j := range last {
		if j.once {
			r.once(j.where, j.text, j.o)
		} else {
			r.twice(j.where, j.text, j.o)
		}
	}
	t.Logf("the full README run (%s):\n%s", time.Now().UTC().Format(time.RFC3339), r.report())
}

// report returns the table of what ran, how long, and the result, and
// writes it to GOZARR_README_REPORT (after every command, so a run stopped
// early leaves what it did).
func (r *runner) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| where | command | how | run 1 | run 2 | result |\n|---|---|---|---|---|---|\n")
	for _, x := range r.results {
		var s [2]string
		for i, v := range x.secs {
			s[i] = fmt.Sprintf("%.1f s", v)
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", x.where, strings.ReplaceAll(x.cmd, "|", `\|`), x.mode, s[0], s[1], strings.ReplaceAll(x.res, "|", `\|`))
	}
	if p := os.Getenv("GOZARR_README_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			r.t.Error(err)
		}
	}
	return b.String()
}

// TestMaskFigures: the benchmark mask makes two runs that differ only in
// their figures (and so in their columns' widths) compare equal, and keeps
// the rest: a row that differs in words, or a missing row, still differs.
func TestMaskFigures(t *testing.T) {
	r := &runner{clone: "/c", tmp: "/t"}
	a := "BenchmarkVirtualize/fixed-array-2   \t     5\t 1234567 ns/op\t  12.5 MB/s\n  gozarr, local disk    1.25 s wall   0.9 s CPU\n"
	b := "BenchmarkVirtualize/fixed-array-2   \t     5\t  987654 ns/op\t 103.0 MB/s\n  gozarr, local disk    11.5 s wall   1.75 s CPU\n"
	if ma, mb := r.maskFigures(a, nil), r.maskFigures(b, nil); ma != mb {
		t.Errorf("figures differ after the mask:\n%s\n%s", ma, mb)
	}
	ya, yb := "| read-all none ≥ 0.9 × memcpy | 0.93 × | 0.95 × | yes |\n| faster than zarrita.js | faster on 20 of 20 | — | yes |\n",
		"| read-all none ≥ 0.9 × memcpy | 0.71 × | 0.8 × | no |\n| faster than zarrita.js | faster on 19 of 20; not on gzip random (0.9×) | — | no |\n"
	if ma, mb := r.maskFigures(ya, masks["go run ./bench"]), r.maskFigures(yb, masks["go run ./bench"]); ma != mb {
		t.Errorf("the bench suite's targets met differ after the mask:\n%s\n%s", ma, mb)
	}
	ca := "generated /tmp/gozarr-cachebench-data in 2.1 s\ncachebench: 4 arrays of 8 MiB\n"
	if ma, mb := r.maskFigures(ca, masks["go run ./bench/cachebench"]), r.maskFigures(strings.SplitN(ca, "\n", 2)[1], masks["go run ./bench/cachebench"]); ma != mb {
		t.Errorf("cachebench's data line is not masked:\n%s\n%s", ma, mb)
	}
	for _, c := range []string{
		strings.Replace(b, "local disk", "fake S3", 1),
		strings.SplitAfter(b, "\n")[0],
	} {
		if r.maskFigures(a, nil) == r.maskFigures(c, nil) {
			t.Errorf("the mask hides a real difference:\n%s\n%s", a, c)
		}
	}
}
