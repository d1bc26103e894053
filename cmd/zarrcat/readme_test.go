package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeBlockRunsTwice (issue 27, "every command in it runs twice in
// a row"): the README's zarrcat block, run with bash from the repository
// root against a freshly built zarrcat, exits 0 with nothing on stderr,
// and a second run prints the same (its mktemp directory aside).
func TestReadmeBlockRunsTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds zarrcat")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const first = "go build -o zarrcat ./cmd/zarrcat\n"
	i := strings.Index(string(b), "```sh\n"+first)
	if i < 0 {
		t.Fatal("README: no zarrcat block starting with " + first)
	}
	block := string(b)[i+len("```sh\n")+len(first):]
	block = block[:strings.Index(block, "```")]
	bin := filepath.Join(t.TempDir(), "zarrcat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	script := strings.ReplaceAll(block, "./zarrcat ", bin+" ")
	if strings.Count(script, bin) < 15 {
		t.Fatalf("the README block runs zarrcat %d times", strings.Count(script, bin))
	}
	td := t.TempDir() // the block's mktemp -d directories go here
	tmp := regexp.MustCompile(regexp.QuoteMeta(td) + `/tmp\.[A-Za-z0-9]+`)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOZARR_S3_") && !strings.HasPrefix(e, "TMPDIR=") {
			env = append(env, e)
		}
	}
	var outs []string
	for run := range 2 {
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = "../.."
		cmd.Env = append(env, "TMPDIR="+td)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Fatalf("run %d: %v\nstderr:\n%s", run+1, err, stderr.String())
		}
		outs = append(outs, tmp.ReplaceAllString(stdout.String(), "$$D"))
	}
	if outs[0] != outs[1] {
		t.Errorf("the second run printed otherwise:\n%s\n---\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[1], "hold the same nodes and values") {
		t.Errorf("the block's last command printed:\n%s", outs[1])
	}
}
