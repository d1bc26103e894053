package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
)

// TestIcechunkCommands checks log, branches, tags and get --ref on the
// repositories the official core wrote against what it reported
// (testdata/icechunk/expected.json) and the values zarr-python wrote.
func TestIcechunkCommands(t *testing.T) {
	ctx := context.Background()
	dir := "../../testdata/icechunk"
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Repos map[string]struct {
			Branches map[string]string `json:"branches"`
			Tags     map[string]string `json:"tags"`
			Ancestry map[string][]struct {
				ID string `json:"id"`
			} `json:"ancestry"`
		} `json:"repos"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	for name, want := range e.Repos {
		repo := filepath.Join(dir, name)
		var out bytes.Buffer
		if err := run(ctx, []string{"log", "--ref", "dev", repo}, &out, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(want.Ancestry["dev"]) {
			t.Fatalf("%s log: %q", name, out.String())
		}
		for i, a := range want.Ancestry["dev"] {
			if !strings.HasPrefix(lines[i], a.ID+" ") {
				t.Errorf("%s log line %d %q, want id %s", name, i, lines[i], a.ID)
			}
		}
		for kind, refs := range map[string]map[string]string{"branches": want.Branches, "tags": want.Tags} {
			out.Reset()
			if err := run(ctx, []string{kind, "--json", repo}, &out, &out); err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(refs) {
				t.Errorf("%s %s: %v, want %v", name, kind, got, refs)
			}
			for k, v := range refs {
				if got[k] != v {
					t.Errorf("%s %s: %v, want %v", name, kind, got, refs)
				}
			}
		}
		// get --ref v1 reads the first commit's values
		o := filepath.Join(t.TempDir(), "a.npy")
		if err := run(ctx, []string{"get", "-q", "--ref", "v1", "-o", o, repo + "/i4"}, &out, &out); err != nil {
			t.Fatal(err)
		}
		got, err := npy.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		wantv, err := npy.ReadFile(filepath.Join(dir, "expected/s1/i4.npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, wantv.Data) {
			t.Errorf("%s get --ref v1 i4 differs from the values written", name)
		}
		// a ref that does not exist, and --ref outside a repository
		if err := run(ctx, []string{"info", "--ref", "nope", repo + "/i4"}, &out, &out); err == nil {
			t.Errorf("--ref nope: no error")
		}
	}
	// diff --ref v1 --ref main: the changes make_states.py made from s1 to s3
	var out bytes.Buffer
	if err := run(ctx, []string{"diff", "--ref", "v1", "--ref", "main", dir + "/spec2"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+ array /u8\n", "- array /small\n", "~ group /\n", "  chunks /i4: 1 changed [[0 0]]\n",
		"  chunks /f8: 1 changed [[1]]\n", "  chunks /grid/sharded: 1 changed [[1 0]]\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("diff --ref v1 --ref main:\n%s\nwant %q in it", out.String(), want)
		}
	}
	if err := run(ctx, []string{"info", "--ref", "main", "../../testdata/refdata/v3_gzip_l1.zarr"}, new(bytes.Buffer), new(bytes.Buffer)); err == nil {
		t.Errorf("--ref outside a repository: no error")
	}
}

// TestCpIntoRepo: "cp ARRAY REPO/new --ref main -m MSG" commits the copy
// onto the branch: the log shows the message, the new array reads as
// zarr-python's values, the official core (when installed) reads the same
// bytes; cp out of a repository at --ref v1 reads the first commit; -m
// outside a repository and a tag as the branch are refused.
func TestCpIntoRepo(t *testing.T) {
	ctx := context.Background()
	src := "../../testdata/refdata/v3_blosc_zstd_shuffle.zarr"
	want, err := npy.ReadFile("../../testdata/refdata/v3_blosc_zstd_shuffle.npy")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, spec := range []string{"spec1", "spec2"} {
		repo := filepath.Join(tmp, spec)
		copyDir(t, filepath.Join("../../testdata/icechunk", spec), repo)
		var out bytes.Buffer
		if err := run(ctx, []string{"cp", "-q", src, repo + "/grid/new", "--ref", "main", "-m", "copied in by zarrcat"}, &out, &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "committed as snapshot") {
			t.Errorf("cp into %s says %q", spec, out.String())
		}
		out.Reset()
		if err := run(ctx, []string{"log", repo}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasSuffix(first, "  copied in by zarrcat") {
			t.Errorf("log after cp: %q", out.String())
		}
		o := filepath.Join(tmp, spec+".npy")
		if err := run(ctx, []string{"get", "-q", "-o", o, repo + "/grid/new"}, &out, &out); err != nil {
			t.Fatal(err)
		}
		got, err := npy.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: the copy committed reads other values than zarr-python wrote", spec)
		}
		// the source's other arrays are still there at main
		if err := run(ctx, []string{"info", repo + "/i4"}, &out, &out); err != nil {
			t.Errorf("i4 after the copy: %v", err)
		}
		checkWithCore(t, repo, "main", "grid/new/")
		// a second copy to the same place is refused and commits nothing
		out.Reset()
		if err := run(ctx, []string{"cp", "-q", src, repo + "/grid/new", "-m", "again"}, &out, &out); err == nil {
			t.Errorf("a second cp onto grid/new: no error")
		}
		out.Reset()
		if err := run(ctx, []string{"cp", "-q", src, repo + "/other", "--ref", "v1", "-m", "onto a tag"}, &out, &out); err == nil || !strings.Contains(err.Error(), "branch") {
			t.Errorf("cp onto a tag: %v", err)
		}
		// cp out of the repository at a tag: the first commit's i4
		dst := filepath.Join(tmp, spec+"-out.zarr")
		if err := run(ctx, []string{"cp", "-q", "--ref", "v1", repo + "/i4", dst}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, []string{"get", "-q", "-o", o, dst}, &out, &out); err != nil {
			t.Fatal(err)
		}
		got, err = npy.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		s1, err := npy.ReadFile("../../testdata/icechunk/expected/s1/i4.npy")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, s1.Data) {
			t.Errorf("%s: cp --ref v1 out of the repository: other values than the first commit's", spec)
		}
	}
	if err := run(ctx, []string{"cp", "-q", src, filepath.Join(tmp, "plain.zarr"), "-m", "x"}, new(bytes.Buffer), new(bytes.Buffer)); !errors.Is(err, errUsage) {
		t.Errorf("-m outside a repository: %v", err)
	}
}

// checkWithCore runs the official core (ICECHUNK_JS; skipped without it)
// on the repository at dir and checks that it reads every key under
// prefix at ref with the bytes gozarr reads.
func checkWithCore(t *testing.T, dir, ref, prefix string) {
	t.Helper()
	js := os.Getenv("ICECHUNK_JS")
	if js == "" {
		t.Log("ICECHUNK_JS is not set: the official core's view is not checked (../shared/tools/icechunk/setup.sh DIR; ICECHUNK_JS=DIR)")
		return
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node is not installed: the official core's view is not checked")
		return
	}
	script := filepath.Join(js, "gozarr_read_repo.mjs")
	b, err := os.ReadFile("../../testdata/icechunk/read_repo.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	cmd := exec.Command("node", "--no-warnings", script, abs, ref)
	cmd.Dir = js
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("the official core cannot read %s: %v", dir, err)
	}
	var core struct {
		Keys map[string]*string `json:"keys"`
	}
	if err := json.Unmarshal(outb, &core); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := fs.New(dir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	r, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.CheckoutRef(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, err := range snap.List(ctx, prefix) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		got, err := snap.Get(ctx, k, store.Full())
		if err != nil {
			t.Fatal(err)
		}
		if c := core.Keys[k]; c == nil || *c != base64.StdEncoding.EncodeToString(got) {
			t.Errorf("%s: the official core reads other bytes (or none)", k)
		}
	}
	m := 0
	for k := range core.Keys {
		if strings.HasPrefix(k, prefix) {
			m++
		}
	}
	if n == 0 || n != m {
		t.Errorf("under %s: gozarr lists %d keys, the official core %d", prefix, n, m)
	}
}
