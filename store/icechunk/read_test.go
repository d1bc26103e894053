package icechunk_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
)

const fixtures = "../../testdata/icechunk"

// expected is what the official core reported about the repositories it
// wrote (make_repos.mjs).
type expected struct {
	Repos map[string]struct {
		SpecVersion int                          `json:"spec_version"`
		Branches    map[string]string            `json:"branches"`
		Tags        map[string]string            `json:"tags"`
		Ancestry    map[string][]refSnapshotInfo `json:"ancestry"`
		States      map[string]string            `json:"states"`
		Manifests   map[string][]struct {
			ID           string `json:"id"`
			NumChunkRefs int    `json:"numChunkRefs"`
		} `json:"manifests"`
	} `json:"repos"`
}

type refSnapshotInfo struct {
	ID        string         `json:"id"`
	ParentID  string         `json:"parentId"`
	WrittenAt string         `json:"writtenAt"`
	Message   string         `json:"message"`
	Metadata  map[string]any `json:"metadata"`
}

func loadExpected(t testing.TB, dir string) expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRefs checks branches, tags and ancestry against what the official
// core reports for the same repositories.
func TestRefs(t *testing.T) {
	ctx := context.Background()
	e := loadExpected(t, fixtures)
	for name, want := range e.Repos {
		t.Run(name, func(t *testing.T) {
			r := openRepo(t, filepath.Join(fixtures, name))
			if r.SpecVersion() != want.SpecVersion {
				t.Errorf("spec version %d, want %d", r.SpecVersion(), want.SpecVersion)
			}
			checkRefs(t, r, want.Branches, want.Tags) // (the deleted tag must not show)
			for branch, anc := range want.Ancestry {
				_, got := history(t, r, branch)
				if len(got) != len(anc) {
					t.Fatalf("%s: %d ancestors, want %d", branch, len(got), len(anc))
				}
				for i, w := range anc {
					g := got[i]
					wt, err := time.Parse(time.RFC3339Nano, w.WrittenAt)
					if err != nil {
						t.Fatal(err)
					}
					parent := ""
					if g.HasParent {
						parent = g.Parent.String()
					}
					if g.ID.String() != w.ID || parent != w.ParentID || g.Message != w.Message || !g.Time.Equal(wt) {
						t.Errorf("%s[%d] = %v %q %q %v, want %v %q %q %v", branch, i, g.ID, parent, g.Message, g.Time, w.ID, w.ParentID, w.Message, wt)
					}
					gm, _ := json.Marshal(g.Metadata)
					wm, _ := json.Marshal(w.Metadata)
					if string(gm) != string(wm) {
						t.Errorf("%s[%d] metadata %s, want %s", branch, i, gm, wm)
					}
					// "as of" the commit's time is the commit
					if asof, err := r.AsOf(ctx, branch, wt); err != nil || asof.String() != w.ID {
						t.Errorf("AsOf(%s, %v) = %v, %v; want %s", branch, wt, asof, err, w.ID)
					}
				}
				if _, err := r.AsOf(ctx, branch, time.Unix(0, 0)); !errors.Is(err, icechunk.ErrRefNotFound) {
					t.Errorf("AsOf before the first commit: %v, want ErrRefNotFound", err)
				}
			}
			for _, bad := range []string{"gone", "scratch", "nope", "AAAAAAAAAAAAAAAAAAAA", "../main"} {
				if _, err := r.Resolve(ctx, bad); !errors.Is(err, icechunk.ErrRefNotFound) {
					t.Errorf("Resolve(%q): %v, want ErrRefNotFound", bad, err)
				}
			}
		})
	}
}

// TestReadValues reads every array of every snapshot the core wrote and
// compares it with the values zarr-python wrote (make_states.py).
func TestReadValues(t *testing.T) {
	e := loadExpected(t, fixtures)
	for name, want := range e.Repos {
		r := openRepo(t, filepath.Join(fixtures, name))
		for id, state := range want.States {
			t.Run(name+"/"+state, func(t *testing.T) {
				snap := checkoutRef(t, r, id)
				files, err := filepath.Glob(filepath.Join(fixtures, "expected", state, "*.npy"))
				if err != nil || len(files) == 0 {
					t.Fatalf("no expected values for %s: %v", state, err)
				}
				var arrays []string
				for _, n := range snap.Nodes() {
					if n.Kind == icechunk.KindArray {
						arrays = append(arrays, strings.TrimPrefix(n.Path, "/"))
					}
				}
				var wantArrays []string
				for _, f := range files {
					p := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(f), ".npy"), "__", "/")
					wantArrays = append(wantArrays, p)
					checkArray(t, snap, p, f)
				}
				slices.Sort(wantArrays)
				if !slices.Equal(arrays, wantArrays) {
					t.Errorf("arrays %v, want %v", arrays, wantArrays)
				}
				// the manifests: as many as the core lists for the snapshot
				nm := 0
				for _, n := range snap.Nodes() {
					nm += n.Manifest
				}
				if nm != len(want.Manifests[id]) {
					t.Errorf("%d manifest refs, the core lists %d manifest files", nm, len(want.Manifests[id]))
				}
			})
		}
	}
}

func checkArray(t *testing.T, snap store.Reader, path, npyFile string) {
	t.Helper()
	arraytest.CheckNpy(t, snap, path, npyFile)
}
