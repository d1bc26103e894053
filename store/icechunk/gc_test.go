package icechunk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// timedStore is a memory store that tells when each value was set (a
// test clock), as object stores' ReadCondition does.
type timedStore struct {
	*mem.Store
	mu    sync.Mutex
	now   time.Time
	times map[string]time.Time
}

func (s *timedStore) Set(ctx context.Context, key string, v []byte) error {
	s.mu.Lock()
	s.times[key] = s.now
	s.mu.Unlock()
	return s.Store.Set(ctx, key, v)
}

func (s *timedStore) ReadCondition(ctx context.Context, key string) (store.ReadCondition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.ReadCondition{LastModified: s.times[key]}, nil
}

func (s *timedStore) at(t time.Time) { s.mu.Lock(); s.now = t; s.mu.Unlock() }

func (s *timedStore) chunkFiles(t *testing.T) int {
	n := 0
	for k, err := range s.List(context.Background(), "chunks/") {
		if err != nil {
			t.Fatal(err)
		}
		_ = k
		n++
	}
	return n
}

// TestCollectChunks: the chunks of a session never committed and of a
// deleted branch's commit are unreferenced; a dry run only reports them;
// Before keeps the newer ones (a session that may still commit); AnyAge
// deletes the rest; main reads whole afterwards.
func TestCollectChunks(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ts := &timedStore{Store: mem.New(), now: t0, times: map[string]time.Time{}}
	r, err := icechunk.Create(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{64}, dtype.TypeInt32, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]byte, 256)
	for i := range 64 {
		binary.LittleEndian.PutUint32(vals[4*i:], uint32(100+i))
	}
	write := func(branch string, data []byte, sel ...nd.Item) *icechunk.Session {
		s, err := r.Session(ctx, branch, icechunk.WithInlineThreshold(0))
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, s, "v")
		if err != nil {
			a, err = zarr.CreateArray(ctx, s, "v", meta)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteBytes(ctx, data, sel...); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := write("main", vals).Commit(ctx, "all", nil); err != nil {
		t.Fatal(err)
	}
	head, err := r.Resolve(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	ts.at(t0.Add(time.Hour)) // a branch's commit, then the branch deleted
	if err := r.CreateBranch(ctx, "dev", head); err != nil {
		t.Fatal(err)
	}
	if _, err := write("dev", bytes.Repeat([]byte{7}, 8*4), nd.Range(0, 8)).Commit(ctx, "dev", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	ts.at(t0.Add(3 * time.Hour)) // a session that never commits
	write("main", bytes.Repeat([]byte{9}, 16*4), nd.Range(16, 32))
	if n := ts.chunkFiles(t); n != 16+2+4 {
		t.Fatalf("%d chunk files, want 22", n)
	}

	res, err := r.CollectChunks(ctx, icechunk.GCOptions{DryRun: true, AnyAge: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Referenced != 16 || len(res.Unreferenced) != 6 || res.Deleted != 0 || ts.chunkFiles(t) != 22 {
		t.Errorf("dry run: %+v, %d files; want 16 referenced, 6 unreferenced, none deleted", res, ts.chunkFiles(t))
	}
	for _, k := range res.Unreferenced {
		if !strings.HasPrefix(k, "chunks/") {
			t.Errorf("unreferenced %q", k)
		}
	}
	res, err = r.CollectChunks(ctx, icechunk.GCOptions{Before: t0.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 2 || res.Kept != 4 || ts.chunkFiles(t) != 20 {
		t.Errorf("before the session began: %+v, %d files; want the branch's 2 deleted, the session's 4 kept", res, ts.chunkFiles(t))
	}
	res, err = r.CollectChunks(ctx, icechunk.GCOptions{AnyAge: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 4 || res.Referenced != 16 || ts.chunkFiles(t) != 16 {
		t.Errorf("any age: %+v, %d files; want 4 deleted, 16 left", res, ts.chunkFiles(t))
	}
	got, _, err := openMainArray(t, ts, "v").ReadBytes(ctx)
	if err != nil || !bytes.Equal(got, vals) {
		t.Errorf("main after collecting: %v (equal %t)", err, bytes.Equal(got, vals))
	}
	// a store that cannot tell ages keeps everything unless AnyAge
	m := mem.New()
	r2, err := icechunk.Create(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r2.Session(ctx, "main", icechunk.WithInlineThreshold(0))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, "v", meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteBytes(ctx, vals); err != nil {
		t.Fatal(err)
	}
	if res, err := r2.CollectChunks(ctx, icechunk.GCOptions{Before: t0.Add(1000 * time.Hour)}); err != nil || res.Kept != 16 || res.Deleted != 0 {
		t.Errorf("no modification times: %+v %v, want 16 kept", res, err)
	}
}
