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
// what would send them elsewhere (GOZARR_S3_*, AWS_*), with TMPDIR and
// GOPATH in the test's temporary directory (so mktemp, /tmp paths and
// `go env GOPATH`/bin stay there), the module cache kept, and GOPATH/bin
// first on PATH.
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
		case strings.HasPrefix(k, "GOZARR_S3_"), strings.HasPrefix(k, "AWS_"),
			k == "TMPDIR", k == "GOPATH", k == "GOMODCACHE", k == "PATH", k == "GOBIN":
			continue
		}
		env = append(env, e)
	}
	return append(env, "TMPDIR="+tmp, "GOPATH="+gopath, "GOMODCACHE="+strings.TrimSpace(string(modcache)),
		"PATH="+filepath.Join(gopath, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A runner runs README commands in a fresh clone.
type runner struct {
	t     *testing.T
	clone string // the clone's root
	tmp   string // TMPDIR of the commands; /tmp/ in a command is mapped here
	env   []string
	masks []*regexp.Regexp
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
		s = extra.ReplaceAllString(s, "…")
	}
	return durationRe.ReplaceAllString(s, "⏱")
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
// nothing on stderr both times, the same output (masked), and a clean git
// status after.
func (r *runner) twice(where, text string, extra *regexp.Regexp) {
	t := r.t
	script := strings.ReplaceAll(text, "/tmp/", r.tmp+"/")
	var outs [2]string
	for i := range outs {
		t0 := time.Now()
		out, errOut, err := r.sh(r.clone, script, r.env)
		t.Logf("%s: run %d took %.1f s", where, i+1, time.Since(t0).Seconds())
		if err != nil || errOut != "" {
			t.Errorf("%s: run %d of\n%s\n%v\nstderr:\n%s\nstdout:\n%s", where, i+1, text, err, errOut, out)
			return
		}
		outs[i] = r.mask(out, extra)
	}
	if outs[0] != outs[1] {
		t.Errorf("%s: the second run printed otherwise:\n%s\n--- first run:\n%s\n--- second run:\n%s", where, text, outs[0], outs[1])
	}
	r.clean(where)
}

// clean fails the test if the clone's git status is not clean.
func (r *runner) clean(where string) {
	out, err := exec.Command("git", "-C", r.clone, "status", "--porcelain").CombinedOutput()
	if err != nil || len(out) > 0 {
		r.t.Errorf("%s: git status after it: %v\n%s", where, err, out)
	}
}

// benchFigures masks the figures of go test -bench result lines (the
// quick forms are benchmarks run once).
var benchFigures = regexp.MustCompile(`(?m)^(Benchmark\S*\s+).*$`)

// masks for commands whose output varies from run to run by design.
var masks = map[string]*regexp.Regexp{
	// Rates, and the read-ahead's share of the first epoch.
	"go run ./examples/loader": regexp.MustCompile(`loader-demo-\w+|\d+ samples/s|so far \(read-ahead included\)[^,]*, [^,]*|checksum -?\d+`),
}

// TestReadmeRunsTwice runs every README command the checks table marks
// run (and the quick forms, the quick start's go run and the install
// block) twice in a row in a fresh clone of the current commit. It takes
// a minute or two with warm caches, so it runs only when
// GOZARR_README_RUN is set, as .ci/run sets it in its README step.
func TestReadmeRunsTwice(t *testing.T) {
	if os.Getenv("GOZARR_README_RUN") == "" {
		t.Skip("set GOZARR_README_RUN=1 to run every README command twice in a fresh clone (.ci/run does)")
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
	for _, u := range units {
		where := fmt.Sprintf("%s:%d", u.file, u.line)
		switch c := checks[u.key]; c.how {
		case run:
			r.twice(where, u.text, masks[u.key])
		case quick:
			r.twice(where+" (quick form)", c.alt, benchFigures)
		case start:
			lines := strings.SplitN(strings.TrimSpace(u.text), "\n", 2)
			r.twice(where+" (quick start, first command)", lines[0], nil)
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
	if err := moduleZip(r.clone, mod+"@"+version, filepath.Join(vdir, version+".zip")); err != nil {
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
	for i := range 2 {
		t0 := time.Now()
		out, errOut, err := r.sh(user, block, env)
		t.Logf("%s: install block, run %d took %.1f s; stderr:\n%s", where, i+1, time.Since(t0).Seconds(), errOut)
		if err != nil || out != "" || strings.Contains(errOut, "rror") {
			t.Errorf("%s: install block, run %d: %v\nstdout:\n%s\nstderr:\n%s", where, i+1, err, out, errOut)
			return
		}
	}
	if b, err := os.ReadFile(filepath.Join(user, "go.mod")); err != nil || !strings.Contains(string(b), mod+" "+version) {
		t.Errorf("%s: go get did not require %s %s:\n%s", where, mod, version, b)
	}
	out, err := exec.Command(filepath.Join(gobin, "zarrcat"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "s3:// included") {
		t.Errorf("%s: the installed zarrcat version: %v\n%s", where, err, out)
	}
}

// moduleZip writes the module zip of the clone's tracked files (symbolic
// links and the directories of other modules left out) with every name
// under prefix ("module@version/"), as the go command expects from a
// module proxy.
func moduleZip(clone, prefix, dst string) error {
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
		if strings.HasSuffix(name, "/go.mod") {
			nested = append(nested, strings.TrimSuffix(name, "go.mod"))
		}
		files = append(files, name)
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
		b, err := os.ReadFile(filepath.Join(clone, name))
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
