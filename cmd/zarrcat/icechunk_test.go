package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
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
