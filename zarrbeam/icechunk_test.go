package zarrbeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/zarr"
)

// TestIcechunkForkMerge writes a plain array into a sharded array of an
// Icechunk repository on prism: workers write regions in sessions forked
// from one base snapshot, CommitIcechunk merges them and commits once. A
// worker lost after writing its shard fails the job, and so does a lost
// answer after the commit: the job run again (as a runner's retry runs
// the bundles again) ends with exactly one commit on main after the base,
// every shard referenced once and equal to the source, the failed
// attempts' chunk files left unreferenced.
func TestIcechunkForkMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	shape := []int{512, 512}
	src := pattern(shape[0] * shape[1])
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint8, []int{256, 256}, nil, src)

	repoDir := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := icechunk.Create(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Session(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	zs, _ := codecs.NewZstd(1, false)
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeUint8, []int{128, 128}, zarr.Shards(256, 256), zarr.Compress(zs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.CreateArray(ctx, s, "a", meta); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, "create a", nil); err != nil {
		t.Fatal(err)
	}
	target, err := IcechunkTarget{URL: repoDir, Branch: "main", Path: "a", Job: "job-1"}.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	failures := map[string]bool{}
	injected := errors.New("injected worker failure")
	faultHook = func(stage, key string) error {
		mu.Lock()
		defer mu.Unlock()
		if (stage == "written" || stage == "committed") && !failures[stage] {
			failures[stage] = true
			return fmt.Errorf("%s %s: %w", stage, key, injected)
		}
		return nil
	}
	t.Cleanup(func() { faultHook = nil })
	tries := rerunPastFaults(t, func() *beam.Pipeline {
		p, s := beam.NewPipelineWithRoot()
		CommitIcechunk(s, target, WriteIcechunk(s, target, Read(s, sr, ReadOptions{})), "zarrbeam wrote a")
		return p
	}, injected, failures)

	r2, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r2.Resolve(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	anc, err := r2.Ancestry(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(anc) < 2 || anc[1].ID.String() != target.Base || anc[0].Metadata["zarrbeam_job"] != "job-1" || anc[0].Message != "zarrbeam wrote a" {
		t.Fatalf("main's ancestry after the job: %+v; want one commit of job-1 on the base %s", anc, target.Base)
	}
	snap, err := r2.Checkout(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, snap, "a")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := a.ReadBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, fmt.Sprintf("after %d tries", tries), got, src)
	var refs []string
	for k, err := range snap.List(ctx, "a/c/") {
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, k)
	}
	if len(refs) != 4 {
		t.Errorf("shards referenced: %v, want the 4 of a 512² array in shards of 256²", refs)
	}
	files, err := os.ReadDir(filepath.Join(repoDir, "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) <= 4 {
		t.Errorf("%d chunk files: the failed attempts' shards should be there, unreferenced", len(files))
	}
	// collecting them leaves the 4 shards the commit references, and main whole
	gc, err := r2.CollectChunks(ctx, icechunk.GCOptions{AnyAge: true})
	if err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(filepath.Join(repoDir, "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	if gc.Referenced != 4 || gc.Deleted != len(files)-4 || len(left) != 4 {
		t.Errorf("collecting the failed attempts' chunks: %+v, %d files left; want %d deleted, 4 left", gc, len(left), len(files)-4)
	}
	r3, err := icechunk.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	snap3, err := r3.Checkout(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	a3, err := zarr.OpenArray(ctx, snap3, "a")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err = a3.ReadBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "after collecting", got, src)
}
