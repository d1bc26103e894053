package readmecheck

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runEnv is the environment README commands run in: the test's, without
// what would send them elsewhere (GOZARR_S3_*, AWS_*) or run this test
// again inside them (GOZARR_README_*), with TMPDIR, GOPATH and the test
// servers' state directories in the test's temporary directory (so mktemp,
// /tmp paths and `go env GOPATH`/bin stay there), the module cache kept,
// and GOPATH/bin first on PATH.
func runEnv(t *testing.T, tmp, gopath string) []string {
	t.Helper()
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(k, "GOZARR_S3_"), strings.HasPrefix(k, "AWS_"), strings.HasPrefix(k, "GOZARR_README_"),
			k == "GOZARR_GCS_STATE", k == "GOZARR_AZURE_STATE",
			k == "TMPDIR", k == "GOPATH", k == "GOMODCACHE", k == "PATH", k == "GOBIN":
			continue
		}
		env = append(env, e)
	}
	return append(env, "TMPDIR="+tmp, "GOPATH="+gopath,
		"GOZARR_S3_STATE="+filepath.Join(tmp, "gozarr-s3"), "GOZARR_GCS_STATE="+filepath.Join(tmp, "gozarr-gcs"),
		"GOZARR_AZURE_STATE="+filepath.Join(tmp, "gozarr-azurite"), "GOMODCACHE="+strings.TrimSpace(string(modcache)),
		"PATH="+filepath.Join(gopath, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A runner runs README commands in a fresh clone.
type runner struct {
	t     *testing.T
	clone string   // the clone's root
	tmp   string   // TMPDIR of the commands; /tmp/ in a command is mapped here
	env   []string // of the commands (the full mode adds servers' exports)

	pub     *published        // the install block's module proxy and module, once made
	have    map[string]string // full mode: the needs looked at, and why missing
	ignored map[string]bool   // ignored files seen in the clone
	results []result          // what ran, how long, and how it went
}

// runOpts says how a command's runs are judged.
type runOpts struct {
	mask    *regexp.Regexp // what else differs between two good runs
	figures bool           // a benchmark's: every number differs too
	stderr  bool           // stderr may carry progress (logged, not compared)
}

var (
	durationRe = regexp.MustCompile(`\b\d+(\.\d+)? ?(ns|µs|us|ms|s|m)\b|\(cached\)`)
	mktempRe   = regexp.MustCompile(`tmp\.[A-Za-z0-9]{6,}`)
)

// mask replaces what differs between two good runs: the clone's and the
// temporary directory's paths, mktemp names, durations, "(cached)", and
// what extra matches.
func (r *runner) mask(s string, extra *regexp.Regexp) string {
	s = strings.ReplaceAll(s, r.clone, "$CLONE")
	s = strings.ReplaceAll(s, r.tmp+"/", "/tmp/")
	s = mktempRe.ReplaceAllString(s, "tmp.XXXXXX")
	if extra != nil {
		// A match is "…", or nothing when it is whole lines.
		s = extra.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasSuffix(m, "\n") {
				return ""
			}
			return "…"
		})
	}
	return durationRe.ReplaceAllString(s, "⏱")
}

// maskFigures masks, in a benchmark's output, what mask does and every
// number, then squeezes spaces (tables' columns widen with the figures).
func (r *runner) maskFigures(s string, extra *regexp.Regexp) string {
	s = figuresRe.ReplaceAllString(r.mask(s, extra), "…")
	return spacesRe.ReplaceAllString(s, " ")
}

// sh runs script with bash in dir, returning its stdout, stderr and error.
func (r *runner) sh(dir, script string, env []string) (string, string, error) {
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// twice runs a command twice in a row from the clone's root: exit 0 and
// nothing on stderr (unless o.stderr) both times, the same output
// (masked), and a clean git status after.
func (r *runner) twice(where, text string, o runOpts) {
	r.runs(where, text, o, 2)
}

// once runs a command once from the clone's root (a long benchmark as
// written, in the full mode): exit 0 and a clean git status after.
func (r *runner) once(where, text string, o runOpts) {
	r.runs(where, text, o, 1)
}

func (r *runner) runs(where, text string, o runOpts, n int) {
	t := r.t
	script := strings.ReplaceAll(text, "/tmp/", r.tmp+"/")
	mode := "twice"
	if n == 1 {
		mode = "once"
	}
	cmd := squeeze(strings.ReplaceAll(strings.TrimSpace(text), "\n", "; "))
	var outs []string
	var secs []float64
	fail := func(res string) { r.record(where, cmd, mode, secs, res) }
	for i := range n {
		t0 := time.Now()
		out, errOut, err := r.sh(r.clone, script, r.env)
		secs = append(secs, time.Since(t0).Seconds())
		t.Logf("%s: run %d took %.1f s", where, i+1, secs[i])
		if err != nil || (errOut != "" && !o.stderr) {
			t.Errorf("%s: run %d of\n%s\n%v\nstderr:\n%s\nstdout:\n%s", where, i+1, text, err, errOut, out)
			fail(fmt.Sprintf("FAIL: run %d: %v %s", i+1, err, lastLine(errOut)))
			return
		}
		if errOut != "" {
			t.Logf("%s: run %d, stderr:\n%s", where, i+1, tail(errOut, 20))
		}
		if o.figures {
			out = r.maskFigures(out, o.mask)
		} else {
			out = r.mask(out, o.mask)
		}
		outs = append(outs, out)
	}
	if n == 2 && outs[0] != outs[1] {
		t.Errorf("%s: the second run printed otherwise:\n%s\n--- first run:\n%s\n--- second run:\n%s", where, text, outs[0], outs[1])
		fail("FAIL: the second run printed otherwise")
		return
	}
	if !r.clean(where) {
		fail("FAIL: git status not clean")
		return
	}
	fail("ok")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = append([]string{"…"}, l[len(l)-n:]...)
	}
	return strings.Join(l, "\n")
}

// clean fails the test if the clone's git status is not clean, and says
// whether it was. Ignored files it made (a binary the README builds) are
// logged the first time they are seen.
func (r *runner) clean(where string) bool {
	out, err := exec.Command("git", "-C", r.clone, "status", "--porcelain").CombinedOutput()
	if err != nil || len(out) > 0 {
		r.t.Errorf("%s: git status after it: %v\n%s", where, err, out)
		return false
	}
	ign, _ := exec.Command("git", "-C", r.clone, "status", "--porcelain", "--ignored").Output()
	for _, l := range strings.Split(strings.TrimSpace(string(ign)), "\n") {
		if l != "" && !r.ignored[l] {
			if r.ignored == nil {
				r.ignored = map[string]bool{}
			}
			r.ignored[l] = true
			r.t.Logf("%s: left an ignored file: %s", where, l)
		}
	}
	return true
}

// benchFigures masks the figures of go test -bench result lines (the
// quick forms are benchmarks run once).
var benchFigures = regexp.MustCompile(`(?m)^(Benchmark\S*\s+).*$`)

// benchTargets masks what the benchmark suite measured for its targets
// and whether they were met (its table's last three columns), which depend
// on the machine's load.
var benchTargets = regexp.MustCompile(`(?m)\|[^|\n]*\|[^|\n]*\| (yes|no) \|$`)

// benchData masks the line cachebench prints when it makes (or uploads)
// its data, which later runs reuse.
var benchData = regexp.MustCompile(`(?m)^(generated|uploaded) .*\n`)

// masks for commands whose output varies from run to run by design.
var masks = map[string]*regexp.Regexp{
	"go run ./bench/cachebench":            benchData,
	"go run ./bench/cachebench -mb 100":    benchData,
	"go run ./bench/cachebench -small -s3": benchData,
	// Whether a target was met this run.
	"go run ./bench/loaderbench -reads 32":     regexp.MustCompile(`: (MISSES|meets)\)`),
	"go run ./bench":                           benchTargets,
	"go run ./bench -size 8192 -peers -reps 5": benchTargets,
	"go run ./bench -size 8192 -layouts none,none-sharded,zstd-sharded,blosc-sharded -workloads read-all": benchTargets,
	"go run ./bench -peers": benchTargets,
	"go run ./bench -quick -reps 3 -workloads read-all -layouts zstd-sharded": benchTargets,
	// Rates, and the read-ahead's share of the first epoch.
	"go run ./examples/loader": regexp.MustCompile(`loader-demo-\w+|\d+ samples/s|so far \(read-ahead included\)[^,]*, [^,]*|checksum -?\d+`),
}

// TestReadmeRunsTwice runs every README command the checks table marks
// run (and the quick forms, the quick start's go run and the install
// block) twice in a row in a fresh clone of the current commit, with
// ../shared beside it when the repository has it. It takes a minute or two
// with warm caches, so it runs only when GOZARR_README_RUN is set, as
// .ci/run sets it in its README step. GOZARR_README_RUN=all is the full
// mode (full_test.go): every command this machine has the prerequisites
// for, the long benchmarks as written too (hours).
func TestReadmeRunsTwice(t *testing.T) {
	mode := os.Getenv("GOZARR_README_RUN")
	if mode == "" {
		t.Skip("set GOZARR_README_RUN=1 to run every README command CI can run twice in a fresh clone (.ci/run does), or GOZARR_README_RUN=all for every command this machine can run")
	}
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the README check clones the commit with git and runs its commands with bash", tool)
		}
	}
	root := repoRoot(t)
	sha, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the README check clones the current commit", err)
	}
	if st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--", "*.md").Output(); len(st) > 0 {
		t.Logf("uncommitted README changes are not checked (the clone is of commit %s):\n%s", bytes.TrimSpace(sha), st)
	}
	td := t.TempDir()
	clone := filepath.Join(td, "clone")
	if out, err := exec.Command("git", "clone", "-q", "--no-checkout", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", clone, "checkout", "-q", "--detach", string(bytes.TrimSpace(sha))).CombinedOutput(); err != nil {
		t.Fatalf("git checkout: %v\n%s", err, out)
	}
	if sh, err := filepath.EvalSymlinks(filepath.Join(root, "..", "shared")); err == nil {
		if err := os.Symlink(sh, filepath.Join(td, "shared")); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("no ../shared beside the repository: the commands that use it fail or skip (%v)", err)
	}
	tmp, gopath := filepath.Join(td, "tmp"), filepath.Join(td, "gopath")
	for _, d := range []string{tmp, filepath.Join(gopath, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{t: t, clone: clone, tmp: tmp, env: runEnv(t, tmp, gopath)}
	// The inline zarrcat commands run an installed zarrcat.
	if _, errOut, err := r.sh(clone, "go build -o \"$(go env GOPATH)/bin/zarrcat\" ./cmd/zarrcat", r.env); err != nil {
		t.Fatalf("building zarrcat: %v\n%s", err, errOut)
	}
	units, _ := allUnits(t, clone)
	if mode == "all" {
		r.full(units)
		return
	}
	for _, u := range units {
		where := fmt.Sprintf("%s:%d", u.file, u.line)
		switch c := checks[u.key]; c.how {
		case run:
			r.twice(where, u.text, runOpts{mask: masks[u.key]})
		case quick:
			r.twice(where+" (quick form)", c.alt, runOpts{mask: benchFigures})
		case start:
			lines := strings.SplitN(strings.TrimSpace(u.text), "\n", 2)
			r.twice(where+" (quick start, first command)", lines[0], runOpts{})
		case install:
			r.install(where, u.text)
		}
	}
}

// install runs the install block twice in a row in a new module of the
// user's, with the go command's module proxy replaced by files: the clone
// as github.com/gozarr/gozarr at the pseudo-version of its commit, and the
// module cache's downloads for its dependencies (so nothing is fetched from
// the network). Both runs must exit 0 with nothing on stdout (the go
// command reports what it downloads and adds on stderr, the first time
// only), and the zarrcat installed last must be the S3 build. The fake
// version is removed from the module cache afterwards.
func (r *runner) install(where, block string) {
	t := r.t
	sha, err := exec.Command("git", "-C", r.clone, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Fatal(err)
	}
	var full string
	var unix int64
	fmt.Sscan(string(sha), &full, &unix)
	version := fmt.Sprintf("v0.0.0-%s-%s", time.Unix(unix, 0).UTC().Format("20060102150405"), full[:12])
	const mod = "github.com/gozarr/gozarr"
	proxy := filepath.Join(filepath.Dir(r.tmp), "proxy")
	vdir := filepath.Join(proxy, mod, "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Unix(unix, 0).UTC().Format(time.RFC3339))
	gomod, err := os.ReadFile(filepath.Join(r.clone, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		filepath.Join(vdir, "list"):          nil,
		filepath.Join(vdir, version+".info"): []byte(info),
		filepath.Join(vdir, version+".mod"):  gomod,
		filepath.Join(proxy, mod, "@latest"): []byte(info),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := moduleZip(r.clone, "", mod+"@"+version, filepath.Join(vdir, version+".zip")); err != nil {
		t.Fatal(err)
	}
	modcache := ""
	for _, e := range r.env {
		if v, ok := strings.CutPrefix(e, "GOMODCACHE="); ok {
			modcache = v
		}
	}
	// What the go command adds to the module cache for the fake version
	// goes afterwards: the whole of github.com/gozarr there if it was not
	// there before, else the version's files.
	hadMod, hadDL := exists(filepath.Join(modcache, "github.com", "gozarr")), exists(filepath.Join(modcache, "cache", "download", mod))
	t.Cleanup(func() {
		defer func() {
			if !hadMod {
				os.RemoveAll(filepath.Join(modcache, "github.com", "gozarr"))
			}
			if !hadDL {
				os.RemoveAll(filepath.Join(modcache, "cache", "download", mod))
				os.Remove(filepath.Join(modcache, "cache", "download", "github.com", "gozarr")) // if empty
			}
		}()
		for _, p := range []string{filepath.Join(modcache, mod+"@"+version), filepath.Join(modcache, "cache", "download", mod, "@v")} {
			filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(q, 0o755)
				}
				return nil
			})
		}
		os.RemoveAll(filepath.Join(modcache, mod+"@"+version))
		m, _ := filepath.Glob(filepath.Join(modcache, "cache", "download", mod, "@v", version+".*"))
		for _, f := range m {
			os.Remove(f)
		}
	})
	user := filepath.Join(filepath.Dir(r.tmp), "usermod")
	gobin := filepath.Join(filepath.Dir(r.tmp), "gobin")
	env := append(append([]string(nil), r.env...),
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(modcache, "cache", "download"),
		"GOSUMDB=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOBIN="+gobin)
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := r.sh(user, "go mod init example.com/readmecheck", env); err != nil {
		t.Fatalf("go mod init: %v\n%s%s", err, out, errOut)
	}
	r.pub = &published{proxy: proxy, version: version, info: info, user: user, env: env, modcache: modcache}
	var secs []float64
	res := "ok"
	defer func() { r.record(where, "the install block (a module proxy made from the clone)", "twice", secs, res) }()
	for i := range 2 {
		t0 := time.Now()
		out, errOut, err := r.sh(user, block, env)
		secs = append(secs, time.Since(t0).Seconds())
		t.Logf("%s: install block, run %d took %.1f s; stderr:\n%s", where, i+1, secs[i], errOut)
		if err != nil || out != "" || strings.Contains(errOut, "rror") {
			t.Errorf("%s: install block, run %d: %v\nstdout:\n%s\nstderr:\n%s", where, i+1, err, out, errOut)
			res = fmt.Sprintf("FAIL: run %d: %v", i+1, err)
			return
		}
	}
	if b, err := os.ReadFile(filepath.Join(user, "go.mod")); err != nil || !strings.Contains(string(b), mod+" "+version) {
		t.Errorf("%s: go get did not require %s %s:\n%s", where, mod, version, b)
		res = "FAIL: go get did not require the clone's version"
	}
	out, err := exec.Command(filepath.Join(gobin, "zarrcat"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "s3:// included") {
		t.Errorf("%s: the installed zarrcat version: %v\n%s", where, err, out)
		res = "FAIL: the installed zarrcat is not the S3 build"
	}
}

// moduleZip writes the module zip of the clone's tracked files in sub (a
// module's directory ending in /, or "" for the root; symbolic links and
// the directories of other modules left out) with every name under prefix
// ("module@version/"), as the go command expects from a module proxy.
func moduleZip(clone, sub, prefix, dst string) error {
	out, err := exec.Command("git", "-C", clone, "ls-files", "-s").Output()
	if err != nil {
		return err
	}
	var nested []string
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		meta, name, _ := strings.Cut(l, "\t")
		if strings.HasPrefix(meta, "120000") {
			continue
		}
		rel, ok := strings.CutPrefix(name, sub)
		if !ok {
			continue
		}
		if strings.HasSuffix(rel, "/go.mod") {
			nested = append(nested, strings.TrimSuffix(rel, "go.mod"))
		}
		files = append(files, rel)
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
next:
	for _, name := range files {
		for _, n := range nested {
			if strings.HasPrefix(name, n) {
				continue next
			}
		}
		b, err := os.ReadFile(filepath.Join(clone, sub, name))
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + "/" + name)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// published is the install check's module proxy (the clone as
// github.com/gozarr/gozarr at its commit's pseudo-version) and the user's
// module the install block ran in, with its environment.
type published struct {
	proxy, version, info string
	user                 string
	env                  []string
	modcache             string
}

// goGetSub runs, in the full mode, a README `go get` of one of the
// repository's other modules (sub: its directory) twice in the install
// block's module: the module goes into the proxy at the same
// pseudo-version; its own dependencies are downloaded into the module
// cache first, from the clone (go mod download), so the runs fetch nothing.
// The core module it requires (through a replace directive in the
// repository, which a dependency's go.mod does not apply) must stay the
// version the install block got.
func (r *runner) goGetSub(where, text, sub string) {
	t := r.t
	p := r.pub
	mod := "github.com/gozarr/gozarr/" + sub
	vdir := filepath.Join(p.proxy, mod, "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(r.clone, sub, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		filepath.Join(vdir, "list"):            nil,
		filepath.Join(vdir, p.version+".info"): []byte(p.info),
		filepath.Join(vdir, p.version+".mod"):  gomod,
		filepath.Join(p.proxy, mod, "@latest"): []byte(p.info),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := moduleZip(r.clone, sub+"/", mod+"@"+p.version, filepath.Join(vdir, p.version+".zip")); err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(p.modcache, "cache", "download", mod)
	hadDL := exists(dl)
	t.Cleanup(func() {
		filepath.WalkDir(filepath.Join(p.modcache, mod+"@"+p.version), func(q string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(q, 0o755)
			}
			return nil
		})
		os.RemoveAll(filepath.Join(p.modcache, mod+"@"+p.version))
		m, _ := filepath.Glob(filepath.Join(dl, "@v", p.version+".*"))
		for _, f := range m {
			os.Remove(f)
		}
		if !hadDL {
			os.RemoveAll(dl)
		}
	})
	if _, errOut, err := r.sh(filepath.Join(r.clone, sub), "go mod download", r.env); err != nil {
		t.Errorf("%s: go mod download in %s: %v\n%s", where, sub, err, errOut)
		r.record(where, text, "twice", nil, "FAIL: go mod download of its dependencies")
		return
	}
	var outs []string
	var secs []float64
	for i := range 2 {
		t0 := time.Now()
		out, errOut, err := r.sh(p.user, text, p.env)
		secs = append(secs, time.Since(t0).Seconds())
		t.Logf("%s: run %d took %.1f s; stderr:\n%s", where, i+1, secs[i], tail(errOut, 20))
		if err != nil || strings.Contains(errOut, "rror") {
			t.Errorf("%s: run %d of %s: %v\nstdout:\n%s\nstderr:\n%s", where, i+1, text, err, out, errOut)
			r.record(where, text, "twice (in the install block's module)", secs, fmt.Sprintf("FAIL: run %d: %v %s", i+1, err, lastLine(errOut)))
			return
		}
		outs = append(outs, out)
	}
	b, _ := os.ReadFile(filepath.Join(p.user, "go.mod"))
	switch {
	case outs[0] != outs[1]:
		t.Errorf("%s: the second run printed otherwise:\n%s\n---\n%s", where, outs[0], outs[1])
		r.record(where, text, "twice (in the install block's module)", secs, "FAIL: the second run printed otherwise")
	case !strings.Contains(string(b), mod+" "+p.version) || !strings.Contains(string(b), "github.com/gozarr/gozarr "+p.version):
		t.Errorf("%s: go get did not require %s and the core module at %s:\n%s", where, mod, p.version, b)
		r.record(where, text, "twice (in the install block's module)", secs, "FAIL: not required, or the core module's version changed")
	case r.clean(where):
		r.record(where, text, "twice (in the install block's module)", secs, "ok")
	}
}
