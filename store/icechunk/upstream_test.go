package icechunk

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// The official Icechunk's own read-compatibility repositories
// (icechunk-python/tests/data at earth-mover/icechunk 224519be, Apache-2.0,
// copied unchanged into testdata/icechunk/upstream; see its README): spec 1
// as Icechunk 1.x wrote them, spec 2, and spec 1 migrated to 2. The checks
// are those of upstream's test_can_read_old.py, whose writer made them.

const upstream = "../../testdata/icechunk/upstream"

func openUpstream(t *testing.T, name string, opts ...Option) *Repository {
	t.Helper()
	st, err := fs.New(filepath.Join(upstream, name), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), st, opts...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func messages(t *testing.T, r *Repository, ref string) []string {
	t.Helper()
	id, err := r.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	anc, err := r.Ancestry(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range anc {
		out = append(out, a.Message)
	}
	return out
}

func readFloat32s(t *testing.T, st store.Reader, path string) []float32 {
	t.Helper()
	b := arraytest.Read(t, st, path)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestUpstreamTestRepo: test-repo-v1, -v2 and -v2-migrated: history of
// branches and tags, a deleted tag, the hierarchy, fill values, a deleted
// chunk, a virtual chunk (served, as upstream's test does, with the bytes
// of a materialized chunk) and the diff of main.
func TestUpstreamTestRepo(t *testing.T) {
	ctx := context.Background()
	mainHistory := []string{"set virtual chunk", "fill data", "empty structure", "Repository initialized"}
	branchHistory := append([]string{"some more structure", "delete a chunk"}, mainHistory...)
	for name, spec := range map[string]int{"test-repo-v1": 1, "test-repo-v2": 2, "test-repo-v2-migrated": 2} {
		t.Run(name, func(t *testing.T) {
			virt := mem.New()
			res, err := virtual.New(virtual.Allow("s3://testbucket"), virtual.WithOpener(func(ctx context.Context, loc string) (store.Reader, error) {
				if loc != "s3://testbucket" {
					t.Errorf("opened %q", loc)
				}
				return virt, nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			r := openUpstream(t, name, WithVirtual(res))
			if r.SpecVersion() != spec {
				t.Errorf("spec %d, want %d", r.SpecVersion(), spec)
			}
			for ref, want := range map[string][]string{"main": mainHistory, "my-branch": branchHistory,
				"it also works!": branchHistory, "it works!": branchHistory[1:]} {
				if got := messages(t, r, ref); !slices.Equal(got, want) {
					t.Errorf("ancestry of %q: %q, want %q", ref, got, want)
				}
			}
			if _, err := r.Resolve(ctx, "deleted"); !errors.Is(err, ErrRefNotFound) {
				t.Errorf("the deleted tag: %v, want ErrRefNotFound", err)
			}
			snap, err := r.CheckoutRef(ctx, "my-branch")
			if err != nil {
				t.Fatal(err)
			}
			for dir, want := range map[string][]string{"": {"group1/", "group2/"}, "group1": {"big_chunks/", "small_chunks/"},
				"group2/group3/group4/group5": {"inner/"}} {
				// (upstream's list_dir also shows "c" in an array without
				// chunks; gozarr lists only the chunk keys there are)
				keys, dirs, err := snap.ListDir(ctx, dir)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(dirs, want) || !slices.Contains(keys, "zarr.json") {
					t.Errorf("list %q: %v %v, want %v and zarr.json", dir, keys, dirs, want)
				}
			}
			for i, v := range readFloat32s(t, snap, "group2/group3/group4/group5/inner") {
				if !math.IsNaN(float64(v)) {
					t.Fatalf("inner[%d] = %v, want the fill value NaN", i, v)
				}
			}
			if got := arraytest.Read(t, snap, "group1/small_chunks"); !slices.Equal(got, []byte{84, 84, 84, 84, 8}) {
				t.Errorf("small_chunks %v, want [84 84 84 84 8] (the last chunk deleted, fill 8)", got)
			}
			chunk, err := snap.Get(ctx, "group1/big_chunks/c/0/1", store.Full())
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, snap, "group1/big_chunks")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.ReadBytes(ctx); !errors.Is(err, store.ErrNotFound) && !errors.Is(err, ErrCorrupt) {
				t.Errorf("the virtual chunk before its target exists: %v", err)
			}
			if err := virt.Set(ctx, "can_read_old/chunk-1", chunk); err != nil {
				t.Fatal(err)
			}
			for i, v := range readFloat32s(t, snap, "group1/big_chunks") {
				if v != 42 {
					t.Fatalf("big_chunks[%d] = %v, want 42", i, v)
				}
			}
			// the diff of main since "empty structure"
			mainID, _ := r.Resolve(ctx, "main")
			anc, err := r.Ancestry(ctx, mainID)
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.Diff(ctx, anc[len(anc)-2].ID, mainID)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.NewGroups)+len(d.NewArrays)+len(d.DeletedGroups)+len(d.DeletedArrays)+len(d.UpdatedGroups)+len(d.UpdatedArrays) != 0 {
				t.Errorf("diff: nodes changed %+v, want none", d)
			}
			if len(d.UpdatedChunks) != 2 || len(d.UpdatedChunks["/group1/big_chunks"]) != 4 || len(d.UpdatedChunks["/group1/small_chunks"]) != 5 {
				t.Errorf("diff: chunks changed %v, want the 4 of big_chunks and the 5 of small_chunks", d.UpdatedChunks)
			}
		})
	}
}

// TestUpstreamSplitRepo: split-repo-v1, -v2 and -v2-migrated: manifests
// split by the configuration (9 manifest files, then 17 after the split
// sizes changed) and the values of the last commit.
func TestUpstreamSplitRepo(t *testing.T) {
	ctx := context.Background()
	history := []string{"write data again with more splits", "write data again", "write data", "empty structure", "Repository initialized"}
	for _, name := range []string{"split-repo-v1", "split-repo-v2", "split-repo-v2-migrated"} {
		t.Run(name, func(t *testing.T) {
			r := openUpstream(t, name)
			if got := messages(t, r, "main"); !slices.Equal(got, history) {
				t.Fatalf("ancestry %q, want %q", got, history)
			}
			head, _ := r.Resolve(ctx, "main")
			anc, err := r.Ancestry(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []int{17, 9, 9, 0} {
				s, err := r.snapshot(ctx, anc[i].ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(s.files) != want {
					t.Errorf("%q: %d manifest files, want %d", anc[i].Message, len(s.files), want)
				}
			}
			snap, err := r.Checkout(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range readFloat32s(t, snap, "group1/split") {
				if v != 14 {
					t.Fatalf("split[%d] = %v, want 14", i, v)
				}
			}
			if got := arraytest.Read(t, snap, "group1/small_chunks"); !slices.Equal(got, []byte{3, 3, 3, 3, 3}) {
				t.Errorf("small_chunks %v, want all 3", got)
			}
		})
	}
}

// TestUpstreamContainers reads the named virtual chunk containers of
// upstream's repositories: test-repo-v1's config.yaml (YAML, the
// containers tagged !tigris, !azure, !local_file_system, !gcs,
// !s3_compatible) and the FlexBuffers configuration of the one migrated
// to spec 2; test-repo-v2's one container (s3://testbucket/) has no name,
// and the split repositories record none (split-repo-v1's config.yaml has
// other tagged values: !name_matches, !Axis 0).
func TestUpstreamContainers(t *testing.T) {
	ctx := context.Background()
	want := map[string]string{"tigris": "tigris", "az": "az", "file": "file", "gcs": "gcs", "s3": "s3://testbucket"}
	for _, name := range []string{"test-repo-v1", "test-repo-v2", "test-repo-v2-migrated", "split-repo-v1", "split-repo-v2"} {
		got, err := openUpstream(t, name).configContainers(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want
		if strings.HasPrefix(name, "split") || name == "test-repo-v2" {
			w = nil
		}
		if !maps.Equal(got, w) {
			t.Errorf("%s: containers %v, want %v", name, got, w)
		}
	}
	// a vcc:// location resolves by the configuration's name
	u, err := openUpstream(t, "test-repo-v1").resolveLocation(ctx, "vcc://s3/some/file.nc")
	if err != nil || u != "s3://testbucket/some/file.nc" {
		t.Errorf("vcc://s3/some/file.nc is %q, %v", u, err)
	}
}
